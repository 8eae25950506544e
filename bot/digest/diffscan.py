"""The changed lines of a patch, each split into its code and its prose.

Used to check what the model cites as evidence (:mod:`bot.digest.llm.evidence`):
only code counts, never a comment, a docstring, a sentence in a string or a
Markdown line — that is where instructions to a model would be written.

A unified-diff patch (GitHub's per-file ``patch``: hunks that start with
``@@``; a ``---``/``+++`` header before the first hunk is skipped) is read one
side at a time: the removed lines with the old file's context lines, the added
lines with the new file's. Each changed line is split into

- ``code``: the line with comments and prose string literals blanked out. A
  string literal that is one identifier-like word (a dict or config key, a CLI
  flag: ``"enable_resource_pool"``, ``'--lr'``, ``"a.b_c"``) stays in the code;
  one with a space, a slash or a colon (a sentence, a URL, a path) is prose;
- ``prose``: those comments and strings.

Comment syntax comes from the file name: ``#`` for Python, shell, YAML, TOML,
INI, Dockerfiles…; ``//`` and ``/* */`` for the C family, Rust, Go, Java,
JavaScript…; ``--`` for SQL and Lua; Python's triple-quoted strings are prose;
JSON has none. Markup and prose files (Markdown, reST, plain text, HTML,
templates, notebooks) have no code at all. Unknown file types read ``#``,
``//`` and ``/* */`` as comments (less code seen means less evidence accepted).
A hunk can start inside a docstring or a block comment: when the first
delimiter of a hunk closes one rather than opens it, the lines before it are
read as prose — unless the hunk's side starts at the file's first line (its
``@@ -a,b +c,d @@`` header says line 1, or 0 for a file that is added or
removed), where nothing can be open yet. A Python hunk side with no delimiter at
all that holds a backtick (no Python token; docstrings write ``name (`str`)``)
lies inside a docstring: all prose. Lines beyond :data:`MAX_LINE_CHARS` are cut there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import repeat
from pathlib import PurePosixPath
from typing import NamedTuple

MAX_LINE_CHARS = 2_000
KEYLIKE = re.compile(r"-{0,2}[A-Za-z_][\w.\-]{0,79}")
TRIPLE_QUOTES = ('"' * 3, "'" * 3)


@dataclass(frozen=True)
class Syntax:
    """How comments and strings are written in one kind of file."""

    line: tuple[str, ...] = ()
    block: tuple[tuple[str, str], ...] = ()
    triple: bool = False
    quotes: str = "\"'"
    prose: bool = False

    @cached_property
    def specials(self) -> re.Pattern[str]:
        """Where something other than plain code may start: a comment, a block comment's opening or
        closing, a triple quote, a quote. Everything between two such places is code, copied at once."""
        starts = {*self.line, *self.openers, *self.closers, *self.quotes}
        if self.triple:
            starts.update(TRIPLE_QUOTES)
        return re.compile("|".join(re.escape(s) for s in sorted(starts, key=len, reverse=True)) or r"(?!)")

    @cached_property
    def openers(self) -> tuple[str, ...]:
        return tuple(o for o, _ in self.block)

    @cached_property
    def closers(self) -> tuple[str, ...]:
        return tuple(c for _, c in self.block)

    @cached_property
    def strings(self) -> dict[str, re.Pattern[str]]:
        """Per quote, the rest of a string that opens with it, up to its closing quote (a backslash escapes
        the next character)."""
        return {q: re.compile(rf"(?:[^\\{re.escape(q)}]++|\\[\s\S])*+{re.escape(q)}") for q in self.quotes}


HASH = Syntax(line=("#",))
PYTHON = Syntax(line=("#",), triple=True)
C_FAMILY = Syntax(line=("//",), block=(("/*", "*/"),), quotes="\"'`")
DASH = Syntax(line=("--",))
JSON = Syntax(quotes='"')
PROSE = Syntax(prose=True)
UNKNOWN = Syntax(line=("#", "//"), block=(("/*", "*/"),))

_BY_SUFFIX: dict[str, Syntax] = {
    **dict.fromkeys((".py", ".pyi", ".pyx", ".pxd", ".triton"), PYTHON),
    **dict.fromkeys((".sh", ".bash", ".zsh", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".r", ".rb",
                     ".jl", ".pl", ".ps1", ".cmake", ".mk", ".dockerfile", ".env", ".txt", ".in", ".bzl"), HASH),
    **dict.fromkeys((".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".rs", ".go", ".java",
                     ".kt", ".scala", ".js", ".jsx", ".mjs", ".ts", ".tsx", ".swift", ".m", ".mm", ".cs", ".php",
                     ".proto", ".dart", ".groovy", ".gradle"), C_FAMILY),
    **dict.fromkeys((".sql", ".lua", ".hs"), DASH),
    ".json": JSON,
    **dict.fromkeys((".md", ".mdx", ".rst", ".adoc", ".html", ".htm", ".xml", ".svg", ".j2", ".jinja",
                     ".jinja2", ".tex", ".ipynb", ".csv", ".tsv", ".po"), PROSE),
}
_BY_NAME: dict[str, Syntax] = {"Dockerfile": HASH, "Makefile": HASH, "CMakeLists.txt": HASH, "BUILD": HASH,
                               "LICENSE": PROSE, "NOTICE": PROSE, "AUTHORS": PROSE, "CODEOWNERS": HASH}
_PROSE_TXT = re.compile(r"(?:^|/)(?:docs?|documentation)/|(?:^|/)(?:readme|changelog|changes|history)[^/]*$", re.I)


@lru_cache(maxsize=4096)
def syntax_for(path: str) -> Syntax:
    """The :class:`Syntax` of a repository path (by its name, then its suffix)."""
    p = PurePosixPath(path)
    if p.name in _BY_NAME:
        return _BY_NAME[p.name]
    if p.name.startswith("Dockerfile"):
        return HASH
    suffix = p.suffix.lower()
    if suffix == ".txt" and _PROSE_TXT.search(path):
        return PROSE
    return _BY_SUFFIX.get(suffix, UNKNOWN)


class ChangedLine(NamedTuple):
    """One added (``sign == "+"``) or removed (``"-"``) line of a patch: its text, split into code and prose;
    its line number in its side's file (the new file for ``+``, the old one for ``-``; 0 when the hunk header
    gives none) and the hunk it is in (0 for the first), with that hunk's context (what follows the ``@@ … @@``
    of its header: the enclosing function or class, as ``git diff`` writes it; empty when none)."""

    sign: str
    text: str
    code: str
    prose: str
    number: int = 0
    hunk: int = 0
    context: str = ""


class _Scan:
    """Per-side scanner state: the open string or comment (its closing delimiter) and the first delimiter seen."""

    __slots__ = ("first", "line", "state", "syntax")

    def __init__(self, syntax: Syntax, state: str | None = None) -> None:
        self.syntax = syntax
        self.state = state
        self.line = 0
        self.first: tuple[str, int, int] | None = None  # ("open" | "close", line index, column)


def _scan_line(line: str, scan: _Scan) -> tuple[str, str]:
    """Split one line into (code, prose), updating the scanner's state."""
    syntax = scan.syntax
    search = syntax.specials.search
    code: list[str] = []
    prose: list[str] = []
    state = scan.state
    i, n = 0, len(line)
    while i < n:
        if state is not None:
            j = line.find(state, i)
            if j < 0:
                prose.append(line[i:])
                break
            prose.append(line[i:j])
            i, state = j + len(state), None
            code.append(" ")
            continue
        found = search(line, i)
        if found is None:
            code.append(line[i:])
            break
        if found.start() > i:
            code.append(line[i:found.start()])
            i = found.start()
        # Each test below starts with a cheap one (``startswith`` a tuple) that every match of it passes.
        if line.startswith(syntax.line, i) and any(
                line.startswith(s, i) and (s != "#" or i == 0 or line[i - 1].isspace()) for s in syntax.line):
            prose.append(line[i:])
            break
        if line.startswith(syntax.openers, i):
            opener, state = next((o, c) for o, c in syntax.block if line.startswith(o, i))
            scan.first = scan.first or ("open", scan.line, i)
            i += len(opener)
            continue
        if scan.first is None and line.startswith(syntax.closers, i):
            scan.first = ("close", scan.line, i)
        if syntax.triple and line.startswith(TRIPLE_QUOTES, i):
            scan.first = scan.first or ("open", scan.line, i)
            state = line[i:i + 3]
            i += 3
            continue
        if line[i] in syntax.quotes:
            string = syntax.strings[line[i]].match(line, i + 1)
            if string is not None:
                content = line[i + 1:string.end() - 1]
                (code if KEYLIKE.fullmatch(content) else prose).append(f" {content} ")
                i = string.end()
                continue
        code.append(line[i])
        i += 1
    scan.state = state
    return "".join(code), " ".join(filter(None, map(str.strip, prose)))


