"""Does a merged PR match a filter, and why.

:func:`match` takes a :class:`~bot.filters.model.Filter` and a :class:`Candidate` (the facts of
one PR: its digest labels, changed paths, author, title and analysis) and returns a
:class:`Match` that says yes or no and why: the clause of each key that held, the exclusion
that rejected it, or that it was a bot's PR.

Rules, in order:

1. **an exclusion always wins** — any exclude term that holds rejects the PR;
2. **bots are left out** unless an include ``author`` term names that bot: a login ending in
   ``[bot]`` (``dependabot[bot]``), one of :data:`DEFAULT_BOTS`, or a configured bot name;
3. **every key present must hold** (AND), by any one of its values (OR), and every bound
   (importance, insight, minutes) must hold; a PR without an analysis yet (pending) holds
   no ``verdict`` and no bound.

Terms: ``label`` — one of the PR's digest labels (GitHub labels, title modules, path rules);
``path`` — a changed file (its new or its old path) matches the glob with the label rules'
wcmatch flags (``**`` crosses folders), and a pattern without glob characters also covers
everything below it (``verl/trainer`` = ``verl/trainer`` and ``verl/trainer/**``); ``path:@…`` —
CODEOWNERS gives a changed file to that owner (``@me`` is the subscriber's linked handle);
``author`` — the login, case-insensitive, ``[bot]`` ignored; ``title`` — the words appear in
the title (case-insensitive; Chinese text as a substring); ``verdict`` — the analysis's level.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from wcmatch import glob

from bot.errors import FilterError
from bot.filters.grammar import GLOB_FLAGS
from bot.filters.model import ME, SCORE_KEYS, TERM_KEYS, Bound, Filter, Term, normalise
from bot.models import Analysis, DigestPR, PullRequest

__all__ = ["DEFAULT_BOTS", "Candidate", "Match", "OwnerMap", "Reason", "is_bot", "match"]

DEFAULT_BOTS = frozenset({"dependabot", "dependabot-preview", "renovate", "renovate-bot", "github-actions",
                          "pre-commit-ci"})
"""Bot logins left out by default besides every ``…[bot]`` login (add the repository's own with ``bots=``)."""

_GLOB_CHARS = re.compile(r"[*?\[{]")
_BLANKS = re.compile(r"\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")


class OwnerMap(Protocol):
    """What ``path:@…`` terms need: the repository's CODEOWNERS (:class:`bot.codeowners.CodeOwners`)."""

    def owns(self, owner: str, path: str) -> bool:
        """Whether CODEOWNERS gives ``path`` to ``owner`` (``@handle``, ``@org/team``, an email)."""
        ...


@dataclass(frozen=True, slots=True)
class Candidate:
    """The facts of one merged PR that a filter looks at.

    ``labels`` are the digest's labels (lower case); ``paths`` every changed file's path and,
    for renames, its old path, the most changed first; ``analysis`` is ``None`` while pending.
    """

    repo: str
    number: int
    title: str
    author: str
    labels: tuple[str, ...]
    paths: tuple[str, ...]
    analysis: Analysis | None = None

    @classmethod
    def of(cls, pr: PullRequest, item: DigestPR | None = None) -> Candidate:
        """The candidate of ``pr``; ``item`` (the PR as a digest shows it) gives the digest labels
        and the analysis — without it only the source's labels are known and nothing is analysed."""
        biggest_first = sorted(pr.files, key=lambda f: -f.changed_lines)  # the evidence shown is the main change
        paths = tuple(dict.fromkeys(p for f in biggest_first for p in (f.path, f.previous_path) if p))
        labels = item.labels if item is not None else pr.labels
        return cls(repo=pr.repo, number=pr.number, title=pr.title, author=pr.author,
                   labels=tuple(dict.fromkeys(label.lower() for label in labels)), paths=paths,
                   analysis=item.analysis if item is not None else None)


@dataclass(frozen=True, slots=True)
class Reason:
    """One clause and what it held on: ``key``/``value`` of the term or bound (``importance``,
    ``>=6``) and the ``evidence`` (the file path, the label, the score)."""

    key: str
    value: str
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class Match:
    """The answer of :func:`match` (truthy when the PR matches).

    ``reasons``: one per key and bound that held (when it matches); ``excluded_by``: the
    exclusion that rejected it; ``bot``: rejected as a bot's PR the filter does not name;
    ``missing``: the keys and bounds none of whose values held.
    """

    matched: bool
    reasons: tuple[Reason, ...] = ()
    excluded_by: Reason | None = None
    bot: bool = False
    missing: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.matched


def is_bot(author: str, bots: Collection[str] = DEFAULT_BOTS) -> bool:
    """Whether ``author`` is a bot: a ``…[bot]`` login or one of ``bots`` (case-insensitive,
    ``@`` and ``[bot]`` ignored)."""
    login = author.strip().lower()
    if login.endswith("[bot]"):
        return True
    names = {b.strip().lower().lstrip("@").removesuffix("[bot]") for b in bots}
    return login.lstrip("@") in names


@lru_cache(maxsize=4096)
def _glob(pattern: str) -> glob.WcMatcher[str]:
    return glob.compile(pattern, flags=GLOB_FLAGS)


def _path_hit(pattern: str, path: str) -> bool:
    if _GLOB_CHARS.search(pattern):
        return bool(_glob(pattern).match(path))
    base = pattern.rstrip("/")
    return path == base or path.startswith(base + "/")


@lru_cache(maxsize=4096)
def _title_pattern(value: str) -> re.Pattern[str]:
    if _CJK.search(value):
        return re.compile(re.escape(value))
    return re.compile(rf"(?<!\w){re.escape(value)}(?!\w)")


def _me(me: str | None, term: Term) -> str:
    if not me:
        raise FilterError(
            f"{term.text()} needs your GitHub handle first: say \"my GitHub is NAME\"",
            zh=f"{term.text()} 需要先告诉我你的 GitHub 账号：发送“我的 GitHub 是 NAME”")
    return me.strip().lower().lstrip("@")


class _Evaluator:
    def __init__(self, candidate: Candidate, *, me: str | None, codeowners: OwnerMap | None) -> None:
        self.c = candidate
        self.me = me
        self.codeowners = codeowners
        self.author = normalise("author", candidate.author) if candidate.author.strip() else ""
        self.title = _BLANKS.sub(" ", candidate.title).strip().casefold()

    def holds(self, term: Term) -> Reason | None:
        """The evidence ``term`` holds on, or ``None``."""
        c = self.c
        if term.key == "label":
            return Reason("label", term.value, term.value) if term.value in c.labels else None
        if term.key == "path":
            if term.is_owner:
                return self._owned(term)
            hit = next((p for p in c.paths if _path_hit(term.value, p)), None)
            return Reason("path", term.value, hit) if hit is not None else None
        if term.key == "author":
            wanted = _me(self.me, term) if term.value == ME else term.value
            return Reason("author", term.value, c.author) if self.author and self.author == wanted else None
        if term.key == "title":
            return Reason("title", term.value, c.title) if _title_pattern(term.value).search(self.title) else None
        level = c.analysis.recommendation.level if c.analysis is not None else None
        return Reason("verdict", term.value, term.value) if level == term.value else None

    def _owned(self, term: Term) -> Reason | None:
        owner = "@" + _me(self.me, term) if term.value == ME else term.value
        if self.codeowners is None:
            raise FilterError(
                f"{term.text()} needs the CODEOWNERS file of {self.c.repo}, which is not available",
                zh=f"{term.text()} 需要 {self.c.repo} 的 CODEOWNERS 文件，但目前读不到")
        hit = next((p for p in self.c.paths if self.codeowners.owns(owner, p)), None)
        return Reason("path", term.value, hit) if hit is not None else None

    def within(self, bound: Bound) -> Reason | None:
        analysis = self.c.analysis
        if analysis is None:
            return None
        score = analysis.recommendation.minutes if bound.key == "minutes" else getattr(analysis, bound.key)
        return Reason(bound.key, bound.text().removeprefix(bound.key), str(score)) if bound.holds(score) else None


def match(flt: Filter, candidate: Candidate, *, bots: Collection[str] = DEFAULT_BOTS, me: str | None = None,
          codeowners: OwnerMap | None = None) -> Match:
    """Whether ``candidate`` matches ``flt``, and why (see the module docstring for the rules).

    Args:
        flt: the subscription's filter.
        candidate: the PR (:meth:`Candidate.of`).
        bots: bot logins to leave out besides ``…[bot]`` ones (default :data:`DEFAULT_BOTS`;
            pass ``DEFAULT_BOTS | configured``).
        me: the subscriber's linked GitHub handle, for ``@me`` terms.
        codeowners: the repository's CODEOWNERS, for ``path:@…`` terms.

    Raises:
        FilterError: the filter has an ``@me`` term and ``me`` is not given, or a ``path:@…``
            term and ``codeowners`` is ``None`` (both messages say what to do).
    """
    ev = _Evaluator(candidate, me=me, codeowners=codeowners)
    for term in flt.exclude:
        if (hit := ev.holds(term)) is not None:
            return Match(False, excluded_by=hit)
    if is_bot(candidate.author, bots):
        named = {v for v in flt.values("author") if v != ME}
        if ev.author not in named:
            return Match(False, bot=True)
    reasons: list[Reason] = []
    missing: list[str] = []
    for key in TERM_KEYS:
        terms = [t for t in flt.include if t.key == key]
        if not terms:
            continue
        hit = next((r for r in map(ev.holds, terms) if r is not None), None)
        if hit is None:
            missing.append(key)
        else:
            reasons.append(hit)
    for bound in flt.bounds:
        held = ev.within(bound)
        if held is None:
            missing.append(bound.key)
        else:
            reasons.append(held)
    assert all(k in (*TERM_KEYS, *SCORE_KEYS) for k in missing)
    if missing:
        return Match(False, missing=tuple(missing))
    return Match(True, reasons=tuple(reasons))
