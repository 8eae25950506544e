"""Questions about the PRs of a window, answered from the data with citations.

``answer_question(digest, records, terms)`` searches the window's PRs for the
question's search words and returns an :class:`Answer`: the matching PRs, best
first, each with what matched (the label, the title, the files, the changed
lines, a piece of the description), or no PR at all — it never guesses.

Where a word matches, strongest first (:data:`WEIGHTS`): a label of the PR
(the digest's labels: GitHub labels, title modules, path rules), its title, a
file path (or the path before a rename), a changed line of the diff (``+``/``-``
lines only, not context), its description. A word also matches through the
glossary (``bot/defaults/glossary.toml``: ``配置`` → ``config``, ``yaml`` …;
``dependencies`` → ``requirements`` …). ASCII words match at a word boundary and
may run longer (``config`` matches ``configs``; ``npu`` does not match ``input``;
words of three letters or fewer must end there too); ``fully_async``,
``fully-async`` and ``fully async`` are one word.

Honest matching:

- A word found in more than :data:`COMMON_SHARE` of the window's PRs (``import``
  in the diffs, ``verl`` in every path) is *common*: it counts only where a PR is
  *about* it (its labels, title or paths), and it does not narrow the answer — it
  only ranks. Every other word must match (a PR about rollout *and* config); when
  every word is common, all must match where the PRs are about them.
- Ranking: the weight of each word's strongest match times its rarity in the
  window (``log(1 + N / df)``), a bonus when two words meet in one file, and a
  PR whose matching files are a small part of a large change (a 92-file rename)
  ranks below one that is mostly about the words; ties by importance.
- At most ``limit`` matches are returned (``Answer.total`` counts them all) and
  :data:`MAX_EVIDENCE` pieces of evidence each; every piece is one line of at
  most :data:`EVIDENCE_CHARS` characters.
"""

from __future__ import annotations

import math
import re
import tomllib
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

from bot.digest.aggregate import by_importance
from bot.models import Digest, DigestPR, PullRequest

__all__ = [
    "COMMON_SHARE",
    "EVIDENCE_CHARS",
    "MAX_EVIDENCE",
    "MAX_MATCHES",
    "WEIGHTS",
    "Answer",
    "Claim",
    "Evidence",
    "EvidenceKind",
    "Match",
    "Phrasing",
    "TermCount",
    "answer_question",
    "glossary",
]

EvidenceKind = Literal["label", "title", "path", "diff", "body", "risk", "type"]

WEIGHTS: Mapping[EvidenceKind, float] = {"label": 4.0, "title": 4.0, "risk": 4.0, "type": 3.0, "path": 3.0,
                                         "diff": 2.0, "body": 1.0}
"""How much a match counts, by where it was found (``risk``: a risk of the PR's analysis is of a kind the word
means; ``type``: its change type is)."""
ABOUT: frozenset[EvidenceKind] = frozenset({"label", "title", "path", "risk", "type"})
"""The places that say what a PR is about (a common word counts only there)."""
COMMON_SHARE = 0.5
"""A word matching more than this share of the window's PRs does not narrow the answer."""
MIN_PRS_FOR_COMMON = 6
"""Windows with fewer PRs than this have no common words (every word narrows)."""
MAX_MATCHES = 10
"""Matches returned by default."""
MAX_EVIDENCE = 4
"""Pieces of evidence kept per match."""
EVIDENCE_CHARS = 160
"""Characters of one piece of evidence (a longer diff line is cut with "…")."""
MAX_LINES_PER_FILE = 2
"""Diff lines kept per file and word."""
CO_LOCATION_BONUS = 1.5
"""Added per extra word that matches in the same file as another."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """One place a search word matched: ``kind``, the ``term`` (as asked), the text found
    (the label, the title, the path, the diff line with its ``+``/``-``, a piece of the
    description; unescaped, one line) and the file for path and diff evidence."""

    kind: EvidenceKind
    term: str
    text: str
    path: str | None = None


@dataclass(frozen=True, slots=True)
class Match:
    """A PR of the window that answers the question: the digest's entry, its ``score``
    and the evidence (strongest first)."""

    pr: DigestPR
    score: float
    evidence: tuple[Evidence, ...]
    terms: tuple[str, ...] = ()
    """The search words this PR matched, in the question's order."""


