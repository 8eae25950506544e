"""Text of the page as inline HTML: Markdown rendered, then sanitised.

The digest's texts — PR titles, summaries, key points, reasons, and the highlights and advice
composed from PR descriptions — are GitHub Markdown (``code``, ``**bold**``, ``[links](…)``).
:func:`inline_html` renders one of them for the page:

1. parsed by pyromark (pulldown-cmark, CommonMark plus strike-through), the parser that already
   reads descriptions (:mod:`bot.digest.description`);
2. written as *inline* HTML from the parser's events: ``<code>``, ``<em>``, ``<strong>``,
   ``<del>`` and links; blocks are flattened into the line (a heading's or a quote's text stays,
   an ordered item keeps its number, a bullet becomes ``•``, a code block becomes ``<code>``),
   so a fragment never opens a heading or a list in the middle of a sentence;
3. sanitised by nh3 (the Ammonia sanitiser) to :data:`TAGS` and ``href`` on ``<a>``, with
   ``rel="noopener noreferrer"`` on every link.

PR text stays inert: raw HTML in it (``<script>``, ``<img onerror=…>``) is shown as text, an
image shows its alt text (the page loads no remote image), and a link stays a link only when
:func:`bot.cards.escape.link_allowed` allows its target (``https`` on GitHub) — ``javascript:``,
``data:`` and other hosts show their label alone. ``#1234`` in text becomes a link to that PR's
entry on the page (``#pr-1234``) when the page has one. Bidirectional-control characters are
removed first, line breaks end up as spaces, and a ``**`` left without its other half (a text cut
with ``…`` inside bold) is dropped rather than shown.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache
from typing import Any

import markupsafe
import nh3
import pyromark

from bot.cards.escape import link_allowed, one_line, without_bidi

__all__ = ["TAGS", "anchor", "inline_html"]

TAGS = frozenset(("a", "code", "em", "strong", "del"))
"""The only elements page text may hold after sanitising."""

_MARKDOWN = pyromark.Markdown(options=pyromark.Options.ENABLE_STRIKETHROUGH)
_MARKS = frozenset("`*_~[]<>&!#\\-+=\n\r")
"""Characters without which a text is plain (no Markdown to read, no line break to fold)."""
_STYLE = {"Emphasis": "em", "Strong": "strong", "Strikethrough": "del"}
_PR_NUMBER = re.compile(r"(?<![\w#&/])#(\d{1,7})\b")
_REL = "noopener noreferrer"
_UNPAIRED_BOLD = re.compile(r"\*\*(?=\S)|(?<=\S)\*\*")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)


def anchor(number: int) -> str:
    """The id of PR ``number``'s entry on the page: ``pr-1234``."""
    return f"pr-{number}"


def inline_html(text: str, *, prs: Collection[int] = frozenset(), links: bool = True) -> markupsafe.Markup:
    """``text`` (Markdown, untrusted) as sanitised inline HTML for the page (see the module docstring).

    Args:
        text: one line or paragraph of Markdown; line breaks are folded into spaces.
        prs: PR numbers that have an entry on the page; ``#N`` of them links to ``#pr-N``.
        links: keep allowed Markdown links as links; false shows every link as its label
            (for text that sits inside a link or a button).

    Returns:
        Markup holding only :data:`TAGS`; ``""`` for blank text.
    """
    return markupsafe.Markup(_render(text, frozenset(prs), links))


@lru_cache(maxsize=8192)
def _render(text: str, prs: frozenset[int], links: bool) -> str:
    source = without_bidi(text).strip()
    if not source:
        return ""
    if not any(mark in source for mark in _MARKS) and not source[0].isdigit():
        return str(markupsafe.escape(one_line(source)))  # plain text: nothing to parse
    writer = _Writer(prs, links)
    for event in _MARKDOWN.events(source):
        writer.take(event)
    html = " ".join("".join(writer.out).split())  # no <pre> here: runs of blanks show as one anyway
    return nh3.clean(html, tags=set(TAGS), attributes={"a": {"href"}}, url_schemes={"https"}, link_rel=_REL,
                     strip_comments=True)