_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?(.*)$")
_OPENER = re.compile(r"(?:[=(\[{,+:]|\breturn|\byield)$")
_PREFIX = re.compile(r"[rRbBuUfF]{1,2}$")


def _starts_inside(lines: list[str], scan: _Scan) -> str | None:
    """The delimiter a hunk side starts inside of, judged from its first delimiter (see the module docstring)."""
    if scan.first is None:
        return None
    how, index, column = scan.first
    if how == "close":
        return next(close for _, close in scan.syntax.block)
    delimiter = lines[index][column:column + 3]
    if delimiter not in TRIPLE_QUOTES or index == 0:
        return None  # a block comment that opens, or a string on the hunk's first line: read as an opening
    before = _PREFIX.sub("", lines[index][:column].rstrip()).rstrip()
    if before:  # `x = """…` opens; `Defaults to None."""` closes
        return None if _OPENER.search(before) else delimiter
    previous = next((t.rstrip() for t in reversed(lines[:index]) if t.strip()), "")
    return None if previous.endswith((":", "(", ",", "=", "[")) else delimiter


def _read(lines: list[str], scan: _Scan, needed: int) -> list[tuple[str, str]]:
    """(code, prose) of the lines, at least of the first ``needed``: the reading stops past them once the side's
    first delimiter is seen (a later line changes nothing before it). Only the lines with a delimiter go through
    :func:`_scan_line`: each is found by one search of the side's text from where the last one ended; the lines
    between them are all code, or all prose when a string or comment is open (a line without a delimiter neither
    opens nor closes one)."""
    text = "\n".join(lines)
    search = scan.syntax.specials.search
    result: list[tuple[str, str]] = []
    index = start = 0  # the next line to read, and where it starts in ``text``
    while index < len(lines) and (index < needed or scan.first is None):
        found = search(text, start)
        delimited = len(lines) if found is None else index + text.count("\n", start, found.start())
        plain = lines[index:delimited]
        result += zip(plain, repeat("")) if scan.state is None else (("", t.strip()) for t in plain)
        if found is None:
            break
        scan.line = delimited
        result.append(_scan_line(lines[delimited], scan))
        index, start = delimited + 1, text.find("\n", found.start()) + 1
    return result