@dataclass(frozen=True, slots=True)
class TermCount:
    """How many PRs of the window a search word matched (``prs``; for a common word, those it
    matched in labels, titles or paths), in how many it occurred anywhere (``mentions``), and
    whether it was too common to narrow the answer."""

    term: str
    prs: int
    common: bool = False
    mentions: int = 0


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to a question about one window.

    ``matches`` are at most the ``limit`` asked for, best first; ``total`` counts every
    matching PR; ``window_prs`` is the number of PRs searched (after the label filter);
    ``counts`` says per word how many PRs it matched (so "none match both" can say which
    word found nothing).
    """

    digest: Digest
    terms: tuple[str, ...]
    matches: tuple[Match, ...]
    total: int
    window_prs: int
    counts: tuple[TermCount, ...]
    label: str | None = None
    question: str = ""

    @property
    def none(self) -> bool:
        """Whether no PR of the window answers the question."""
        return not self.matches

    @property
    def common_terms(self) -> tuple[str, ...]:
        """The words too common in this window to narrow it (they only ranked)."""
        return tuple(c.term for c in self.counts if c.common)

    @property
    def missing_terms(self) -> tuple[str, ...]:
        """The words no PR of the window matched."""
        return tuple(c.term for c in self.counts if c.prs == 0)


@dataclass(frozen=True, slots=True)
class Claim:
    """One sentence of a phrased answer and the PRs of the window it cites (at least one)."""

    text: str
    prs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Phrasing:
    """The model's words over an :class:`Answer` (``bot/digest/llm/answer.py``): the claims kept
    (each cites only PRs the answer lists) and how many were ``dropped`` for citing none or
    citing a PR outside them."""

    claims: tuple[Claim, ...]
    dropped: int = 0
    model: str = ""


@cache
def glossary() -> Mapping[str, tuple[str, ...]]:
    """The shipped glossary (``bot/defaults/glossary.toml``): lower-case word → the words PRs use."""
    text = resources.files("bot").joinpath("defaults/glossary.toml").read_text(encoding="utf-8")
    return {k.lower(): tuple(v) for k, v in tomllib.loads(text)["terms"].items()}


def _alternatives(term: str, words: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    key = term.strip().lower()
    found = [key, *words.get(key, ())]
    if key.isascii() and key.endswith("ies") and len(key) > 4:
        found.append(key[:-3] + "y")
    elif key.isascii() and key.endswith("s") and len(key) > 3 and not key.endswith("ss"):
        found.append(key[:-1])
    return tuple(dict.fromkeys(a for a in found if a))


class _Searcher:
    """One word's spellings as a pattern, with a literal pre-check: a text that holds none of the
    spellings' longest pieces (lower case) is skipped without running the pattern."""

    def __init__(self, alternatives: tuple[str, ...]) -> None:
        parts = []
        literals = []
        for alt in sorted(alternatives, key=len, reverse=True):
            if not alt.isascii():
                parts.append(re.escape(alt))
                literals.append(alt.lower())
                continue
            pieces = [p for p in re.split(r"[\s_-]+", alt) if p]
            body = r"[\s_-]?".join(re.escape(p) for p in pieces)
            end = r"(?![a-z])" if len(alt) <= 3 else ""
            start = r"(?<![a-z0-9])" if alt[0].isalnum() else ""
            parts.append(f"{start}{body}{end}")
            literals.append(max(pieces, key=len).lower() if pieces else alt.lower())
        self.pattern = re.compile("|".join(parts), re.IGNORECASE)
        self.lowered = re.compile("|".join(parts).lower())
        """The same pattern for lower-cased text (faster than ``IGNORECASE``)."""
        self.literals = tuple(dict.fromkeys(literals))

    def maybe_in(self, lowered: str) -> bool:
        """Whether ``lowered`` (a lower-cased text) may hold a match."""
        return any(literal in lowered for literal in self.literals)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text)


