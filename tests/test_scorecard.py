"""The scorecard (pragexp.report.scorecard) on fixture run directories: LLM rows across prompt templates,
the intention tasks joining an LLM's row, trained rows, chance and majority, the papers' rows in our units."""

import math

import pytest
import yaml
from report_runs import write_run
from scorecard_runs import SMOLLM2, circa_config, data_report, llm_run, parse

from pragexp.report import find_runs, main, scorecard

STRICT_TRAIN = {"Yes": 30, "No": 30, "Probably yes": 5, "Conditional": 5, "Probably no": 5, "Middle": 5}
STRICT_TEST = {"Yes": 9, "No": 12, "Probably yes": 1, "Conditional": 1, "Probably no": 1, "Middle": 0}


def write_trained_runs(root):
    """MemNN on GRICE, BERT-YN on Circa and the majority baseline."""
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


def write_llm_runs(root):
    """SmolLM2 on Circa over templates and shots, the intention tasks naming the same LLM, and a reference
    backend."""
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
    reference = {
        "llm": {"_target_": "pragexp.generation.backends.reference.ReferenceBackend", "field": "reply_true"}
    }
    write_run(root, "reference", "intentions_reply", "llm", {"test/acc": 1.0}, config=reference)


@pytest.fixture
def runs_dir(tmp_path):
    root = tmp_path / "runs"
    write_trained_runs(root)
    write_llm_runs(root)
    write_run(root, "mnli", "nli", "bert", {"test/acc": 0.8})  # a transfer source: no column
    write_run(root, "oracle", "pragmaticqa", "oracle", {"test/f1_lit": 1.0, "test/f1_prag": 0.9})
    return root


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
    assert_the_llm_rows(card, table, text)
    assert_the_trained_chance_and_majority_rows(table, columns)
    assert_the_papers_rows(table, text)


def assert_the_llm_rows(card, table, text):
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


def assert_the_trained_chance_and_majority_rows(table, columns):
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


def assert_the_papers_rows(table, text):
    # The papers' rows, as fractions: GRICE Tables 5 and 6 (percent), Circa Tables 9 and 10, PragmatiCQA
    # Table 4.
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