class _Writer:
    """Writes pyromark's events of one text as inline HTML (every text escaped)."""

    def __init__(self, prs: frozenset[int], links: bool) -> None:
        self.prs = prs
        self.links = links
        self.out: list[str] = []
        self.lists: list[int | None] = []  # per open list: the next item's number, None for bullets
        self.open_links: list[bool] = []  # per open link or image: whether an <a> was written
        self.in_image = 0
        self.in_code_block = False
        self.code_info = ""
        self.code_text = False

    def take(self, event: Any) -> None:
        if isinstance(event, str):  # SoftBreak, HardBreak, Rule
            self.out.append(" ")
        elif "Text" in event:
            self.text(str(event["Text"]))
        elif "Code" in event:
            self.out.append(f"<code>{markupsafe.escape(event['Code'])}</code>")
        elif "Html" in event or "InlineHtml" in event:
            raw = _COMMENT.sub("", str(event.get("Html", event.get("InlineHtml", ""))))  # a template's comment
            self.out.append(str(markupsafe.escape(raw)))  # a tag shows as text
        elif "Start" in event:
            self.start(event["Start"])
        elif "End" in event:
            self.end(event["End"])

    def text(self, text: str) -> None:
        if "**" in text and not self.in_code_block:  # a bold mark whose other half was cut off with the text
            text = _UNPAIRED_BOLD.sub("", text)
        if self.in_code_block:
            self.code_text = self.code_text or bool(text.strip())
            self.out.append(str(markupsafe.escape(" ".join(text.split()))))
        elif self.open_links or not self.prs:
            self.out.append(str(markupsafe.escape(text)))
        else:
            self.out.append(_link_numbers(text, self.prs))

    def start(self, opened: Any) -> None:
        tag = opened if isinstance(opened, str) else next(iter(opened))
        if tag in _STYLE:
            self.out.append(f"<{_STYLE[tag]}>")
        elif tag in ("Link", "Image"):
            target = str(opened[tag].get("dest_url", ""))
            keep = tag == "Link" and self.links and not self.in_image and link_allowed(target)
            self.open_links.append(keep)
            if keep:
                self.out.append(f'<a href="{markupsafe.escape(target.strip().strip("<>"))}">')
        elif tag == "List":
            first = opened[tag]
            self.lists.append(int(first) if first is not None else None)
        elif tag == "Item":
            number = self.lists[-1] if self.lists else None
            if number is None:
                self.out.append(" • ")
            else:
                self.out.append(f" {number}. ")
                self.lists[-1] = number + 1
        elif tag == "CodeBlock":
            self.in_code_block = True
            kind = opened[tag] if isinstance(opened, dict) else None
            self.code_info = str(kind["Fenced"]) if isinstance(kind, dict) and "Fenced" in kind else ""
            self.code_text = False
            self.out.append(" <code>")

    def end(self, closed: Any) -> None:
        tag = closed if isinstance(closed, str) else next(iter(closed))
        if tag in _STYLE:
            self.out.append(f"</{_STYLE[tag]}>")
        elif tag in ("Link", "Image"):
            if self.open_links and self.open_links.pop():
                self.out.append("</a>")
        elif tag == "List":
            if self.lists:
                self.lists.pop()
        elif tag == "CodeBlock":
            if not self.code_text:  # a fence opened and never filled (a cut fragment): show what follows it
                self.out.append(str(markupsafe.escape(self.code_info)))
            self.in_code_block = False
            self.out.append("</code> ")
        elif tag in ("Paragraph", "Heading", "Item", "BlockQuote", "HtmlBlock"):
            self.out.append(" ")


def _link_numbers(text: str, prs: frozenset[int]) -> str:
    """``text`` escaped, with each ``#N`` of a PR on the page linked to its entry."""
    parts: list[str] = []
    at = 0
    for match in _PR_NUMBER.finditer(text):
        number = int(match.group(1))
        if number not in prs:
            continue
        parts.append(str(markupsafe.escape(text[at:match.start()])))
        parts.append(f'<a href="#{anchor(number)}">#{number}</a>')
        at = match.end()
    parts.append(str(markupsafe.escape(text[at:])))
    return "".join(parts)
