"""PragmatiCQA's retrieval corpus: passages, and where each annotated DOM element landed among them.

Two sources (`data.corpus`):

- `sources` (the paper's): the released archive of Fandom pages, `PragmatiCQA-sources/<community>/*.html`,
  in which every DOM element carries a UUID (the attribute's name is not documented, so every attribute
  is scanned for a UUID-shaped value). Pages are parsed with lxml's HTML parser; the text of the body
  (scripts, styles and the like left out) is cut into DPR-style passages of `passage_words` words with
  the page's title, and every UUID element remembers the passages its text falls in, so that a gold
  span's start and end keys map to the passages that hold it. The paper's corpus has 401,042 passages.
- `spans` (offline fallback, labelled as such everywhere): one passage per element key of the release's
  own spans, holding the texts selected from that element, across every split file present. Retrieval
  and generation then run end to end without the archive; the task is easier than the paper's (every
  passage is gold for some question, and it holds only the selected text).

The element map is a sorted array of (UUID, page, first passage, last passage), stored as `elements.npy`
beside `passages.jsonl`.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
import uuid as uuidlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from pragexp.data.pragmaticqa.io import UUID, Conversation, Span
from pragexp.retrieval.passages import Passage, read_passages, write_passages
from pragexp.utils.io import atomic_write_text

log = logging.getLogger(__name__)

CORPUS_KINDS = ("sources", "spans")
# Elements whose text is not page content.
SKIP_TAGS = frozenset(
    (
        "head",
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "button",
        "select",
        "textarea",
    )
    + ("nav", "footer")  # site navigation and footers: the same on every page, never annotated
)
ELEMENT_DTYPE = np.dtype([("uuid", "S16"), ("page", "<i4"), ("first", "<i4"), ("last", "<i4")])
TITLE_SEPARATOR = " | "  # Fandom titles read "Page | Community Wiki | Fandom"


def uuid_bytes(key: str) -> bytes:
    return uuidlib.UUID(key).bytes


# -- the element map ------------------------------------------------------------------------------------
class ElementMap:
    """UUID -> the passages its element's text falls in (a contiguous range on one page)."""

    def __init__(self, table: np.ndarray):
        self.table = np.sort(table, order="uuid")

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[bytes, int, int, int]]) -> ElementMap:
        return cls(np.array(list(rows), dtype=ELEMENT_DTYPE))

    def __len__(self) -> int:
        return len(self.table)

    def find(self, key: str) -> tuple[int, int, int] | None:
        """(page, first passage, last passage) of an element, or None when the corpus has no such element."""
        # numpy's fixed-width bytes drop trailing zero bytes when read back: compare without them.
        target = uuid_bytes(key).rstrip(b"\0")
        i = int(np.searchsorted(self.table["uuid"], target))
        if i < len(self.table) and self.table["uuid"][i] == target:
            row = self.table[i]
            return int(row["page"]), int(row["first"]), int(row["last"])
        return None

    def span_passages(self, span: Span) -> set[int] | None:
        """The passages holding a span: from its start element's first passage to its end element's last
        when both are on one page, else the passages of whichever elements are found. None when the span
        points at no element, or none of its elements is in the corpus."""
        found = [self.find(k) for k in span.keys]
        found = [f for f in found if f is not None]
        if not found:
            return None
        if len({page for page, _, _ in found}) == 1:  # a selection may run backwards: take the whole stretch
            return set(range(min(f for _, f, _ in found), max(last for _, _, last in found) + 1))
        return {p for _, first, last in found for p in range(first, last + 1)}

    def save(self, path: Path) -> None:
        with path.open("wb") as f:
            np.save(f, self.table)

    @classmethod
    def load(cls, path: Path) -> ElementMap:
        return cls(np.load(path))


# -- HTML pages ------------------------------------------------------------------------------------------
@dataclass
class PageText:
    """A page's title, its words in reading order, and the word range of every UUID element."""

    title: str
    words: list[str] = field(default_factory=list)
    elements: list[tuple[tuple[str, ...], int, int]] = field(default_factory=list)  # (uuids, first, end)


def element_uuids(element) -> tuple[str, ...]:
    """Every UUID-shaped attribute value of an element (the archive's attribute name is not documented)."""
    return tuple(
        dict.fromkeys(v.strip().lower() for v in element.attrib.values() if UUID.fullmatch(v.strip()))
    )


def page_title(root, path: Path) -> str:
    for node in (root.find(".//title"), root.find(".//h1")):
        if node is not None:
            text = " ".join(node.text_content().split())
            if text:
                return text.split(TITLE_SEPARATOR)[0].strip()
    return unquote(path.stem)


