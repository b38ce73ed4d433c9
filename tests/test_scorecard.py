"""The scorecard (pragexp.report.scorecard) on fixture run directories: LLM rows across prompt templates,
the intention tasks joining an LLM's row, trained rows, chance and majority, the papers' rows in our units."""

import json
import math
import statistics

import pytest
import yaml
from test_report import write_run

from pragexp.report import find_runs, main, scorecard

SMOLLM2 = {"_target_": "pragexp.generation.hf.HFBackend", "model": "smollm2"}


def llm_run(root, name, task, metrics, template=None, shots=None, seed=0, config=None, extra=()):
    """A `model=llm` run (the intention tasks too), as a multirun over prompt.template writes it."""
    prompt = {k: v for k, v in (("template", template), ("shots", shots)) if v is not None}
    overrides = [f"prompt.template={template}"] if template is not None else []
    overrides += [f"prompt.shots={shots}"] if shots is not None else []
    model = "llm"
    composed = {"llm": SMOLLM2, "prompt": prompt, "model_label": "${model_name}", **(config or {})}
    return write_run(
        root,
        name,
        task,
        model,
        metrics,
        seed,
        extra=(*overrides, *extra, "llm.model=smollm2"),
        config=composed,
    )


def circa_config(labels, setting="matched"):
    return {"data": {"labels": labels, "setting": setting, "path": "circa-data.tsv"}}


def data_report(run_dir, train, test):
    counts = {"train": train, "test": test}
    (run_dir / "data_report.json").write_text(json.dumps({"labels": "strict", "label_counts": counts}))


STRICT_TRAIN = {"Yes": 30, "No": 30, "Probably yes": 5, "Conditional": 5, "Probably no": 5, "Middle": 5}
STRICT_TEST = {"Yes": 9, "No": 12, "Probably yes": 1, "Conditional": 1, "Probably no": 1, "Middle": 0}


@pytest.fixture
def runs_dir(tmp_path):
    root = tmp_path / "runs"
    # Trained: MemNN over three seeds on recovery (the Table 5 preset), one QA run without a preset.
    for seed, r1 in enumerate((0.95, 0.96, 0.97)):
        write_run(
            root,
            f"rec{seed}",
            "grice_recovery",
            "memnn",
            {"test/r@1": r1, "test/mrr": 0.99},
            seed,
            "grice/table5_memnn",
            config={"model_label": "${model_name}"},
        )
    write_run(root, "qa", "grice_qa", "memnn", {"test/acc": 0.7}, config={"model_label": "${model_name}"})
    write_run(root, "qa_lr", "grice_qa", "memnn", {"test/acc": 0.2}, extra=("optimizer.lr=0.1",))
    # BERT-YN on Circa, both label sets (data.path on the command line makes no other row).
    for labels, acc in (("relaxed", 0.85), ("strict", 0.8)):
        run = write_run(
            root,
            f"bert_{labels}",
            "circa",
            "bert",
            {"test/acc": acc, "test/f1/yes": 0.9},
            experiment="circa/bert_yn",
            extra=(f"data.labels={labels}", "data.path=circa-data.tsv"),
            config=circa_config(labels),
        )
        if labels == "strict":
            data_report(
                run, STRICT_TRAIN, STRICT_TEST
            )  # yes (first of the tied 30s): 9 / 24 of the test split
    # The majority baseline, run on RELAXED (its report would say otherwise: the run wins).
    run = write_run(root, "maj", "circa", "majority", {"test/acc": 0.493}, config=circa_config("relaxed"))
    data_report(run, {"Yes": 1}, {"Yes": 1})
    # SmolLM2 zero-shot on Circa RELAXED: templates 0 (two seeds), 1 and 2; five-shot with one template.
    for template, seed, acc in ((0, 0, 0.40), (0, 1, 0.42), (1, 0, 0.45), (2, 0, 0.53)):
        llm_run(
            root,
            f"llm_t{template}s{seed}",
            "circa",
            {"test/acc": acc},
            template,
            0,
            seed,
            circa_config("relaxed"),
        )
    llm_run(root, "llm_5shot", "circa", {"test/acc": 0.6}, 1, 5, config=circa_config("relaxed"))
    # The intention tasks name the same LLM (their config has no prompt.shots: zero-shot prompts).
    llm_run(
        root,
        "gen",
        "intentions_reply",
        {"test/acc": 0.5, "test/acc/irony": 0.4},
        config={"prompt": {"cot": "none"}},
        extra=("judge=embedding",),
    )
    llm_run(root, "mc", "intentions_mc", {"test/acc": 0.9}, extra=("print_config=false",))  # how, not what
    reference = {"llm": {"_target_": "pragexp.generation.reference.ReferenceBackend", "field": "reply_true"}}
    write_run(root, "reference", "intentions_reply", "llm", {"test/acc": 1.0}, config=reference)
    write_run(root, "mnli", "nli", "bert", {"test/acc": 0.8})  # a transfer source: no column
    write_run(root, "oracle", "pragmaticqa", "oracle", {"test/f1_lit": 1.0, "test/f1_prag": 0.9})
    return root


