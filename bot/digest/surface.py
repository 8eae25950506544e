"""Changed lines that are surface, not meaning: for :func:`bot.digest.diff.read_diff`.

A removed line and an added line of one file are **re-indented** when they differ in whitespace only (a block
moved under a ``with``, a reformat): the code did not change. A pair of one hunk is **annotation-only** when it
differs only in type annotations (``beta: str = "linear"`` -> ``beta: Literal["linear", "exp"] = "linear"``,
``):`` -> ``) -> None:``), and an import from ``typing``, ``typing_extensions`` or ``collections.abc`` only serves
annotations. The repository's own version (``__version__ = "0.19.2.dev0"``) is a version string, told by
:mod:`bot.digest.dependencies`. None of these is code to read or behaviour that changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.digest.diffscan import ChangedLine

__all__ = ["annotation_free", "reindented", "surface"]

_RETURN = re.compile(r"\)\s*->\s*[^:#]+?\s*:\s*$")
_TYPING_IMPORT = re.compile(r"^\s*(?:from\s+(?:typing|typing_extensions|collections\.abc)\s+import\b|"
                            r"import\s+(?:typing|typing_extensions)\s*$)")
_OWN_VERSION = re.compile(r"""^\s*__version__\s*[:=]\s*["'][^"']+["']\s*$""")
_TYPE_START = re.compile(r"\s*(?:[A-Z]|(?:int|float|str|bool|bytes|list|dict|tuple|set|frozenset|object|type|complex|"
                         r"callable)(?!\w)|[a-z_]\w*\.[A-Za-z_]|[\"'])")
"""How a type annotation starts: a class name, a builtin type, a dotted name (``torch.device``) or a string; not a
lower-case name or a number (``"mode": mode``, ``key: value`` are a mapping's entries)."""


def _type_end(text: str, start: int) -> int:
    """Where a type expression that starts at ``start`` ends: at the first ``=``, ``,`` or ``)`` outside
    brackets and strings, else at the end of the line (a trailing comment left out)."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and (c in ",=" or c == "#"):
            return i
        i += 1
    return i


def _uncommented(text: str) -> str:
    """``text`` without a trailing ``#`` comment (one outside quotes)."""
    quote = ""
    for i, c in enumerate(text):
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "#":
            return text[:i]
    return text


_ITEM = re.compile(r"\s*\*{0,2}[A-Za-z_]\w*\s*:(?!=)")
_BARE_ITEM = re.compile(r"\s*\*{0,2}[A-Za-z_]\w*\s*(?:=|,|\)|$)")


def _strip_parameters(text: str, start: int, strict: bool) -> str | None:
    """``text`` with the annotations of the comma-separated parameters from ``start`` cut (``name: TYPE = x``
    -> ``name = x``); with ``strict``, ``None`` unless every item is a parameter (bare or annotated)."""
    pieces, i, kept = [], start, 0
    while i < len(text):
        item = _ITEM.match(text, i)
        if item and _TYPE_START.match(text, item.end()):
            pieces.append(text[kept:item.end() - 1])
            i = kept = _type_end(text, item.end())
        elif strict and not _BARE_ITEM.match(text, i) and text[i:].strip() not in ("", ")", "):"):
            return None
        j = _type_end(text, i)
        if j < len(text) and text[j] == "=":  # a default: up to the next separator
            j = _type_end(text, j + 1)
        if j < len(text) and text[j] == ")":
            break
        i = j + 1
    return "".join(pieces) + text[kept:]


def annotation_free(text: str) -> str:
    """``text`` without its type annotations and comment, whitespace removed: a return annotation, the
    parameters of a one-line ``def``, and a line of parameters or a field (``name: TYPE = default,``,
    ``self, n: int, device: Optional[str] = None``)."""
    out = _RETURN.sub("):", _uncommented(text).rstrip())
    head = re.match(r"^\s*(?:async\s+)?def\s+\w+\s*\(", out)
    if head:
        out = _strip_parameters(out, head.end(), strict=False) or out
    elif _ITEM.match(out) or _BARE_ITEM.match(out):
        out = _strip_parameters(out, 0, strict=True) or out
    return "".join(out.split())


def reindented(a: ChangedLine, b: ChangedLine) -> bool:
    """The two lines differ in whitespace only (and differ)."""
    return a.text != b.text and "".join(a.text.split()) == "".join(b.text.split())


def surface(lines: Sequence[ChangedLine]) -> tuple[set[int], set[int]]:
    """(re-indented, annotation-only or typing-import or own-version) indexes of ``lines``, the changed code
    lines of one file in patch order: a removed line and an added line pair up when they differ in whitespace
    only (anywhere in the file), or only in annotations (in the same hunk); each line pairs once."""
    moved: set[int] = set()
    removed: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if line.sign == "-":
            removed.setdefault("".join(line.text.split()), []).append(i)
    for i, line in enumerate(lines):
        if line.sign == "+":
            candidates = removed.get("".join(line.text.split()))
            while candidates:
                j = candidates.pop()
                if reindented(lines[j], line):
                    moved.update((i, j))
                    break
    marks: set[int] = {i for i, line in enumerate(lines)
                       if i not in moved and (_TYPING_IMPORT.match(line.code) or _OWN_VERSION.match(line.text))}
    by_key: dict[tuple[int, str], list[int]] = {}
    # only a line with a colon or an arrow can carry an annotation; others that differ in whitespace only were paired
    annotated = [i for i, line in enumerate(lines) if i not in moved and (":" in line.text or "->" in line.text)]
    hunks = {lines[i].hunk for i in annotated if lines[i].sign == "-"} & {lines[i].hunk for i in annotated
                                                                          if lines[i].sign == "+"}
    annotated = [i for i in annotated if lines[i].hunk in hunks]
    for i in annotated:
        line = lines[i]
        if line.sign == "-":
            by_key.setdefault((line.hunk, annotation_free(line.text)), []).append(i)
    for i in annotated:
        line = lines[i]
        if line.sign == "+":
            candidates = by_key.get((line.hunk, annotation_free(line.text)))
            if candidates and "".join(lines[candidates[-1]].text.split()) != "".join(line.text.split()):
                marks.update((i, candidates.pop()))
    return moved, marks
