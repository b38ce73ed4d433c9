"""Report sections print a figure's uncertainty where metrics.json holds it (issue 46): Hu et al.'s error
shares by distractor kind, a mean over the wrong answers clustered by item."""

from scorecard_runs import hu_metrics, hu_run, uncertainty
from test_benchmarks_report import rows_of

from pragexp.data.hu_pragmatics import report_section as hu
from pragexp.report import find_runs


def test_hu_error_shares_carry_their_standard_error(tmp_path):
    metrics = hu_metrics(0.4) | uncertainty("test/error_share/IncorrectLiteral", 0.6, 0.07, 31)
    hu_run(tmp_path / "runs", "hu", "authors", metrics, {"per_phenomenon": {"Irony": 125}})
    errors = rows_of("\n".join(hu.sections(find_runs([tmp_path / "runs"]))), hu.SPREAD_TITLE)
    assert errors[0]["IncorrectLiteral"] == "0.600 ± 0.070 (n=31 items)"
    assert errors[0]["IncorrectNonSequitur"] == "0.400"  # a run without the figures: the mean alone
    assert errors[0]["option orders sd"] == "0.050"  # a spread: no interval
