"""PragmatiCQA's retrieval corpus: passages, and where each annotated DOM element landed among them.

Two sources (`data.corpus`):

- `sources` (the paper's): the released archive of Fandom pages, `PragmatiCQA-sources/<community>/*.html`,
  in which every DOM element carries a UUID. Each page's text (`pages`) is cut into DPR-style passages of
  `passage_words` words with the page's title, and every UUID element remembers the passages its text falls
  in, so that a gold span's start and end keys map to the passages that hold it. The paper's corpus has
  401,042 passages.
- `spans` (offline fallback, labelled as such everywhere): one passage per element key of the release's
  own spans, holding the texts selected from that element, across every split file present. Retrieval
  and generation then run end to end without the archive; the task is easier than the paper's (every
  passage is gold for some question, and it holds only the selected text).

A built corpus is a folder: `passages.jsonl`, `elements.npy` (where each element landed, `elements`) and
`corpus.json` (its report). `CorpusSource` names a corpus by what goes into it and builds it once into the
cache.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from pragexp.data.pragmaticqa.elements import ELEMENT_DTYPE, ElementMap, uuid_bytes
from pragexp.data.pragmaticqa.io import Conversation, Span
from pragexp.data.pragmaticqa.pages import cut_page, read_page
from pragexp.retrieval.passages import Passage, read_passages, write_passages
from pragexp.utils.io import atomic_directory, atomic_write_text, digest, file_digest

log = logging.getLogger(__name__)

CORPUS_KINDS = ("sources", "spans")


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
            "data.corpus=sources needs the Fandom HTML archive: set "
            "data.sources_path=/path/to/PragmatiCQA-sources "
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
            "note": "offline fallback: passages made of the release's own span texts, not the paper's Fandom "
            "corpus",
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


@dataclass(frozen=True)
class CorpusSource:
    """Which corpus (`data.corpus`, `data.sources_path`, `data.passage_words`): built once into the cache,
    under a hash of what goes into it, and loaded from there."""

    kind: str = "sources"
    sources_path: str | None = None
    passage_words: int = 100

    def __post_init__(self):
        if self.kind not in CORPUS_KINDS:
            raise ValueError(f"data.corpus={self.kind}: one of {', '.join(CORPUS_KINDS)}")

    def folder(self, cache_dir: Path, files: Mapping[str, Path]) -> Path:
        """Where it is cached: the spans corpus by the data `files` it is made of; the archive's by its pages
        alone (the same corpus whatever data files are read with it)."""
        if self.kind == "spans":
            inputs = {"corpus": "spans", "files": {s: file_digest(f) for s, f in files.items()}}
        else:
            pages = archive_manifest(check_archive(self.sources_path))
            inputs = {"corpus": "sources", "pages": pages, "passage_words": self.passage_words}
        # version 2: wordless pages map no elements
        return Path(cache_dir) / "pragmaticqa" / "corpus" / digest({"version": 2, **inputs})

    def build(self, folder: Path, conversations: Sequence[Conversation]) -> None:
        """Builds the corpus into `folder` unless it is there; `conversations` (every split's) make the spans
        corpus."""
        if (folder / "corpus.json").is_file():
            return
        log.info("building the %s corpus in %s", self.kind, folder)
        with atomic_directory(folder) as tmp:
            if self.kind == "spans":
                build_spans_corpus(conversations, tmp)
            else:
                build_sources_corpus(check_archive(self.sources_path), tmp, self.passage_words)


def _finish(folder: Path, report: dict) -> dict:
    """Writes the corpus's report (corpus.json, what `Corpus.load` reads) and returns it."""
    atomic_write_text(folder / "corpus.json", json.dumps(report, indent=2) + "\n")
    return report
