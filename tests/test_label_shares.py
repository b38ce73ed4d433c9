"""pragexp.report on classifier runs: the predicted-label shares table and its collapse warning, the
scorecard's mark, a confusion matrix per row (--figures), and Circa rows that name the encoder and data file
they ran on."""

import json

import pytest
from conftest import migrated
from report_runs import data_target, row_cells, table, write_run
from scorecard_runs import llm_run, parse

from pragexp import report
from pragexp.report import label_shares, scorecard

RELAXED = ("Yes", "No", "Yes, subject to some conditions", "In the middle, neither yes nor no")
YES, NO, COND, MID = RELAXED
EXCERPT = "/data/excerpt/circa-7-scenarios.tsv"
GOLD = {YES: 50, NO: 30, COND: 15, MID: 5}  # 100 test items
MINILM_YN = "bert_yn (model.pretrained=minilm, data: circa-7-scenarios.tsv)"
LLM_ROW = "llm (llm.model=smollm2, prompt.shots=0, prompt.template=0, data: circa-7-scenarios.tsv)"
SHARES = "circa: predicted label shares (test)"


def classifier_outputs(
    run_dir, gold: dict, predicted: dict, labels=RELAXED, files=("predictions", "confusion")
):
    """predictions.jsonl and confusion/test.json as a run writes them: the items' gold labels in the order of
    `gold`, paired with the predictions in the order of `predicted` (None: no answer)."""
    golds = [label for label, n in gold.items() for _ in range(n)]
    preds = [label for label, n in predicted.items() for _ in range(n)]
    assert len(golds) == len(preds)
    if "predictions" in files:
        lines = [
            json.dumps({"index": i, "gold": g, "predicted": p})
            for i, (g, p) in enumerate(zip(golds, preds, strict=True))
        ]
        (run_dir / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    if "confusion" in files:
        index = {label: i for i, label in enumerate(labels)}
        matrix = [[0] * len(labels) for _ in labels]
        for g, p in zip(golds, preds, strict=True):
            if p is not None:
                matrix[index[g]][index[p]] += 1
        (run_dir / "confusion").mkdir()
        doc = {"labels": list(labels), "rows": "gold", "columns": "predicted", "matrix": matrix}
        (run_dir / "confusion" / "test.json").write_text(json.dumps(doc))
    return migrated(
        run_dir
    )  # run.json counts the items scored (predictions.jsonl) where metrics.json does not


def circa_config(path=EXCERPT, setting="matched", fold=0):
    return {"data": {"labels": "relaxed", "setting": setting, "fold": fold, "path": path}}


def minilm_run(root, name, seed=0, path=EXCERPT, acc=0.5, extra=(), fold=None, setting="matched"):
    """BERT-YN with MiniLM in BERT's place on a data file, as `experiment=circa/bert_yn` writes it."""
    metrics = {"val/acc": acc, "test/acc": acc, "test/count": 100, "test/f1/yes": 0.66}
    extra = ("model.pretrained=minilm", f"data.path={path}", *extra)
    config = circa_config(path, setting, fold or 0)
    return write_run(root, name, "circa", "bert", metrics, seed, "circa/bert_yn", extra, fold, config)


@pytest.fixture
def circa_runs(tmp_path):
    """MiniLM collapsed on Yes (98% and 96% over two seeds, data files in two directories), SmolLM2 at 89% Yes
    with some replies naming no label, the majority baseline, and a run that wrote no predictions."""
    root = tmp_path / "runs"
    classifier_outputs(minilm_run(root, "yn0", 0), GOLD, {YES: 98, NO: 2})
    classifier_outputs(minilm_run(root, "yn1", 1, "/elsewhere/circa-7-scenarios.tsv"), GOLD, {YES: 96, NO: 4})
    metrics = {"test/acc": 0.49, "test/count": 100, "test/no_answer": 0.05}
    llm = llm_run(root, "llm", "circa", metrics, 0, 0, config=circa_config(), extra=(f"data.path={EXCERPT}",))
    classifier_outputs(llm, GOLD, {YES: 89, NO: 6, None: 5})
    majority = write_run(
        root, "maj", "circa", "majority", {"test/acc": 0.5}, experiment="circa/majority",
        extra=(f"data.path={EXCERPT}",), config=circa_config(),
    )  # fmt: skip
    classifier_outputs(majority, GOLD, {YES: 100})
    write_run(
        root, "answer", "circa", "bert", {"test/acc": 0.6}, experiment="circa/bert_answer",
        extra=(f"data.path={EXCERPT}", "data.input=answer"), config=circa_config(),
    )  # fmt: skip
    return root


def test_the_shares_table_warns_about_a_collapsed_row_only(circa_runs):
    text = report.markdown_report(report.find_runs([circa_runs]))
    shares = table(text, SHARES)
    header = list(shares[MINILM_YN])
    assert header == ["model", "runs", *RELAXED, "no answer"]  # the task's label order, then null replies
    yn = shares[MINILM_YN]
    assert yn["runs"] == "2" and (yn[YES], yn[NO], yn[COND]) == ("0.970", "0.030", "0.000")
    llm = shares[LLM_ROW]
    assert (llm[YES], llm[NO], llm["no answer"]) == ("0.890", "0.060", "0.050")
    assert shares["majority (data: circa-7-scenarios.tsv)"][YES] == "1.000"
    assert not any(name.startswith("bert_answer") for name in shares)  # no predictions written: left out
    gold = shares["gold (data: circa-7-scenarios.tsv)"]  # one reference: its facts tell nothing apart
    assert (gold["runs"], gold[YES], gold[NO], gold[COND], gold[MID], gold["no answer"]) == (
        "", "0.500", "0.300", "0.150", "0.050", ""
    )  # fmt: skip
    assert len([name for name in shares if name.startswith("gold")]) == 1  # one data set, one label set
    warnings = [line for line in text.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {MINILM_YN} predicts 'Yes' for 97.0% of the test items (gold: 50.0%)"]
    assert text.index(f"### {SHARES}") < text.index(warnings[0]) < text.index("### circa: published")


def test_a_row_warns_above_90_percent_and_not_at_89(tmp_path):
    classifier_outputs(minilm_run(tmp_path, "at91"), GOLD, {NO: 91, YES: 9})
    classifier_outputs(minilm_run(tmp_path, "at89", extra=("optimizer.lr=2e-05",)), GOLD, {NO: 89, YES: 11})
    text = report.markdown_report(report.find_runs([tmp_path]))
    assert [line for line in text.splitlines() if line.startswith("warning:")] == [
        f"warning: {MINILM_YN} predicts 'No' for 91.0% of the test items (gold: 30.0%)"
    ]
    assert "no answer" not in table(text, SHARES)[MINILM_YN]  # no null prediction: no column


def test_shares_from_a_confusion_matrix_alone_and_runs_without_label_names(tmp_path):
    nli = ("entailment", "neutral", "contradiction")
    run = write_run(tmp_path, "mnli", "nli", "bert", {"test/acc": 0.4, "test/count": 10})
    classifier_outputs(run, {"neutral": 4, "entailment": 3, "contradiction": 3}, {"contradiction": 10}, nli,
                       files=("confusion",))  # fmt: skip
    recovery = write_run(tmp_path, "rec", "grice_recovery", "memnn", {"test/r@1": 0.9})
    (recovery / "predictions.jsonl").write_text(json.dumps({"index": 0, "gold": 1, "predicted": 1}) + "\n")
    broken = write_run(tmp_path, "broken", "boolq", "bert", {"test/acc": 0.5})
    (broken / "predictions.jsonl").write_text('{"gold": "yes", "predicted"\n')  # cut short: skipped
    text = report.markdown_report(report.find_runs([tmp_path]))
    shares = table(text, "nli: predicted label shares (test)")
    assert list(shares["bert"])[2:] == list(nli)  # the matrix's order, not the items'
    assert shares["bert"]["contradiction"] == "1.000" and shares["gold"]["neutral"] == "0.400"
    assert "warning: bert predicts 'contradiction' for 100.0% of the test items (gold: 30.0%)" in text
    assert (
        "grice_recovery: predicted label shares" not in text and "boolq: predicted label shares" not in text
    )


def test_many_labels_show_the_largest_shares_and_sum_the_rest(tmp_path):
    words = [f"w{i:02d}" for i in range(15)]
    run = write_run(tmp_path, "qa", "grice_qa", "memnn", {"test/acc": 0.1})
    classifier_outputs(run, {w: 2 for w in words}, {"w14": 16, **{w: 1 for w in words[:14]}}, tuple(words))
    shares = table(
        report.markdown_report(report.find_runs([tmp_path])), "grice_qa: predicted label shares (test)"
    )
    columns = list(shares["memnn"])[2:]
    assert len(columns) == label_shares.MAX_COLUMNS and columns[-1] == "other" and "w14" in columns
    row = shares["memnn"]
    assert row["w14"] == "0.533" and row["other"] == f"{(15 - (len(columns) - 1)) / 30:.3f}"


def test_circa_rows_name_the_encoder_and_the_data_file_and_keep_the_papers_cell(tmp_path):
    minilm_run(tmp_path, "yn0", 0, acc=0.80)
    minilm_run(
        tmp_path, "yn1", 1, "/other/dir/circa-7-scenarios.tsv", acc=0.82, extra=("print_config=true",)
    )  # the same file elsewhere, printing its config: one row
    for fold in range(3):
        minilm_run(
            tmp_path, f"loso{fold}", 0, fold=fold, setting="unmatched", extra=("data.setting=unmatched",)
        )
    text = report.markdown_report(report.find_runs([tmp_path]))
    row = row_cells(text, "circa", MINILM_YN)
    assert row["runs"] == "2" and row["test/acc"] == "0.810; sd 0.014 over 2 runs"
    assert (
        row["paper row"] == "bert_yn (data.labels=relaxed, data.setting=matched)"
        and row["paper test/acc"] == "0.878"
    )
    loso = row_cells(
        text,
        "circa",
        "bert_yn (data.setting=unmatched, model.pretrained=minilm, data: circa-7-scenarios.tsv)",
    )
    assert (
        loso["runs"] == "3" and loso["paper row"] == "bert_yn (data.labels=relaxed, data.setting=unmatched)"
    )
    assert "data.path=" not in text and "/other/dir" not in text  # the file's name, not where it lies


def test_the_release_file_names_no_row_unless_runs_differ_in_their_data(tmp_path):
    release = tmp_path / "release"
    write_run(release, "full", "circa", "bert", {"test/acc": 0.88}, experiment="circa/bert_yn",
              extra=("data.path=/x/circa-data.tsv",), config=circa_config("/x/circa-data.tsv"))  # fmt: skip
    assert "bert_yn" in table(report.markdown_report(report.find_runs([release])), "circa: test")
    minilm_run(tmp_path / "excerpt", "yn", acc=0.5)
    both = table(report.markdown_report(report.find_runs([tmp_path])), "circa: test")
    assert set(both) == {"bert_yn (data: circa-data.tsv)", MINILM_YN}


def test_the_scorecard_marks_a_collapsed_cell_and_names_the_excerpt(circa_runs):
    text = scorecard.markdown(scorecard.build(report.find_runs([circa_runs])))
    card = parse(text)
    column = "Circa RELAXED acc"
    assert card["bert_yn (model.pretrained=minilm)"][column] == "0.500; sd 0.000 over 2 runs †"
    assert card["smollm2 0-shot"][column] == "0.490"  # 89% Yes: no mark
    assert card["majority"][column] == "0.500"  # one label by construction: no mark
    assert (
        "† One label takes more than 90% of the cell's test predictions: bert_yn (model.pretrained=minilm), "
        "Circa RELAXED acc: predicts 'Yes' for 97.0% of the test items (gold: 50.0%)." in text
    )
    assert "bert_yn (model.pretrained=minilm), Circa RELAXED acc: data: circa-7-scenarios.tsv" in text


def test_figures_write_a_confusion_matrix_per_row_and_one_per_task(circa_runs, tmp_path, monkeypatch):
    titles = []
    draw = label_shares.draw
    monkeypatch.setattr(label_shares, "draw", lambda ax, m, title: (titles.append(title), draw(ax, m, title)))
    folder = tmp_path / "figures"
    assert report.main([str(circa_runs), "--figures", str(folder)]) == 0
    written = sorted(p.name for p in folder.glob("*.png"))
    assert written == [
        "confusion-circa-bert_yn_model.pretrained-minilm_data_circa-7-scenarios.tsv.png",
        "confusion-circa-llm_llm.model-smollm2_prompt.shots-0_prompt.template-0_data_circa-7-scenarios.tsv"
        ".png",
        "confusion-circa-majority_data_circa-7-scenarios.tsv.png",
        "confusion-circa.png",
    ]
    assert all((folder / name).stat().st_size > 1000 for name in written)
    assert f"circa: {MINILM_YN}\ntest, rows gold, mean of 2 runs" in titles
    assert titles.count(f"{MINILM_YN}\nmean of 2 runs") == 1  # its panel in the side-by-side figure


def test_a_row_matrix_is_the_mean_of_its_runs_or_the_first_runs_when_label_sets_differ(tmp_path):
    classifier_outputs(minilm_run(tmp_path, "a", 0), GOLD, {YES: 100})
    classifier_outputs(minilm_run(tmp_path, "b", 1), GOLD, {YES: 50, NO: 50})
    (row,) = report.group_runs(report.find_runs([tmp_path]))["circa"]
    matrix = label_shares.row_matrix(row)
    assert matrix.how == "mean of 2 runs" and matrix.labels == RELAXED
    assert matrix.counts[0] == [50.0, 0.0, 0.0, 0.0]  # gold Yes: always predicted Yes
    assert matrix.counts[1] == [15.0, 15.0, 0.0, 0.0]  # gold No: Yes in a, No in b
    strict = minilm_run(tmp_path, "c", 2)
    classifier_outputs(
        strict, {YES: 2}, {"Probably no": 2}, (*RELAXED, "Probably yes / sometimes yes", "Probably no")
    )
    (row,) = report.group_runs(report.find_runs([tmp_path]))["circa"]
    assert label_shares.row_matrix(row).how == "first of 3 runs (label sets differ)"


def test_replies_naming_no_label_get_their_own_column_in_the_matrix(tmp_path):
    llm = llm_run(tmp_path, "llm", "circa", {"test/acc": 0.5}, 0, 0, config=circa_config())
    classifier_outputs(llm, {YES: 3, MID: 2}, {YES: 3, None: 2})
    (row,) = report.group_runs(report.find_runs([tmp_path]))["circa"]
    matrix = label_shares.row_matrix(row)
    assert matrix.columns == (*RELAXED, "no answer") and matrix.labels == RELAXED
    assert matrix.counts[3] == [0.0, 0.0, 0.0, 0.0, 2.0]  # gold "In the middle": both unanswered
    assert matrix.counts[0] == [3.0, 0.0, 0.0, 0.0, 0.0]


def test_runs_read_from_predictions_alone_are_averaged_in_one_label_order(tmp_path):
    first = classifier_outputs(minilm_run(tmp_path, "a", 0), {YES: 1, NO: 1}, {NO: 2}, files=("predictions",))
    second = classifier_outputs(
        minilm_run(tmp_path, "b", 1), {NO: 1, YES: 1}, {NO: 2}, files=("predictions",)
    )
    assert label_shares.read_run_labels(report.find_runs([second])[0]).labels == (NO, YES)
    (row,) = report.group_runs(report.find_runs([tmp_path]))["circa"]
    matrix = label_shares.row_matrix(row)
    assert first.name == "a" and matrix.labels == (YES, NO) and matrix.how == "mean of 2 runs"
    assert matrix.counts == [[0.0, 1.0], [0.0, 1.0]]  # both gold rows predicted No in both runs


def test_two_label_sets_share_one_table_with_a_gold_row_each(tmp_path):
    strict = (YES, NO, "Probably yes / sometimes yes", COND, "Probably no", MID)
    classifier_outputs(minilm_run(tmp_path, "relaxed"), GOLD, {YES: 60, NO: 40})
    run = minilm_run(tmp_path, "strict", extra=("data.labels=strict",))
    (run / ".hydra" / "config.yaml").write_text(
        json.dumps(
            {
                "data": {
                    "_target_": data_target("circa"),
                    "labels": "strict",
                    "setting": "matched",
                    "path": EXCERPT,
                }
            }
        )
    )
    classifier_outputs(run, {"Probably no": 4, NO: 6}, {"Probably no": 10}, strict)
    llm = llm_run(
        tmp_path,
        "llm",
        "circa",
        {"test/acc": 0.0},
        0,
        0,
        config=circa_config(),
        extra=(f"data.path={EXCERPT}",),
    )
    classifier_outputs(llm, GOLD, {None: 95, YES: 5})
    text = report.markdown_report(report.find_runs([tmp_path]))
    shares = table(text, SHARES)
    assert list(shares[MINILM_YN])[2:] == [*strict, "no answer"]  # STRICT's order: its row comes first
    strict_row = shares["bert_yn (data.labels=strict, model.pretrained=minilm, data: circa-7-scenarios.tsv)"]
    assert strict_row["Probably no"] == "1.000" and shares[MINILM_YN]["Probably no"] == ""  # not its label
    gold = {name: cells for name, cells in shares.items() if name.startswith("gold")}
    # named by what tells them apart (the label set), not what they share (data.setting=matched)
    assert gold["gold (data.labels=strict, data: circa-7-scenarios.tsv)"][NO] == "0.600"
    assert gold["gold (data.labels=relaxed, data: circa-7-scenarios.tsv)"][NO] == "0.300"
    assert len(gold) == 2
    assert f"warning: {LLM_ROW} names no label for 95.0% of the test items" in text
    assert f"warning: {MINILM_YN} predicts" not in text  # 60% Yes