class _Changed:
    """The changed lines of one patch (``+``/``-``, no file headers) and their lower-cased text."""

    def __init__(self, patch: str) -> None:
        self.lines = [line for line in patch.split("\n")
                      if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))]
        self.lowered = "\n".join(self.lines).lower()
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line.lower()) + 1)

    def matching(self, searcher: _Searcher) -> list[str]:
        """Up to :data:`MAX_LINES_PER_FILE` distinct changed lines the word matches, one line each."""
        found: list[str] = []
        if not searcher.maybe_in(self.lowered):
            return found
        for m in searcher.lowered.finditer(self.lowered):
            line = _one_line(self.lines[bisect_right(self.starts, m.start()) - 1])
            if line not in found:
                found.append(line)
                if len(found) >= MAX_LINES_PER_FILE:
                    break
        return found


class _Lowered:
    """Per question: the changed lines of every patch and the lower-cased bodies, computed once
    and shared by every word."""

    def __init__(self) -> None:
        self._changed: dict[int, _Changed] = {}
        self._texts: dict[int, str] = {}

    def changed(self, patch: str) -> _Changed:
        found = self._changed.get(id(patch))
        if found is None:
            found = self._changed[id(patch)] = _Changed(patch)
        return found

    def __call__(self, text: str) -> str:
        found = self._texts.get(id(text))
        if found is None:
            found = self._texts[id(text)] = text.lower()
        return found


@dataclass
class _Hit:
    """What one word matched in one PR."""

    evidence: list[Evidence] = field(default_factory=list)
    files: set[str] = field(default_factory=set)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= EVIDENCE_CHARS else line[: EVIDENCE_CHARS - 1] + "…"


def _excerpt(text: str, start: int, end: int) -> str:
    left = max(0, start - 60)
    right = min(len(text), end + 80)
    piece = ("…" if left else "") + text[left:right] + ("…" if right < len(text) else "")
    return _one_line(piece)


Meaning = tuple[tuple[str, ...], tuple[str, ...]]
"""What a word means in the analyses: the risk kinds and the change types (:mod:`bot.understand.concepts`)."""


def _hit(term: str, searcher: _Searcher, pr: DigestPR, record: PullRequest | None, lowered: _Lowered,
         meaning: Meaning | None = None) -> _Hit:
    hit = _Hit()

    def add(kind: EvidenceKind, text: str, path: str | None = None) -> None:
        hit.evidence.append(Evidence(kind, term, text, path))
        if path is not None:
            hit.files.add(path)

    if meaning is not None and pr.analysis is not None:
        kinds, types = meaning
        for risk in pr.analysis.risks:
            if risk.kind in kinds:
                add("risk", _one_line(risk.title))
                break
        if pr.analysis.change_type in types:
            add("type", pr.analysis.change_type)

    for label in pr.labels:
        if searcher.search(label):
            add("label", label)
            break
    if searcher.search(pr.title):
        add("title", _one_line(pr.title))
    if record is None:
        return hit
    for change in record.files:
        paths = [change.path, *([change.previous_path] if change.previous_path else [])]
        if any(searcher.search(p) for p in paths):
            add("path", change.path, change.path)
    for change in record.files:
        if change.patch and searcher.maybe_in(lowered(change.patch)):
            for line in lowered.changed(change.patch).matching(searcher):
                add("diff", line, change.path)
    if record.body and searcher.maybe_in(lowered(record.body)) and (m := searcher.search(record.body)):
        add("body", _excerpt(record.body, m.start(), m.end()))
    return hit


def _about_only(hit: _Hit) -> _Hit:
    kept = [e for e in hit.evidence if e.kind in ABOUT]
    return _Hit(evidence=kept, files={e.path for e in kept if e.path})


def _share(files: set[str], record: PullRequest | None) -> float:
    """The part of the PR's changed lines that the matched files hold (0.2 … 1)."""
    if record is None or not files or not record.files:
        return 1.0
    total = sum(f.changed_lines for f in record.files) or len(record.files)
    matched = sum(f.changed_lines for f in record.files if f.path in files) or len(files)
    return min(1.0, max(0.2, matched / total))


def _strength(hit: _Hit, record: PullRequest | None) -> float:
    """The weight of a word's strongest match in one PR; file matches count by the part of the
    change those files are (a label or title match counts whole)."""
    best = 0.0
    for item in hit.evidence:
        weight = WEIGHTS[item.kind]
        best = max(best, weight * _share(hit.files, record) if item.path is not None else weight)
    return best


