"""Labels: which topics a PR belongs to.

A PR's labels are the union of four sources, each renamed through the
repository's aliases and lower-cased:

1. the labels its source gave (GitHub labels);
2. the modules of its title — verl style ``[trainer, rollout] fix: …`` (several
   bracket groups allowed) and conventional-commit scopes ``feat(api): …``,
   spelled as labels (``[Qwen3.5]`` -> ``qwen3_5``, ``[GraphTrainer]`` ->
   ``graph_trainer``);
3. the label rules (:class:`bot.config.LabelRule`): file globs, words of file
   paths, words of the title (title words are matched whole and without
   camel-case splitting, so ``vLLM`` is the word ``vllm``). Tokens do not look
   at example and script files, whose names say what they run on
   (``run_qwen_megatron_npu.sh``);
4. when neither the source nor the title names a module: the components the
   changed source files belong to (:func:`component`): folders (or a file stem)
   under the repository's top-level package, past container folders such as
   ``components/`` or ``experimental/``
   (``torchtitan/components/checkpointer/dcp.py`` -> ``checkpointer``). So a
   repository nobody configured gets labels from its own layout.

Change-type words (``[fix]``, ``[minor]``, ``[feat]``, ``[BREAKING]``, counters such
as ``[5/n]`` …) are never labels. A PR that changes only tests gets ``test``; one
that none of these labels gets where it changed most (:func:`where`: its largest
component, else the folder or the kind of its largest file); ``other`` is left for a
PR without files. Rules
live in ``bot/defaults/labels.toml`` and the repository's section of
``prhub.toml``; they are compiled once per process for each distinct rule set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from bot.config import LabelRule, RepoConfig
from bot.digest.files import FileKind, Globs, classify, compile_globs
from bot.models import FileChange, PullRequest

OTHER = "other"

MAX_COMPONENTS = 2
"""At most this many component labels per PR (the ones with the most changed lines)."""

CHANGE_TYPES = frozenset({
    "fix", "fixes", "fixed", "bug", "bugs", "bugfix", "hotfix", "feat", "feature", "features", "new feature",
    "chore", "chores", "refactor", "refactoring", "minor", "small change", "small", "trivial", "nit", "nits",
    "typo", "cleanup", "clean up", "enhancement", "improvement", "improve", "update",
    "style", "revert", "reland", "wip", "draft", "rfc", "breaking", "breaking change", "do not merge", "dnm",
    "skip ci", "ready", "hack", "temp", "followup", "follow up",
})
"""Words that say what kind of change a PR is, not what it is about: never labels
(``perf``, ``doc``, ``ci`` and ``test`` are topics as well, and stay labels)."""

CONTAINERS = frozenset({
    "src", "lib", "libs", "components", "component", "experiments", "experimental", "contrib", "modules",
    "packages", "plugins", "ext", "extensions", "impl", "internal", "_internal", "common", "core",
})
"""Folders that hold components rather than being one: a component is looked for below them."""

GENERIC = frozenset({"utils", "util", "misc", "helpers", "helper", "shared", "common", "core", "tools", "tool",
                     "runtime"})
"""Generic path words: a container whose topic is what lies below it (``pkg/utils/trainer.py`` -> ``trainer``);
the word itself only when nothing below names a topic (``pkg/utils/__init__.py`` -> ``utils``)."""

_GENERIC_SUFFIX = re.compile(r"_(?:utils?|helpers?|common|misc|tools?)$")

NOT_SOURCE = frozenset({
    "tests", "test", "testing", "docs", "doc", "examples", "example", "scripts", "script", "benchmarks",
    "benchmark", "bench", "tools", "tool", "docker", "dockerfile", "ci", "recipe", "recipes", "third_party",
    "vendor", "assets", "requirements", "data", "notebooks", "tutorials",
})
"""Top-level folders that are not the repository's package (their files get labels from the rules)."""
_NOT_A_FOLDER_COMPONENT = NOT_SOURCE - {"data", "tools", "tool", "docker", "ci", "requirements"}
"""Folders below the package that end the search for a component (``pkg/tests/``, ``pkg/examples/``);
``pkg/data/`` is a topic there."""

