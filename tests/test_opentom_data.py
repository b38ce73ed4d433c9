"""OpenToM: its metadata and question files read as released (genres, orders, the options in the order of the
authors' class labels), bad input named by file, record and field, the authors' draw of batches and of the
fullness questions, their prompt and answer matching, macro-F1 per genre over the batches, training refused
for the licence, and the report section."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import CONF, FIXTURES, SAMPLES, needs_samples, predictions
from omegaconf import OmegaConf
from test_benchmarks_report import PNG, row, rows_of

from pragexp.data.opentom import report_section as section
from pragexp.data.opentom.datamodule import OpenToMDataModule
from pragexp.data.opentom.io import read_questions, read_stories
from pragexp.metrics.uncertainty import metrics_cell
from pragexp.prompting import PromptItem
from pragexp.prompting.readers import read_opentom_answer
from pragexp.prompting.templates import load_templates, select_template
from pragexp.report import find_runs, main
from pragexp.reporting.groups import run_label
from pragexp.run import run
from pragexp.utils.errors import DataFormatError

FOLDER = FIXTURES / "opentom"
f1_score = pytest.importorskip("sklearn.metrics").f1_score  # the authors' own call (their evaluate.py)


def module(**settings) -> OpenToMDataModule:
    dm = OpenToMDataModule(str(settings.pop("path", FOLDER)), **{"batch_stories": 1, **settings})
    dm.setup()
    return dm


def test_the_files_read_with_genres_orders_and_the_authors_class_order():
    stories = read_stories(FOLDER / "meta_data.json")
    assert len(stories) == 7 and stories["10007919"].move_to_place == "a donation bin"
    coarse, _ = read_questions(FOLDER / "location_cg_fo.json", "location_coarse", 1, stories)
    assert coarse[0].options == ("No", "Yes") and coarse[0].answer == "No" and coarse[0].true_index == 0
    hops, _ = read_questions(FOLDER / "multihop_fo.json", "multihop", 1, stories)
    assert [q.genre for q in hops[:6]] == ["fullness"] * 4 + ["accessibility"] * 2
    assert hops[0].options == ("less full", "more full", "equally full")
    assert hops[4].options == ("more accessible", "less accessible", "equally accessible")
    # "less accessible | equally accessible": equally accessible, as the authors' evaluator reads it
    mixed = json.loads((FOLDER / "multihop_fo.json").read_text())["10031676"][5]["answer"]
    assert "|" in mixed and [q.answer for q in hops if q.story == "10031676"][5] == "equally accessible"
    fine, skipped = read_questions(FOLDER / "location_fg_fo_new.json", "location_fine", 1, stories)
    assert skipped == 1 and len(fine) == 27  # a "windowsill" answer is neither place: dropped, counted
    first = [q for q in fine if q.story == "10007919"]
    assert first[0].options == ("basket", "a donation bin") and [q.true_index for q in first] == [1, 0, 1, 1]
    attitude, _ = read_questions(FOLDER / "attitude.json", "attitude", None, stories)
    assert attitude[0].options == ("positive", "negative", "neutral") and attitude[0].answer == "negative"


def copy_release(tmp_path) -> Path:
    folder = tmp_path / "opentom_data"
    shutil.copytree(FOLDER, folder, ignore=shutil.ignore_patterns("*.py"))
    return folder


def test_a_question_whose_story_is_not_in_the_metadata_names_file_record_and_field(tmp_path):
    folder = copy_release(tmp_path)
    meta = json.loads((folder / "meta_data.json").read_text())
    del meta["10023757"]
    (folder / "meta_data.json").write_text(json.dumps(meta, indent=4))
    with pytest.raises(DataFormatError, match="is not in meta_data.json") as err:
        module(path=folder)
    text = str(err.value)
    assert (
        str(folder / "location_cg_fo.json") in text
        and "story '10023757', question 0, field 'story key'" in text
    )


@pytest.mark.parametrize(
    ("file", "change", "field", "message"),
    [
        ("attitude.json", lambda q: q.update(answer="joyful"), "answer", "none of positive"),
        ("location_cg_so.json", lambda q: q.update(answer="Maybe"), "answer", "none of No, Yes"),
        ("multihop_so.json", lambda q: q.pop("question"), "question", "missing"),
        ("multihop_fo.json", lambda q: q.update(question="How full?"), "question", "names neither"),
    ],
)
def test_a_bad_question_names_file_record_and_field(tmp_path, file, change, field, message):
    folder = copy_release(tmp_path)
    document = json.loads((folder / file).read_text())
    change(document["10015838"][0])
    (folder / file).write_text(json.dumps(document, indent=4))
    with pytest.raises(DataFormatError, match=message) as err:
        module(path=folder, batches=None)
    assert str(folder / file) in str(err.value) and f"story '10015838', question 0, field {field!r}" in str(
        err.value
    )


def test_a_story_without_its_narrative_is_named(tmp_path):
    folder = copy_release(tmp_path)
    meta = json.loads((folder / "meta_data.json").read_text())
    meta["10015838"].pop("narrative")
    (folder / "meta_data.json").write_text(json.dumps(meta))
    with pytest.raises(DataFormatError, match="story '10015838', field 'narrative'"):
        module(path=folder)


def test_the_authors_batches_and_fullness_draws():
    """run_baseline.py: random.seed(42) then one shuffle of the metadata's keys cut into batches; per story
    and per multi-hop file, np.random.choice of two fullness questions to drop after np.random.seed(42)."""
    dm = module()
    keys = list(read_stories(FOLDER / "meta_data.json"))
    random.seed(42)
    random.shuffle(keys)
    assert dm.draw_batches(list(dm.stories)) == [[k] for k in keys[:5]]
    np.random.seed(42)
    kept = []
    for key in keys[:5]:
        for name in ("multihop_fo.json", "multihop_so.json"):
            questions = json.loads((FOLDER / name).read_text())[key]
            fullness = [i for i, q in enumerate(questions) if "fullness" in q["question"]]
            dropped = np.random.choice(fullness, 2, replace=False)
            kept += [q["question"] for i, q in enumerate(questions) if i not in dropped]
    assert [q.question for q in dm.questions if q.genre in ("fullness", "accessibility")] == kept
    assert len(dm.questions) == 5 * 19 and sorted(set(dm.batch_of)) == [0, 1, 2, 3, 4]
    assert len(module(batches=None, drop_fullness=False).questions) == 7 * 23 - 1
    with pytest.raises(ValueError, match="data.batch_stories"):
        module(batch_stories=50)  # 250 stories asked of seven


def test_long_narratives_evaluate_their_stories_only():
    dm = module(narrative="long", batches=None)
    assert {q.story for q in dm.questions} == set(read_stories(FOLDER / "meta_data_long.json"))
    assert dm.datasets["test"][0]["item"].fields["narrative"].endswith("Later, nothing else moved.")


def templates():
    group = OmegaConf.to_container(OmegaConf.load(CONF / "prompt" / "opentom.yaml"))
    return load_templates(group["templates"])


def authors_prompt(narrative: str, question: str, genre: str) -> str:
    """The prompt their build_prompt writes (no chain of thought), from their template files' text."""
    head = "Read and comprehend the following short story. Then, answer the question that follows.\n\n"
    if genre == "attitude":
        asked = question.split("?")[0].strip() + ", assuming that you observed the action?"
        asked += ' Answer with "positive", "neutral", or "negative".'
        return (head + narrative + "\n\nQuestion: " + asked).strip() + " Answer without any explanation."
    if genre == "fullness":
        question += ' Answer with "more full", "equally full", or "less full".'
    if genre == "accessibility":
        question += ' Answer with "more accessible", "equally accessible", or "less accessible".'
    end = {
        "location_coarse": ' Answer the question with "Yes" or "No". Do not give any explanation.',
    }.get(genre, " Answer the question without any explanation.")
    return (head + narrative + "\n\nQuestion: " + question + end + "\n").strip()


