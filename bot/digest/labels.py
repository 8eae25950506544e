"""Labels: which topics a PR belongs to.

A PR's labels are the union of three sources, each renamed through the
repository's aliases and lower-cased:

1. the labels its source gave (GitHub labels);
2. the modules of its title — verl style ``[trainer, rollout] fix: …`` (several
   bracket groups allowed; ``[BREAKING]`` and counters such as ``[5/n]`` are not
   modules) and conventional-commit scopes ``feat(api): …``;
3. the label rules (:class:`bot.config.LabelRule`): file globs, words of file
   paths, words of the title.

A PR that matches nothing gets ``other``. Rules live in
``bot/defaults/labels.toml`` and the repository's section of ``prhub.toml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

from wcmatch import glob

from bot.config import LabelRule, RepoConfig
from bot.models import PullRequest

OTHER = "other"

_GLOB_FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE
_BRACKETS = re.compile(r"^\s*((?:\[[^\]]*\]\s*)+)")
_CONVENTIONAL = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*[A-Za-z]+\(([^)]*)\)!?:")
_NOT_A_MODULE = re.compile(r"^(?:breaking|wip|draft|rfc|\d+\s*/\s*(?:\d+|n))$", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[^0-9a-z]+")


def words(text: str) -> list[str]:
    """Lower-case words of ``text``, split on anything but letters and digits and on
    lower-to-upper case changes (``fully_async_rollouter.py`` -> fully, async, rollouter, py)."""
    return [w for w in _WORD_SPLIT.split(_CAMEL.sub(" ", text).lower()) if w]


def title_modules(title: str) -> list[str]:
    """Modules named by a title, in order, lower-cased, not yet aliased.

    ``"[5/n][trainer, Rollout] feat: x"`` -> ``["trainer", "rollout"]``;
    ``"feat(api,cli): x"`` -> ``["api", "cli"]``; no prefix -> ``[]``.
    """
    found: list[str] = []
    bracket = _BRACKETS.match(title)
    if bracket:
        for group in re.findall(r"\[([^\]]*)\]", bracket.group(1)):
            found.extend(part.strip().lower() for part in re.split(r"[,，]", group))
    conventional = _CONVENTIONAL.match(title)
    if conventional:
        found.extend(part.strip().lower() for part in conventional.group(1).split(","))
    return [m for m in dict.fromkeys(found) if m and not _NOT_A_MODULE.match(m)]


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


@dataclass(frozen=True)
class _CompiledRule:
    label: str
    matcher: glob.WcMatcher[str] | None
    tokens: tuple[tuple[str, ...], ...]
    keywords: tuple[tuple[str, ...], ...]

    def matches(self, files: list[_File], title_words: list[str], min_share: float, index: int) -> bool:
        """Title keyword, or path matches covering at least ``min_share`` of the PR's
        changed lines (of its files when no file has line counts): a rename touching
        100 files, or a version bump that edits five CI workflows by one line each,
        does not make every topic named in those paths a topic of the PR. ``index`` is
        this rule's place in its :class:`_RuleSet` (what each file's ``hits`` hold)."""
        if any(_contains_run(title_words, list(k)) for k in self.keywords):
            return True
        hits = [f for f in files if index in f.hits]
        if not hits:
            return False
        total_lines = sum(f.lines for f in files)
        hit_lines = sum(f.lines for f in hits)
        if total_lines > 0:
            return hit_lines >= min_share * total_lines
        return len(hits) >= min_share * len(files)

    def _path_hit(self, path: str, path_words: list[str]) -> bool:
        if any(_contains_run(path_words, list(t)) for t in self.tokens):
            return True
        return self.matcher is not None and bool(self.matcher.match(path))


@dataclass(frozen=True)
class _File:
    """A changed file: the rules its path(s) hit (their indexes in the rule set), and its changed lines."""

    hits: frozenset[int]
    lines: int


class _RuleSet:
    """One repository's rules, compiled once per process (:func:`_rule_set`), and per path the
    rules whose words or globs it hits — worked out once per distinct path, since the same
    files are changed again and again (a long window would otherwise match every rule
    against every file of every PR anew)."""

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
def _rule_set(rules: tuple[LabelRule, ...], aliases: tuple[tuple[str, str], ...]) -> _RuleSet:
    """The compiled rules of one configuration (globs compiled once per process, not per digest)."""
    alias = dict(aliases)

    def canonical(label: str) -> str:
        key = label.strip().lower()
        return alias.get(key, key)

    return _RuleSet(tuple(
        _CompiledRule(
            label=canonical(rule.label),
            matcher=glob.compile(list(rule.paths), flags=_GLOB_FLAGS) if rule.paths else None,
            tokens=tuple(tuple(words(t)) for t in rule.tokens),
            keywords=tuple(tuple(words(k)) for k in rule.keywords),
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
        self._rules = config.label_rules
        self._min_share = config.label_min_share

    @cached_property
    def _compiled(self) -> _RuleSet:
        return _rule_set(self._rules, tuple(sorted(self._aliases.items())))

    def canonical(self, label: str) -> str:
        """``label`` lower-cased, stripped and renamed through the aliases."""
        key = label.strip().lower()
        return self._aliases.get(key, key)

    def labels(self, pr: PullRequest) -> tuple[str, ...]:
        """The PR's labels: source labels, then title modules, then rule labels, without
        duplicates; ``("other",)`` when none applies."""
        found: list[str] = [self.canonical(x) for x in (*pr.labels, *title_modules(pr.title))]
        title_words = words(_strip_prefix(pr.title))
        rules = self._compiled
        files = [
            _File(hits=rules.hits(f.path) | rules.hits(f.previous_path) if f.previous_path else rules.hits(f.path),
                  lines=f.changed_lines)
            for f in pr.files
        ]
        found.extend(rule.label for i, rule in enumerate(rules.rules)
                     if rule.matches(files, title_words, self._min_share, i))
        unique = [label for label in dict.fromkeys(found) if label]
        return tuple(unique) or (OTHER,)


_SUBJECT_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*(?:[A-Za-z]+\s*(?:\([^)]*\))?!?\s*:)?\s*")


def subject(title: str) -> str:
    """The title without ``[modules]`` and a conventional ``type(scope):`` prefix
    (``"[trainer] fix: x"`` -> ``"x"``); the whole title when nothing is left."""
    return _SUBJECT_PREFIX.sub("", title, count=1).strip() or title.strip()


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
