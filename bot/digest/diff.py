"""What a PR's diff says, read without a model: for the heuristic analyzer (:mod:`bot.digest.heuristic`).

:func:`read_diff` goes through the per-file ``patch`` of every changed file the source gave one for
(snapshot records, the git source, the GitHub API), each line split into its code and its prose by
:mod:`bot.digest.diffscan`, and returns a :class:`DiffFacts`:

- **prose and code lines** of the project's own files (source, config, script): a change whose changed
  lines in those files are all comments, docstrings or prose strings (help texts, messages) reads as
  documentation;
- **mechanical lines**: code lines that only move (the same line removed in one place and added in
  another, e.g. a module split) or that take part in a *repeated substitution* (the same token(s)
  replaced by the same token(s) on at least :data:`SUBSTITUTION_MIN_LINES` line pairs: a rename, a
  project or copyright sweep). What is left (``residual_lines``) is what there is to read;
- **removed public names**: a function, class, field/parameter (``name: type = …`` lines) or CLI flag
  defined on a removed line of a source or config file, and on no added line of the PR; a top-level key
  of a removed config-file line the same way;
- **changed defaults**: a field/parameter (``name: type = value``), a ``default=`` of a flag or field,
  or a config-file key given one value on a removed line and another on an added line of the same file;
- **changed signatures**: a public function whose one-line ``def name(…):`` is removed and added again in
  the same file with a parameter gone (a removed name ``name(param)``), a parameter's default changed
  (a changed default ``name(param)``), or a new parameter without a default (``name(+param)``: every
  caller must now pass it).

Files without a patch (binary, too large, a source that has none) add nothing; ``patched`` says whether
any product file had one, so a caller can tell "no prose-only change" from "nothing to read".
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot.digest.dependencies import DependencyChange, read_dependencies
from bot.digest.diffscan import ChangedLine, changed_lines
from bot.digest.files import FileKind, is_config_schema
from bot.digest.meaning import Finding, read_meaning
from bot.digest.surface import surface as read_surface
from bot.models import PullRequest

# the dependency reading lives in bot.digest.dependencies, the meaning in bot.digest.meaning; imported here as before
__all__ = ["MAX_NAMES", "PRODUCT_KINDS", "DependencyChange", "DiffFacts", "Finding", "fingerprint",
           "read_dependencies", "read_diff"]

PRODUCT_KINDS = frozenset({FileKind.SOURCE, FileKind.CONFIG, FileKind.SCRIPT})
"""The project's own files: where a change of code is a change of behaviour or contract."""
SUBSTITUTION_MIN_LINES = 3
MOVE_MIN_CHARS = 12  # a moved line must be this long (after trimming) to count: `return x` moves nowhere
MAX_NAMES = 8