def parse(text: str) -> dict[str, dict[str, str]]:
    """The scorecard's markdown table as {row name: {column: cell}}."""
    lines = [line for line in text.split("## Scorecard\n", 1)[1].splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    header = cells[0]
    return {row[0]: dict(zip(header[1:], row[1:], strict=True)) for row in cells[2:]}


def test_the_scorecard_of_the_fixture(runs_dir):
    card = scorecard.build(find_runs([runs_dir]))
    text = scorecard.markdown(card)
    print(text)
    table = parse(text)
    columns = ["GRICE recovery R@1", "GRICE QA acc", "Circa RELAXED acc", "Circa STRICT acc"]
    columns += ["PragmatiCQA F1_lit", "PragmatiCQA F1_prag", "Intentions gen. acc", "Intentions MC acc"]
    # the headline metrics the runs declare, in the order the tasks declare
    assert list(next(iter(table.values()))) == columns  # no unmatched Circa pair: no run was made there
    names = list(table)
    # Order: chance, majority, published, trained, LLMs.
    assert names[:2] == ["chance", "majority"]
    first_ours = names.index("bert_yn")
    assert all(n.endswith(")") and "(paper" in n for n in names[2:first_ours])
    assert names[first_ours:] == [
        "bert_yn",
        "memnn",
        "memnn (optimizer.lr=0.1)",
        "oracle",
        "smollm2 0-shot",
        "smollm2 5-shot",
    ]

    llm = table["smollm2 0-shot"]
    # Template 0's two seeds averaged first (0.41), then across templates: 0.41, 0.45, 0.53.
    cell = next(r for r in card.rows if r.name == "smollm2 0-shot").cells["Circa RELAXED acc"]
    assert cell.n == 3 and cell.mean == pytest.approx(1.39 / 3)
    assert cell.std == pytest.approx(
        math.sqrt(((0.41 - 1.39 / 3) ** 2 + (0.45 - 1.39 / 3) ** 2 + (0.53 - 1.39 / 3) ** 2) / 2)
    )
    assert llm["Circa RELAXED acc"] == "0.463; sd 0.061 over 3 templates"  # runs without the items' figures
    # The intention tasks join the LLM's zero-shot row; its other columns are missing.
    assert llm["Intentions gen. acc"] == "0.500" and llm["Intentions MC acc"] == "0.900"
    assert "smollm2 0-shot, Intentions gen. acc: judge=embedding" in text  # the task's setting, noted
    assert llm["GRICE recovery R@1"] == llm["Circa STRICT acc"] == "–"
    assert table["smollm2 5-shot"]["Circa RELAXED acc"] == "0.600"
    assert table["smollm2 5-shot"]["Intentions MC acc"] == "–"

    # Trained: the Table 5 preset and a plain QA run are one MemNN row; another lr is another row.
    memnn = table["memnn"]
    assert memnn["GRICE recovery R@1"] == "0.960; sd 0.010 over 3 runs" and memnn["GRICE QA acc"] == "0.700"
    assert memnn["Circa RELAXED acc"] == "–" and memnn["Intentions MC acc"] == "–"
    assert table["memnn (optimizer.lr=0.1)"]["GRICE QA acc"] == "0.200"
    assert (table["bert_yn"]["Circa RELAXED acc"], table["bert_yn"]["Circa STRICT acc"]) == ("0.850", "0.800")

    chance = table["chance"]
    assert [chance[c] for c in columns] == ["0.250", "–", "0.250", "0.167", "–", "–", "–", "0.500"]
    majority = table["majority"]
    assert majority["Circa RELAXED acc"] == "0.493"  # the model=majority run, not its data report
    assert majority["Circa STRICT acc"] == "0.375"  # computed: 9 of 24 test rows are 'Yes'
    assert majority["GRICE QA acc"] == "–"

    # The papers' rows, as fractions: GRICE Tables 5 and 6 (percent), Circa Tables 9 and 10, PragmatiCQA Table
    # 4.
    paper = table["memnn (paper)"]
    assert paper["GRICE recovery R@1"] == "0.973" and paper["GRICE QA acc"] == "0.673"
    assert paper["Circa RELAXED acc"] == "–"
    assert (table["bert_yn (paper)"]["Circa RELAXED acc"], table["bert_yn (paper)"]["Circa STRICT acc"]) == (
        "0.878",
        "0.840",
    )
    assert table["majority (paper)"]["Circa STRICT acc"] == "0.470"
    assert table["human (paper)"]["GRICE QA acc"] == "0.975"
    fid = table["fid (paper, retriever.top_k=5)"]  # a condition other than the data's stays in the name
    assert (fid["PragmatiCQA F1_lit"], fid["PragmatiCQA F1_prag"]) == ("0.119", "0.057")
    assert "table5_memnn (paper)" not in table and "reply_true 0-shot" not in text


def test_chance_levels_are_the_circa_label_counts():
    from conftest import CONF

    from pragexp.data.circa.io import LABELS

    declared = yaml.safe_load((CONF / "task" / "circa.yaml").read_text())["declares"]["headline"]
    assert len(declared) == 4
    for headline in declared:
        assert headline["chance"] == pytest.approx(1 / len(LABELS[headline["when"]["labels"]])), headline


def test_the_majority_label_is_the_first_of_equal_training_counts():
    counts = {"train": {"a": 2, "b": 2, "c": 1}, "test": {"a": 1, "b": 3, "c": 0}}
    assert scorecard.majority_share(counts) == pytest.approx(0.25)
    assert scorecard.majority_share({"test": {"a": 1}}) is None  # no training split: no majority label


def test_unmatched_runs_add_the_leave_one_scenario_out_pair(tmp_path):
    for fold, acc in enumerate((0.7, 0.8)):
        run = write_run(
            tmp_path,
            f"f{fold}",
            "circa",
            "bert",
            {"test/acc": acc},
            fold=fold,
            experiment="circa/bert_yn",
            extra=("data.setting=unmatched",),
            config=circa_config("relaxed", "unmatched"),
        )
        data_report(run, {"Yes": 3, "No": 1}, {"Yes": fold + 1, "No": 1})  # majority 0.5, then 2/3
    table = parse(scorecard.markdown(scorecard.build(find_runs([tmp_path]))))
    column = "Circa RELAXED acc (unmatched)"
    assert (
        column in table["chance"] and "Circa STRICT acc (unmatched)" not in table["chance"]
    )  # no run made there
    assert (
        table["bert_yn"][column] == "0.750; sd 0.071 over 2 runs"
        and "Circa RELAXED acc" not in table["bert_yn"]
    )
    # the paper's mean and std over its 10 folds
    assert table["bert_yn (paper)"][column] == "0.855; sd 0.039 over folds [0.790, 0.902]"
    assert (
        table["majority"][column] == "0.583; sd 0.118 over 2 data sets"
    )  # one value per fold's data: 1/2 and 2/3
    assert table["chance"][column] == "0.250"


def test_task_settings_keep_an_llm_in_one_row_until_a_column_differs_in_them(tmp_path):
    llm_run(tmp_path, "mc", "intentions_mc", {"test/acc": 0.9})
    llm_run(tmp_path, "plain", "intentions_reply", {"test/acc": 0.5})  # the task's default judge
    for judge, acc in (("gpt4", 0.6), ("llm", 0.7)):
        llm_run(tmp_path, judge, "intentions_reply", {"test/acc": acc}, extra=(f"judge={judge}",))
    llm_run(tmp_path, "cot5", "intentions_reply", {"test/acc": 0.8}, extra=("prompt.cot=5",))
    llm_run(tmp_path, "bf16", "intentions_mc", {"test/acc": 0.7}, extra=("llm.dtype=bfloat16",))
    for name, extra, acc in (("qa", (), 0.85), ("answer", ("data.input=answer",), 0.8)):
        config = circa_config("relaxed")
        write_run(tmp_path, name, "circa", "bert", {"test/acc": acc}, extra=extra, config=config)
    card = scorecard.build(find_runs([tmp_path]))
    text = scorecard.markdown(card)
    table = parse(text)
    gen = "Intentions gen. acc"
    assert table["smollm2 0-shot"][gen] == "0.500" and table["smollm2 0-shot"]["Intentions MC acc"] == "0.900"
    assert table["smollm2 0-shot (judge=gpt4)"][gen] == "0.600"
    assert table["smollm2 0-shot (judge=llm)"][gen] == "0.700"
    assert table["smollm2 0-shot (prompt.cot=5)"][gen] == "0.800"
    assert table["smollm2 0-shot (judge=gpt4)"]["Intentions MC acc"] == "–"
    assert table["smollm2 0-shot (llm.dtype=bfloat16)"]["Intentions MC acc"] == "0.700"  # the model's own
    assert (table["bert"]["Circa RELAXED acc"], table["bert (data.input=answer)"]["Circa RELAXED acc"]) == (
        "0.850",
        "0.800",
    )
    assert "Task settings" not in text  # no cell of a row has runs with task settings of their own


def test_a_model_label_set_on_purpose_names_the_row(tmp_path):
    for name, label, acc in (("resolved", "bert", 0.8), ("own", "bert_large_yn", 0.9)):
        config = {**circa_config("relaxed"), "model_label": label}
        write_run(
            tmp_path, name, "circa", "bert", {"test/acc": acc}, experiment="circa/bert_yn", config=config
        )
    table = parse(scorecard.markdown(scorecard.build(find_runs([tmp_path]))))
    assert (
        table["bert_yn"]["Circa RELAXED acc"] == "0.800"
    )  # a label that repeats the model says nothing more
    assert table["bert_large_yn"]["Circa RELAXED acc"] == "0.900"


def test_the_cli_writes_and_prints_the_scorecard_and_plots_it(runs_dir, tmp_path, capsys):
    md, png = tmp_path / "out" / "scorecard.md", tmp_path / "out" / "scorecard.png"
    assert main([str(runs_dir), "--scorecard", str(md), "--plot", str(png)]) == 0
    printed = capsys.readouterr().out
    written = md.read_text()
    assert written.startswith("## Scorecard") and written.strip() in printed
    assert parse(written)["smollm2 0-shot"]["Intentions MC acc"] == "0.900"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert sorted(p.name for p in png.parent.iterdir()) == ["scorecard.md", "scorecard.png"]  # no temp files


def test_the_plot_draws_a_bar_per_value_with_its_interval_and_chance_per_column(
    runs_dir, tmp_path, monkeypatch
):
    from matplotlib.axes import Axes

    bars, lines = [], []
    bar, hlines = Axes.bar, Axes.hlines

    def record_bar(self, x, height, width, **kw):
        bars.append((kw["label"], list(height), kw["yerr"]))  # a row's bars, one call
        return bar(self, x, height, width, **kw)

    def record_hlines(self, y, xmin, xmax, **kw):
        lines.append(y)
        return hlines(self, y, xmin, xmax, **kw)

    monkeypatch.setattr(Axes, "bar", record_bar)
    monkeypatch.setattr(Axes, "hlines", record_hlines)
    card = scorecard.build(find_runs([runs_dir]))
    assert scorecard.plot(card, tmp_path / "p.png")
    values = sum(len(row.cells) for row in card.rows if row.kind != "chance")
    assert sum(len(heights) for _, heights, _ in bars) == values  # one bar per row and column with a value
    (llm,) = [b for b in bars if b[0] == "smollm2 0-shot"]  # its first bar: Circa RELAXED
    # runs without the items' figures: no error bar (the spread over templates is no 95% interval)
    assert llm[1][0] == pytest.approx(1.39 / 3) and math.isnan(llm[2][0])
    assert lines == pytest.approx([0.25, 0.25, 1 / 6, 0.5])  # GRICE recovery, Circa RELAXED, STRICT, MC


def test_a_limited_test_set_qualifies_the_cell_and_validate_and_threads_name_nothing(tmp_path):
    llm_run(
        tmp_path,
        "mc",
        "intentions_mc",
        {"test/acc": 0.9},
        extra=("trainer.limit_test_batches=20", "validate=false", "threads=2"),
    )
    llm_run(tmp_path, "plain", "intentions_reply", {"test/acc": 0.5})
    text = scorecard.markdown(scorecard.build(find_runs([tmp_path])))
    table = parse(text)
    assert table["smollm2 0-shot"]["Intentions MC acc"] == "0.900"  # one row for the LLM
    assert "trainer.limit_test_batches=20" in text.split("Task settings", 1)[1] and "validate" not in text
    assert "threads" not in text


def test_a_fine_tuned_llm_is_one_row_across_tasks_with_its_schedules_noted(tmp_path):
    tuned = {**SMOLLM2, "finetune": "lora"}
    llm_run(tmp_path, "zero", "grice_recovery", {"test/r@1": 0.27}, template=0)
    llm_run(
        tmp_path,
        "lora_grice",
        "grice_recovery",
        {"test/r@1": 0.6},
        config={"llm": tuned},
        extra=("llm.finetune=lora", "optimizer.lr=2e-4", "trainer.max_epochs=1"),
    )
    llm_run(
        tmp_path,
        "lora_mc",
        "intentions_mc",
        {"test/acc": 0.7},
        config={"llm": tuned},
        extra=("llm.finetune=lora", "optimizer.lr=5e-4"),
    )
    text = scorecard.markdown(scorecard.build(find_runs([tmp_path])))
    table = parse(text)
    assert table["smollm2 0-shot"]["GRICE recovery R@1"] == "0.270"
    assert table["smollm2 lora"]["GRICE recovery R@1"] == "0.600"
    assert table["smollm2 lora"]["Intentions MC acc"] == "0.700"
    notes = text.split("Task settings", 1)[1]
    assert "optimizer.lr=2e-4, trainer.max_epochs=1" in notes and "optimizer.lr=5e-4" in notes


def test_an_evaluation_of_a_tuned_checkpoint_is_the_tuned_llms_row(tmp_path):
    import torch

    ckpt = tmp_path / "best.ckpt"
    extras = {
        "format": 2,
        "task": "ClassificationTask",
        "task_name": "circa",
        "model": {"llm": {"finetune": "lora"}},
    }
    torch.save({"state_dict": {}, "pragexp": extras}, ckpt)
    llm_run(tmp_path, "zero", "grice_recovery", {"test/r@1": 0.27}, template=0)
    llm_run(tmp_path, "eval", "grice_recovery", {"test/r@1": 0.61}, config={"ckpt_path": str(ckpt)})
    # The migration script reads how the evaluated checkpoint was tuned (run.json says it for a run of today).
    with pytest.warns(UserWarning, match=r"gone.ckpt: it cannot be read .*named '<llm> trained'"):
        gone = {"ckpt_path": str(tmp_path / "gone.ckpt")}
        llm_run(tmp_path, "moved", "intentions_mc", {"test/acc": 0.7}, config=gone)
    torch.save({"state_dict": {}, "pragexp": {"format": 2, "model": {}}}, tmp_path / "silent.ckpt")
    llm_run(
        tmp_path,
        "silent",
        "intentions_reply",
        {"test/acc": 0.4},
        config={"ckpt_path": str(tmp_path / "silent.ckpt")},
    )
    table = parse(scorecard.markdown(scorecard.build(find_runs([tmp_path]))))
    assert table["smollm2 0-shot"]["GRICE recovery R@1"] == "0.270"
    assert table["smollm2 lora"]["GRICE recovery R@1"] == "0.610"
    # A checkpoint that cannot be read, or does not say how it was tuned: a tuned LLM's row, never a prompted
    # one.
    assert table["smollm2 trained"]["Intentions MC acc"] == "0.700"
    assert table["smollm2 trained"]["Intentions gen. acc"] == "0.400"


def test_runs_made_under_the_intention_tasks_old_names_join_their_new_columns(tmp_path):
    """task=llm_response_eval and task=llm_intent_mc became intentions_reply and intentions_mc (issue 25): run
    folders written before, migrated, read as the new tasks, in the same row as new runs of the same LLM."""
    llm_run(tmp_path, "old_mc", "llm_intent_mc", {"test/acc": 0.5})
    llm_run(tmp_path, "new_reply", "intentions_reply", {"test/acc": 0.4})
    assert {run.task for run in find_runs([tmp_path])} == {"intentions_mc", "intentions_reply"}
    table = parse(scorecard.markdown(scorecard.build(find_runs([tmp_path]))))
    assert table["smollm2 0-shot"]["Intentions MC acc"] == "0.500"
    assert table["smollm2 0-shot"]["Intentions gen. acc"] == "0.400"


# The LLM benchmarks (hu_pragmatics, ludwig, bigbench_implicatures): runs of model=llm.
HU_ITEMS = {
    "CoherenceInference": 40,
    "Deceits": 20,
    "Irony": 25,
    "Maxims": 19,
    "Metaphor": 20,
}  # five of seven
LUDWIG_TEMPLATES = ["question_response_implicature", "esther_juan", "question_response_meaning"]
LUDWIG_TEMPLATES += ["question_response_intent", "karen_william", "bob_alice"]
LUDWIG_0SHOT = (0.50, 0.52, 0.55, 0.60, 0.58, 0.53)  # per template
LUDWIG_5SHOT = (0.62, 0.64, 0.57)  # templates 0-2: the best mean (0.61)
LUDWIG_30SHOT = (0.60, 0.59, 0.58)  # 0.59


def hu_run(root, name, template, metrics, report=None, extra=()):
    run = llm_run(root, name, "hu_pragmatics", metrics, template=template, shots=0, extra=extra)
    if report is not None:
        (run / "data_report.json").write_text(json.dumps(report))
    return run


def ludwig_run(root, name, template, shots, metrics, extra=()):
    """A LUDWIG run: prompt.template as a position, as a sweep over 0..5 gives it; the config lists the
    names."""
    templates = [{"name": n} for n in LUDWIG_TEMPLATES]
    config = {
        "prompt": {"template": template, "shots": shots, "templates": templates},
        "data": {"shots": shots},
    }
    return llm_run(root, name, "ludwig", metrics, template, shots, config=config, extra=extra)


def uncertainty(key, mean, stderr, items):
    """The figures pragexp.metrics.uncertainty writes beside a mean `key` (`test/acc/Irony` ->
    `test/acc_stderr/Irony`)."""
    stage, name, *group = key.split("/")
    figures = {"stderr": stderr, "n": items, "ci95_low": mean - 2 * stderr, "ci95_high": mean + 2 * stderr}
    return {"/".join([stage, f"{name}_{f}", *group]): v for f, v in figures.items()}


def hu_metrics(acc, view_std=0.05, stderr=0.02):
    out = {"test/acc": acc, "test/acc_view_std": view_std, "test/human_corr": 0.3, "test/count": 620}
    out |= uncertainty("test/acc", acc, stderr, 124)
    for p, items in HU_ITEMS.items():
        out |= {f"test/acc/{p}": acc, f"test/acc_view_std/{p}": view_std}
        out |= uncertainty(f"test/acc/{p}", acc, stderr, items)
    return out | {"test/error_share/IncorrectLiteral": 0.6, "test/error_share/IncorrectNonSequitur": 0.4}


@pytest.fixture
def benchmark_runs(tmp_path):
    root = tmp_path / "benchmarks"
    report = {"per_phenomenon": {p: 5 * n for p, n in HU_ITEMS.items()}, "human_accuracy": {"Irony": 0.9}}
    hu_run(root, "hu_authors", "authors", hu_metrics(0.40), report)
    hu_run(root, "hu_letters", "letters", hu_metrics(0.30, 0.1, 0.04), report)
    for shots, accs in ((0, LUDWIG_0SHOT), (5, LUDWIG_5SHOT), (30, LUDWIG_30SHOT)):
        for template, acc in enumerate(accs):
            metrics = {"test/acc": acc, "test/acc/Idiom": acc - 0.1, "test/count": 600}
            ludwig_run(root, f"ludwig_k{shots}_t{template}", template, shots, metrics)
    llm_run(root, "bigbench", "bigbench_implicatures", {"test/acc": 0.55})
    return root


def test_the_llm_benchmarks_columns_cells_and_published_rows(benchmark_runs):
    card = scorecard.build(find_runs([benchmark_runs]))
    text = scorecard.markdown(card)
    print(text)
    table = parse(text)
    hu, zero, best, bigbench = (
        "Hu et al. acc",
        "LUDWIG 0-shot acc",
        "LUDWIG best-k acc",
        "BIG-bench implicatures acc",
    )
    assert [c.title for c in card.columns] == [hu, zero, best, bigbench]
    llm = next(r for r in card.rows if r.name == "smollm2 0-shot")
    # Hu: the templates' mean, the root mean square of their standard errors over items, and their sample std
    # apart.
    assert llm.cells[hu].mean == pytest.approx(0.35) and llm.cells[hu].n == 2
    assert table["smollm2 0-shot"][hu] == "0.350 ± 0.032 (n=124 items); sd 0.071 over 2 templates"
    assert llm.cells[hu].half == pytest.approx(2 * (0.001**0.5))  # the figure's error bar: the 95% interval
    # LUDWIG 0-shot: the six templates' mean ± their population std (np.std), not the sample std.
    cell = llm.cells[zero]
    assert (cell.mean, cell.n) == (pytest.approx(sum(LUDWIG_0SHOT) / 6), 6)
    assert cell.std == pytest.approx(statistics.pstdev(LUDWIG_0SHOT))
    assert cell.std != pytest.approx(statistics.stdev(LUDWIG_0SHOT))
    # Best k: k=5 (mean 0.61) beats k=30 (0.59) and k=0 (0.547); its k is noted; no k-shot rows of their own.
    cell = llm.cells[best]
    assert cell.mean == pytest.approx(0.61) and cell.std == pytest.approx(statistics.pstdev(LUDWIG_5SHOT))
    assert "smollm2 0-shot, LUDWIG best-k acc: prompt.shots=5" in text
    assert not any(name.startswith(("smollm2 5-shot", "smollm2 30-shot")) for name in table)
    assert table["smollm2 0-shot"][bigbench] == "0.550"

    # Chance: Hu's 1/options weighted by the paper's items over the five phenomena the runs cover.
    hu_chance = (40 / 2 + 20 / 4 + 25 / 4 + 19 / 4 + 20 / 5) / 124
    assert next(c for c in card.columns if c.title == hu).chance == pytest.approx(hu_chance)
    assert [table["chance"][c] for c in (hu, zero, best, bigbench)] == [f"{hu_chance:.3f}", *["0.500"] * 3]
    # The papers' rows: Hu's item-weighted over the same five phenomena (Humour and IndirectSpeech left out).
    davinci = (40 * 0.7 + 20 * 0.79 + 25 * 0.576 + 19 * 0.653 + 20 * 0.78) / 124
    assert table["text-davinci-002 (paper)"][hu] == f"{davinci:.3f}" == "0.695"
    human = (40 * 0.857 + 20 * 0.842 + 25 * 0.919 + 19 * 0.796 + 20 * 0.897) / 124
    assert table["human (paper)"][hu] == f"{human:.3f}" and "GRICE QA acc" not in table["human (paper)"]
    assert table["gpt2 (paper)"][hu] != "–" and table["gpt2 (paper)"][zero] == "–"
    assert "CoherenceInference (40 items), Deceits (20 items), Irony (25 items), Maxims (19 items)" in text
    assert "Humour" not in text.split("Columns:", 1)[1]
    # LUDWIG's: prompt.shots picks the column; people in both (k does not apply); chance rows are the chance
    # row.
    assert (table["text-davinci-002 (paper)"][zero], table["text-davinci-002 (paper)"][best]) == (
        "0.706",
        "0.806",
    )
    assert "text-davinci-002 (paper), LUDWIG best-k acc: prompt.shots=30" in text
    assert (table["text-davinci-001 (paper)"][zero], table["text-davinci-001 (paper)"][best]) == (
        "0.720",
        "–",
    )
    assert table["human_average (paper)"][zero] == table["human_average (paper)"][best] == "0.862"
    assert table["human_best (paper)"][best] == "0.898"
    assert (table["blenderbot_best (paper)"][zero], table["opt_best (paper)"][zero]) == ("0.534", "0.615")
    assert not {"chance (paper)", "random (paper)"} & set(table)
    assert not any("prompt.shots" in name for name in table)


def test_hu_without_data_reports_compares_all_seven_phenomena(tmp_path):
    hu_run(tmp_path, "hu", "authors", {"test/acc": 0.4})
    card = scorecard.build(find_runs([tmp_path]))
    column = next(c for c in card.columns if c.title == "Hu et al. acc")
    items = (40, 20, 25, 20, 25, 19, 20)
    assert column.covered[2] == "Humour" and sum(column.items) == sum(items) == 169
    assert column.chance == pytest.approx(
        (40 / 2 + 20 / 4 + 25 / 5 + 20 / 4 + 25 / 4 + 19 / 4 + 20 / 5) / 169
    )
    davinci = (0.7, 0.79, 0.552, 0.83, 0.576, 0.653, 0.78)
    cell = next(r for r in card.rows if r.name == "text-davinci-002 (paper)").cells["Hu et al. acc"]
    assert cell.mean == pytest.approx(sum(n * a for n, a in zip(items, davinci, strict=True)) / 169)
    assert "no run's data_report.json says" in scorecard.markdown(card)
    assert [c.title for c in card.columns][-1] == "Hu et al. acc"  # no LUDWIG or BIG-bench run: no column


def test_ludwig_best_k_takes_the_smaller_k_on_a_tie_and_the_contrastive_setting_is_a_row(tmp_path):
    for shots in (0, 10):
        for template, acc in enumerate((0.6, 0.7)):
            ludwig_run(tmp_path, f"k{shots}t{template}", template, shots, {"test/acc": acc})
    ludwig_run(tmp_path, "contrastive", 0, 0, {"test/acc": 0.8}, extra=("prompt=ludwig_contrastive",))
    text = scorecard.markdown(scorecard.build(find_runs([tmp_path])))
    table = parse(text)
    assert (
        table["smollm2 0-shot"]["LUDWIG best-k acc"] == "0.650; pop. sd 0.050 over 2 templates"
    )  # population std of 0.6, 0.7
    assert "smollm2 0-shot, LUDWIG best-k acc: prompt.shots=0" in text
    contrastive = table["smollm2 0-shot (prompt=ludwig_contrastive)"]
    assert contrastive["LUDWIG 0-shot acc"] == contrastive["LUDWIG best-k acc"] == "0.800"