def read_page(path: Path) -> PageText:
    """The text of a page's body in reading order, and the word range each UUID element covers."""
    import lxml.html

    root = lxml.html.parse(str(path)).getroot()
    if root is None:
        raise ValueError("no HTML document")
    page = PageText(title=page_title(root, path))
    body = root.find("body")
    words = page.words
    # Depth-first with an explicit stack: an element's text, then its children, then its tail (the text
    # after its closing tag, which belongs to its parent's content).
    stack: list[tuple[bool, object, int]] = [(False, body if body is not None else root, -1)]
    while stack:
        closing, element, start = stack.pop()
        if closing:
            uuids = element_uuids(element)
            if uuids:
                page.elements.append((uuids, start, len(words)))
            words.extend((element.tail or "").split())
            continue
        tag = element.tag if isinstance(element.tag, str) else None  # comments, processing instructions
        if tag is None or tag.lower() in SKIP_TAGS:
            words.extend((element.tail or "").split())
            continue
        stack.append((True, element, len(words)))
        words.extend((element.text or "").split())
        stack.extend((False, child, -1) for child in reversed(element))
    return page


def cut_page(page: PageText, passage_words: int) -> list[tuple[str, str]]:
    """(title, text) of each passage: consecutive runs of `passage_words` words (DPR's 100)."""
    return [
        (page.title, " ".join(page.words[i : i + passage_words]))
        for i in range(0, len(page.words), passage_words)
    ]


def folder_key(name: str) -> str:
    """Folder and community names compared loosely: accents, case, punctuation and spacing ignored."""
    text = unicodedata.normalize("NFKD", unquote(name)).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def community_folders(
    folders: Sequence[str], conversations: Sequence[Conversation]
) -> dict[str, tuple[str, str]]:
    """community -> (the archive folder holding its pages, how it was matched): the folder named like the
    community, else like one of its conversations' topics (the folders are most likely named by community),
    else ("", "none")."""
    by_key = {folder_key(f): unquote(f) for f in folders}
    out = {}
    for conversation in conversations:
        community = conversation.community
        if community in out and out[community][1] != "none":
            continue
        if folder_key(community) in by_key:
            out[community] = (by_key[folder_key(community)], "community")
        elif folder_key(conversation.topic) in by_key:
            out[community] = (by_key[folder_key(conversation.topic)], "topic")
        else:
            out[community] = ("", "none")
    return out


def archive_manifest(sources_path: Path) -> list[list]:
    """(relative path, size, mtime) of every page of the archive: what the corpus cache is keyed by."""
    pages = sorted(sources_path.glob("*/*.html"))
    return [
        [str(p.relative_to(sources_path)), s.st_size, s.st_mtime_ns]
        for p, s in ((p, p.stat()) for p in pages)
    ]


def check_archive(sources_path) -> Path:
    if not sources_path:
        raise FileNotFoundError(
            "data.corpus=sources needs the Fandom HTML archive: set data.sources_path=/path/to/PragmatiCQA-sources "
            "(or use data.corpus=spans, the offline corpus made of the release's own spans)"
        )
    path = Path(sources_path)
    if not path.is_dir() or not any(path.glob("*/*.html")):
        raise FileNotFoundError(
            f"data.sources_path={sources_path}: no Fandom HTML archive there (expected "
            "PragmatiCQA-sources/<community>/*.html); set data.sources_path to the unpacked archive, or use "
            "data.corpus=spans"
        )
    return path