_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class|fn|func|function|interface|struct|enum|type)\s+([A-Za-z]\w*)")
_FIELD = re.compile(r"^\s+([A-Za-z]\w*)\s*:\s*[A-Za-z_][\w\[\], .|\"']*?(?:=\s*(.+?))?\s*,?\s*$")
_FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]+)(?![\w-])")  # in code, a flag string keeps no quotes
_FLAG_LINE = re.compile(r"add_argument|\boption\(|Option\(|\bargument\(|\bflag\(", re.I)
_DEFAULT = re.compile(r"\bdefault(?:_factory)?\s*=\s*([^,)]+)")
_CONFIG_KEY = re.compile(r"^(\s*)([A-Za-z_][\w.-]*)\s*[:=]\s*(.*?)\s*$")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_CONFIG_SUFFIXES = (".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".json")


@dataclass(frozen=True)
class DiffFacts:
    """What the diff of one PR shows (see the module docstring).

    Attributes:
        patched: whether any product file (source, config, script) had a patch.
        code_lines: changed lines with code in product files.
        prose_lines: changed lines of product files that hold only prose (comments, docstrings, strings).
        mechanical_lines: of all changed code lines (any file but docs), those that only move or take
            part in a repeated substitution.
        all_code_lines: changed code lines of any file but docs (the base of ``mechanical_share``).
        removed_names: ``(path, name)`` of public names the PR removes, product files only.
        changed_defaults: ``(path, name)`` of defaults the PR changes, product files only.
        required_parameters: ``(path, "function(+param)")`` of parameters without a default the PR adds to a
            public function, product files only.
        moved_lines: of all changed code lines, those that move (the same code removed in one place and added in
            another, re-indented in place included); part of ``mechanical_lines``.
        reindented_lines: of ``moved_lines``, those whose line differs from its pair in whitespace only.
        substituted_lines: of all changed code lines, those of a repeated substitution; part of
            ``mechanical_lines``.
        surface_lines: changed code lines of product files that are surface (:mod:`bot.digest.surface`: only their
            type annotations change, imports of typing names, the own ``__version__``) or re-indented. The
            annotation, typing and version lines are part of ``mechanical_lines``; a re-indented line is there only
            where it is long enough to count as a move (a block wrapped in a new ``with`` is no sweep).
        unswept_lines: the re-indented lines of product files that ``mechanical_lines`` leaves out: taken out of
            ``residual_lines`` on their own.
        deprecations: what the PR deprecates (:mod:`bot.digest.meaning`: warnings, decorators, ``deprecate()``
            calls, docs that say so), each a :class:`~bot.digest.meaning.Finding` (file, line, name, code).
        deprecated_removals: deprecation notices the PR removes with what they guarded: a removal behind a release.
        raises_instead: ``raise`` statements added where the removed lines fell back (warned, returned, exited).
        numerics: changed lines of modified source that change what is computed (a loss, a scale, a dtype, a
            seed, a learning rate, …), moves and substitutions left out.
        object_caches: caches keyed on live objects (``data_ptr()``, ``id()``, modules, ``lru_cache`` on a method).
    """

    patched: bool = False
    code_lines: int = 0
    prose_lines: int = 0
    mechanical_lines: int = 0
    all_code_lines: int = 0
    removed_names: tuple[tuple[str, str], ...] = ()
    changed_defaults: tuple[tuple[str, str], ...] = ()
    required_parameters: tuple[tuple[str, str], ...] = ()
    moved_lines: int = 0
    reindented_lines: int = 0
    substituted_lines: int = 0
    surface_lines: int = 0
    unswept_lines: int = 0
    deprecations: tuple[Finding, ...] = ()
    deprecated_removals: tuple[Finding, ...] = ()
    raises_instead: tuple[Finding, ...] = ()
    numerics: tuple[Finding, ...] = ()
    object_caches: tuple[Finding, ...] = ()

    @property
    def prose_only(self) -> bool:
        """The product files' changed lines are all prose or surface (and some are prose): comments,
        docstrings, help texts, type annotations, re-indented lines."""
        return self.patched and self.code_lines <= self.surface_lines and self.prose_lines > 0

    @property
    def mechanical_share(self) -> float:
        """Share of changed code lines that are moves or repeated substitutions (0 when none)."""
        return self.mechanical_lines / self.all_code_lines if self.all_code_lines else 0.0

    @property
    def residual_lines(self) -> int:
        """Changed code lines of product files left once moves, substitutions and surface are taken out (an
        estimate: the mechanical lines are taken out in proportion, then the re-indented lines they leave)."""
        return max(0, round(self.code_lines * (1 - self.mechanical_share)) - self.unswept_lines)

    @property
    def contract(self) -> tuple[tuple[str, str], ...]:
        """Removed names, required parameters added and changed defaults together (in that order), at most
        :data:`MAX_NAMES`."""
        return (*self.removed_names, *self.required_parameters, *self.changed_defaults)[:MAX_NAMES]


def _normal(code: str) -> str:
    return " ".join(code.split())  # runs of whitespace as one space, none at the ends


def _substitutions(hunk_lines: list[ChangedLine]) -> list[tuple[int, int, tuple[str, ...]]]:
    """Pairs (removed index, added index, signature) of a run of removed lines followed by as many added
    lines, where the pair differs in a few tokens; the signature is what was replaced by what."""
    out = []
    i = 0
    while i < len(hunk_lines):
        if hunk_lines[i].sign != "-":
            i += 1
            continue
        j = i
        while j < len(hunk_lines) and hunk_lines[j].sign == "-":
            j += 1
        k = j
        while k < len(hunk_lines) and hunk_lines[k].sign == "+":
            k += 1
        if j - i == k - j:
            for offset in range(j - i):
                a, b = hunk_lines[i + offset], hunk_lines[j + offset]
                old, new = _TOKEN.findall(a.text), _TOKEN.findall(b.text)
                if old == new or abs(len(old) - len(new)) > 9:  # no change, or more than 3 ops of 3 tokens can make
                    continue
                ops = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
                       if op[0] != "equal"]
                if 0 < len(ops) <= 3 and all(i2 - i1 <= 3 and j2 - j1 <= 3 for _, i1, i2, j1, j2 in ops):
                    signature = tuple(f"{' '.join(old[i1:i2])}>{' '.join(new[j1:j2])}" for _, i1, i2, j1, j2 in ops)
                    out.append((i + offset, j + offset, signature))
        i = max(k, i + 1)
    return out


def _repeats_needed(op: str) -> int:
    """A replacement of a name (``DTensorResharder>DefaultResharder``) is a rename when it recurs once;
    one of literals or punctuation only (``1>2``) needs :data:`SUBSTITUTION_MIN_LINES`."""
    old = op.split(">", 1)[0]
    return 2 if re.search(r"[A-Za-z_]\w{3,}", old) else SUBSTITUTION_MIN_LINES


