"""pragexp.report's tables of one dataset beside its paper's: Circa's strict and leave-one-scenario-out rows,
GRICE's Table 5 (r@1 from percent, MRR), PragmatiCQA's q, r@k and corpus."""

from report_runs import row_cells, table, write_run

from pragexp import report

STRICT = ("yes", "probably_yes", "conditional", "no", "probably_no", "middle")


def circa_run(root, name, labels, setting, seed=0, fold=None, acc=0.8, extra=()):
    """A BERT-YN run; data.labels and data.setting come from the composed config unless in `extra`."""
    metrics = {"val/acc": acc, "test/acc": acc, "test/count": 99, "test/macro_f1": 0.5}
    metrics |= {f"test/f1/{slug}": 0.5 for slug in STRICT}
    config = {"data": {"labels": labels, "setting": setting, "fold": fold or 0}}
    write_run(root, name, "circa", "bert", metrics, seed, "circa/bert_yn", extra, fold, config)


def test_circa_strict_row_shows_the_strict_table_and_the_rest_is_listed_as_published(tmp_path):
    circa_run(tmp_path, "strict0", "strict", "matched", seed=0, extra=("data.labels=strict",))
    circa_run(tmp_path, "strict1", "strict", "matched", seed=1, extra=("data.labels=strict",))
    circa_run(tmp_path, "relaxed", "relaxed", "matched")  # the defaults
    text = report.markdown_report(report.find_runs([tmp_path]))
    strict, relaxed = (
        row_cells(text, "circa", "bert_yn (data.labels=strict)"),
        row_cells(text, "circa", "bert_yn"),
    )
    assert strict["paper row"] == "bert_yn (data.labels=strict, data.setting=matched)"
    assert (strict["paper val/acc"], strict["paper test/acc"]) == ("0.836", "0.840")  # Table 10, not 9
    assert (relaxed["paper val/acc"], relaxed["paper test/acc"]) == ("0.884", "0.878")  # Table 9
    assert strict["runs"] == "2" and strict["test/macro_f1"] == "0.500; sd 0.000 over 2 runs"
    assert "paper test/macro_f1" not in strict and "test/count" not in strict
    f1 = table(text, "circa: test/f1/<group>")
    columns = [h for h in f1["bert_yn"] if h.startswith("test/")]  # RELAXED's labels, then STRICT's others
    assert columns == [
        f"test/f1/{s}" for s in ("yes", "no", "conditional", "middle", "probably_yes", "probably_no")
    ]
    assert f1["bert_yn (data.labels=strict)"]["paper test/f1/probably_yes"] == "0.499"
    assert f1["bert_yn (data.labels=strict)"]["paper test/f1/middle"] == "0.426"  # strict, not relaxed 0.282
    assert (
        f1["bert_yn"]["paper test/f1/middle"] == "0.282" and f1["bert_yn"]["paper test/f1/probably_yes"] == ""
    )
    published = table(text, "circa: published, not run here")
    assert "bert_yn (data.labels=strict, data.setting=matched)" not in published
    assert len(published) == 36 - 2
    assert published["bert_dis_yn (data.labels=strict, data.setting=matched)"]["test/f1/middle"] == "0.508"
    loso = published["bert_yn (data.labels=strict, data.setting=unmatched)"]
    assert loso["test/acc"] == "0.812; sd 0.046 over folds [0.718, 0.856]" and loso["val/acc"] == ""


def test_circa_leave_one_scenario_out_row_reads_like_the_papers(tmp_path):
    for fold in range(10):
        acc = 0.80 + 0.01 * fold
        circa_run(
            tmp_path,
            f"fold{fold}",
            "relaxed",
            "unmatched",
            fold=fold,
            acc=acc,
            extra=("data.setting=unmatched",),
        )
    text = report.markdown_report(report.find_runs([tmp_path]))
    row = row_cells(text, "circa", "bert_yn (data.setting=unmatched)")
    assert row["runs"] == "10" and row["paper row"] == "bert_yn (data.labels=relaxed, data.setting=unmatched)"
    assert row["test/acc"] == "0.845; sd 0.030 over 10 runs [0.800, 0.890]"
    assert row["paper test/acc"] == "0.855; sd 0.039 over folds [0.790, 0.902]"
    assert (
        row["val/acc"] == "0.845; sd 0.030 over 10 runs [0.800, 0.890]" and "paper val/acc" not in row
    )  # none published


