"""The data's own words, and a question's words resolved against them ("did you mean").

:class:`Vocabulary` holds what a repository's PRs say: labels, authors, file and module names
(each path's folders and file stems, and their ``_``/``-`` parts), identifiers from the changed
lines of the diffs, and the words of titles. :meth:`Vocabulary.resolve` reads one word of a
question against it and the concept table (:mod:`bot.understand.concepts`):

- ``exact``: the data or a concept knows the word (any case) — it is searched as said;
- ``corrected``: a near miss of a label, an author or a word of the data (rapidfuzz's
  ``extractOne`` with a cutoff that grows for short words; labels are tried first) — it is
  searched as corrected and the reply says so ("按 megatron 理解了 megatorn");
- ``unknown``: nothing near — the caller drops it when it finds no PR, and names it.

:meth:`Vocabulary.resolve_label` does the same for the label of a label view or a subscription,
against the labels alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rapidfuzz import fuzz, process

from bot.models import PullRequest
from bot.understand.concepts import Concepts

__all__ = ["MAX_IDENTIFIERS_PER_PR", "Resolution", "Resolved", "Vocabulary"]

MAX_IDENTIFIERS_PER_PR = 400
"""Identifiers taken from one PR's changed lines (a 90-file rename adds no more than this)."""
MAX_DIFF_LINES_PER_FILE = 400
"""Changed lines read per file for identifiers."""
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,60}")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]{1,60}")
_PART = re.compile(r"[_\-.]+")

How = Literal["exact", "corrected", "unknown"]


@dataclass(frozen=True, slots=True)
class Resolved:
    """One word of a question resolved: as ``said``, the ``value`` searched (``None``: dropped), and how."""

    said: str
    value: str | None
    how: How


@dataclass(frozen=True, slots=True)
class Resolution:
    """Every word of a question resolved, in order (:meth:`Vocabulary.resolve_all`)."""

    words: tuple[Resolved, ...] = ()

    @property
    def kept(self) -> tuple[str, ...]:
        """The words to search (corrected ones as corrected; unknown ones too, for the search to judge)."""
        return tuple(dict.fromkeys(w.value or w.said for w in self.words))

    @property
    def corrected(self) -> tuple[Resolved, ...]:
        """The near misses corrected."""
        return tuple(w for w in self.words if w.how == "corrected")

    @property
    def unknown(self) -> tuple[str, ...]:
        """The words nothing in the data or the concepts is near."""
        return tuple(w.said for w in self.words if w.how == "unknown")


def _cutoff(word: str) -> float | None:
    """The similarity (0–100) a correction of ``word`` needs: none below four characters, then
    stricter for short words (one transposition in ``megatorn`` scores 87.5)."""
    n = len(word)
    if n < 4:
        return None
    return 75.0 if n >= 8 else 80.0 if n >= 6 else 74.0


