"""Reading a PR description: the first real paragraph and the design points.

PR descriptions mix the author's words with the repository's template
(``### What does this PR do?``, ``> Add **concise** overview …`` hints,
checklists, images, HTML comments). The description is parsed as CommonMark with
GitHub's tables by pyromark (pulldown-cmark); each block's Markdown source is
read back by its byte range, so inline markup is kept as written. Template parts
are recognised by their shape, not by one repository's wording:

- headings are section names, never content, and so is a paragraph that is one
  bold phrase (``**Motivation**``);
- block quotes are template hints; check-list items (``- [x] …``) are chores;
- code blocks, HTML blocks, tables and images carry no prose; HTML tags (``<img …/>``
  across lines too) and ``<details>`` blocks are removed;
- what tools add is removed before anything is read (:func:`strip_boilerplate`):
  ghstack's "Stack from ghstack (oldest at bottom)" and its PR list, commit
  trailers (``Co-authored-by:``, ``Signed-off-by:``, ``Differential Revision:`` …),
  "Generated with …" lines;
- ``Summary:`` opening a paragraph is a label, not content; ``Test Plan:`` opens
  the test notes;
- a paragraph counts as prose when it has at least ``MIN_PROSE_CHARS``
  letters and is not a placeholder (``As title``, ``N/A``, ``TBD``) nor only
  issue references (``Fixes #12``, ``Closes https://…/issues/3``);
- with the PR's title at hand, a paragraph that only repeats it is not a summary
  (:func:`repeats_title`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import filterfalse

import pyromark
from pyromark.event import Range

from bot.sources.links import strip_trailers

MIN_PROSE_CHARS = 12
"""Fewer letters than this make a paragraph a placeholder, not a summary."""

SUMMARY_MAX_CHARS = 320
"""A summary longer than this is cut at a sentence end (or a word) and marked with …"""

_PLACEHOLDER = re.compile(
    r"^(?:as\s+(?:the\s+)?title\.?|see\s+title\.?|n/?a\.?|none\.?|tbd\.?|todo\.?|same\s+as\s+title\.?|如题。?|同标题。?)$",
    re.IGNORECASE,
)
_DESIGN_HEADING = re.compile(r"design|change|implementation|approach|how|方案|设计|改动|实现", re.IGNORECASE)
_TEST_HEADING = re.compile(r"\btest|benchmark|result|experiment|验证|测试|实验", re.IGNORECASE)
_CHORE_HEADING = re.compile(r"checklist|check list|before submitting|contribut|todo|清单", re.IGNORECASE)
_CHECKBOX = re.compile(r"^\s*\[[ xX]\]")
_IMAGE_ONLY = re.compile(r"^\s*(?:!\[[^\]]*\]\([^)]*\)\s*)+$")
_NOT_LETTERS = re.compile(r"[\W\d_]+", re.UNICODE)
_GENERATED_LINE = re.compile(r"^[^\n\w]*generated (?:with|by) \[?[\w .-]+\]?(?:\([^)]*\))?[^\n]*$",
                             re.IGNORECASE | re.MULTILINE)
_GHSTACK = re.compile(r"^[ \t]*stack from \[?ghstack\]?(?:\([^)]*\))?[^\n]*(?:\n[^\n*-][^\n]*)?:?[ \t]*$"
                      r"(?:\n[ \t]*[*-][ \t]+[^\n]*#\d+[^\n]*$)*", re.IGNORECASE | re.MULTILINE)
_DETAILS = re.compile(r"<details\b(?:(?!<details\b).)*?</details\s*>", re.IGNORECASE | re.DOTALL)
_DETAILS_OPEN = re.compile(r"<details\b.*", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_BLANK_LINES = re.compile(r"\n\n\n+")  # as \n{3,}, but with a literal prefix re searches for quickly
_HTML_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>", re.DOTALL)
_REFERENCES_ONLY = re.compile(
    r"^(?:(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|related(?:\s+to)?|see(?:\s+also)?|refs?|part\s+of|"
    r"follow[- ]?up(?:\s+(?:to|of|on))?|issue|cc)\b\s*:?\s*)?"
    r"(?:(?:[\w.-]+/[\w.-]+)?#\d+|https?://\S+|@[\w-]+)(?:[\s,;&]+(?:and\s+)?(?:(?:[\w.-]+/[\w.-]+)?#\d+|https?://\S+|@[\w-]+))*"
    r"[\s.]*$",
    re.IGNORECASE,
)
_SUMMARY_LABEL = re.compile(
    r"^\s*(?:(?:\*\*|__)(?:summary|description|motivation|tl;?dr)\s*[:：]?\s*(?:\*\*|__)\s*[:：]?|"
    r"(?:summary|description|motivation|tl;?dr)\s*[:：])\s*|^\s*as\s+(?:the\s+)?titled?(?:\s+says)?\s*[,，:]\s*",
    re.IGNORECASE,
)
_BOLD_HEADING = re.compile(r"^\s*(\*\*|__)(?P<name>[^*_\n]{1,60}?)\s*[:：]?\s*\1\s*[:：]?\s*$")
_TEST_LABEL = re.compile(r"^\s*(?:\*\*)?(?:test plan|testing|tests?|test results?)(?:\*\*)?\s*[:：]", re.IGNORECASE)
_TITLE_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_FILLER = frozenset((
    "a", "an", "the", "this", "that", "these", "pr", "prs", "patch", "commit", "change", "changes", "diff",
    "it", "its", "we", "i", "our", "to", "of", "in", "on", "for", "and", "or", "as", "is", "are", "be", "by",
    "with", "from", "into", "title", "titled", "above", "per", "which", "what", "so", "also", "just",
    "simply", "here"
))
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\u4e00-\u9fff])|(?<=[。！？])")


_OPTIONS = pyromark.Options.ENABLE_TABLES
"""CommonMark plus tables (GitHub renders them; a results table is test notes, never a summary)."""

_MARKDOWN = pyromark.Markdown(options=_OPTIONS)

_INLINE_TAGS = frozenset(("Emphasis", "Strong", "Strikethrough", "Link", "Image", "Superscript", "Subscript"))
"""Start/end tags inside a paragraph; every other tag opens or closes a block."""

_SKIPPED_TAGS = _INLINE_TAGS | {"TableHead", "TableRow", "TableCell"}
"""Tags the reader passes over: inline ones, and a table's parts (the table as a whole is the block)."""