def test_the_authors_turns_are_their_build_prompt_s_for_every_genre():
    dm = module(batches=None)
    template = select_template(templates(), "authors")
    system = {"role": "system", "content": "You are an expert in modeling other's mental state."}
    seen = set()
    for example in dm.datasets["test"]:
        question = dm.questions[example["index"]]
        if question.genre in seen:
            continue
        seen.add(question.genre)
        item: PromptItem = example["item"]
        expected = authors_prompt(item.fields["narrative"], question.question, question.genre)
        assert list(template.render(item).messages) == [system, {"role": "user", "content": expected}]
        assert template.render(item).continuations == question.options
    assert seen == {"location_coarse", "location_fine", "fullness", "accessibility", "attitude"}


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        ("No.", ("No", "Yes"), 0),
        ("Yes, it is.", ("No", "Yes"), 1),
        ("Yes, I do not know.", ("No", "Yes"), None),  # both words: no label
        ("It is not there", ("No", "Yes"), 0),  # "not" holds "no", as their substring test finds
        ("It became emptier.", ("less full", "more full", "equally full"), 0),
        ("Equally full.", ("less full", "more full", "equally full"), 2),
        (
            "more accessible, not less accessible",
            ("more accessible", "less accessible", "equally accessible"),
            0,
        ),
        (
            "Answer: c",
            ("positive", "negative", "neutral"),
            1,
        ),  # their letters: a positive, b neutral, c negative
        ("My attitude is positive", ("positive", "negative", "neutral"), 0),
        ("positive or negative", ("positive", "negative", "neutral"), None),
        ("In the donation bin.", ("basket", "a donation bin"), 1),
        ("The basket", ("basket", "a donation bin"), 0),
        ("On the table", ("basket", "a donation bin"), None),  # a tie: their third class, unparsed here
    ],
)
def test_the_authors_answer_matching(reply, options, expected):
    assert read_opentom_answer(reply, [], options) == expected


