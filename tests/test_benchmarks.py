"""The LLM pragmatics benchmarks on the one route (Hu et al.'s phenomena, LUDWIG, BIG-bench's implicatures):
the papers' protocols (the Hu et al. one checked on an example worked by hand) and the runs end to end on
invented files in the released formats (the choice metric they report: tests/test_choice_metric.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import CONF, LUDWIG_FIXTURE, SAMPLES, needs_samples, predictions
from omegaconf import OmegaConf
from scipy import stats as scipy_stats

from pragexp.data.ludwig.io import read_pairs, read_templates
from pragexp.generation.scoring.requests import ChoiceRequest, encode_request
from pragexp.metrics.uncertainty import estimate_mean
from pragexp.pretrained import causal
from pragexp.pretrained.causal import tiny_causal_lm
from pragexp.prompting import PromptItem, load_templates
from pragexp.run import run


def templates(name: str) -> list:
    return load_templates(OmegaConf.to_container(OmegaConf.load(CONF / "prompt" / f"{name}.yaml").templates))


# -- Hu et al. -----------------------------------------------------------------------------------------------


def engineered_model(target_logits: dict[str, float]):
    """The tiny Llama made to predict, whatever the prompt, logit target_logits[t] for the token t and 0 for
    every other: every layer's weights zero (each position's state is its token's embedding), every embedding
    e1, so the final RMSNorm gives h = e1 / sqrt(1/d + eps), and the output row of t is (target / h_0) e1."""
    model, tokenizer = tiny_causal_lm()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layers." in name and "norm" not in name:
                p.zero_()
        d, eps = model.config.hidden_size, model.config.rms_norm_eps
        model.model.embed_tokens.weight.zero_()
        model.model.embed_tokens.weight[:, 0] = 1.0
        h0 = 1.0 / math.sqrt(1.0 / d + eps)
        model.lm_head.weight.zero_()
        for text, logit in target_logits.items():
            (token,) = tokenizer(text, add_special_tokens=False)["input_ids"]
            model.lm_head.weight[token, 0] = logit / h0
    return model, tokenizer


@pytest.mark.slow
def test_the_papers_protocol_on_an_example_worked_by_hand(make_config, monkeypatch):
    """Logits ln 2, 0, ln 4, 0 for "1".."4" (and 0 for every other token): Hu et al.'s `get_completion` keeps
    softmax([ln 2, 0, ln 4, 0]) = [2, 1, 4, 1] / 8 = (0.25, 0.125, 0.5, 0.125) over the option numbers and
    answers "3", the argmax."""
    logits = {"1": math.log(2), "2": 0.0, "3": math.log(4), "4": 0.0}
    model, tokenizer = engineered_model(logits)
    monkeypatch.setattr(causal, "tiny_causal_lm", lambda seed=0: (model, tokenizer))
    cfg = make_config(["task=hu_pragmatics", "data.phenomena=[Irony]", "model.use_cache=false"], name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    assert len(records) == metrics["test/count"] == 5  # Irony: 3 items in seed 0, 2 in seed 1 (1 row dropped)
    for record in records:
        assert record["pairing"] == "next-token" and record["continuations"] == ["1", "2", "3", "4"]
        assert record["probs"] == pytest.approx([0.25, 0.125, 0.5, 0.125], abs=1e-5)
        assert record["predicted"] == 2 and record["correct"] == (record["gold"] == 2)
        # the same, as the authors' query_hf.py computes it: generate one token, read its scores
        ids = tokenizer(record["prompt"], return_tensors="pt")
        out = model.generate(**ids, max_new_tokens=1, output_scores=True, return_dict_in_generate=True)
        answer_ids = [tokenizer(str(k), add_special_tokens=False)["input_ids"][0] for k in range(1, 5)]
        theirs = torch.softmax(out.scores[0][0][answer_ids], 0).tolist()
        assert theirs == pytest.approx(record["probs"], abs=1e-5)
    assert metrics["test/acc"] == pytest.approx(sum(r["gold"] == 2 for r in records) / len(records))


@pytest.mark.slow
def test_hu_reports_phenomena_seeds_distractor_kinds_and_people(make_config):
    cfg = make_config(["task=hu_pragmatics", "data.phenomena=[Irony,CoherenceInference]"], name="eval")
    metrics = run(cfg)
    assert {
        "test/acc/Irony",
        "test/acc/CoherenceInference",
        "test/acc_view/seed0",
        "test/acc_view/seed1",
    } <= set(metrics)
    seeds = [metrics["test/acc_view/seed0"], metrics["test/acc_view/seed1"]]
    assert metrics["test/acc_view_std"] == pytest.approx(np.std(seeds), abs=1e-6)  # population std
    shares = {k: v for k, v in metrics.items() if k.startswith("test/error_share/") and k.count("/") == 2}
    assert shares and sum(shares.values()) == pytest.approx(1.0) or metrics["test/acc"] == 1.0
    records = predictions(cfg)
    wrong = [r for r in records if not r["correct"]]
    assert all(
        r["chosen_kind"] and not r["chosen_kind"].startswith("Correct")
        for r in wrong
        if r["predicted"] != r["gold"]
    )
    # an item's seeds are one cluster: its standard error is clustered by item
    items = {(r["phenomenon"], r["item_id"]) for r in records}
    assert metrics["test/acc_n"] == len(items) < metrics["test/acc_rows"] == metrics["test/count"]
    assert len({r["cluster"] for r in records}) == len(items) and {r["group"] for r in records} == {
        "Irony",
        "CoherenceInference",
    }
    clustered = estimate_mean([float(r["correct"]) for r in records], [r["cluster"] for r in records])
    assert metrics["test/acc_stderr"] == pytest.approx(clustered.stderr, rel=1e-5)
    with_people = [r for r in records if "human" in r]
    assert with_people and all(sum(r["human"]) == pytest.approx(1.0, abs=1e-3) for r in with_people)
    # Hu et al.'s comparison with people: across the items of a phenomenon, the model's p_true (mean over
    # seeds) against people's proportion correct
    for phenomenon in ("Irony", "CoherenceInference"):
        per_item = {}
        for r in records:
            if r["group"] == phenomenon and "people_correct" in r:
                per_item.setdefault(r["cluster"], ([], r["people_correct"]))[0].append(r["probs"][r["gold"]])
        model = [float(np.mean(p)) for p, _ in per_item.values()]
        people = [share for _, share in per_item.values()]
        if len(per_item) >= 3 and np.ptp(model) > 0 and np.ptp(people) > 0:
            r, p = scipy_stats.pearsonr(model, people)
            # (predictions.jsonl rounds the probabilities to 6 places)
            assert metrics[f"test/human_corr/{phenomenon}"] == pytest.approx(r, abs=2e-3)
            assert metrics[f"test/human_corr_p/{phenomenon}"] == pytest.approx(p, abs=2e-3)
        else:
            assert f"test/human_corr/{phenomenon}" not in metrics
    report = json.loads(Path(cfg.paths.output_dir, "data_report.json").read_text())
    assert set(report["human_accuracy"]) == {"Irony", "CoherenceInference"} and report["seeds"] == [
        "seed0",
        "seed1",
    ]


@pytest.mark.slow
def test_hu_k_shot_shows_other_items_of_the_phenomenon_and_seed(make_config):
    cfg = make_config(
        [
            "task=hu_pragmatics",
            "data.phenomena=[Irony]",
            "data.seeds=[0]",
            "prompt.template=options_as_text",
            "prompt.shots=2",
        ],
        name="eval",
    )
    run(cfg)
    for record in predictions(cfg):
        # the scenario of the item itself comes last, after two others of Irony seed 0, each with its answer
        assert record["prompt"].count("Options:") == 3
        assert record["continuations"] == record["options"]


def test_the_next_token_pairing_reads_one_token_per_option_after_the_tokenizer_s_own_encoding():
    _, tokenizer = tiny_causal_lm()
    encoded = encode_request(tokenizer, ChoiceRequest("Options: 1) 2)\nAnswer: ", ("1", "2"), "next-token"))
    assert list(encoded.context) == tokenizer("Options: 1) 2)\nAnswer: ")["input_ids"]  # trailing space kept
    assert [len(c) for c in encoded.continuations] == [1, 1]
    with pytest.raises(ValueError, match="one token per option"):
        encode_request(tokenizer, ChoiceRequest("Answer: ", ("the speaker is ironic",), "next-token"))


# -- the choice task's metrics -------------------------------------------------------------------------------


def authors_text(template, pair, demos) -> str:
    """LUDWIG's prompt as the authors' ExamplePrompt.prompt_for_completion writes it (src/prompting.py), up to
    the label."""
    text = ""
    if demos:
        filled = [template.fill(d.utterance, d.response, d.label) for d in demos]
        text += template.prompt_instruction + "\n\n" + "\n\n".join(filled) + "\n\n"
    if template.example_instruction:
        text += template.example_instruction + "\n\n"
    keep = template.mask_phrase[: template.mask_phrase.index(" %s")]
    example = template.fill(pair.utterance, pair.response, pair.label)
    return text + example[: example.index(keep) + len(keep)]


@needs_samples
def test_the_six_templates_are_the_releases_as_its_authors_fill_them():
    folder = SAMPLES / "ludwig"
    release = read_templates(folder / "prompt_templates.txt")
    pairs, _ = read_pairs(folder / "dev_conversational_implicatures.csv")
    ours = [t for t in templates("ludwig") if t.name not in ("declared", "pragrest")]  # generative templates
    assert len(ours) == len(release) == 6
    for mine, theirs in zip(ours, release, strict=True):
        for shots in (0, 3):
            pair, demos = pairs[10], pairs[:shots]
            item = PromptItem(0, {"utterance": pair.utterance, "response": pair.response}, ("yes", "no"), 0)
            shown = [
                PromptItem(
                    0,
                    {"utterance": d.utterance, "response": d.response},
                    ("yes", "no"),
                    ("yes", "no").index(d.label),
                )
                for d in demos
            ]
            rendered = mine.render(item, shown)
            assert rendered.plain == authors_text(theirs, pair, demos)
            assert rendered.continuations == (" yes", " no")


@pytest.mark.slow
def test_ludwig_k_shot_demonstrations_are_the_authors_draws(make_config):
    cfg = make_config(["task=ludwig", "prompt.shots=2"], name="eval")
    run(cfg)
    dev, _ = read_pairs(LUDWIG_FIXTURE / "dev_conversational_implicatures.csv")
    test, report = read_pairs(LUDWIG_FIXTURE / "test_conversational_implicatures.csv")
    rng = np.random.default_rng(0)
    # one draw per row the authors keep, the one with an empty field (skipped here) included
    draws = [rng.choice(range(len(dev)), 2, replace=False) for _ in range(report.authors_rows)]
    assert report.authors_rows == len(test) + 1
    for record in predictions(cfg):
        drawn = [dev[j] for j in draws[test[record["index"]].row]]
        shown = record["prompt"].split("\n\n")[1:3]
        assert [d.utterance in block for d, block in zip(drawn, shown, strict=True)] == [True, True]


@pytest.mark.slow
def test_ludwig_contrastive_shows_both_readings_and_scores_the_letters(make_config):
    cfg = make_config(["task=ludwig", "prompt=ludwig_contrastive"], name="eval")
    metrics = run(cfg)
    assert metrics["test/count"] > 0
    for record in predictions(cfg):
        assert record["continuations"] == [" A", " B"]
        assert "meaning: yes" in record["prompt"] and "meaning: no" in record["prompt"]
        assert record["prompt"].endswith("Which of the above texts is coherent, A or B?\nAnswer:")


# -- BIG-bench -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_bigbench_implicatures_from_a_local_copy(make_config):
    cfg = make_config(["task=bigbench_implicatures"], name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    assert metrics["test/count"] == len(records) > 0
    assert all(r["prompt"].endswith("A:") and r["continuations"] == [" yes", " no"] for r in records)


def test_bigbench_offline_without_a_local_copy_names_the_setting(make_config, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    cfg = make_config(
        ["task=bigbench_implicatures", "data.path=null", "data.hub_name=no-such/dataset"], name="eval"
    )
    with pytest.raises(RuntimeError, match=r"could not be loaded.*data.path="):
        run(cfg)


# -- transfer from Circa -------------------------------------------------------------------------------------


def best_checkpoint(cfg) -> str:
    (path,) = Path(cfg.paths.output_dir, "checkpoints").glob("best-*.ckpt")
    return str(path)


@pytest.mark.slow
def test_a_bert_trained_on_circa_answers_ludwig_by_its_yes_and_no_logits(make_config):
    circa = make_config(["task=circa", "model=bert", "trainer.max_epochs=1"], out="circa")
    run(circa)
    cfg = make_config(
        ["task=ludwig", "model=transferred", f"model.ckpt={best_checkpoint(circa)}"], name="eval"
    )
    metrics = run(cfg)
    records = predictions(cfg)
    assert metrics["test/count"] == len(records) > 0
    for record in records:
        scores = [record["logits"][{"yes": "Yes", "no": "No"}[o]] for o in record["options"]]
        assert record["correct"] == (scores[record["gold"]] > scores[1 - record["gold"]])


@pytest.mark.slow
def test_an_llm_tuned_on_circa_is_scored_on_ludwig_through_its_adapter(make_config):
    circa = make_config(
        ["task=circa", "model=llm", "llm.finetune=lora", "optimizer.lr=1e-2", "trainer.max_epochs=1"],
        out="circa",
    )
    run(circa)
    tuned = make_config(["task=ludwig", f"llm.adapter={best_checkpoint(circa)}"], name="eval", out="tuned")
    frozen = make_config(["task=ludwig"], name="eval", out="frozen")
    run(tuned), run(frozen)
    a, b = predictions(tuned), predictions(frozen)
    assert [r["index"] for r in a] == [r["index"] for r in b]
    assert any(x["loglik"] != y["loglik"] for x, y in zip(a, b, strict=True))  # the adapter's weights answer
    with pytest.raises(Exception, match="no peft adapter"):  # Hydra wraps what the backend raises
        run(make_config(["task=ludwig", "llm.adapter=/no/such.ckpt"], name="eval", out="missing"))
