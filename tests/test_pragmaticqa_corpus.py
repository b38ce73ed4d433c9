"""The PragmatiCQA corpus: Fandom HTML pages -> passages that remember the UUIDs of the elements they hold
(on an invented archive in the released shape, tests/fixtures/pragmaticqa/PragmatiCQA-sources/), the
offline spans corpus, and the errors for a missing archive."""

from collections import Counter

import pytest
from conftest import PRAGMATICQA_FIXTURE

from pragexp.data.pragmaticqa.corpus import (
    Corpus,
    build_sources_corpus,
    build_spans_corpus,
    check_archive,
    community_folders,
)
from pragexp.data.pragmaticqa.io import Span, read_conversations
from pragexp.data.pragmaticqa.pages import cut_page, element_uuids, read_page

SOURCES = PRAGMATICQA_FIXTURE / "PragmatiCQA-sources"


def conversations():
    out = []
    for split in ("train", "val", "test"):
        out += read_conversations(PRAGMATICQA_FIXTURE / f"{split}.jsonl")[0]
    return out


def test_a_page_reads_in_order_without_scripts_and_finds_uuids_in_any_attribute(tmp_path):
    page = tmp_path / "Page.html"
    page.write_text(
        '<html><head><title>Kettle | Tea Wiki | Fandom</title><script>var x = "head";</script></head>'
        '<body><nav data-k="11111111-1111-4111-8111-111111111111">Home Random</nav>'
        '<p data-k="22222222-2222-4222-8222-222222222222">One two <b '
        'weird="33333333-3333-4333-8333-333333333333">'
        "three</b> four</p><script>ignored()</script><!-- no -->"
        '<div class="x" lang="en" id="44444444-4444-4444-8444-444444444444">five six</div></body></html>',
        encoding="utf-8",
    )
    text = read_page(page)
    assert text.title == "Kettle" and text.words == ["One", "two", "three", "four", "five", "six"]
    ranges = {uuids[0][:2]: (first, end) for uuids, first, end in text.elements}
    # An element covers its own text and its descendants' (the <p> holds "three"); the nav is left out.
    assert ranges == {"22": (0, 4), "33": (2, 3), "44": (4, 6)}
    assert cut_page(text, 4) == [("Kettle", "One two three four"), ("Kettle", "five six")]


def test_element_uuids_ignore_other_attribute_values():
    from lxml import html

    node = html.fromstring('<p a="not-a-uuid" b="AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA" class="x">t</p>')
    assert element_uuids(node) == ("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",)


def test_the_archive_becomes_passages_and_gold_spans_find_them(tmp_path):
    convs = conversations()
    report = build_sources_corpus(SOURCES, tmp_path, passage_words=20)
    corpus = Corpus.load(tmp_path)
    assert (
        report["pages"] == 8
        and report["pages_unreadable"] == 0
        and len(corpus.passages) == report["passages"]
    )
    # A passage's group is its page's folder (the data module maps communities to folders).
    assert report["folders"] == 6
    assert {p.group for p in corpus.passages if p.source.startswith("Old Ferry/")} == {"Old Ferry"}
    assert all(p.title for p in corpus.passages) and not any("tracking" in p.text for p in corpus.passages)
    assert all(len(p.text.split()) <= 20 for p in corpus.passages)
    # Every literal span of the fixtures that has a key lands in passages holding its text.
    for conversation in convs:
        for qa in conversation.qas:
            for span in qa.literal:
                found = corpus.elements.span_passages(span) if span.keys else None
                if found:
                    joined = " ".join(corpus.passages[p].text for p in sorted(found))
                    assert " ".join(span.text.split()[:2]) in joined
    missing = Span("lost", "99999999-9999-4999-8999-999999999999", "99999999-9999-4999-8999-999999999999")
    counts = Counter()
    assert corpus.gold_passages([missing], counts) == () and counts["span_keys_not_in_corpus"] == 1
    assert corpus.gold_passages([Span("Yes", None, None, canned=True)], counts) == ()