@dataclass(frozen=True)
class Description:
    """What a PR description says, separated from its template.

    Attributes:
        paragraphs: prose paragraphs in order, with inline Markdown kept.
        design_points: list items and paragraphs under design/changes headings.
        has_test_notes: the description reports how the change was tested
            (prose under a test/benchmark heading, or a results image/table there).
        prose_chars: letters of prose in total (a measure of how much it explains).
        sections: heading texts, in order.
    """

    paragraphs: tuple[str, ...] = ()
    design_points: tuple[str, ...] = ()
    has_test_notes: bool = False
    prose_chars: int = 0
    sections: tuple[str, ...] = field(default=())

    @property
    def first_paragraph(self) -> str | None:
        """The first real paragraph, or ``None`` when the description has no prose."""
        return self.paragraphs[0] if self.paragraphs else None


_ASCII_NOT_LETTERS = bytes(c for c in range(128) if not chr(c).isalpha())
"""The ASCII characters that ``_NOT_LETTERS`` matches: all but ``A-Z`` and ``a-z``."""


def _letters(text: str) -> int:
    if text.isascii():  # the same count without the regex: deleting bytes is far cheaper
        return len(text.encode().translate(None, _ASCII_NOT_LETTERS))
    return len(_NOT_LETTERS.sub("", text))


def _is_prose(text: str) -> bool:
    stripped = text.strip()
    if len(stripped) < MIN_PROSE_CHARS or _PLACEHOLDER.match(stripped):  # too short to hold enough letters
        return False
    # the patterns below cannot match without these characters, which are cheaper to look for
    if "![" in stripped and _IMAGE_ONLY.match(stripped):
        return False
    if ("#" in stripped or "://" in stripped or "@" in stripped) and _REFERENCES_ONLY.match(stripped):
        return False
    if "[" in stripped and _CHECKBOX.match(stripped):
        return False
    return _letters(stripped) >= MIN_PROSE_CHARS


