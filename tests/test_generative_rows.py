"""A generative row for every choice benchmark (issue 36): `prompt.scoring=generate prompt.template=declared`
runs on each benchmark's fixture beside its log-likelihood row, with the same items, the same uncertainty
figures, and the generation figures (`unparsed`, `forced`, `reasoning_tokens`); ToMATO also with its authors'
template, read by their rule. The scripted thinker writes the replies (brief, past the budget, unclosed,
direct), so that every figure has something to count."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import CONF, predictions
from omegaconf import OmegaConf

from pragexp.generation.backends.base import LLMBackend
from pragexp.metrics.uncertainty import is_uncertainty_key
from pragexp.models.llm import PromptedLLM
from pragexp.prompting import PromptItem
from pragexp.prompting.parsing import read_first_bracketed
from pragexp.run import run

LETTERS = ["A", "B", "C", "D"]
# benchmark -> (its overrides, the template of its generative row, what the scripted replies answer)
BENCHMARKS = {
    "hu_pragmatics": (["task=hu_pragmatics", "data.phenomena=[Irony]"], "declared", LETTERS),
    "ludwig": (["task=ludwig"], "declared", ["yes", "no"]),
    "bigbench_implicatures": (["task=bigbench_implicatures"], "declared", ["yes", "no"]),
    "circa": (["task=circa", "model=llm"], "declared", LETTERS),
    "intentions_mc": (["task=intentions_mc"], "declared", ["1", "2"]),
    "grice_recovery": (["task=grice_recovery", "model=llm"], "declared", LETTERS),
    "multiprageval": (["task=multiprageval", "data.languages=[english]"], "declared", [*LETTERS, "E"]),
    "tomato": (["task=tomato", "data.file=fb"], "declared", LETTERS),
    "tomato_authors": (["task=tomato", "data.file=fb"], "authors", [f"[{x}]" for x in LETTERS]),
}
GENERATION_KEYS = {"test/unparsed", "test/forced", "test/reasoning_tokens"}


def decisions(record: dict) -> list[dict]:
    """The generated decisions of a record: itself, or its option orders (the intentions MC)."""
    return record.get("orders", [record])


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", list(BENCHMARKS))
def test_a_generative_row_beside_the_log_likelihood_row(benchmark, make_config):
    overrides, template, answers = BENCHMARKS[benchmark]
    loglik = make_config(overrides, name="eval", out="loglik")
    scored = run(loglik)
    generate = [
        *overrides,
        "llm=scripted_thinker",
        f"llm.answers=[{','.join(json.dumps(a) for a in answers)}]",
        "prompt.scoring=generate",
        f"prompt.template={template}",
        "prompt.reasoning_budget=20",
        "prompt.max_new_tokens=8",
    ]
    cfg = make_config(generate, name="eval", out="generate")
    metrics = run(cfg)
    assert GENERATION_KEYS <= set(metrics), f"{benchmark}: {sorted(GENERATION_KEYS - set(metrics))} missing"
    assert metrics["test/count"] == scored["test/count"]  # the same items
    # every figure's interval is there too (not the shares of the errors' kinds: the rows err differently)
    uncertainty = {k for k in scored if is_uncertainty_key(k) and "error_share" not in k}
    assert uncertainty and uncertainty <= set(metrics), sorted(uncertainty - set(metrics))
    rows = [d for r in predictions(cfg) for d in decisions(r)]
    assert all("reply" in d and "unparsed" in d and "forced" in d for d in rows)
    # some replies ran past the budget (the `long` shape) and were forced to answer; all then answered
    assert 0 < metrics["test/forced"] < 1 and any(d["forced"] for d in rows)
    share = sum(d["unparsed"] for d in rows) / len(rows)
    assert metrics["test/unparsed"] == pytest.approx(share, abs=1e-6)
    assert metrics["test/reasoning_tokens"] > 0
    if template == "authors":  # ToMATO's authors' rule: the first bracketed letter in the reply
        for d in rows:
            expected = None if d["answer"] is None else read_first_bracketed(d["answer"], d["continuations"])
            assert d["choice"] == expected


def test_the_authors_rule_reads_the_first_bracketed_letter():
    options = ["[A]", "[B]", "[C]", "[D]"]
    assert read_first_bracketed("I think [C], not [A].", options) == 2
    assert read_first_bracketed("Answer: B", options) is None  # no bracket: nothing, as their regex finds
    assert read_first_bracketed("[b] or [D]", options) == 3  # upper case only
    assert read_first_bracketed("[,] then [A]", options) is None  # their class holds a comma: first match
    assert read_first_bracketed("[E] then [B]", options) == 1  # no fifth option: not their class


class OneReply(LLMBackend):
    """A backend that gives every prompt the same reply."""

    name = "one_reply"

    def __init__(self, reply: str):
        super().__init__()
        self.reply = reply

    def generate_samples(self, prompts, params, sample):
        return [self.reply] * len(prompts)


@pytest.mark.parametrize(("template", "chosen"), [("authors", 2), ("declared", 0)])
def test_tomato_s_templates_read_a_reply_by_their_own_rule(template, chosen):
    """ "I'd rule out [C]... Answer: [A]": the authors' rule takes the first bracket (C), the declared
    template the last declaration (A)."""
    prompt = OmegaConf.to_container(OmegaConf.load(CONF / "prompt" / "tomato.yaml"))
    prompt.update(template=template, scoring="generate", chat=False)
    model = PromptedLLM(OneReply("Not [C], I think. Answer: [A]"), prompt)
    fields = {"conversation": "A: hi\nB: hello", "question": "What does B think?"}
    scores = model([PromptItem(0, fields, ("x", "y", "z", "w"), 0)])
    assert scores[0].argmax().item() == chosen and torch.isfinite(scores[0]).sum() == 1
    [(_, record)] = model.take_records()
    assert record["choice"] == chosen and record["template"] == template