@pytest.fixture
def opentom_run(make_config):
    cfg = make_config(["task=opentom"], name="eval", out="opentom")
    return cfg, run(cfg)


@pytest.mark.slow
def test_macro_f1_per_genre_over_the_batches_and_accuracy_per_story(opentom_run):
    cfg, metrics = opentom_run
    records = predictions(cfg)
    assert metrics["test/count"] == len(records) == 95
    batches = json.loads(Path(cfg.paths.output_dir, "data_report.json").read_text())["batches"]
    assert batches == [1, 1, 1, 1, 1]
    for name in ("location_coarse:first_order", "multihop:second_order", "fullness:first_order", "attitude"):
        rows = [r for r in records if name in r["groups"]]
        gold, chosen = [r["gold"] for r in rows], [r["predicted"] for r in rows]
        assert metrics[f"test/macro_f1/{name}"] == pytest.approx(f1_score(gold, chosen, average="macro"))
        per_batch = [
            f1_score(
                [r["gold"] for r in rows if r["cluster"] == c],
                [r["predicted"] for r in rows if r["cluster"] == c],
                average="macro",
            )
            for c in sorted({r["cluster"] for r in rows})
        ]  # a batch is one story here
        assert metrics[f"test/macro_f1_batch_mean/{name}"] == pytest.approx(np.mean(per_batch))
        assert metrics[f"test/macro_f1_batch_sd/{name}"] == pytest.approx(np.std(per_batch))
        assert metrics[f"test/unparsed/{name}"] == 0.0  # scored by likelihood: every question answered
    assert metrics["test/acc_n"] == 5 and metrics["test/acc_n/attitude"] == 5  # clustered by story
    fine = [r["correct"] for r in records if "location_fine:first_order" in r["groups"]]
    assert metrics["test/acc/location_fine:first_order"] == pytest.approx(sum(fine) / len(fine))


@pytest.mark.parametrize(
    ("name", "overrides", "refused"),
    [("train", [], "pragexp.train"), ("eval", ["llm.finetune=lora"], "llm.finetune=lora")],
)
def test_training_on_opentom_is_refused_with_its_licence(make_config, name, overrides, refused):
    cfg = make_config(["task=opentom", *overrides], name=name)
    with pytest.raises(ValueError, match="evaluation only") as err:
        run(cfg)
    assert "CC BY-NC 4.0" in str(err.value) and refused in str(err.value)


@pytest.mark.slow
def test_the_report_section_its_scorecard_and_figure(opentom_run, tmp_path):
    cfg, metrics = opentom_run
    runs = find_runs([Path(cfg.paths.output_dir)])
    text = "\n".join(section.sections(runs))
    label = {"model, template": run_label(runs[0])}
    f1 = rows_of(text, "Macro-F1 per genre and order, every story evaluated")
    assert row(f1, **label)["MHop 2nd"] == metrics_cell(
        metrics, "test/macro_f1", "multihop:second_order", units="stories"
    )
    counts = json.loads(Path(cfg.paths.output_dir, "data_report.json").read_text())["f1_gold_positions"]
    chance = row(f1, **{"model, template": "chance (uniform guess)"})
    assert chance["Att"] == f"{section.chance_f1(counts['attitude']):.3f}"
    batch = row(
        rows_of(text, "Macro-F1 per batch of stories: mean ± population sd (the authors' protocol)"), **label
    )
    mean, sd = metrics["test/macro_f1_batch_mean/attitude"], metrics["test/macro_f1_batch_sd/attitude"]
    assert batch["Att"] == f"{mean:.3f} ± {sd:.3f} (5 batches)"
    accuracy = row(rows_of(text, "Accuracy per genre and order"), **label)
    assert accuracy["fullness:second_order"] == metrics_cell(
        metrics, "test/acc", "fullness:second_order", units="stories"
    )
    card, figures = tmp_path / "scorecard.md", tmp_path / "figures"
    assert main([cfg.paths.output_dir, "--scorecard", str(card), "--figures", str(figures)]) == 0
    header = next(line for line in card.read_text().splitlines() if line.startswith("| model"))
    assert "OpenToM attitude F1" in header and "OpenToM Loc-coarse 1st-order F1" in header
    assert (figures / "opentom_genres.png").read_bytes()[:8] == PNG
    assert section.sections([]) == [] and section.figures([], tmp_path) == []