def _clean_inline(text: str) -> str:
    # each pattern needs its first characters in the text; the cheap ``in`` test skips most scans
    if "![" in text:
        text = _IMAGE.sub("", text)
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    if "<" in text:
        text = _HTML_TAG.sub("", text)  # HTML tags such as <img …/>, also across lines
    label = _SUMMARY_LABEL.match(text)  # anchored at the start: at most one, there
    if label:
        text = text[label.end():]
    if "\n" in text:
        # each run of white space holding a line break becomes one space, as re.sub(r"\s*\n\s*", " ", text)
        # does, without the regex (str.strip() takes the very characters \s matches)
        return " ".join(filter(None, map(str.strip, text.split("\n"))))
    return text.strip()


def strip_boilerplate(body: str) -> str:
    """``body`` without what tools add to a description: HTML comments, ``<details>`` blocks,
    ghstack's stack list, commit trailers (``Co-authored-by:``, ``Signed-off-by:``,
    ``Differential Revision:`` …) and "Generated with …" lines. Used by the sources that
    read commit messages (git) and before a description is read."""
    text = _COMMENT.sub("", body) if "<!--" in body else body
    if _DETAILS_OPEN.search(text):  # both patterns need "<details"; this search is a fast one (literal "<")
        while True:  # innermost first: <details> nest
            text, n = _DETAILS.subn("", text)
            if not n:
                break
        text = _DETAILS_OPEN.sub("", text)  # one left open runs to the end
    # Both patterns ignore case and are tried at every line; the text lowered once tells whether the words
    # each needs are there at all. Exact: lower() turns whatever re.IGNORECASE matches with a letter of
    # "tack from " or "generated " into that letter (it would not for i and s: ı, İ, ſ), and the ghstack
    # and trailer removals take whole lines, which brings no new words together.
    lowered = text.lower()
    if "tack from " in lowered:
        text = _GHSTACK.sub("", text)
    text = strip_trailers(text)
    if "generated " in lowered:
        text = _GENERATED_LINE.sub("", text)
    return _BLANK_LINES.sub("\n\n", text).strip()


_ASCII_WORDS = bytes.maketrans(
    bytes(range(128)), bytes(ord(c.lower()) if c.isalnum() else ord(" ") for c in map(chr, range(128))))
"""ASCII letters lowered, digits kept, every other character a space: split, the result holds the words that
``_TITLE_WORD`` finds in the lowered text."""


def _title_words(text: str) -> list[str]:
    if text.isascii():  # the same words as the regex finds, without it
        words = text.encode().translate(_ASCII_WORDS).decode().split()
    else:
        words = _TITLE_WORD.findall(text.lower())
    return list(filterfalse(_FILLER.__contains__, words))


def repeats_title(text: str, title: str) -> bool:
    """``text`` says no more than ``title``: nearly all of its words (past filler such as
    "this PR", "as titled") are words of the title. ``"As titled, this pr adds support for
    simplefsdp+ep."`` repeats ``"add support for simplefsdp+ep"``."""
    said = _title_words(text)
    if not said:
        return True
    known = _known_words(title)
    allowed = max(1, len(said) // 6)  # words the title does not have
    for word in said:
        if word not in known and word.rstrip("sd") not in known:
            allowed -= 1
            if allowed < 0:
                return False
    return True


@lru_cache(maxsize=256)
def _known_words(title: str) -> frozenset[str]:
    """The words of ``title`` past filler, also with a plural's ``s`` dropped and with ``s`` or ``d`` added
    (each paragraph of a description is held against the same title)."""
    known = set(_title_words(title))
    known |= {w[:-1] for w in known if w.endswith("s")} | {w + "s" for w in known} | {w + "d" for w in known}
    return frozenset(known)


@lru_cache(maxsize=4096)
def parse_description(body: str, title: str = "") -> Description:
    """Split a PR description into prose, design points and test notes (each distinct body and title is
    read once per process: the same PR is analysed for its week, a look back, a question, an alert).

    Args:
        body: the description as written (Markdown, may hold HTML; may be empty).
        title: the PR's title; when given, paragraphs that only repeat it are not prose.

    Returns:
        A :class:`Description`; empty fields when the body is empty or all template.
    """
    if not body.strip():
        return Description()
    blocks, sections, has_test_notes = _blocks(strip_boilerplate(body))
    if title:
        blocks = [b for b in blocks if not repeats_title(b[2], title)]
    paragraphs: list[str] = []
    design: list[str] = []
    only_items = all(b[1] for b in blocks)
    section, in_design, in_tests = None, False, False
    for index, (heading, is_item, text) in enumerate(blocks):
        if heading != section:  # a section's blocks follow each other: its kind is found once
            section = heading
            in_design, in_tests, _ = _section_kind(heading)
        if in_design and len(design) < 8:
            design.append(text)
        if in_tests:
            continue
        if not is_item:
            paragraphs.append(_with_following_items(text, blocks[index + 1 :]))
        elif not paragraphs and only_items:
            paragraphs.append(text)  # a description that is only a bullet list
    return Description(
        paragraphs=tuple(paragraphs),
        design_points=tuple(design),
        has_test_notes=has_test_notes,
        prose_chars=sum(_letters(p) for p in paragraphs),
        sections=tuple(sections),
    )


def _with_following_items(text: str, rest: list[tuple[str, bool, str]]) -> str:
    """A paragraph that announces what follows ("Fixes three issues:", "crashes with:")
    takes it along: up to three list items, or the first line of a code block."""
    if not text.endswith((":", "：")):
        return text
    items: list[str] = []
    for _, is_item, item in rest:
        if not is_item or len(items) == 3:
            break
        items.append(item.rstrip("."))
    if not items and rest:
        items.append(rest[0][2])
    return f"{text} {'; '.join(items)}" if items else text.rstrip(":：") + "."


_ATX = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]+|$)|(?:[ \t]+#+)?[ \t]*$")
_SETEXT_LINE = re.compile(r"\n[ \t]{0,3}(?:=+|-+)[ \t]*$")
_ITEM_MARKER = re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]*")


