"""pragexp.report on a PragmatiCQA k sweep: each run's row beside the paper's Table 4 row of its k, with the
corpus, the splits and the Q scorer of every row named."""

from report_runs import table, write_run

from pragexp import report


def test_the_k_sweep_prints_beside_table_4_with_corpus_and_scorer(tmp_path):
    for k in (1, 5):
        metrics = {
            f"val/r@{k}": 0.2 * k,
            f"val/r_all@{k}": 0.1 * k,
            "val/f1_lit": 0.3,
            "val/f1_prag": 0.2,
            "val/q": -4.5,
            "val/ppl": 12.0,
            f"test/r@{k}": 0.25 * k,
            f"test/r_all@{k}": 0.15,
            "test/f1_lit": 0.31,
            "test/f1_prag": 0.21,
            "test/q": -4.4,
            "test/retrieval/r@1": 0.1,
            "test/retrieval/r@5": 0.4,
            "test/f1_lit/what": 0.5,
        }
        config = {
            "retriever": {"top_k": k},
            "data": {"corpus": "spans", "splits": "carved"},
            "metrics": {"q_scorer": "minilm"},
        }
        write_run(
            tmp_path,
            f"k{k}",
            "pragmaticqa",
            "fid",
            metrics,
            experiment="pragmaticqa/offline",
            extra=(f"retriever.top_k={k}",),
            config=config,
        )
    text = report.markdown_report(report.find_runs([tmp_path]))
    settings = table(text, "pragmaticqa: settings")
    row = settings["offline (retriever.top_k=5)"]
    assert row["paper row"] == "fid (retriever.top_k=5)"
    assert (row["data.corpus"], row["data.splits"], row["metrics.q_scorer"]) == ("spans", "carved", "minilm")
    assert "BARTScore with facebook/bart-large-cnn" in text  # the paper's scorer, printed under the table
    dev = table(text, "pragmaticqa: dev")
    assert dev["offline (retriever.top_k=1)"]["val/r@k"] == "0.200"
    assert dev["offline (retriever.top_k=1)"]["paper val/r@k"] == "0.016"  # 1.59 %
    assert dev["offline (retriever.top_k=5)"]["paper val/q"] == "-3.754"  # raw, never scaled
    test = table(text, "pragmaticqa: test")
    assert test["offline (retriever.top_k=5)"]["paper test/f1_prag"] == "0.057"
    assert "val/ppl" not in dev["offline (retriever.top_k=5)"]  # no paper column for it in the dev table
    sweep = table(text, "pragmaticqa: test/retrieval/<group>")
    assert sweep["offline (retriever.top_k=1)"]["test/retrieval/r@5"] == "0.400"
    published = table(text, "pragmaticqa: published, not run here")
    assert set(published) == {f"fid (retriever.top_k={k})" for k in (10, 20, 50)}
