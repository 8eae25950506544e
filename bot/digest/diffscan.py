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
removed), where nothing can be open yet. Lines beyond :data:`MAX_LINE_CHARS` are cut there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

MAX_LINE_CHARS = 2_000
KEYLIKE = re.compile(r"-{0,2}[A-Za-z_][\w.\-]{0,79}")


@dataclass(frozen=True)
class Syntax:
    """How comments and strings are written in one kind of file."""

    line: tuple[str, ...] = ()
    block: tuple[tuple[str, str], ...] = ()
    triple: bool = False
    quotes: str = "\"'"
    prose: bool = False


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


@dataclass(frozen=True)
class ChangedLine:
    """One added (``sign == "+"``) or removed (``"-"``) line of a patch."""

    sign: str
    text: str
    code: str
    prose: str


@dataclass
class _Scan:
    """Per-side scanner state: the open string or comment (its closing delimiter) and the first delimiter seen."""

    syntax: Syntax
    state: str | None = None
    line: int = 0
    first: tuple[str, int, int] | None = None  # ("open" | "close", line index, column)


def _string_end(line: str, start: int, quote: str) -> int:
    i = start
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == quote:
            return i
        i += 1
    return -1


@lru_cache(maxsize=64)
def _specials(syntax: Syntax) -> re.Pattern[str]:
    """Where something other than plain code may start: a comment, a block comment's opening or
    closing, a triple quote, a quote. Everything between two such places is code, copied at once."""
    starts = {*syntax.line, *(o for o, _ in syntax.block), *(c for _, c in syntax.block), *syntax.quotes}
    if syntax.triple:
        starts.update(TRIPLE_QUOTES)
    return re.compile("|".join(re.escape(s) for s in sorted(starts, key=len, reverse=True)) or r"(?!)")


def _scan_line(line: str, scan: _Scan) -> tuple[str, str]:
    """Split one line into (code, prose), updating the scanner's state."""
    syntax = scan.syntax
    specials = _specials(syntax)
    code: list[str] = []
    prose: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if scan.state is not None:
            j = line.find(scan.state, i)
            if j < 0:
                prose.append(line[i:])
                break
            prose.append(line[i:j])
            i, scan.state = j + len(scan.state), None
            code.append(" ")
            continue
        found = specials.search(line, i)
        if found is None:
            code.append(line[i:])
            break
        if found.start() > i:
            code.append(line[i:found.start()])
            i = found.start()
        if any(line.startswith(s, i) and (s != "#" or i == 0 or line[i - 1].isspace()) for s in syntax.line):
            prose.append(line[i:])
            break
        opened = next(((o, c) for o, c in syntax.block if line.startswith(o, i)), None)
        if opened is not None:
            scan.first = scan.first or ("open", scan.line, i)
            scan.state = opened[1]
            i += len(opened[0])
            continue
        if scan.first is None and any(line.startswith(c, i) for _, c in syntax.block):
            scan.first = ("close", scan.line, i)
        if syntax.triple and line.startswith(TRIPLE_QUOTES, i):
            scan.first = scan.first or ("open", scan.line, i)
            scan.state = line[i:i + 3]
            i += 3
            continue
        if line[i] in syntax.quotes:
            j = _string_end(line, i + 1, line[i])
            if j >= 0:
                content = line[i + 1:j]
                (code if KEYLIKE.fullmatch(content) else prose).append(f" {content} ")
                i = j + 1
                continue
        code.append(line[i])
        i += 1
    return "".join(code), " ".join(p.strip() for p in prose if p.strip())


TRIPLE_QUOTES = ('"' * 3, "'" * 3)
_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
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


def _read(lines: list[str], scan: _Scan) -> list[tuple[str, str]]:
    result = []
    for index, text in enumerate(lines):
        scan.line = index
        result.append(_scan_line(text, scan))
    return result


def _read_side(lines: list[str], syntax: Syntax, at_top: bool = False) -> list[tuple[str, str]]:
    if syntax.prose:
        return [("", text) for text in lines]
    scan = _Scan(syntax)
    result = _read(lines, scan)
    inside = None if at_top else _starts_inside(lines, scan)
    return result if inside is None else _read(lines, _Scan(syntax, state=inside))


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
    hunks: list[list[str]] = []
    tops: list[dict[str, bool]] = []  # per hunk: whether its "-" / "+" side starts at the file's first line
    for raw in patch.splitlines():
        if raw.startswith("@@"):
            hunks.append([])
            header = _HUNK_HEADER.match(raw)
            starts = (int(header.group(1)), int(header.group(2))) if header else (2, 2)
            tops.append({"-": starts[0] <= 1, "+": starts[1] <= 1})
        elif hunks and not raw.startswith("\\"):
            hunks[-1].append(raw[:MAX_LINE_CHARS] if raw else " ")
    out: list[ChangedLine] = []
    for hunk, top in zip(hunks, tops, strict=True):
        sides: dict[str, list[tuple[str, str]]] = {}
        for sign in "-+":
            mine = [line[1:] for line in hunk if line[0] in (sign, " ")]
            sides[sign] = _read_side(mine, syntax, at_top=top[sign])
        position = {"-": 0, "+": 0}
        for line in hunk:
            marker = line[0]
            if marker == " ":
                position["-"] += 1
                position["+"] += 1
            elif marker in "+-":
                code, prose = sides[marker][position[marker]]
                out.append(ChangedLine(sign=marker, text=line[1:], code=code, prose=prose))
                position[marker] += 1
    return tuple(out)