class _Reader:
    """Walks pyromark's events of one description and keeps the prose blocks (see :func:`_blocks`).

    Only block events are looked at: a paragraph or a heading is read back from its byte range; the text
    of a tight list item (which has no paragraph) runs from the item's start, or the end of a block nested
    in it, to the next block in it or the item's end."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.source = body.encode()
        self.blocks: list[tuple[str, bool, str]] = []
        self.sections: list[str] = []
        self.heading = ""
        self.in_tests = self.in_chores = False  # the heading names test notes, a checklist
        self.has_test_notes = False
        self.quote_depth = self.list_depth = 0
        # per open list item: where its unread tight text starts, and whether that is the item's marker
        self.items: list[tuple[int, bool] | None] = []
        self.code: list[str] | None = None  # text of the code block being read

    def read(self) -> None:
        for event, span in _MARKDOWN.events_with_range(self.body):
            if isinstance(event, str):  # SoftBreak, HardBreak, Rule
                continue
            if "Text" in event:  # the most frequent event; only a code block's text is kept
                if self.code is not None:
                    self.code.append(str(event["Text"]))
            elif "Start" in event:
                opened = event["Start"]
                tag = opened if isinstance(opened, str) else next(iter(opened))
                if tag not in _SKIPPED_TAGS:
                    self._open(tag, span)
            elif "End" in event:
                closed = event["End"]
                tag = closed if isinstance(closed, str) else next(iter(closed))
                if tag not in _SKIPPED_TAGS:
                    self._close(tag, span)

    def _section(self, name: str) -> None:
        """A heading, or what stands for one, opens the section ``name``."""
        self.heading = name
        self.sections.append(name)
        _, self.in_tests, self.in_chores = _section_kind(name)

    def _text(self, start: int, end: int) -> str:
        return self.source[start:end].decode().strip()

    def _item_text(self, end: int) -> None:
        """The innermost item's tight text up to ``end`` (a nested block starts there, or the item ends)."""
        unread = self.items[-1] if self.items else None
        if unread is None:
            return
        self.items[-1] = None
        self._paragraph(unread[0], end, marker=unread[1])

    def _open(self, tag: str, span: Range) -> None:
        if tag == "Item":
            if self.items:
                self._item_text(span["start"])
            self.items.append((span["start"], True))
            return
        if self.items and self.items[-1] is not None:
            if tag == "Paragraph":
                self.items[-1] = None  # a loose item: its paragraphs are read as such
            else:
                self._item_text(span["start"])
        if tag == "BlockQuote":
            self.quote_depth += 1
        elif tag == "List":
            self.list_depth += 1
        elif tag == "CodeBlock":
            self.code = []
        elif tag == "Table":
            self.has_test_notes = self.has_test_notes or self.in_tests
            if self.blocks and self.blocks[-1][2].endswith((":", "：")):
                # what the paragraph announces is this table, which is not shown: the sentence ends here
                heading, is_item, text = self.blocks[-1]
                self.blocks[-1] = (heading, is_item, text[:-1] + ("。" if text.endswith("：") else "."))

    def _close(self, tag: str, span: Range) -> None:
        if tag == "Item":
            self._item_text(span["end"])
            if self.items:
                self.items.pop()
            return
        if tag == "Paragraph":
            self._paragraph(span["start"], span["end"])
        elif tag == "Heading":
            self._section(_heading_name(self._text(span["start"], span["end"])))
        elif tag == "BlockQuote":
            self.quote_depth -= 1
        elif tag == "List":
            self.list_depth -= 1
        elif tag == "CodeBlock" and self.code is not None:
            self._code_block(self.code)
            self.code = None
        if self.items and tag in ("List", "CodeBlock", "BlockQuote", "HtmlBlock", "Heading", "Table"):
            self.items[-1] = (span["end"], False)  # text after a block nested in a tight item is read too

    def _code_block(self, lines: list[str]) -> None:
        if self.quote_depth or self.in_chores:
            return
        self.has_test_notes = self.has_test_notes or self.in_tests
        announced = bool(self.blocks) and self.blocks[-1][2].endswith((":", "："))
        if not announced or self.in_tests:
            return
        first = next((ln.strip() for ln in "".join(lines).splitlines() if ln.strip()), "")
        if first:
            self.blocks.append((self.heading, True, f"`{shorten(first.replace('`', ''), 160)}`"))

    def _paragraph(self, start: int, end: int, marker: bool = False) -> None:
        """The paragraph (or tight item text, ``marker`` when it starts with the item's) at bytes ``start:end``."""
        if self.quote_depth or self.in_chores:
            return
        raw = self._text(start, end)
        if marker:
            raw = _ITEM_MARKER.sub("", raw, count=1)
        if not raw:
            return
        if self.list_depth == 0:
            bold = _BOLD_HEADING.match(raw)
            if bold:  # a paragraph that is one bold phrase ("**Motivation**") is a heading
                self._section(bold["name"].strip())
                return
            if _TEST_LABEL.match(raw):
                self._section("Test Plan")  # Phabricator style: "Test Plan:" opens the test notes
        text = _clean_inline(raw)
        prose = _is_prose(text)
        if self.in_tests and (prose or "![" in raw or "<img" in raw):
            self.has_test_notes = True
        if prose:
            self.blocks.append((self.heading, self.list_depth > 0, text))