@dataclass
class Vocabulary:
    """The words a repository's data uses (lower case).

    Args:
        labels: the labels the repository uses.
        authors: GitHub logins of PR authors.
        words: every other word: path folders and file stems and their parts, diff identifiers,
            title words (with how often each occurs).
        paths: the files the PRs changed (with how many PRs changed each).
        concepts: the concept table (a concept word is always known).
    """

    labels: set[str] = field(default_factory=set)
    authors: set[str] = field(default_factory=set)
    words: Counter[str] = field(default_factory=Counter)
    paths: Counter[str] = field(default_factory=Counter)
    concepts: Concepts | None = None
    _choices: tuple[list[str], list[str]] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, prs: Iterable[PullRequest], *, labels: Iterable[str] = (),
           concepts: Concepts | None = None) -> Vocabulary:
        """The vocabulary of ``prs`` (titles, authors, paths, diff identifiers) with ``labels`` (those
        the digest gives: GitHub labels, title modules, path rules)."""
        vocab = cls(concepts=concepts)
        vocab.labels.update(x.strip().lower() for x in labels if x.strip())
        for pr in prs:
            vocab.add_pr(pr)
        return vocab

    def add_pr(self, pr: PullRequest) -> None:
        """Add one PR's words."""
        if pr.author:
            self.authors.add(pr.author.lower())
        self.labels.update(x.strip().lower() for x in pr.labels if x.strip())
        for word in _WORD.findall(pr.title):
            self._add(word.strip(".+-"))
        taken = 0
        for change in pr.files:
            self.paths[change.path.lower()] += 1
            for path in (change.path, change.previous_path or ""):
                for piece in path.lower().split("/"):
                    stem = piece.rsplit(".", 1)[0] if "." in piece.strip(".") else piece
                    self._add(piece)
                    self._add(stem)
            if change.patch and taken < MAX_IDENTIFIERS_PER_PR:
                for line in change.patch.splitlines()[:MAX_DIFF_LINES_PER_FILE]:
                    if line[:1] in "+-" and not line.startswith(("+++", "---")):
                        for ident in _IDENT.findall(line):
                            self.words[ident.lower()] += 1
                            taken += 1
                    if taken >= MAX_IDENTIFIERS_PER_PR:
                        break

    def _add(self, word: str) -> None:
        word = word.lower()
        if len(word) < 2:
            return
        self.words[word] += 1
        for part in _PART.split(word):
            if len(part) >= 2 and part != word:
                self.words[part] += 1

    def merge(self, other: Vocabulary) -> Vocabulary:
        """A new vocabulary holding both (``other``'s concepts if this one has none)."""
        merged = Vocabulary(labels=self.labels | other.labels, authors=self.authors | other.authors,
                            words=self.words + other.words, paths=self.paths + other.paths,
                            concepts=self.concepts or other.concepts)
        return merged

    def knows(self, word: str) -> bool:
        """Whether ``word`` (any case) is a label, an author, a word of the data or a concept word."""
        key = word.strip().lower()
        return key in self.labels or key in self.authors or key in self.words or (
            self.concepts is not None and self.concepts.find(key) is not None)

    def _lists(self) -> tuple[list[str], list[str]]:
        if self._choices is None:
            self._choices = (sorted(self.labels), sorted(self.authors | set(self.words)))
        return self._choices

    def resolve_label(self, label: str) -> Resolved:
        """``label`` as one of the labels: itself when known, a near miss corrected, else unknown."""
        key = label.strip().lower()
        if key in self.labels or not self.labels:
            return Resolved(label, key, "exact")
        near = _nearest(key, self._lists()[0], self.words)
        return Resolved(label, near, "corrected") if near else Resolved(label, None, "unknown")

    def resolve(self, word: str) -> Resolved:
        """One word of a question: known as said, a near miss corrected (labels first), or unknown.
        Paths, quoted phrases and words that are not ASCII are never corrected."""
        key = word.strip().lower()
        if self.knows(key):
            return Resolved(word, key, "exact")
        if not key.isascii() or "/" in key or " " in key:
            return Resolved(word, key, "unknown")
        parts = [p for p in _PART.split(key) if p]
        if len(parts) > 1 and all(self.knows(p) for p in parts):  # qwen3-vl: searched as written, not "corrected"
            return Resolved(word, key, "exact")
        labels, others = self._lists()
        near = _nearest(key, labels, self.words)
        if near is None and len(key) >= 5:
            near = _nearest(key, others, self.words)
        if near is None and self.concepts is not None:
            near = _nearest(key, [w for w in self.concepts.words() if w.isascii()], self.words)
        return Resolved(word, near, "corrected") if near else Resolved(word, key, "unknown")

    def joined(self, words: Sequence[str]) -> tuple[str, ...]:
        """``words`` with two neighbours written apart joined into the one identifier the data uses (``fully
        async`` → ``fully_async``, ``routed experts`` → ``routed_experts``): the joined form (with ``_`` or ``-``
        between) is a label, or a word of the data when neither of the two is a label (``vllm rollout`` and
        ``reward manager`` stay two words)."""
        out: list[str] = []
        i = 0
        while i < len(words):
            first = words[i]
            if i + 1 < len(words) and first.isascii() and words[i + 1].isascii() and "/" not in first + words[i + 1]:
                second = words[i + 1]
                a_label = first.lower() in self.labels or second.lower() in self.labels
                join = next((j for glue in ("_", "-") if (j := f"{first}{glue}{second}".lower()) in self.labels
                             or (j in self.words and not a_label)), None)
                if join is not None and not (first.lower() in self.labels and second.lower() in self.labels):
                    out.append(join)
                    i += 2
                    continue
            out.append(first)
            i += 1
        return tuple(out)

    def resolve_all(self, words: Sequence[str]) -> Resolution:
        """Every word of ``words`` resolved (:meth:`resolve`)."""
        return Resolution(tuple(self.resolve(w) for w in words))


def _nearest(word: str, choices: Sequence[str], counts: Counter[str]) -> str | None:
    """The choice nearest to ``word`` above the cutoff for its length (rapidfuzz's ratio), a word the data
    uses often winning over a rare one a little nearer (``megatorn``: ``megatron``, not a diff's ``megaton``);
    ``None`` when none is near."""
    cutoff = _cutoff(word)
    if cutoff is None or not choices:
        return None
    found = process.extract(word, choices, scorer=fuzz.ratio, score_cutoff=cutoff, limit=5)
    fitting = [(str(choice), float(score)) for choice, score, _ in found
               if choice != word and abs(len(choice) - len(word)) <= 2]
    if not fitting:
        return None
    return max(fitting, key=lambda item: item[1] + 5 * math.log10(1 + counts.get(item[0], 0)))[0]
