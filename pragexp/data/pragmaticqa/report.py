"""What data_report.json says about a PragmatiCQA run's data (and the log repeats): the files read with their
quirks counted, the splits and how they were made, the corpus and index, and what is worth a warning."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence

from pragexp.data.pragmaticqa.examples import QAExample
from pragexp.data.pragmaticqa.io import Conversation

log = logging.getLogger(__name__)

PAPER_QAS = {"train": 4027, "val": 1479, "test": 1367}  # Table 2 (the release itself holds 3,722/1,526/1,576)


def data_report(
    splits: Mapping[str, Sequence[Conversation]],
    examples: Mapping[str, Sequence[QAExample]],
    gold: Mapping[str, Sequence[tuple[int, ...]]],
    files: Mapping[str, dict],
    split_info: dict,
    corpus: dict,
    index: dict,
    span_keys_not_in_corpus: int,
    group_of: Mapping[str, tuple[str, str]],
) -> dict:
    """The report, logged as it is made: `files` holds each file's read report, `split_info` how the splits
    were made, `corpus` and `index` what was searched, `group_of` each community's passage group."""
    sizes = split_sizes(splits, examples, gold)
    # The release keeps topics apart; a file that does not is worth knowing about. Communities are not
    # kept apart (train and val share Hamilton the Musical and Wizard of Oz): their wiki pages then
    # serve both splits, which a researcher should know when reading dev figures.
    shared = {
        plural: in_more_than_one_split({s: {getattr(c, field) for c in splits[s]} for s in examples})
        for field, plural in (("topic", "topics"), ("community", "communities"))
    }
    for plural, values in shared.items():
        if values:
            log.warning("PragmatiCQA: %s in more than one split: %s", plural, "; ".join(values))
    _log_summary(split_info, sizes, corpus, span_keys_not_in_corpus)
    if split_info["splits"] == "carved":
        log.warning("PragmatiCQA: %s", split_info["note"])
    return {
        "data": "pragmaticqa",
        **split_info,
        **{f"{plural}_in_more_than_one_split": values for plural, values in shared.items()},
        "files": dict(files),
        "split_sizes": sizes,
        "paper_table2_qas": PAPER_QAS,
        "corpus": corpus,
        "index": index,
        "span_keys_not_in_corpus": span_keys_not_in_corpus,
        "community_folders": {
            "matched_by": dict(Counter(how for _, how in group_of.values())),
            "without_a_folder": sorted(c for c, (_, how) in group_of.items() if how == "none"),
        },
    }


def split_sizes(splits, examples, gold) -> dict[str, dict]:
    """Per split: conversations, QAs, topics, QAs with gold passages and the question types' counts."""
    return {
        s: {
            "conversations": len(splits[s]),
            "qas": len(examples[s]),
            "topics": len({c.topic for c in splits[s]}),
            "qas_with_gold_passages": sum(bool(g) for g in gold[s]),
            "question_types": dict(Counter(e.question_type for e in examples[s]).most_common()),
        }
        for s in examples
    }


def _log_summary(split_info: dict, sizes: dict, corpus: dict, span_keys_not_in_corpus: int) -> None:
    log.info(
        "PragmatiCQA (%s splits): %s; corpus %s: %d passages; spans whose keys are not in the corpus: %d",
        split_info["splits"],
        ", ".join(
            f"{s} {v['conversations']} conversations / {v['qas']} QAs / {v['topics']} topics"
            for s, v in sizes.items()
        ),
        corpus["corpus"],
        corpus["passages"],
        span_keys_not_in_corpus,
    )


def in_more_than_one_split(values: dict[str, set[str]]) -> list[str]:
    """The values found in two or more splits, as `value (split, split)`, sorted."""
    splits_of: dict[str, list[str]] = {}
    for split, found in values.items():
        for value in found:
            splits_of.setdefault(value, []).append(split)
    return sorted(f"{v} ({', '.join(s)})" for v, s in splits_of.items() if len(s) > 1)
