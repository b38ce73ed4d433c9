"""model=llm on the trained models' tasks: prompts, demonstrations, scoring, records, and same numbers
twice."""

import json
from pathlib import Path

import pytest
import torch
from batch_rows import rows
from conftest import predictions

from pragexp.metrics.classification import ClassificationMetric
from pragexp.pretrained.causal import tiny_causal_lm
from pragexp.prompting import PromptItem, PromptTemplate, parse_option, pick_demonstrations
from pragexp.run import run

# -- prompting pieces ------------------------------------------------------------------------------------


def test_template_renders_chat_turns_and_plain_text_with_listed_options():
    template = PromptTemplate(
        name="t",
        instruction="Pick one.",
        input="Q: {question}\n{options}",
        answer="{letter}",
        option_line="{letter}) {option}",
        options=("yes", "no"),
    )
    demo = PromptItem(7, {"question": "Is it raining?"}, label=1)
    item = PromptItem(0, {"question": "Is it cold?"})
    rendered = template.render(item, [demo])
    assert rendered.continuations == ("A", "B")
    roles = [m["role"] for m in rendered.messages]
    assert roles == ["user", "assistant", "user"]
    assert rendered.messages[0]["content"].startswith("Pick one.\n\nQ: Is it raining?\nA) yes\nB) no")
    assert rendered.messages[1]["content"] == "B"  # the demonstration's gold, as the answer is written
    assert rendered.plain.endswith("Q: Is it cold?\nA) yes\nB) no\nAnswer: ")
    assert "Answer: B\n\n" in rendered.plain


def test_template_names_a_missing_field():
    template = PromptTemplate(name="needs_context", input="{context}: {question}", options=("a", "b"))
    with pytest.raises(KeyError, match=r"needs_context.*\{context\}.*question"):
        template.render(PromptItem(0, {"question": "q"}))


def test_content_free_item_blanks_fields_and_keeps_options():
    template = PromptTemplate(name="t", input="{a} / {b}")
    cf = template.content_free(PromptItem(3, {"a": "x", "b": "y"}, options=("o1", "o2")), "N/A")
    assert cf.fields == {"a": "N/A", "b": "N/A"} and cf.options == ("o1", "o2")


def test_demonstrations_are_seeded_shared_and_balanced():
    items = [PromptItem(i, {"x": str(i)}, label=0 if i < 20 else 1) for i in range(24)]
    first = pick_demonstrations(items, 4, seed=3)
    assert first == pick_demonstrations(list(items), 4, seed=3)  # the same draw every time
    assert first != pick_demonstrations(items, 4, seed=4)
    balanced = pick_demonstrations(items, 4, seed=3, balanced=True)
    assert sorted(d.label for d in balanced) == [0, 0, 1, 1]  # 20:4 in the data, 2:2 shown
    with pytest.raises(ValueError, match="shots=30"):
        pick_demonstrations(items, 30)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", 0),
        ("yes, subject to some conditions.", 2),  # the longest option it starts with
        ("  \nNo. He won't.", 1),
        ("Neither yes nor no", 3),
        ("I think so", None),  # names no option: no answer
        ("", None),
    ],
)
def test_parse_option(reply, expected):
    options = ["yes", "no", "yes, subject to some conditions", "neither yes nor no"]
    assert parse_option(reply, options) == expected


def test_no_answer_is_wrong_and_counted_by_the_classification_metric():
    metric = ClassificationMetric(["a", "b"], no_answer=True)
    metric.update(rows(torch.arange(4), label=torch.tensor([0, 0, 1, 1])), torch.tensor([0, -1, 1, -1]))
    out = metric.compute()
    assert float(out["acc"]) == pytest.approx(0.5)
    assert float(out["no_answer"]) == pytest.approx(0.5)
    # Each class: one right, one missed (no answer) -> precision 1, recall 1/2, F1 2/3.
    assert float(out["f1/a"]) == pytest.approx(2 / 3) and float(out["f1/b"]) == pytest.approx(2 / 3)
    assert metric.confusion().sum() == 2  # only the answered examples