def build_sources_corpus(sources_path: Path, out_dir: Path, passage_words: int = 100) -> dict:
    """Parses every page of the archive into `out_dir` (passages.jsonl, elements.npy, corpus.json); returns
    the report. A passage's group is its page's folder (a community; `community_folders` maps the data's
    communities to folders)."""
    from tqdm import tqdm

    pages = sorted(sources_path.glob("*/*.html"))
    passages: list[Passage] = []
    rows: list[np.ndarray] = []
    report = Counter()
    failed: list[str] = []
    for page_id, path in enumerate(tqdm(pages, desc="pages -> passages", unit="page", mininterval=5)):
        try:
            page = read_page(path)
        except (OSError, ValueError) as err:  # an empty or unreadable page: counted, the build goes on
            failed.append(f"{path.relative_to(sources_path)}: {err}")
            continue
        offset = len(passages)
        folder = unquote(path.parent.name)
        source = str(path.relative_to(sources_path))
        for title, text in cut_page(page, passage_words):
            passages.append(Passage(len(passages), title, text, folder, source))
        n_passages = len(passages) - offset
        if n_passages == 0:  # a page without words: its elements hold no text to retrieve
            report["pages_without_words"] += 1
            continue
        table = []
        for uuids, first, end in page.elements:
            # An element without words sits where its next word would be.
            first_p = min(first // passage_words, max(n_passages - 1, 0)) + offset
            last_p = max(first_p, min((max(end, first + 1) - 1) // passage_words, n_passages - 1) + offset)
            table.extend((uuid_bytes(u), page_id, first_p, last_p) for u in uuids)
            report["elements_with_several_uuids"] += len(uuids) > 1
        rows.append(np.array(table, dtype=ELEMENT_DTYPE))
        report["pages"] += 1
        report["words"] += len(page.words)
        report["uuid_elements"] += len(page.elements)
    elements = ElementMap(np.concatenate(rows) if rows else np.empty(0, dtype=ELEMENT_DTYPE))
    write_passages(out_dir / "passages.jsonl", passages)
    elements.save(out_dir / "elements.npy")
    return _finish(
        out_dir,
        {
            "corpus": "sources",
            "sources_path": str(sources_path),
            "passage_words": passage_words,
            "folders": len({p.parent.name for p in pages}),
            "pages": report["pages"],
            "pages_without_words": report["pages_without_words"],
            "pages_unreadable": len(failed),
            "pages_unreadable_examples": failed[:10],
            "words": report["words"],
            "passages": len(passages),
            "uuid_elements": report["uuid_elements"],
            "elements_with_several_uuids": report["elements_with_several_uuids"],
        },
    )


def build_spans_corpus(conversations: Sequence[Conversation], out_dir: Path) -> dict:
    """One passage per start key of the release's spans (the texts selected from that element, in order of
    first appearance), titled by the conversation's topic; an end key that starts no span of its own maps
    to the passage of the span it ends."""
    texts: dict[str, list[str]] = {}
    where: dict[str, tuple[str, str]] = {}
    end_keys: dict[str, str] = {}
    for conversation in conversations:
        for qa in conversation.qas:
            for span in (*qa.literal, *qa.pragmatic):
                if span.start_key is None:
                    continue
                chosen = texts.setdefault(span.start_key, [])
                if span.text.strip() not in chosen:
                    chosen.append(span.text.strip())
                where.setdefault(span.start_key, (conversation.topic, conversation.community))
                if span.end_key and span.end_key != span.start_key:
                    end_keys.setdefault(span.end_key, span.start_key)
    passages = []
    passage_of = {}
    for key, chosen in texts.items():
        topic, community = where[key]
        passage_of[key] = len(passages)
        passages.append(
            Passage(len(passages), topic, " ".join(" ".join(t.split()) for t in chosen), community, key)
        )
    for key, start in end_keys.items():
        passage_of.setdefault(key, passage_of[start])
    # Each key is a page of its own: a span's passages are those of its keys.
    rows = [(uuid_bytes(key), pid, pid, pid) for key, pid in passage_of.items()]
    write_passages(out_dir / "passages.jsonl", passages)
    ElementMap.from_rows(rows).save(out_dir / "elements.npy")
    return _finish(
        out_dir,
        {
            "corpus": "spans",
            "note": "offline fallback: passages made of the release's own span texts, not the paper's Fandom corpus",
            "passages": len(passages),
            "element_keys": len(rows),
        },
    )


# -- a built corpus ---------------------------------------------------------------------------------------
@dataclass
class Corpus:
    kind: str
    passages: list[Passage]
    elements: ElementMap
    report: dict
    key: str  # the cache key (hash of what went in)

    @classmethod
    def load(cls, folder: Path) -> Corpus:
        report = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
        return cls(
            kind=report["corpus"],
            passages=read_passages(folder / "passages.jsonl"),
            elements=ElementMap.load(folder / "elements.npy"),
            report=report,
            key=folder.name,
        )

    def gold_passages(self, spans: Iterable[Span], counts: Counter | None = None) -> tuple[int, ...]:
        """The passages holding any of the spans; canned spans and spans with no key are not evidence.
        `counts` tallies spans whose keys are not in the corpus."""
        gold: set[int] = set()
        for span in spans:
            if span.canned or not span.keys:
                continue
            found = self.elements.span_passages(span)
            if found is None:
                if counts is not None:
                    counts["span_keys_not_in_corpus"] += 1
                continue
            gold |= self._holding(found, span.text)
        return tuple(sorted(gold))

    def _holding(self, found: set[int], text: str) -> set[int]:
        """Of the passages an element range covers, those the span's own words fall in: an element (a long
        paragraph) may run over several passages while the span is a few of its words. Words are matched
        without case or spacing; the first occurrence's passages are kept, and when the text is not found
        (the scraper's text differs from the page's), every passage of the range."""
        words = text.lower().split()
        if len(found) == 1 or not words:
            return found
        ids = sorted(found)
        texts = [" ".join(self.passages[p].text.lower().split()) for p in ids]
        whole = f" {' '.join(words)} "

        def holds(first: int, last: int) -> bool:
            return whole in f" {' '.join(texts[first : last + 1])} "

        last = next((j for j in range(len(ids)) if holds(0, j)), None)
        if last is None:
            return found
        first = max(i for i in range(last + 1) if holds(i, last))
        return set(ids[first : last + 1])


def _finish(folder: Path, report: dict) -> dict:
    """Writes the corpus's report (corpus.json, what `Corpus.load` reads) and returns it."""
    atomic_write_text(folder / "corpus.json", json.dumps(report, indent=2) + "\n")
    return report