def test_grice_table5_scales_r_at_1_from_percent_and_keeps_mrr(tmp_path):
    metrics = {
        "val/r@1": 0.95,
        "val/mrr": 0.97,
        "test/r@1": 0.96,
        "test/mrr": 0.98,
        "test/r@1/ignorance": 0.9,
    }
    write_run(
        tmp_path,
        "m",
        "grice_recovery",
        "memnn",
        metrics,
        experiment="grice/table5_memnn",
        config={"scale": "small"},
    )
    text = report.markdown_report(report.find_runs([tmp_path]))
    row = row_cells(text, "grice_recovery", "table5_memnn")
    assert list(row)[2:] == [
        "scale",
        "val/r@1",
        "paper val/r@1",
        "val/mrr",
        "paper val/mrr",
        "test/r@1",
        "paper test/r@1",
        "test/mrr",
        "paper test/mrr",
    ]  # settings, then the paper's order: dev then test, R@1 then MRR
    assert row["scale"] == "small"
    assert (row["paper val/r@1"], row["paper test/r@1"]) == ("0.968", "0.973")  # 96.76 %, 97.29 %
    assert (row["paper val/mrr"], row["paper test/mrr"]) == ("0.983", "0.986")  # 0.9833, 0.9862 as published
    assert "`scale`: paper" in text
    assert table(text, "grice_recovery: test/r@1/<group>")["table5_memnn"]["test/r@1/ignorance"] == "0.900"
    human = table(text, "grice_recovery: published, not run here")["human"]
    assert (human["val/r@1"], human["test/r@1"], human["test/mrr"]) == ("0.990", "0.985", "")


def fid_run(root, name, top_k, corpus, metrics, seed=0):
    config = {
        "retriever": {"top_k": top_k},
        "data": {"corpus": corpus},
        "metrics": {"q_scorer": "facebook/bart-large-cnn"},
    }
    extra = (f"retriever.top_k={top_k}", f"data.corpus={corpus}")
    write_run(root, name, "pragmaticqa", "fid", metrics, seed, extra=extra, config=config)


def test_pragmaticqa_keeps_q_raw_shares_the_r_at_k_column_and_prints_the_corpus(tmp_path):
    fid_run(
        tmp_path, "k5", 5, "fandom_html", {"val/r@5": 0.06, "val/q": -3.8, "test/r@5": 0.05, "test/q": -3.7}
    )
    fid_run(
        tmp_path, "k5wiki", 5, "wikipedia", {"val/r@5": 0.2, "val/q": -2.0, "test/r@5": 0.3, "test/q": -2.1}
    )
    fid_run(tmp_path, "k10", 10, "fandom_html", {"val/r@10": 0.08, "test/r@10": 0.07, "test/q": -3.6})
    text = report.markdown_report(report.find_runs([tmp_path]))
    k5 = row_cells(text, "pragmaticqa", "fid (data.corpus=fandom_html, retriever.top_k=5)")
    assert k5["paper val/q"] == "-3.754" and k5["paper test/q"] == "-3.741"  # a log-likelihood: not scaled
    assert k5["val/r@k"] == "0.060" and k5["paper val/r@k"] == "0.058"  # 5.77 %
    assert k5["paper test/r_all@k"] == "0.042" and k5["test/r_all@k"] == ""  # not logged by the run
    k10 = row_cells(text, "pragmaticqa", "fid (data.corpus=fandom_html, retriever.top_k=10)")
    assert k10["paper test/r@k"] == "0.071" and k10["paper row"] == "fid (retriever.top_k=10)"
    assert k5["data.corpus"] == "fandom_html" and k5["metrics.q_scorer"] == "facebook/bart-large-cnn"
    wiki = row_cells(text, "pragmaticqa", "fid (data.corpus=wikipedia, retriever.top_k=5)")
    assert wiki["data.corpus"] == "wikipedia" and wiki["retriever.top_k"] == "5"
    assert "Fandom HTML passages" in text and "BARTScore with facebook/bart-large-cnn" in text
    published = table(text, "pragmaticqa: published, not run here")
    assert set(published) == {f"fid (retriever.top_k={k})" for k in (1, 20, 50)}
    assert published["fid (retriever.top_k=50)"]["test/q"] == "-3.636"
    assert published["fid (retriever.top_k=1)"]["val/r@k"] == "0.016"


def test_cut_offs_keep_their_own_columns_when_a_row_has_several(tmp_path):
    fid_run(tmp_path, "k5", 5, "fandom_html", {"test/r@1": 0.01, "test/r@5": 0.05})
    text = report.markdown_report(report.find_runs([tmp_path]))
    row = table(text, "pragmaticqa: test")["fid (data.corpus=fandom_html, retriever.top_k=5)"]
    assert row["test/r@1"] == "0.010" and row["test/r@5"] == "0.050" and row["paper test/r@5"] == "0.049"
    assert "test/r@k" not in row and "paper test/r@1" not in row
