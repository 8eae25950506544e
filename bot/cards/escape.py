"""Escaping of PR-originated text and safe splitting of long text.

Text that comes from pull requests (titles, labels, analysis written about
them) is untrusted. Each output format gets its own escaper:

* Every escaper first removes the bidirectional-control characters (U+202A–U+202E,
  U+2066–U+2069, :func:`without_bidi`): a title holding a right-to-left override
  would otherwise reverse what follows it on the reader's screen (a filename, a link).
* Slack ``mrkdwn`` (:func:`slack_text`): ``&``, ``<`` and ``>`` become
  ``&amp;``, ``&lt;`` and ``&gt;``, as Slack asks, so ``<!channel>``,
  ``<@U123>`` and ``<https://x|label>`` from a PR stay inert text;
  :func:`slack_mrkdwn` also writes the GitHub Markdown of PR text as Slack's own
  (``**bold**`` → ``*bold*``, ``# Heading`` → ``*Heading*``, ``~~gone~~`` → ``~gone~``,
  ``[label](https://…)`` → ``<https://…|label>``; code spans untouched), so no stray asterisks.
* Links in PR text stay inert: a Markdown link ``[label](target)`` is kept as a link only when its
  target is an ``https`` URL on :data:`LINK_HOSTS` (GitHub, where the PR lives); any other
  (``http``, another host, ``javascript:``, ``data:`` …) is shown as its label alone, in Slack
  and in Feishu (:func:`link_allowed`).
* Feishu card ``markdown`` (:func:`feishu_text`): the JSON 2.0 rich-text
  component reads HTML-like tags (``<at>``, ``<font>``, ``<link>``, …) and
  documents HTML character references ``&#60;`` / ``&#62;`` for showing ``<``
  and ``>`` literally. ``<`` and ``>`` are replaced by those, and an ``&`` that
  would start a character reference becomes ``&#38;`` so that a PR cannot
  smuggle an entity-encoded tag in either. Markdown itself passes through
  unchanged (no backslash escaping).
* The Markdown report (:func:`md_text`, :func:`md_cell`): a ``<`` that could
  open raw HTML (a tag, a comment, an autolink) becomes ``&lt;``; table cells
  also escape ``|`` and fold line breaks, so a title cannot add a column or
  end the table; :func:`md_line` and :func:`md_paragraphs` keep a line from
  opening a code fence, heading or quote.

:func:`split_text` cuts long text into chunks of at most ``limit`` units at
paragraph, line or word boundaries, never inside an atomic span (a character
reference such as ``&amp;``, a Slack link ``<url|#1>``, a Markdown link) nor
between the code points of one user-perceived character (emoji sequences,
combining marks, regional-indicator flags).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from urllib.parse import quote, urlsplit

ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
"""A character reference (``&amp;``, ``&#60;``, ``&#x3C;``)."""

_BREAKS = ("\n", "\r", "\u2028", "\u2029")
_LINE_BREAKS = re.compile(r"\s*[\r\n\u2028\u2029]+\s*")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_BLOCK_OPENER = re.compile(r"```|~~~|#{1,6}(?:[ \t]|$)|>")
_HTML_OPENER = re.compile(r"<(?=[A-Za-z/!?])")
_FEISHU_ENTITY_AMP = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def without_bidi(text: str) -> str:
    """``text`` without bidirectional-control characters (embeddings, overrides, isolates)."""
    return text if text.isascii() else _BIDI.sub("", text)  # those characters are not ASCII


def one_line(text: str) -> str:
    """``text`` with every line break (and the blanks around it) folded into one space."""
    text = without_bidi(text)
    if not any(brk in text for brk in _BREAKS):  # nothing to fold
        return text.strip()
    return _LINE_BREAKS.sub(" ", text).strip()


def slack_text(text: str) -> str:
    """Escape ``text`` for Slack ``mrkdwn`` and ``plain_text``.

    ``&`` → ``&amp;``, ``<`` → ``&lt;``, ``>`` → ``&gt;``; nothing else.
    """
    return without_bidi(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_CODE_SPAN = re.compile(r"`[^`\n]{1,500}`")
_MD_BOLD = re.compile(r"\*\*(?=\S)([^\n*]{1,300}?)(?<=\S)\*\*"
                      r"|(?<![A-Za-z0-9_])__(?=\S)([^\n_]{0,300}? [^\n_]{0,300}?)(?<=\S)__(?![A-Za-z0-9_])")
"""``**bold**``, and ``__bold words__`` with a space inside (``__init__.py`` stays a file name)."""
_MD_STRIKE = re.compile(r"~~(?=\S)([^\n~]{1,300}?)(?<=\S)~~")
_MD_HEADING = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+([^\n]{1,300}?)[ \t#]*$")
_MD_LINK = re.compile(r"\[([^\[\]\n|<>`]{1,200})\]\((https?://[^\s()<>]{1,2000})\)")
_ANY_MD_LINK = re.compile(r"!?\[([^\[\]\n]{0,200})\]\(\s*(<[^<>\n]{0,2000}>|(?:[^\s()]|\([^\s()]{0,200}\)){0,2000})"
                          r"(?:\s+(?:\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'))?\s*\)")
"""A Markdown link or image, whatever its target's scheme (an optional title after it)."""
LINK_HOSTS: tuple[str, ...] = ("github.com",)
"""Hosts whose ``https`` links in PR text stay links (the PR's own host); every other link shows its label."""
_HELD = re.compile(r"\x03([0-9]{1,4})\x04")
_MRKDWN_MARKS = ("&", "<", ">", "`", "[", "#", "**", "__", "~~", "\x03", "\x04")
"""Text holding none of these (and no bidi control) is its own :func:`slack_mrkdwn`."""


def link_allowed(url: str, hosts: tuple[str, ...] = LINK_HOSTS) -> bool:
    """Whether a link of PR text to ``url`` may stay a link: ``https``, on one of ``hosts``."""
    try:
        parts = urlsplit(url.strip().strip("<>"))
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    return parts.scheme.lower() == "https" and any(host == h or host.endswith("." + h) for h in hosts)


def slack_mrkdwn(text: str, *, headings: bool = True) -> str:
    """PR text (GitHub Markdown) as Slack ``mrkdwn``: escaped as :func:`slack_text`, with bold,
    strike-through, headings (unless ``headings`` is false: one line of a title or an excerpt) and
    http(s) links written Slack's way; code spans are kept as they are."""
    if not any(mark in text for mark in _MRKDWN_MARKS) and (text.isascii() or not _BIDI.search(text)):
        return text  # nothing to escape nor to rewrite
    held: list[str] = []

    def hold(piece: str) -> str:
        held.append(piece)
        return f"\x03{len(held) - 1}\x04"

    text = text.replace("\x03", "").replace("\x04", "")
    text = _CODE_SPAN.sub(lambda m: hold(slack_text(m.group(0))), text)
    text = _MD_LINK.sub(lambda m: hold(f"<{slack_text(m.group(2))}|{slack_text(m.group(1))}>"
                                       if link_allowed(m.group(2)) else slack_text(m.group(1))), text)
    text = slack_text(text)
    if headings:
        text = _MD_HEADING.sub(lambda m: f"*{m.group(1)}*", text)
    text = _MD_BOLD.sub(lambda m: f"*{m.group(1) or m.group(2)}*", text)
    text = _MD_STRIKE.sub(lambda m: f"~{m.group(1)}~", text)
    return _HELD.sub(lambda m: held[int(m.group(1))], text)


def feishu_text(text: str) -> str:
    """Escape ``text`` for a Feishu JSON 2.0 ``markdown`` element.

    ``<`` → ``&#60;``, ``>`` → ``&#62;``, and ``&`` → ``&#38;`` where it would
    begin a character reference; a Markdown link or image is kept only as an ``https`` link to
    :data:`LINK_HOSTS` (else its label); everything else (Markdown included) is kept.
    """
    text = without_bidi(text)
    if "](" in text:  # a Markdown link: a link only to the PR's own host, else its label
        text = _ANY_MD_LINK.sub(lambda m: m.group(0) if not m.group(0).startswith("!") and
                                link_allowed(m.group(2)) else m.group(1), text)
    if not any(c in text for c in "&<>"):
        return text
    text = _FEISHU_ENTITY_AMP.sub("&#38;", text)
    return text.replace("<", "&#60;").replace(">", "&#62;")


def md_text(text: str) -> str:
    """Make ``text`` unable to open raw HTML in the Markdown report (``<tag`` → ``&lt;tag``)."""
    text = without_bidi(text)
    return _HTML_OPENER.sub("&lt;", text) if "<" in text else text


def md_line(text: str) -> str:
    """``text`` as one line of the Markdown report that cannot start a block of its own.

    Line breaks are folded, raw HTML is defused (:func:`md_text`), and a leading
    code fence, heading marker (``#`` … ``######`` and a blank) or ``>`` is
    backslash-escaped, so the line cannot open a code block that would swallow
    the rest of the report, nor a heading or quote. (``#6046`` stays as it is.)
    """
    line = md_text(one_line(text))
    if _BLOCK_OPENER.match(line):
        line = "\\" + line
    return line


def md_paragraphs(text: str) -> str:
    """``text`` as Markdown paragraphs: blank-line separated, each one safe :func:`md_line`."""
    paragraphs = (md_line(p) for p in _PARAGRAPH_BREAK.split(text.strip()))
    return "\n\n".join(p for p in paragraphs if p)


def md_cell(text: str) -> str:
    """``text`` for one Markdown table cell: one line, ``|`` escaped, no raw HTML."""
    return md_line(text).replace("|", "\\|")


@lru_cache(maxsize=4096)
def safe_url(url: str) -> str | None:
    """``url`` fit for a Slack ``<url|…>`` or Markdown ``[…](url)`` link, or ``None``.

    Only ``http``/``https`` URLs are linked; characters that would end the link
    (``|``, ``<``, ``>``, parentheses, blanks) are percent-encoded. (Cached: a
    report links each PR several times.)
    """
    url = url.strip()
    # An ASCII URL opening with the scheme and holding no bracket is one urlsplit accepts as http(s)
    # (it only rejects non-ASCII or bracketed host names), so the common case skips it.
    plain = url.startswith(("https://", "http://")) and url.isascii() and "[" not in url and "]" not in url
    if not plain and urlsplit(url).scheme.lower() not in ("http", "https"):
        return None
    return quote(url, safe="/:?#[]@!$&'*+,;=%~-._")


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (how JavaScript-based APIs count)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def split_text(
    text: str,
    limit: int,
    *,
    measure: Callable[[str], int] = len,
    atomic: re.Pattern[str] = ENTITY,
) -> list[str]:
    """Split ``text`` into chunks of at most ``limit`` units each.

    A chunk ends, in order of preference, at a paragraph break (blank line), a
    line break or a space (that separator is dropped), else anywhere that does
    not cut an ``atomic`` span or a user-perceived character. Nothing else is
    lost: the chunks hold all non-blank characters of ``text`` in order.

    Args:
        text: the text to split.
        limit: the maximum size of a chunk, in the units of ``measure``; at least 8.
        measure: size of a string (``len`` counts code points, :func:`utf16_len`
            UTF-16 units).
        atomic: spans never cut (unless a single span is longer than ``limit``).

    Returns:
        The non-empty chunks; ``[]`` for blank ``text``.

    Raises:
        ValueError: ``limit`` is below 8.
    """
    if limit < 8:
        raise ValueError(f"limit must be at least 8, got {limit}")
    chunks: list[str] = []
    rest = text.strip()
    while rest and measure(rest) > limit:
        end = _fit(rest, limit, measure)
        spans = list(_spans_to(atomic, rest, end))
        cut, skip = _cut(rest, end, spans)
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut + skip :].lstrip()
    if rest:
        chunks.append(rest)
    return [chunk for chunk in chunks if chunk]


def _spans_to(atomic: re.Pattern[str], text: str, end: int) -> Iterator[tuple[int, int]]:
    """The ``atomic`` spans of ``text`` that start before ``end``."""
    for match in atomic.finditer(text):
        if match.start() >= end:
            return
        yield match.start(), match.end()


def _fit(text: str, limit: int, measure: Callable[[str], int]) -> int:
    """Largest ``end`` with ``measure(text[:end]) <= limit`` (binary search; measure is monotone)."""
    low, high = 0, min(len(text), limit)
    if measure(text[:high]) <= limit:  # the common case: one unit per code point
        return high
    while low < high:
        mid = (low + high + 1) // 2
        if measure(text[:mid]) <= limit:
            low = mid
        else:
            high = mid - 1
    return low


def _cut(text: str, end: int, spans: list[tuple[int, int]]) -> tuple[int, int]:
    """Where to cut ``text`` at or before ``end``: (position, separator length to drop)."""

    def inside(pos: int) -> int | None:
        for start, stop in spans:
            if start < pos < stop:
                return start
        return None

    for separator in ("\n\n", "\n", " "):
        pos = text.rfind(separator, 0, end)
        while pos > 0 and inside(pos) is not None:
            pos = text.rfind(separator, 0, pos)
        if pos > 0:
            return pos, len(separator)
    pos = end
    span_start = inside(pos)
    if span_start is not None and span_start > 0:
        pos = span_start
    while pos > 1 and not _can_break(text, pos):
        pos -= 1
    return max(pos, 1), 0


def _can_break(text: str, pos: int) -> bool:
    """Whether ``text[:pos]`` / ``text[pos:]`` keeps every user-perceived character whole."""
    before, after = text[pos - 1], text[pos]
    if "\ud800" <= before <= "\udbff":  # lone high surrogate (only in malformed input)
        return False
    if before == "\u200d" or after in "\u200d\u20e3" or "\ufe00" <= after <= "\ufe0f":
        return False
    if "\U0001f3fb" <= after <= "\U0001f3ff" or "\U000e0020" <= after <= "\U000e007f":
        return False
    if unicodedata.combining(after):
        return False
    if _is_regional(after) and _is_regional(before):
        run = 0
        while pos - 1 - run >= 0 and _is_regional(text[pos - 1 - run]):
            run += 1
        return run % 2 == 0
    return True


def _is_regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"
