"""What the changed lines of a PR mean, read without a model: for :func:`bot.digest.diff.read_diff`.

Each fact is a :class:`Finding` — the file, the line, the name it is about and the code that says it:

- **deprecations**: an added ``warnings.warn(...)`` / ``logger.warning(...)`` whose message says *deprecated*, *will be
  removed* or names ``FutureWarning`` / ``DeprecationWarning``; an added ``@deprecated`` decorator; an added
  ``deprecate("name", "1.0.0", ...)`` call; a doc or docstring line that says so (``.. deprecated::``, "X is
  deprecated");
- **deprecated removals**: the same, on removed lines of the project's code (and not brought back elsewhere): what
  was deprecated is now gone — a removal behind a release;
- **raises instead of a fallback**: a ``raise`` added in a hunk whose removed lines warned, printed, returned,
  passed, continued or exited and raised nothing: a path that used to carry on now fails;
- **numerics**: in a modified (not added) source file, a changed line that changes what is computed — a token that
  differs between a removed line and its counterpart names a loss, a gradient, a scale, a norm, a dtype, a seed, a
  learning rate, a temperature, … (:data:`NUMERIC_WORDS`), or a number changes on such a line, or the arithmetic
  that assigns (or returns) such a quantity changes; an arithmetic line on such a quantity added or removed beside
  other changes; a keyword argument with a literal number newly passed to a call (``downscale_freq_shift=0.0``);
- **object caches**: a cache over live objects — a mapping that outlives the call (an attribute, or a name with
  cache, memo, registry, seen or key in it) keyed by ``.data_ptr()`` or ``id(...)``, a key variable set from one, a
  mapping subscripted by a module, layer, model or tensor, an ``lru_cache`` on a method (it keeps ``self`` alive);
  a file that brings in ``weakref`` is left out.

Tests are not read (they assert warnings and raises on purpose), nor data, generated files or lock files. Lines
that :func:`read_diff` found mechanical (moves, repeated substitutions, surface) are skipped where it passes them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from bot.digest.diffscan import ChangedLine, changed_lines
from bot.digest.files import FileKind
from bot.models import PullRequest

__all__ = ["MAX_FINDINGS", "NUMERIC_WORDS", "Finding", "Meaning", "read_meaning"]

MAX_FINDINGS = 8
"""At most this many findings of one kind per PR (distinct names first)."""

NUMERIC_WORDS = frozenset({
    "loss", "losses", "grad", "grads", "gradient", "gradients", "scale", "scales", "scaling", "scaler", "norm",
    "norms", "normalize", "normalized", "normalization", "normalizer", "eps", "epsilon", "dtype", "dtypes", "float16",
    "bfloat16", "float32", "float64", "float8", "fp16", "bf16", "fp32", "fp8", "seed", "seeds", "lr", "lrs",
    "warmup", "decay", "momentum", "betas", "temperature", "softmax", "logits", "logit", "logprob", "logprobs",
    "logsumexp", "entropy", "clip", "clamp", "reduction", "variance", "autocast", "freq", "freqs", "theta", "rope",
    "sigma", "sigmas", "timestep", "timesteps", "noise", "kl", "advantage", "advantages",
})
"""Words (parts of snake-case identifiers) that name what a training or inference program computes: a change of
them changes results, not just whether the program runs. ``steps`` counts with a word that makes it a schedule's
length (``total_num_steps``, ``max_steps``, ``num_training_steps``)."""
_STEP_COUNTS = frozenset({"total", "num", "max", "training", "train"})
_NUMERIC_HINT = re.compile("|".join(sorted(NUMERIC_WORDS | {"steps"}, key=len, reverse=True)), re.I)
_PLUMBING = frozenset({"mesh", "config", "cfg", "cache", "cached", "dir", "path", "file", "name", "names", "table",
                       "shape", "example", "group", "groups", "boundary", "debugger", "registry", "op", "ops", "hook",
                       "hooks", "key", "keys", "device", "rank", "world"})
"""Parts that make an identifier plumbing around a quantity, not the quantity (``loss_mesh``, ``norm_config``)."""

_WARN_CALL = re.compile(r"\bwarn(?:ings\.warn|_once)?\s*\(|\.warn(?:ing)?(?:_once|_rank0)?\s*\(|\bwarning\s*\(")
_DEPRECATION_WORDS = re.compile(r"deprecat|will be removed|no longer supported|FutureWarning|DeprecationWarning", re.I)
_DECORATOR = re.compile(r"^\s*@(?:[\w.]*\.)?deprecat(?:ed|e|ion)\b")
_DEPRECATE_CALL = re.compile(r"(?<![\w.])deprecate\s*\(")
_DOC_DEPRECATION = re.compile(r"\.\.\s+deprecated::|^\W*deprecated\W*[:(]|\b(?:is|are|has been|have been|now|was|"
                              r"were)\s+(?:now\s+)?deprecated\b|\bdeprecated\s+(?:in|since)\s+v?\d", re.I)
_LABELLED = re.compile(r"deprecated\W*[:(]\s*([A-Za-z_][\w.\-]*)", re.I)  # "Deprecated: precision_debugger …"
_CODE_LIKE = re.compile(r"[_.\d]|[a-z][A-Z]|^[A-Z]{2}")  # `torch_dtype`, `QuantoConfig`, `DS_ARCH`: not `classes`
_COMMENT_DEPRECATION = re.compile(r"^\s*(?:#|//)\s*(?:\.\.\s+)?deprecated\b", re.I)  # a comment only as a label
_NOT_NAMES = frozenset({"deprecated", "warning", "futurewarning", "deprecationwarning", "which", "this", "that", "it",
                        "they", "these", "those", "true", "false", "none", "option", "argument", "parameter", "and"})
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
_KEY = re.compile(r"^\s*(?:(?:async\s+)?(?:def|class)\s+)?([A-Za-z_][\w.\-]*)\s*[:=(]")
_RAISE = re.compile(r"^\s*raise\s+([A-Za-z_][\w.]*)")
_ANY_RAISE = re.compile(r"^\s*raise\b")
_FALLBACK = re.compile(r"\bwarnings\.warn\s*\(|\.warn(?:ing)?(?:_once)?\s*\(|\bprint\s*\(|^\s*return\b|^\s*pass\s*$|"
                       r"^\s*continue\s*$|\bsys\.exit\s*\(|^\s*exit\s*\(")
_NOT_COMPUTING = re.compile(r"\b(?:log(?:ger|ging)?|print|warnings?|wandb|writer|tb_writer|assert|raise)\b\s*[.(]?|"
                            r"^\s*(?:assert|raise|import|from)\b")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|[^\w\s]")
_ARITHMETIC = re.compile(r"(?:^\s*[-+*/]\s*\S)|(?:[\w)\]]\s*(?:\*\*?|/{1,2}|[-+])\s*[\w(])")
_KEYWORD_NUMBER = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(?:-?\d[\d.eE+-]*|torch\.\w+|None|True|False)\s*,?\s*$")
_KEPT = r"(?:self\.[A-Za-z_]\w*|[A-Za-z_][\w.]*(?:cache|memo|registry|seen|key)\w*)"
"""A mapping that outlives the call: an attribute, or a name that says it caches."""
_PTR = r"(?:\.data_ptr\s*\(\s*\)|\bid\s*\(\s*[\w.]+\s*\))"
_LIVE_KEY = re.compile(rf"({_KEPT})\s*\[[^\]]*{_PTR}|({_KEPT})\s*\.(?:get|setdefault|pop)\s*\([^)]*{_PTR}|"
                       rf"{_PTR}\s*(?:not\s+)?in\s+({_KEPT})|([A-Za-z_][\w.]*key\w*)\s*=\s*[^=].*{_PTR}", re.I)
_OBJECT_KEY = re.compile(r"([A-Za-z_]\w*(?:cache|memo|registry|map|_by_module|_by_layer)\w*)\s*\[\s*(?:self|module|mod|"
                         r"layer|model|submodule|tensor|param|parameter|m)\s*\]", re.I)
_KEYED = re.compile(r"cache|memo|registry|map|_by_", re.I)
_LRU = re.compile(r"^\s*@(?:functools\.)?(?:lru_cache|cache)\b")
_LIVE_PARAMS = re.compile(r"\(\s*(?:self|cls)\b|\b(?:module|model|layer|tensor|submodule|param)\s*[:,)=]")
_WEAK = re.compile(r"\bweakref\b|\bWeak(?:Key|Value)Dictionary\b|\bWeakSet\b")
_STRING = re.compile(r"""["']([A-Za-z_][\w.\-]*)["']""")
_TICKED = re.compile(r"`{1,2}([A-Za-z_][\w.\-]*)`{1,2}")
_SUBJECT = re.compile(r"([A-Za-z_][\w.\-]*)\W{0,3}\s+(?:is|are|has been|have been|was|were)\s+(?:now\s+)?deprecated",
                      re.I)


@dataclass(frozen=True)
class Finding:
    """One thing a changed line means.

    Attributes:
        path: the file (repository path).
        line: the line number in the file of its side (the new file for an added line, the old one for a
            removed line; 0 when the patch gave none).
        name: what it is about: the deprecated or removed name, the raised exception, the numeric quantity,
            the cache.
        code: the line, stripped, at most 160 characters.
    """

    path: str
    line: int
    name: str
    code: str

    @property
    def evidence(self) -> str:
        """``path:line name`` for a risk's evidence."""
        return f"{self.path}:{self.line} {self.name}" if self.line else f"{self.path} {self.name}"


@dataclass(frozen=True)
class Meaning:
    """What :func:`read_meaning` found, each kind at most :data:`MAX_FINDINGS` (see the module docstring)."""

    deprecations: tuple[Finding, ...] = ()
    deprecated_removals: tuple[Finding, ...] = ()
    raises_instead: tuple[Finding, ...] = ()
    numerics: tuple[Finding, ...] = ()
    object_caches: tuple[Finding, ...] = ()


def _finding(path: str, line: ChangedLine, name: str) -> Finding:
    return Finding(path=path, line=line.number, name=name, code=" ".join(line.text.split())[:160])


def _context_name(line: ChangedLine) -> str:
    found = re.search(r"(?:def|class)\s+([A-Za-z_]\w*)", line.context)
    return found.group(1) if found else ""


def _deprecated_name(window: str, line: ChangedLine, path: str, below: str = "") -> str:
    """The name a deprecation is about: a backticked identifier of the message, the subject of "X is deprecated",
    the name after "Deprecated:", a quoted identifier (``deprecate("name", …)``) — those three only when they look
    like code (``torch_dtype``, ``QuantoConfig``, not ``classes``) — else ``below`` (the key or definition under a
    ``# Deprecated`` comment), the enclosing function or class, the file."""
    for pattern in (_TICKED, _SUBJECT, _LABELLED, _STRING):
        for found in pattern.finditer(window):
            name = found.group(1)
            if name.lower() not in _NOT_NAMES and (pattern is _TICKED or _CODE_LIKE.search(name)):
                return name
    return below or _context_name(line) or PurePosixPath(path).stem


def _deprecations(path: str, lines: Sequence[ChangedLine], sign: str, doc: bool) -> list[Finding]:
    """Deprecation notices among the ``sign`` lines of one file (docs: their prose only)."""
    out = []
    side = [x for x in lines if x.sign == sign]
    for i, line in enumerate(side):
        text = line.text
        if doc or not line.code.strip():
            if "eprecat" not in text and "EPRECAT" not in text:  # every notice has the word
                continue
            comment = not doc and text.lstrip().startswith(("#", "//"))
            said = _COMMENT_DEPRECATION.match(text) if comment else _DOC_DEPRECATION.search(line.prose or text)
            if said:
                under = next((x for x in side[i + 1:i + 2] if x.hunk == line.hunk and x.code.strip()), None)
                key = _KEY.match(under.code) if comment and under is not None else None
                out.append(_finding(path, line, _deprecated_name(text, line, path, key.group(1) if key else "")))
            continue
        code = line.code
        if "eprecat" not in code and "warn" not in code.lower():
            continue  # neither a decorator, a deprecate() call nor a warning
        window = " ".join(x.text for x in side[i:i + 4] if x.hunk == line.hunk)
        if _DECORATOR.match(text):
            following = next((m.group(1) for x in side[i + 1:i + 4] if (m := _DEF.match(x.code))), "")
            out.append(_finding(path, line, following or _context_name(line) or "deprecated"))
        elif _DEPRECATE_CALL.search(code) or (_WARN_CALL.search(code) and _DEPRECATION_WORDS.search(window)):
            out.append(_finding(path, line, _deprecated_name(window, line, path)))
    return out


def _raises_instead(path: str, lines: Sequence[ChangedLine], moved: Collection[str]) -> list[Finding]:
    """Raises added in a hunk whose removed lines fell back (warned, printed, returned, exited) and raised nothing."""
    out = []
    for hunk in sorted({x.hunk for x in lines}):
        removed = [x.code for x in lines if x.hunk == hunk and x.sign == "-"]
        if not any(_FALLBACK.search(c) for c in removed) or any(_ANY_RAISE.match(c) for c in removed):
            continue
        for line in lines:
            found = _RAISE.match(line.code) if line.hunk == hunk and line.sign == "+" else None
            if found and " ".join(line.code.split()) not in moved:
                out.append(_finding(path, line, found.group(1)))
    return out


@lru_cache(maxsize=65536)
def _numeric(identifier: str) -> bool:
    """A snake-case or all-caps identifier with a part in :data:`NUMERIC_WORDS` (a ``CapWords`` class name is none:
    ``AutoencoderKL`` is no KL term)."""
    if not _IDENTIFIER.fullmatch(identifier) or re.match(r"_*[A-Z][a-z]", identifier):
        return False
    parts = {p for p in identifier.lower().split("_") if p}
    if parts & _PLUMBING:
        return False
    return bool(parts & NUMERIC_WORDS) or ("steps" in parts and bool(parts & _STEP_COUNTS))


def _numeric_name(tokens: Sequence[str]) -> str:
    """The first identifier among ``tokens`` that :func:`_numeric` accepts, else ``""``."""
    return next((t for t in tokens if _numeric(t)), "")


_TARGET = re.compile(r"^\s*(?:([A-Za-z_][\w.]*)\s*(?:\*\*|//|[-+*/])?=(?!=)|return\b)")


def _computed(line: ChangedLine) -> str:
    """The quantity an arithmetic line computes, when it is a numeric one: the name it assigns, or the
    enclosing function's for a ``return``; else ``""``."""
    target = _TARGET.match(line.code)
    if target is None:
        return ""
    name = target.group(1).rsplit(".", 1)[-1] if target.group(1) else _context_name(line)
    return name if _numeric(name) else ""


def _similarity(a: set[str], b: set[str]) -> float:
    """Dice similarity of two lines' token sets (what share of their tokens they have in common)."""
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 1.0


def _numerics(path: str, lines: Sequence[ChangedLine]) -> list[Finding]:
    """Changed lines of one modified source file that change what is computed (see the module docstring)."""
    out: list[Finding] = []
    if not _NUMERIC_HINT.search("\n".join(f"{x.code}\n{x.context}" for x in lines)):
        return out  # no numeric word anywhere: nothing to pair
    computing = [x for x in lines if x.code.strip() and not _NOT_COMPUTING.search(x.code)]
    tokens = {id(x): _TOKEN.findall(x.code) for x in computing}
    hunks: dict[int, list[ChangedLine]] = {}
    for x in computing:
        hunks.setdefault(x.hunk, []).append(x)
    for members in hunks.values():
        if not _numeric_name([_context_name(members[0])]) and not any(_numeric_name(tokens[id(x)]) for x in members):
            continue  # no numeric quantity anywhere in the hunk, nor in the function it is in
        removed = [x for x in members if x.sign == "-"]
        added = [x for x in members if x.sign == "+"]
        if not removed:
            for line in added:
                keyword = _KEYWORD_NUMBER.match(line.code)
                if keyword and _numeric_name([keyword.group(1)]):
                    out.append(_finding(path, line, keyword.group(1)))
            continue
        sets = {id(x): set(tokens[id(x)]) for x in members}
        paired: set[int] = set()
        for line in added:
            new = tokens[id(line)]
            best, ratio = None, 0.5
            for j, old_line in enumerate(removed):
                score = _similarity(sets[id(old_line)], sets[id(line)]) if j not in paired else 0.0
                if score > ratio:
                    best, ratio = j, score
            if best is None:
                name = _numeric_name(new) if _ARITHMETIC.search(line.code) else ""
                if name:
                    out.append(_finding(path, line, name))
                continue
            paired.add(best)
            old = tokens[id(removed[best])]
            changed = [t for t in new if t not in sets[id(removed[best])]] + \
                [t for t in old if t not in sets[id(line)]]
            name = _numeric_name(changed)
            if not name and any(_NUMBER.fullmatch(t) for t in changed):
                name = _numeric_name(new)
            if not name and changed and _ARITHMETIC.search(line.code):
                name = _computed(line)  # `loss = x.sum() / mask.sum()` -> `… / mask.numel()`
            if name:
                out.append(_finding(path, line, name))
        for j, line in enumerate(removed):
            if j not in paired and _ARITHMETIC.search(line.code):
                name = _numeric_name(tokens[id(line)]) or _numeric_name([_context_name(line)])
                if name:
                    out.append(_finding(path, line, name))
    return out


def _object_caches(path: str, lines: Sequence[ChangedLine]) -> list[Finding]:
    """Added lines that cache over live objects (see the module docstring)."""
    added = [x for x in lines if x.sign == "+" and x.code.strip()]
    if any(_WEAK.search(x.code) for x in added):
        return []
    out = []
    for i, line in enumerate(added):
        code = line.code
        if ("data_ptr" in code or "id(" in code) and (found := _LIVE_KEY.search(code)):
            out.append(_finding(path, line, next(g for g in found.groups() if g)))
        elif "[" in code and _KEYED.search(code) and (found := _OBJECT_KEY.search(code)):
            out.append(_finding(path, line, found.group(1)))
        elif "@" in code and _LRU.match(code):
            header = next((x.code for x in added[i + 1:i + 4] if _DEF.match(x.code)), "")
            name = _DEF.match(header)
            if name and _LIVE_PARAMS.search(header):
                out.append(_finding(path, line, name.group(1)))
    return out


def _first(findings: list[Finding]) -> tuple[Finding, ...]:
    """At most :data:`MAX_FINDINGS`, one per (file, name), one per name first."""
    by_key: dict[tuple[str, str], Finding] = {}
    for f in findings:
        by_key.setdefault((f.path, f.name), f)
    names: set[str] = set()
    first: list[Finding] = []
    rest: list[Finding] = []
    for key, f in by_key.items():
        (rest if key[1] in names else first).append(f)
        names.add(key[1])
    return tuple([*first, *rest][:MAX_FINDINGS])


def read_meaning(pr: PullRequest, kinds: dict[str, FileKind],
                 mechanical: Collection[tuple[str, str, int]] = ()) -> Meaning:
    """Read what the changed lines of ``pr`` mean (see the module docstring).

    Args:
        pr: the PR; files without ``patch`` add nothing.
        kinds: the :class:`FileKind` of each changed path.
        mechanical: ``(path, sign, line number)`` of lines that only move, repeat a substitution or are surface:
            not read for numerics or caches.
    """
    skip = set(mechanical)
    deprecations: list[Finding] = []
    removals: list[Finding] = []
    raises: list[Finding] = []
    numerics: list[Finding] = []
    caches: list[Finding] = []
    per_file = {f.path: changed_lines(f.path, f.patch) for f in pr.files
                if f.patch and (kinds.get(f.path) in (FileKind.SOURCE, FileKind.CONFIG, FileKind.SCRIPT)
                                or (kinds.get(f.path) is FileKind.DOC and "eprecat" in f.patch))}
    added_text = {" ".join(x.text.split()) for lines in per_file.values() for x in lines if x.sign == "+"}
    removed_code = {" ".join(x.code.split()) for lines in per_file.values() for x in lines if x.sign == "-"}
    for f in pr.files:
        lines = per_file.get(f.path)
        if lines is None:
            continue
        kind = kinds[f.path]
        deprecations += _deprecations(f.path, lines, "+", kind is FileKind.DOC)
        if kind is FileKind.DOC:
            continue
        removals += [x for x in _deprecations(f.path, lines, "-", False)
                     if " ".join(x.code.split()) not in added_text]
        if kind is not FileKind.SOURCE:
            continue
        raises += _raises_instead(f.path, lines, removed_code)
        read = [x for x in lines if (f.path, x.sign, x.number) not in skip]
        if f.status not in ("added", "removed"):
            numerics += _numerics(f.path, read)
        caches += _object_caches(f.path, read)
    return Meaning(deprecations=_first(deprecations), deprecated_removals=_first(removals),
                   raises_instead=_first(raises), numerics=_first(numerics), object_caches=_first(caches))