# -- whole runs with the tiny LLM ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "extra"),
    [
        ("circa", ["prompt.shots=2", "prompt.template=1"]),
        ("nli", []),
        ("boolq", ["prompt.template=2"]),
        ("grice_recovery", ["prompt.scoring=per_token"]),
        ("grice_qa", ["prompt.shots=1"]),
    ],
)
@pytest.mark.slow
def test_llm_scores_each_task_and_records_every_decision(task, extra, make_config):
    cfg = make_config([f"task={task}", "model=llm", *extra], name="eval")
    metrics = run(cfg)
    assert "test/loss" not in metrics  # nothing trained, nothing to watch
    records = predictions(cfg)
    assert records and len(records) == int(metrics["test/count"])
    for record in records:
        assert record["prompt"].endswith("<|assistant|>\n")  # through the tiny model's chat template
        n = len(record["continuations"])
        assert n == len(record["loglik"]) == len(record["tokens"]) == len(record["scores"])
        assert all(t > 0 for t in record["tokens"]) and all(ll < 0 for ll in record["loglik"])
        assert record["choice"] == max(range(n), key=lambda j: (record["scores"][j], -j))
    shots = int(cfg.prompt.shots)
    assert records[0]["shots"] == shots
    if shots:  # the same demonstrations open every prompt
        user_turns = [r["prompt"].split("<|assistant|>")[0] for r in records]
        assert len(set(user_turns)) == 1


def test_pragmaticqa_llm_writes_the_target_after_shown_demonstrations(make_config):
    """PragmatiCQA as retrieval-augmented generation, 1-shot: the same demonstration (a training question with
    its gold target in the paper's format) opens every prompt, and each reply is read and scored."""
    cfg = make_config(
        ["task=pragmaticqa", "model=llm", "prompt.shots=1", "prompt.max_new_tokens=8", "validate=false"],
        name="eval",
    )
    metrics = run(cfg)
    assert {"test/f1_lit", "test/f1_prag", "test/well_formed", "test/r@5"} <= set(metrics)
    records = [r for r in predictions(cfg) if r["split"].startswith("test")]
    assert records and len(records) == int(metrics["test/count"])
    assert all(r["shots"] == 1 and r["scoring"] == "generate" for r in records)
    # the demonstration's answer turn: the first assistant turn of every prompt
    demonstrations = {r["prompt"].split("<|assistant|>")[1].split("<|")[0] for r in records}
    assert len(demonstrations) == 1 and "</lit>" in demonstrations.pop()
    assert sum(r["well_formed"] for r in records) == pytest.approx(metrics["test/well_formed"] * len(records))