_NOT_A_COMPONENT = frozenset({
    "__init__", "__main__", "main", "setup", "conftest", "version", "_version", "init", "py", "readme",
    "base", "utils", "util", "helpers", "types", "typing", "constants", "protocols", "api",
})
"""File stems too generic to name a component (as folders they do: ``pkg/utils/`` is ``utils``)."""

_BRACKETS = re.compile(r"^\s*((?:\[[^\]]*\]\s*)+)")
_CONVENTIONAL = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*[A-Za-z]+\(([^)]*)\)!?:")
_COUNTER = re.compile(r"^\d+\s*/\s*(?:\d+|n)$", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CAMEL_WORD = re.compile(r"(?<=[a-z])(?=[A-Z][a-z])")
_WORD_SPLIT = re.compile(r"[^0-9a-z]+")
_LABEL_SEPARATORS = re.compile(r"[\s.\-/:]+")


def words(text: str) -> list[str]:
    """Lower-case words of a path, split on anything but letters and digits and on
    lower-to-upper case changes (``fully_async_rollouter.py`` -> fully, async, rollouter, py)."""
    return [w for w in _WORD_SPLIT.split(_CAMEL.sub(" ", text).lower()) if w]


def title_words(text: str) -> list[str]:
    """Lower-case words of a title, split on anything but letters and digits; case
    changes do not split (``"vLLM 0.8"`` -> vllm, 0, 8)."""
    return [w for w in _WORD_SPLIT.split(text.lower()) if w]


def label_name(text: str) -> str:
    """A module name spelled as a label: lower-case, separators as ``_``, a camel-case
    word split (``"Qwen3.5"`` -> ``qwen3_5``, ``"GraphTrainer"`` -> ``graph_trainer``,
    ``"GPT-OSS"`` -> ``gpt_oss``; ``"MoE"`` and ``"vLLM"`` stay one word)."""
    spaced = _CAMEL_WORD.sub("_", text.strip())
    return _LABEL_SEPARATORS.sub("_", spaced).strip("_").lower()


def is_change_type(word: str) -> bool:
    """``word`` says what kind of change a PR is (``fix``, ``minor``, ``[5/n]``), not a topic."""
    key = " ".join(title_words(word))
    return not key or key in CHANGE_TYPES or bool(_COUNTER.match(word.strip()))


def title_modules(title: str) -> list[str]:
    """Modules named by a title, in order, spelled as labels, not yet aliased.

    ``"[5/n][trainer, Rollout] feat: x"`` -> ``["trainer", "rollout"]``;
    ``"feat(api,cli): x"`` -> ``["api", "cli"]``; ``"[Bug][Qwen3.5] x"`` -> ``["qwen3_5"]``;
    no prefix -> ``[]``.
    """
    found: list[str] = []
    bracket = _BRACKETS.match(title)
    if bracket:
        for group in re.findall(r"\[([^\]]*)\]", bracket.group(1)):
            found.extend(re.split(r"[,，]", group))
    conventional = _CONVENTIONAL.match(title)
    if conventional:
        found.extend(conventional.group(1).split(","))
    return [label_name(m) for m in dict.fromkeys(m.strip() for m in found) if m and not is_change_type(m)]


@lru_cache(maxsize=65536)
def component(path: str) -> str | None:
    """The component a source file belongs to, or ``None`` (a top-level file, docs,
    tests, examples, CI).

    The first path segment is the repository's package (``src/<package>`` too); below it,
    past container folders (:data:`CONTAINERS`), the component is the second folder when
    the file sits that deep, else the first folder, else the file's stem: a folder that
    holds sub-folders is an area of them, not one topic (``openrlhf/trainer/ray/vllm_engine.py``
    -> ``ray``, ``openrlhf/trainer/ppo_trainer.py`` -> ``trainer``).
    ``torchtitan/components/checkpointer/dcp.py`` -> ``checkpointer``,
    ``torchtitan/experiments/graph_trainer/passes.py`` -> ``graph_trainer``,
    ``torchtitan/trainer.py`` -> ``trainer``, ``tests/test_x.py`` -> ``None``.
    """
    parts = PurePosixPath(path).parts
    if parts and parts[0] == "src":
        parts = parts[1:]
    if len(parts) < 2 or parts[0].startswith(".") or parts[0].lower() in NOT_SOURCE:
        return None
    rest = parts[1:]
    found: str | None = None
    generic: str | None = None  # the first generic folder passed: the answer when nothing below names a topic
    for index, part in enumerate(rest):
        last = index == len(rest) - 1
        name = label_name(PurePosixPath(part).stem if last else part)
        if not last and (name in CONTAINERS or name in GENERIC):
            generic = generic or (name if name in GENERIC else None)
            continue
        if last and found is not None:
            return found
        if last:
            name = _GENERIC_SUFFIX.sub("", name)  # `megatron_utils.py` is about megatron
        if ((last and name in _NOT_A_COMPONENT) or name in _NOT_A_FOLDER_COMPONENT or name == label_name(parts[0])
                or len(name) < 2):
            return found or generic
        if found is not None or last:
            return name
        found = name
    return found or generic


_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|testing)/|(?:^|/)test_[^/]*$|_test\.[a-z]+$|\.(?:test|spec)\.[a-z]+$")