def _defined(code: str, config: bool, schema: bool) -> list[str]:
    definition = _DEF.match(code)
    names = [definition.group(1)] if definition else []
    field = _FIELD.match(code) if ":" in code else None
    if field and (schema or code.rstrip().endswith(",")):  # a field of a config class, or a parameter
        names.append(field.group(1))
    if _FLAG_LINE.search(code):
        names += _FLAG.findall(code)
    if config:
        m = _CONFIG_KEY.match(code)
        if m:
            names.append(m.group(2))
    return [n for n in names if not n.lstrip("-").startswith("_") and len(n.lstrip("-")) >= 3]


def _defaults(code: str, config: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    field = _FIELD.match(code) if ":" in code else None
    if field and field.group(2):
        out[field.group(1)] = _normal(field.group(2)).rstrip(",")
    given = _DEFAULT.search(code) if "default" in code else None
    if given:
        flag = _FLAG.search(code) if _FLAG_LINE.search(code) else None
        name = flag.group(1) if flag else (field.group(1) if field else None)
        if name:
            out[name] = _normal(given.group(1))
    if config:
        m = _CONFIG_KEY.match(code)
        if m and m.group(3) and not m.group(3).startswith(("{", "[", "|", ">")):
            out[m.group(2)] = m.group(3)
    return out


class _Occurrences:
    """Which names occur in a text as a whole word (not inside a longer ``[\\w-]`` run: ``--lr`` is not in
    ``--lr-scheduler``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._words: set[str] | None = None  # the text's [\w-] runs, read at the first question

    def __contains__(self, name: str) -> bool:
        if _WORD.fullmatch(name):  # a run of [\w-] occurs as a whole word where it is one of the text's runs
            if self._words is None:
                self._words = set(_WORD.findall(self.text))
            return name in self._words
        return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", self.text) is not None


_WORD = re.compile(r"[\w-]+")
_SIGNATURE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((.*)\)\s*(?:->\s*[^:]+)?:\s*$")
_PLAIN_PARAMS = frozenset({"self", "cls"})
_EMPTY_MUTABLE = frozenset({"{}", "[]", "dict()", "list()", "set()"})
"""Defaults whose change to ``None`` (then ``x = x or {}`` in the body) is the mutable-default idiom: what takes
effect is the same, so it is no changed default."""


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _signature(code: str) -> tuple[str, dict[str, str | None]] | None:
    """(function, {parameter: default or None}) of a public one-line ``def`` (``self``, ``cls``, ``*args`` and
    ``**kwargs`` left out), else ``None``."""
    found = _SIGNATURE.match(code) if "def" in code else None
    if not found or (found.group(1).startswith("_") and found.group(1) != "__init__"):
        return None
    params: dict[str, str | None] = {}
    for part in _split_top(found.group(2)):
        part = part.strip()
        name = re.match(r"[A-Za-z_]\w*", part)
        if not name or name.group(0) in _PLAIN_PARAMS:
            continue
        default = part.split("=", 1)[1].strip() if "=" in part else None
        params[name.group(0)] = _normal(default) if default is not None else None
    return found.group(1), params


def read_diff(pr: PullRequest, kinds: dict[str, FileKind]) -> DiffFacts:
    """Read the patches of ``pr`` (see the module docstring).

    Args:
        pr: the PR; files without ``patch`` are skipped.
        kinds: the :class:`FileKind` of each changed path (generated files are skipped).
    """
    patched = False
    code = prose = 0
    all_code: list[ChangedLine] = []
    paths: list[str] = []  # the file of each of ``all_code``
    signatures: Counter[tuple[str, ...]] = Counter()
    pairs: list[tuple[int, int, tuple[str, ...]]] = []
    per_file: dict[str, tuple[FileKind, list[ChangedLine]]] = {}
    moved: set[int] = set()
    reindented: set[int] = set()
    surface: set[int] = set()
    product: set[int] = set()  # indexes of the product files' lines
    for f in pr.files:
        kind = kinds.get(f.path, FileKind.OTHER)
        if not f.patch or kind in (FileKind.GENERATED, FileKind.DOC, FileKind.DATA):
            continue  # data is not code: its keys are no contract and its lines no code to read
        with_code: list[ChangedLine] = []
        prose_only = 0
        for line in changed_lines(f.path, f.patch):
            if line.code.strip():
                with_code.append(line)
            elif line.prose:
                prose_only += 1
        per_file[f.path] = (kind, with_code)
        if kind in PRODUCT_KINDS:
            patched = True
            code += len(with_code)
            prose += prose_only
        offset = len(all_code)
        all_code += with_code
        paths += [f.path] * len(with_code)
        if kind in PRODUCT_KINDS:
            product.update(range(offset, len(all_code)))
        shifted, marked = read_surface(with_code)
        reindented.update(offset + i for i in shifted)
        surface.update(offset + i for i in marked)
        for a, b, signature in _substitutions(with_code):
            pairs.append((offset + a, offset + b, signature))
            signatures.update((op,) for op in set(signature))
    substituted = {i for a, b, signature in pairs if all(signatures[(op,)] >= _repeats_needed(op) for op in signature)
                   for i in (a, b)}
    removed_at: dict[str, list[int]] = {}
    added_at: dict[str, list[int]] = {}
    for index, line in enumerate(all_code):
        text = _normal(line.code) if len(line.code) >= MOVE_MIN_CHARS else ""
        if len(text) >= MOVE_MIN_CHARS and index not in reindented:
            (removed_at if line.sign == "-" else added_at).setdefault(text, []).append(index)
    for text, removed in removed_at.items():
        added = added_at.get(text, [])
        n = min(len(removed), len(added))
        moved.update(removed[:n])
        moved.update(added[:n])
    mechanical = moved | substituted | surface  # a re-indented line counts here where it is long enough to move
    moved |= reindented
    added_code = _Occurrences("\n".join(line.code for line in all_code if line.sign == "+"))
    removed_names: dict[tuple[str, str], None] = {}
    changed: dict[tuple[str, str], None] = {}
    required: dict[tuple[str, str], None] = {}
    for path, (kind, lines) in per_file.items():
        if kind not in (FileKind.SOURCE, FileKind.CONFIG):
            continue
        config = PurePosixPath(path).suffix.lower() in _CONFIG_SUFFIXES
        schema = is_config_schema(path)
        before: dict[str, set[str]] = {}
        after: dict[str, set[str]] = {}
        defs: dict[str, dict[str, dict[str, str | None]]] = {"-": {}, "+": {}}
        for line in lines:  # the lines with code
            header = _signature(line.code)
            if header is not None:
                defs[line.sign][header[0]] = header[1]
            if line.sign == "-":
                for name in _defined(line.code, config, schema):
                    if name not in added_code:
                        removed_names[(path, name)] = None
            for name, value in _defaults(line.code, config).items():
                (before if line.sign == "-" else after).setdefault(name, set()).add(value)
        for name, values in before.items():
            if name in after and after[name] != values and (path, name) not in removed_names:
                changed[(path, name)] = None
        for function, old_params in defs["-"].items():
            new_params = defs["+"].get(function)
            if new_params is None:
                continue
            for param, default in old_params.items():
                if param not in new_params:
                    removed_names[(path, f"{function}({param})")] = None
                elif (default is not None and new_params[param] is not None and new_params[param] != default
                      and {default, new_params[param]} - _EMPTY_MUTABLE != {"None"}):
                    changed[(path, f"{function}({param})")] = None
            for param, default in new_params.items():
                if param not in old_params and default is None:
                    required[(path, f"{function}(+{param})")] = None
    meaning = read_meaning(pr, kinds, {(paths[i], all_code[i].sign, all_code[i].number) for i in mechanical})
    return DiffFacts(
        patched=patched, code_lines=code, prose_lines=prose, mechanical_lines=len(mechanical),
        all_code_lines=len(all_code), removed_names=tuple(removed_names), changed_defaults=tuple(changed),
        required_parameters=tuple(required), moved_lines=len(moved), reindented_lines=len(reindented),
        substituted_lines=len(substituted), surface_lines=len((surface | reindented) & product),
        unswept_lines=len((reindented - mechanical) & product), deprecations=meaning.deprecations,
        deprecated_removals=meaning.deprecated_removals, raises_instead=meaning.raises_instead,
        numerics=meaning.numerics, object_caches=meaning.object_caches,
    )


def fingerprint(pr: PullRequest, *, inverted: bool = False) -> str | None:
    """A digest of what ``pr`` changes: every added and removed line of its patches (stripped, blank ones left
    out) with its file and sign, in no particular order — so a PR that undoes another (a revert, whatever its
    title) has, ``inverted`` (``+`` and ``-`` swapped), the other's fingerprint. ``None`` when no file had a
    patch with a changed line. A hex string (SHA-1)."""
    lines = []
    for f in pr.files:
        if not f.patch:
            continue
        in_hunk = False
        for raw in f.patch.splitlines():
            if raw.startswith("@@"):
                in_hunk = True
            elif in_hunk and raw[:1] in ("+", "-") and raw[1:].strip():
                sign = raw[0] if not inverted else ("-" if raw[0] == "+" else "+")
                lines.append(f"{f.path}\0{sign}\0{raw[1:].strip()}")
    if not lines:
        return None
    return hashlib.sha1("\n".join(sorted(lines)).encode("utf-8"), usedforsecurity=False).hexdigest()