def test_recorded_logliks_rescore_with_a_plain_transformers_loop(make_config):
    cfg = make_config(["task=circa", "model=llm"], name="eval")
    run(cfg)
    model, tokenizer = tiny_causal_lm()
    model.eval()
    for record in predictions(cfg)[:5]:
        # lm-evaluation-harness's convention: the prompt's trailing whitespace belongs to the continuation.
        prompt = record["prompt"].rstrip()
        context = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        logliks = []
        for continuation in record["continuations"]:
            whole = tokenizer(record["prompt"] + continuation, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logp = torch.log_softmax(model(torch.tensor([whole])).logits[0].float(), -1)
            logliks.append(sum(float(logp[t - 1, whole[t]]) for t in range(len(context), len(whole))))
        assert logliks == pytest.approx(record["loglik"], abs=1e-4)
        assert max(range(len(logliks)), key=lambda j: (logliks[j], -j)) == record["choice"]


@pytest.mark.slow
def test_same_numbers_from_the_cache_and_at_another_batch_size(make_config):
    first = make_config(["task=circa", "model=llm", "prompt.scoring=calibrated"], name="eval", out="a")
    run(first)
    again = make_config(
        ["task=circa", "model=llm", "prompt.scoring=calibrated", "data.eval_batch_size=3"],
        name="eval",
        out="b",
    )
    run(again)
    a, b = predictions(first), predictions(again)
    assert [r["choice"] for r in a] == [r["choice"] for r in b]
    assert [r["loglik"] for r in a] == [r["loglik"] for r in b]
    assert all("content_free_loglik" in r for r in a)


def test_generated_answers_that_name_no_option_count_as_wrong(make_config):
    cfg = make_config(
        ["task=circa", "model=llm", "prompt.scoring=generate", "prompt.max_new_tokens=4"], name="eval"
    )
    metrics = run(cfg)
    records = predictions(cfg)
    unparsed = [r for r in records if r["choice"] is None]
    assert metrics["test/no_answer"] == pytest.approx(len(unparsed) / len(records))
    assert metrics["test/unparsed"] == pytest.approx(
        metrics["test/no_answer"]
    )  # the generation metrics' count
    assert metrics["test/reasoning_tokens"] == 0  # the tiny model opens no reasoning block
    assert all(r["predicted"] is None and r["unparsed"] and "reply" in r for r in unparsed)
    right = sum(r["predicted"] == r["gold"] for r in records)
    assert metrics["test/acc"] == pytest.approx(right / len(records))


def test_strict_labels_need_six_verbalisations(make_config):
    cfg = make_config(["task=circa", "model=llm", "data.labels=strict"], name="eval")
    assert len(cfg.prompt.templates[0].options) == 6  # the group follows data.labels
    run(cfg)
    assert {r["gold"] for r in predictions(cfg)} <= {
        "Yes",
        "No",
        "Probably yes / sometimes yes",
        "Yes, subject to some conditions",
        "Probably no",
        "In the middle, neither yes nor no",
    }


def test_grice_max_dialogues_keeps_each_evaluation_files_first_dialogues_and_the_whole_qa_option_set():
    from pragexp.data.grice.datamodule import GriceDataModule
    from pragexp.data.grice.io import read_dialogues

    fixture = Path(__file__).parent / "fixtures" / "grice" / "impl_dial_sample.json"
    files = [str(fixture), str(fixture)]
    dialogues = read_dialogues(fixture)
    assert len(dialogues) > 1
    whole = GriceDataModule(question="qa", test_path=files, prompts=True)
    short = GriceDataModule(question="qa", test_path=files, prompts=True, max_dialogues=1)
    whole.setup("test"), short.setup("test")
    assert len(short.prompt_items("test")) == 2 * len(dialogues[0].questions)  # one dialogue from each file
    assert len(whole.prompt_items("test")) == 2 * sum(len(d.questions) for d in dialogues)
    assert short.prompt_items("test")[0].options == whole.prompt_items("test")[0].options
    recovery = GriceDataModule(test_path=files, prompts=True, max_dialogues=1)
    recovery.setup("test")
    assert len(recovery.prompt_items("test")) == 2 * len(dialogues[0].rounds)
    demonstrations = GriceDataModule(train_path=files, test_path=files, prompts=True, max_dialogues=1)
    demonstrations.setup("fit")
    assert len(demonstrations.prompt_items("train")) == 2 * sum(len(d.rounds) for d in dialogues)  # whole
    with pytest.raises(ValueError, match="max_dialogues=0"):
        GriceDataModule(test_path=files, max_dialogues=0)


def test_grice_qa_options_are_the_evaluation_files_words_whatever_the_training_file(tmp_path):
    """0- and k-shot rank the same options: a training file (demonstrations) does not add its answer words."""

    from pragexp.data.grice.datamodule import GriceDataModule

    fixture = Path(__file__).parent / "fixtures" / "grice" / "impl_dial_sample.json"
    raw = json.loads(fixture.read_text())
    raw["data"]["dialogs"][0]["question"][0]["answer"] = "zebra"  # an answer word only the training file has
    train = tmp_path / "train.json"
    train.write_text(json.dumps(raw))
    alone = GriceDataModule(question="qa", test_path=[str(fixture)], prompts=True)
    with_train = GriceDataModule(
        question="qa", train_path=[str(train)], test_path=[str(fixture)], prompts=True
    )
    alone.setup("test"), with_train.setup("fit"), with_train.setup("test")
    test_options = with_train.prompt_items("test")[0].options
    assert test_options == alone.prompt_items("test")[0].options and "zebra" not in test_options
    demonstration = with_train.prompt_items("train")[0]  # ranks its own file's words, gold included
    assert demonstration.options[demonstration.label] == "zebra"


def test_a_sampled_draw_is_the_same_whether_the_model_or_the_backend_applies_the_chat_template():
    """model=llm renders the chat template itself (`chat_text`); a raw prompt leaves it to the backend. A
    sampled draw's stream is named by the prompt's content before the template, so both give the same
    reply."""
    from pragexp.generation.backends.base import GenerationParams, Prompt
    from pragexp.generation.backends.hf import HFBackend
    from pragexp.models.llm import PromptedLLM

    backend = HFBackend(model="tiny", batch_size=4)
    templates = [{"name": "t", "input": "She asks: {question}\n\nHe replies, ", "answer_prefix": ""}]
    model = PromptedLLM(backend, {"templates": templates, "chat": True}, use_cache=False)
    items = [PromptItem(i, {"question": q}) for i, q in enumerate(["Is it raining?", "Did you eat?"])]
    params = GenerationParams(temperature=1.0, max_new_tokens=6, samples=2, seed=3)
    ours = model.draw(items, params)
    raw = backend.generate(
        [Prompt(f"She asks: {i.fields['question']}\n\nHe replies, ") for i in items], params
    )
    assert ours == raw and len({r for draws in ours for r in draws}) > 1


@pytest.mark.parametrize("chat", [False, True])
def test_a_request_s_head_is_what_every_item_of_the_prompt_shares(chat):
    """The scorer runs a request's head once for the prompt's items: instruction, demonstrations and the
    input's opening words (its trailing space left to the item), in the plain prompt or found in the chat
    rendering."""
    from pragexp.generation.backends.hf import HFBackend
    from pragexp.models.llm import PromptedLLM

    backend = HFBackend(model="tiny", batch_size=4)
    templates = [
        {
            "name": "t",
            "instruction": "Does the response imply yes or no?",
            "input": "question: {q}\nresponse: {r}",
            "options": ["yes", "no"],
            "answer_prefix": "implicature:",
        }
    ]
    model = PromptedLLM(backend, {"templates": templates, "chat": chat}, use_cache=False)
    pairs = [("Is it cold?", "Take a coat."), ("Did you eat?", "I'm starving.")]
    items = [PromptItem(i, {"q": q, "r": r}) for i, (q, r) in enumerate(pairs)]
    reqs = model._requests(items, backend)
    heads = {r.context[: r.head] for r in reqs}
    assert len(heads) == 1 and heads.pop().endswith("Does the response imply yes or no?\n\nquestion:")
    for request, (q, _) in zip(reqs, pairs, strict=True):
        assert request.context[request.head :].startswith(f" {q}\nresponse: ")
    assert (reqs[0].context == model.template.render(items[0]).plain) != chat
    # demonstrations drawn for each item: no head is shared, the whole prompt is the item's own
    config = {"templates": templates, "chat": chat, "shots": 1, "demonstrations": "per_item"}
    per_item = PromptedLLM(backend, config, use_cache=False)
    demo = PromptItem(9, {"q": "Is it late?", "r": "The sun is up."}, label=1)
    items = [PromptItem(i, {"q": q, "r": r}, demonstrations=(demo,)) for i, (q, r) in enumerate(pairs)]
    assert [r.head for r in per_item._requests(items, backend)] == [0, 0]