_EXAMPLE_PATH = re.compile(r"^(?:examples?|scripts?|recipes?)/")


def is_example_path(path: str) -> bool:
    """``path`` is an example or a script: its name says what it runs on (``run_qwen_megatron_npu.sh``),
    which is not what a change to it is about, so rule tokens do not look at it (globs and components do)."""
    return bool(_EXAMPLE_PATH.match(path.lower()))


def is_test_path(path: str) -> bool:
    """``path`` is a test file (under ``tests/``, ``test_*.py``, ``*_test.go``, ``*.test.ts``)."""
    return bool(_TEST_PATH.search(path.lower()))


def _contains_run(haystack: list[str], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    if n == 0 or needle[0] not in haystack:
        return False
    return any(tuple(haystack[i : i + n]) == needle for i in range(len(haystack) - n + 1))


@dataclass(frozen=True)
class _File:
    """A changed file: the rules its path(s) hit (their indexes in the :class:`_RuleSet`), and its changed lines."""

    hits: frozenset[int]
    lines: int


@dataclass(frozen=True)
class _CompiledRule:
    label: str
    matcher: Globs | None
    tokens: tuple[tuple[str, ...], ...]
    keywords: tuple[tuple[str, ...], ...]

    def matches(self, files: list[_File], words_of_title: list[str], min_share: float, index: int,
                hit: frozenset[int], title_set: frozenset[str]) -> bool:
        """Title keyword, or path matches covering at least ``min_share`` of the PR's
        changed lines (of its files when no file has line counts): a rename touching
        100 files, or a version bump that edits five CI workflows by one line each,
        does not make every topic named in those paths a topic of the PR. ``index`` is
        this rule's place in its rule set (what each file's ``hits`` hold); ``hit`` the rules
        any of ``files`` hits, and ``title_set`` the title's words as a set (both worked out
        once per PR)."""
        if any(k and k[0] in title_set and _contains_run(words_of_title, k) for k in self.keywords):
            return True
        if index not in hit:
            return False
        return _covers([f for f in files if index in f.hits], files, min_share)

    def _path_hit(self, path: str, path_words: list[str]) -> bool:
        if not is_example_path(path) and any(_contains_run(path_words, t) for t in self.tokens):
            return True
        return self.matcher is not None and bool(self.matcher.match(path))


def _covers(hits: list[_File], files: list[_File], min_share: float) -> bool:
    if not hits:
        return False
    total_lines = sum(f.lines for f in files)
    if total_lines > 0:
        return sum(f.lines for f in hits) >= min_share * total_lines
    return len(hits) >= min_share * len(files)


class _RuleSet:
    """Compiled rules and, per path, the rules whose tokens or globs it hits — worked out once per
    distinct path, since the same files change again and again (a long window would otherwise
    match every rule against every file of every PR anew)."""

    MAX_PATHS = 200_000
    """Paths remembered; past this the memory starts again (a bot running for months)."""

    def __init__(self, rules: tuple[_CompiledRule, ...]) -> None:
        self.rules = rules
        self._hits: dict[str, frozenset[int]] = {}

    def hits(self, path: str) -> frozenset[int]:
        """Indexes of the rules whose tokens or globs match ``path``."""
        found = self._hits.get(path)
        if found is None:
            if len(self._hits) >= self.MAX_PATHS:
                self._hits.clear()
            path_words = words(path)
            found = frozenset(i for i, rule in enumerate(self.rules) if rule._path_hit(path, path_words))
            self._hits[path] = found
        return found


@lru_cache(maxsize=64)
def _compiled(rules: tuple[LabelRule, ...], aliases: tuple[tuple[str, str], ...]) -> _RuleSet:
    """The rules compiled, once per process for each distinct rule set and aliases."""
    alias = dict(aliases)
    return _RuleSet(tuple(
        _CompiledRule(
            label=alias.get(rule.label.strip().lower(), rule.label.strip().lower()),
            matcher=compile_globs(tuple(rule.paths), ignore_case=False) if rule.paths else None,
            tokens=tuple(tuple(words(t)) for t in rule.tokens),
            keywords=tuple(tuple(title_words(k)) for k in rule.keywords),
        )
        for rule in rules
    ))


class Labeler:
    """Assigns labels to PRs under one repository's configuration.

    Args:
        config: the repository's effective config (``Settings.repo(name)``), holding
            the label rules and aliases.
    """

    def __init__(self, config: RepoConfig) -> None:
        self._aliases = {k.lower(): v.lower() for k, v in config.aliases.items()}
        self._rules = _compiled(config.label_rules, tuple(sorted(self._aliases.items())))
        self._min_share = config.label_min_share

    def canonical(self, label: str) -> str:
        """``label`` lower-cased, stripped and renamed through the aliases."""
        key = label.strip().lower()
        return self._aliases.get(key, key)

    def labels(self, pr: PullRequest) -> tuple[str, ...]:
        """The PR's labels: source labels, then title modules, then rule labels, then
        (when neither source nor title named a module) components, without duplicates
        and without change-type words; ``("test",)`` for a tests-only PR with none of
        these, else ``("other",)`` when none applies."""
        found: list[str] = [self.canonical(x) for x in pr.labels if not is_change_type(x)]
        found += [self.canonical(x) for x in title_modules(pr.title)]
        explicit = bool(found)
        words_of_title = title_words(_strip_prefix(pr.title))
        rules = self._rules
        files = [
            _File(hits=rules.hits(f.path) | rules.hits(f.previous_path) if f.previous_path else rules.hits(f.path),
                  lines=f.changed_lines)
            for f in pr.files
        ]
        hit = frozenset().union(*(f.hits for f in files))
        title_set = frozenset(words_of_title)
        found.extend(rule.label for i, rule in enumerate(rules.rules)
                     if rule.matches(files, words_of_title, self._min_share, i, hit, title_set))
        if not explicit:
            found.extend(c for c in map(self.canonical, self._components(pr, files)) if not _named_by(c, found))
        unique = [label for label in dict.fromkeys(found) if label and not is_change_type(label)]
        if not unique and pr.files and all(is_test_path(f.path) for f in pr.files):
            unique = [self.canonical("test")]
        if not unique and pr.files:
            unique = [label for label in (self.canonical(where(pr)),) if label and not is_change_type(label)]
        return tuple(unique) or (OTHER,)

    def _components(self, pr: PullRequest, files: list[_File]) -> list[str]:
        """The components that hold at least ``label_min_share`` of the changed lines of the PR's files
        other than tests (source before tests: a fix whose regression test outweighs it is about what it
        fixes), most lines first (at most :data:`MAX_COMPONENTS`); when those name none, of all its files
        (tests inside a component, ``pkg/feature/tests/``, name it)."""
        pairs = list(zip(pr.files, files, strict=True))
        source = [(change, file) for change, file in pairs if not is_test_path(change.path)]
        return self._covering(source) or self._covering(pairs)

    def _covering(self, pairs: list[tuple[FileChange, _File]]) -> list[str]:
        members: dict[str, list[_File]] = {}
        for change, file in pairs:
            name = component(change.path)
            if name is not None:
                members.setdefault(name, []).append(file)
        base = [file for _, file in pairs]
        ranked = sorted(members.items(), key=lambda kv: (-sum(f.lines for f in kv[1]), kv[0]))
        return [name for name, hits in ranked if _covers(hits, base, self._min_share)][:MAX_COMPONENTS]


_KIND_LABELS = {FileKind.SCRIPT: "scripts", FileKind.DOCKER: "docker", FileKind.CI: "ci", FileKind.DEPENDENCY: "deps",
                FileKind.DOC: "doc", FileKind.DATA: "data", FileKind.CONFIG: "config", FileKind.EXAMPLE: "examples",
                FileKind.TEST: "test"}


def where(pr: PullRequest) -> str:
    """Where a PR that nothing else labels changed most: the component with the most changed lines of its files
    other than tests, however small its share; else the top-level folder with the most changed lines
    (``scripts/zeno_visualize.py`` -> ``scripts``), a lone module at the top of the package by its name
    (``lm_eval/utils.py`` -> ``utils``); for files at the top or in a hidden folder, the kind of file
    (``.github/dependabot.yml`` -> ``ci``, ``Dockerfile`` -> ``docker``), else the name (``CODEOWNERS`` ->
    ``codeowners``). Tests count only when there is nothing else; empty for a PR without files."""
    files = [f for f in pr.files if not is_test_path(f.path)] or list(pr.files)
    weights: dict[str, int] = {}
    for f in files:
        name = component(f.path) if not is_test_path(f.path) else None
        if name is not None:
            weights[name] = weights.get(name, 0) + f.changed_lines
    if not weights:
        places: dict[str, list[FileChange]] = {}
        for f in files:
            places.setdefault(_place(f.path), []).append(f)
        if len(places) == 1 and len(files) == 1 and _top_module(files[0].path):
            return label_name(PurePosixPath(files[0].path).stem)
        weights = {place: sum(f.changed_lines for f in group) for place, group in places.items()}
    return max(sorted(weights), key=lambda name: weights[name]) if weights else ""


def _place(path: str) -> str:
    """The top-level folder of ``path`` (past ``src/``); for a file at the top or in a hidden folder, its kind
    (:data:`_KIND_LABELS`), else its name."""
    parts = PurePosixPath(path).parts
    inner = parts[1:] if parts[0] == "src" and len(parts) > 2 else parts
    if len(inner) > 1 and not inner[0].startswith("."):
        return label_name(inner[0])
    return _KIND_LABELS.get(classify(path)) or label_name(PurePosixPath(path).name.lstrip(".").split(".")[0])


def _top_module(path: str) -> bool:
    """``path`` is a module right in the package's folder (``lm_eval/utils.py``), not ``__init__.py``."""
    parts = PurePosixPath(path).parts
    inner = parts[1:] if parts[0] == "src" and len(parts) > 2 else parts
    return len(inner) == 2 and classify(path) is FileKind.SOURCE and not inner[1].startswith("__")


def _named_by(name: str, labels: list[str]) -> bool:
    """A component already named by a label (``fully_async_policy`` by ``fully_async``)."""
    return any(name == x or name.startswith(x + "_") or x.startswith(name + "_") for x in labels)


_SUBJECT_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*(?:[A-Za-z]+\s*(?:\([^)]*\))?!?\s*:)?\s*")


def subject(title: str) -> str:
    """The title without ``[modules]`` and a conventional ``type(scope):`` prefix
    (``"[trainer] fix: x"`` -> ``"x"``); the whole title when nothing is left."""
    return _SUBJECT_PREFIX.sub("", title, count=1).strip() or title.strip()


TITLE_TAIL = re.compile(r"\s*\(#\d+\)\s*$")
"""The ``(#123)`` a squash merge appends to a title."""


def title_key(title: str) -> str:
    """A title as PRs are matched by it (a revert to the PR it names,
    :attr:`bot.digest.heuristic.AnalysisContext.subjects`): lower case, spaces collapsed, no ``(#123)`` tail."""
    return " ".join(TITLE_TAIL.sub("", title).lower().split())


def _strip_prefix(title: str) -> str:
    """The title without its ``[modules]`` prefix (modules are counted separately)."""
    bracket = _BRACKETS.match(title)
    return title[bracket.end() :] if bracket else title


def count_labels(labelled: Iterable[tuple[str, ...]]) -> dict[str, int]:
    """How many PRs carry each label, most frequent first (ties by name)."""
    counts: dict[str, int] = {}
    for labels in labelled:
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