def test_the_uniform_guess_f1_is_its_expectation():
    gen = torch.Generator().manual_seed(0)
    gold = [0] * 600 + [1] * 300 + [2] * 100
    guesses = [torch.randint(0, 3, (1000,), generator=gen).tolist() for _ in range(40)]
    simulated = np.mean([f1_score(gold, g, average="macro") for g in guesses])
    assert section.chance_f1([600, 300, 100]) == pytest.approx(simulated, abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("template", "answers"), [("authors", ["No", "more full"]), ("declared", ["A", "B"])]
)
def test_the_generative_rows_read_their_replies(make_config, template, answers):
    generate = ["task=opentom", "llm=scripted_thinker", f"llm.answers={json.dumps(answers)}"]
    generate += ["prompt.scoring=generate", f"prompt.template={template}", "prompt.reasoning_budget=20"]
    cfg = make_config(generate, name="eval", out=template)
    metrics = run(cfg)
    records = predictions(cfg)
    assert (
        metrics["test/count"] == 95 and metrics["test/unparsed"] < 1 and "test/unparsed/attitude" in metrics
    )
    if template == "authors":  # their matching reads the coarse and fullness answers, not the attitude ones
        assert 0 < metrics["test/unparsed"]
        for r in records:
            expected = None if r["answer"] is None else read_opentom_answer(r["answer"], [], r["options"])
            assert r["choice"] == expected
        unparsed = [r["unparsed"] for r in records if "attitude" in r["groups"]]
        assert metrics["test/unparsed/attitude"] == pytest.approx(sum(unparsed) / len(unparsed))


@needs_samples
def test_the_shared_sample_reads_whole():
    sample = SAMPLES / "opentom" / "sample"
    every = module(path=sample, batches=None, drop_fullness=False)
    assert len(every.stories) == 89 and len(every.questions) == 2047
    with pytest.raises(ValueError, match="at most 17"):
        module(path=sample, batch_stories=50)
    five = module(path=sample, batch_stories=17)
    assert len(five.questions) == 85 * 19 and len(set(five.batch_of)) == 5
    # the authors' build_prompt tells a question's genre from its words: the same as its file's
    for q in every.questions:
        said = (
            "location_fine"
            if "locate" in q.question
            else "location_coarse"
            if "initial" in q.question
            else None
        )
        assert said is None or said == q.genre


@pytest.mark.slow
def test_hitom_and_opentom_are_scored_while_an_llm_trains(make_config):
    """The benchmarks' curves (callbacks.benchmarks) take both: their overall figures at each pass; OpenToM is
    only evaluated there (the model trains on Circa)."""
    import csv

    bench = [
        "callbacks.benchmarks.names=[hitom,opentom]",
        "callbacks.benchmarks.every_n_steps=100",
        f"+callbacks.benchmarks.overrides.hitom.data.path={FIXTURES / 'hitom'}",
        f"+callbacks.benchmarks.overrides.opentom.data.path={FOLDER}",
        "+callbacks.benchmarks.overrides.opentom.data.batch_stories=1",
    ]
    lora = ["task=circa", "model=llm", "llm.finetune=lora", "trainer.max_epochs=1"]
    cfg = make_config([*lora, *bench, "logger=csv"])
    run(cfg)
    with open(Path(cfg.paths.output_dir) / "csv" / "metrics.csv") as f:
        rows = [r for r in csv.DictReader(f) if r.get("bench/hitom/acc")]
    assert len(rows) == 2  # before the first step and after the last
    for r in rows:
        assert float(r["bench/hitom/acc_n"]) == 4 and float(r["bench/opentom/acc_n"]) == 5  # stories
        assert 0.0 <= float(r["bench/opentom/acc"]) <= 1.0
