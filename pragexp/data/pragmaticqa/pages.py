"""A Fandom page of the PragmatiCQA archive as text: its title, its words in reading order, and the word range
of every element that carries a UUID (the ids the release's spans point at).

Pages are parsed with lxml's HTML parser; scripts, styles, navigation and the like are left out. The attribute
that holds an element's UUID is not documented, so every attribute is scanned for a UUID-shaped value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from pragexp.data.pragmaticqa.io import UUID

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
TITLE_SEPARATOR = " | "  # Fandom titles read "Page | Community Wiki | Fandom"


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