# Templates repeat: most descriptions of a repository share their headings, so each distinct one is read
# once per process. (Paragraphs repeat too, but mostly in block quotes and checklists, which are not read.)

@lru_cache(maxsize=1024)
def _section_kind(name: str) -> tuple[bool, bool, bool]:
    """Whether the section named ``name`` holds design points, test notes, a checklist."""
    return (bool(_DESIGN_HEADING.search(name)), bool(_TEST_HEADING.search(name)),
            bool(_CHORE_HEADING.search(name)))


@lru_cache(maxsize=1024)
def _heading_name(raw: str) -> str:
    """A heading's text from its Markdown source, without its ``#`` marks or setext underline."""
    raw = _SETEXT_LINE.sub("", raw) if "\n" in raw else _ATX.sub("", raw)
    return _clean_inline(raw.strip())


def _blocks(body: str) -> tuple[list[tuple[str, bool, str]], list[str], bool]:
    """Prose blocks as ``(heading, is_list_item, text)``, the headings, and whether
    the description holds test notes. Template parts are dropped here."""
    reader = _Reader(body)
    reader.read()
    return reader.blocks, reader.sections, reader.has_test_notes


def shorten(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    """``text`` if it fits in ``limit`` characters, else its longest run of whole
    sentences that fits, else its words up to the limit — ending with ``…``."""
    if len(text) <= limit:
        return text
    out = ""
    for sentence in _SENTENCE_END.split(text):
        candidate = f"{out} {sentence}".strip()
        if len(candidate) > limit - 1:
            break
        out = candidate
    if not out:
        out = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return out.rstrip() + "…"