def test_a_span_from_one_element_to_another_covers_the_stretch_between(tmp_path):
    convs = conversations()
    build_sources_corpus(SOURCES, tmp_path, passage_words=5)
    corpus = Corpus.load(tmp_path)
    harbor = convs[0].qas[0].literal[0]  # one sentence of the Harbor Light page
    other = convs[0].qas[3].pragmatic[1]  # a later sentence of the same page
    stretch = corpus.elements.span_passages(Span("x", harbor.start_key, other.end_key))
    backwards = corpus.elements.span_passages(Span("x", other.start_key, harbor.end_key))
    assert stretch == backwards and len(stretch) > 5
    assert stretch == set(range(min(stretch), max(stretch) + 1))


def test_spans_corpus_has_one_passage_per_key(tmp_path):
    convs = conversations()
    report = build_spans_corpus(convs, tmp_path)
    corpus = Corpus.load(tmp_path)
    assert report["corpus"] == "spans" and "offline fallback" in report["note"]
    span = convs[0].qas[0].literal[0]
    (passage,) = corpus.gold_passages([span])
    assert span.text in corpus.passages[passage].text and corpus.passages[passage].title == "Harbor Light"


def test_communities_find_their_folders_by_name_then_by_topic():
    matched = community_folders(
        ["Lighthouse%20Keepers", "Old Ferry", "Glass Harp", "Elsewhere"], conversations()
    )
    assert matched["Lighthouse Keepers"] == ("Lighthouse Keepers", "community")
    assert matched["River Ferries"] == ("Old Ferry", "topic")  # the folder is named by the topic
    assert matched["Moon Bakery"] == ("", "none")


def test_a_missing_archive_names_the_setting(tmp_path):
    with pytest.raises(FileNotFoundError, match="data.sources_path"):
        check_archive(None)
    with pytest.raises(FileNotFoundError, match=f"data.sources_path={tmp_path}"):
        check_archive(tmp_path)


def _archive(tmp_path, pages: dict[str, str]):
    sources = tmp_path / "sources"
    for name, body in pages.items():
        path = sources / "Wiki" / f"{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><head><title>{name} | W | Fandom</title></head><body>{body}</body></html>")
    return sources


def test_keys_ending_in_a_zero_byte_are_found(tmp_path):
    # numpy's fixed-width bytes drop trailing zero bytes when read back; 1 UUID in 256 ends in one
    key, other = "3f2b8c1e-0d4a-4b6e-9a1f-1b2c3d4e5f00", "3f2b8c1e-0d4a-4b6e-9a1f-1b2c3d4e0000"
    sources = _archive(tmp_path, {"A": f'<p id="{key}">one two</p><p id="{other}">three four</p>'})
    build_sources_corpus(sources, tmp_path / "corpus", passage_words=2)
    elements = Corpus.load(tmp_path / "corpus").elements
    assert elements.find(key) == (0, 0, 0) and elements.find(other) == (0, 1, 1)


def test_gold_passages_are_those_the_span_falls_in_not_its_whole_paragraph(tmp_path):
    key = "22222222-2222-4222-8222-222222222222"
    words = " ".join(f"w{i}" for i in range(25))  # one paragraph over five passages of 5 words
    sources = _archive(tmp_path, {"A": f'<p id="{key}">{words}</p>'})
    build_sources_corpus(sources, tmp_path / "corpus", passage_words=5)
    corpus = Corpus.load(tmp_path / "corpus")
    assert corpus.elements.span_passages(Span("w11 w12", key, key)) == {0, 1, 2, 3, 4}
    assert corpus.gold_passages([Span("W11  w12", key, key)]) == (2,)  # case and spacing aside
    assert corpus.gold_passages([Span("w8 w9 w10 w11", key, key)]) == (1, 2)  # over a boundary
    assert corpus.gold_passages([Span("text the scraper saw otherwise", key, key)]) == (0, 1, 2, 3, 4)


def test_an_empty_page_maps_no_element_onto_the_next_page(tmp_path):
    empty, full = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    sources = _archive(tmp_path, {"A": f'<div id="{empty}"></div>', "B": f'<p id="{full}">one two</p>'})
    report = build_sources_corpus(sources, tmp_path / "corpus", passage_words=5)
    elements = Corpus.load(tmp_path / "corpus").elements
    assert report["pages_without_words"] == 1 and elements.find(empty) is None
    assert elements.find(full) == (1, 0, 0)