def _evidence(hits: dict[str, _Hit]) -> tuple[Evidence, ...]:
    """The strongest evidence of each word first, files shared by several words before others."""
    shared = set.intersection(*(h.files for h in hits.values())) if len(hits) > 1 else set()
    ordered: list[Evidence] = []
    for hit in hits.values():
        best = sorted(hit.evidence, key=lambda e: (-(e.path in shared), -WEIGHTS[e.kind]))
        ordered.extend(best[:1])
    rest = sorted((e for h in hits.values() for e in h.evidence if e not in ordered),
                  key=lambda e: (-(e.path in shared), -WEIGHTS[e.kind]))
    unique: dict[tuple[str, str], Evidence] = {}
    for item in [*ordered, *rest]:
        unique.setdefault((item.kind, item.text), item)  # a title matched by two words, a line in two files: once
    return tuple(list(unique.values())[:MAX_EVIDENCE])


def answer_question(
    digest: Digest,
    records: Sequence[PullRequest],
    terms: Sequence[str],
    *,
    label: str | None = None,
    question: str = "",
    limit: int = MAX_MATCHES,
    words: Mapping[str, tuple[str, ...]] | None = None,
    meanings: Mapping[str, Meaning] | None = None,
) -> Answer:
    """The PRs of ``digest``'s window that answer a question, with what matched.

    Args:
        digest: the window's digest (its PRs, their labels and analyses).
        records: the PR records the digest was built from (files, patches, bodies); PRs
            of the digest without a record are searched by title and labels only.
        terms: the search words as asked (``rollout``, ``配置``, ``fully_async``, a path).
        label: only PRs carrying this label (case-insensitive) are searched.
        question: the question as asked (kept for the reply).
        limit: most matches returned.
        words: the glossary; default :func:`glossary`.
        meanings: lower-case word → the risk kinds and change types it means (a PR whose analysis has
            one matches, as ``risk`` / ``type`` evidence); default none.

    Returns:
        The answer; ``Answer.none`` when no PR matches. Never raises for any input.
    """
    words = glossary() if words is None else words
    wanted = tuple(dict.fromkeys(t.strip() for t in terms if t.strip()))
    by_number = {r.number: r for r in records if r.repo.lower() == digest.repo.lower()}
    prs = [pr for pr in digest.prs if label is None or label.lower() in (x.lower() for x in pr.labels)]
    if not prs or not wanted:
        return Answer(digest, wanted, (), 0, len(prs), tuple(TermCount(t, 0) for t in wanted), label, question)
    n = len(prs)
    hits: dict[str, dict[int, _Hit]] = {}
    mentions: dict[str, int] = {}
    common: set[str] = set()
    lowered = _Lowered()
    for term in wanted:
        searcher = _Searcher(_alternatives(term, words))
        meaning = (meanings or {}).get(term.lower())
        found = {pr.number: h for pr in prs
                 if (h := _hit(term, searcher, pr, by_number.get(pr.number), lowered, meaning)).evidence}
        mentions[term] = len(found)
        if n >= MIN_PRS_FOR_COMMON and len(found) > COMMON_SHARE * n:
            common.add(term)  # everywhere in diffs and descriptions: only what PRs are about counts
            found = {k: a for k, h in found.items() if (a := _about_only(h)).evidence}
        hits[term] = found
    gating = [t for t in wanted if t not in common] or list(wanted)
    counts = tuple(TermCount(t, len(hits[t]), t in common, mentions[t]) for t in wanted)
    importance = {pr.number: i for i, pr in enumerate(by_importance(prs))}
    matches: list[Match] = []
    for pr in prs:
        if not all(pr.number in hits[t] for t in gating):
            continue
        mine = {t: hits[t][pr.number] for t in wanted if pr.number in hits[t]}
        record = by_number.get(pr.number)
        score = 0.0
        for term, hit in mine.items():
            rarity = math.log(1 + n / max(1, len(hits[term])))
            score += rarity * _strength(hit, record)
        files = [h.files for h in mine.values() if h.files]
        if len(files) > 1:
            together = set.intersection(*files)
            score += CO_LOCATION_BONUS * (len(files) - 1) if together else 0.0
        matches.append(Match(pr, round(score, 6), _evidence(mine), tuple(mine)))
    matches.sort(key=lambda m: (-m.score, importance[m.pr.number]))
    return Answer(digest, wanted, tuple(matches[: max(0, limit)]), len(matches), n, counts, label, question)