def _read_side(lines: list[str], syntax: Syntax, at_top: bool, needed: int) -> list[tuple[str, str]]:
    """(code, prose) of the first ``needed`` lines of a hunk side, at least."""
    scan = _Scan(syntax)
    result = _read(lines, scan, needed)
    inside = None if at_top else _starts_inside(lines, scan)
    if inside is None and syntax.triple and scan.first is None and not at_top and any("`" in c for c, _ in result):
        # no quote, comment or delimiter in the whole side, and a backtick (no Python token): the hunk lies
        # inside a docstring (a Markdown-style ``name (`str`, defaults to ...)`` line of an argument list)
        inside = TRIPLE_QUOTES[0]
    return result if inside is None else _read(lines, _Scan(syntax, state=inside), needed)


class _Hunk(NamedTuple):
    """One hunk: the lines of each side (context lines in both), the changed lines as (sign, text, index in
    its side), whether each side starts at the file's first line, the number of each side's first line, and
    the header's context."""

    sides: dict[str, list[str]]
    changes: list[tuple[str, str, int]]
    tops: dict[str, bool]
    starts: dict[str, int]
    context: str


def _hunks(patch: str) -> list[_Hunk]:
    """The hunks of a patch (lines cut at :data:`MAX_LINE_CHARS`; ``\\ No newline`` notes and lines
    before the first hunk left out; an empty line is an empty context line)."""
    hunks: list[_Hunk] = []
    old: list[str] = []
    new: list[str] = []
    changes: list[tuple[str, str, int]] = []
    for raw in patch.splitlines():
        marker = raw[:1]
        if marker in ("-", "+", " ", ""):
            if not hunks:
                continue
            text = raw[1:MAX_LINE_CHARS]
            if marker == "-":
                changes.append(("-", text, len(old)))
                old.append(text)
            elif marker == "+":
                changes.append(("+", text, len(new)))
                new.append(text)
            else:
                old.append(text)
                new.append(text)
        elif raw.startswith("@@"):
            header = _HUNK_HEADER.match(raw)
            starts = (int(header.group(1)), int(header.group(2))) if header else (2, 2)
            old, new, changes = [], [], []
            hunks.append(_Hunk({"-": old, "+": new}, changes, {"-": starts[0] <= 1, "+": starts[1] <= 1},
                               {"-": starts[0], "+": starts[1]} if header else {"-": 0, "+": 0},
                               header.group(3).strip()[:MAX_LINE_CHARS] if header else ""))
    return hunks


@lru_cache(maxsize=256)
def changed_lines(path: str, patch: str) -> tuple[ChangedLine, ...]:
    """The added and removed lines of ``patch`` (the diff of ``path``), in patch order (the last few hundred
    patches read are kept: one PR's analysis reads each of its patches more than once).

    Args:
        path: the file's repository path (chooses the comment syntax).
        patch: unified-diff text of this one file.

    Returns:
        One :class:`ChangedLine` per ``+``/``-`` line of the hunks; context lines are
        read (for strings and comments that span lines) but not returned.
    """
    syntax = syntax_for(path)
    new = tuple.__new__  # ChangedLine(...) without the NamedTuple's Python-level __new__: the same tuple, faster
    out: list[ChangedLine] = []
    for number, hunk in enumerate(_hunks(patch)):
        starts, context = hunk.starts, hunk.context
        if syntax.prose:
            out += [new(ChangedLine, (sign, text, "", text, _line(starts[sign], index), number, context))
                    for sign, text, index in hunk.changes]
            continue
        # per side with changed lines (the other is not read): how many of its lines are needed
        needed = {sign: index + 1 for sign, _, index in hunk.changes}
        read = {sign: _read_side(hunk.sides[sign], syntax, hunk.tops[sign], lines) for sign, lines in needed.items()}
        out += [new(ChangedLine, (sign, text, *read[sign][index], _line(starts[sign], index), number, context))
                for sign, text, index in hunk.changes]
    return tuple(out)


def _line(start: int, index: int) -> int:
    """The file line number of a hunk side's line ``index`` (0 when the header gave no start; a side that
    starts at 0 is an empty file, whose first line is 1)."""
    return max(start, 1) + index if start else 0
