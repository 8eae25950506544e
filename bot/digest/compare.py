"""Several PRs side by side: each one's verdict and minutes, and which to read first.

``compare_prs(prs, repo=…, language=…)`` orders analysed PRs by what a reader
should open first — the reading recommendation (close read, then skim, then
skip), then importance, then insight, then the shorter read, then the order
asked — and puts PRs without an analysis yet last. The core gets each PR's
:class:`~bot.models.DigestPR` the way a PR question does (``analyze_pr`` with
the PR's own week as context, so the verdicts equal those of the digests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.models import DigestPR, Language, RecommendationLevel

__all__ = ["Comparison", "compare_prs"]

_LEVEL_RANK: dict[RecommendationLevel, int] = {"close_read": 0, "skim": 1, "skip": 2}


@dataclass(frozen=True, slots=True)
class Comparison:
    """PRs in reading order (``prs``; pending ones last), the numbers asked for that the
    source does not hold (``missing``), the repository and the reply language."""

    repo: str
    language: Language
    prs: tuple[DigestPR, ...]
    missing: tuple[int, ...] = ()

    @property
    def first(self) -> DigestPR | None:
        """The PR to read first: the first analysed one (``None`` when none is analysed)."""
        return next((pr for pr in self.prs if pr.analysis is not None), None)

    @property
    def pending(self) -> tuple[DigestPR, ...]:
        """The PRs whose analysis is not available yet."""
        return tuple(pr for pr in self.prs if pr.analysis is None)


def _key(item: tuple[int, DigestPR]) -> tuple[int, int, int, int, int]:
    asked, pr = item
    if pr.analysis is None:
        return (9, 0, 0, 0, asked)
    rec = pr.analysis.recommendation
    return (_LEVEL_RANK[rec.level], -pr.analysis.importance, -pr.analysis.insight, rec.minutes, asked)


def compare_prs(
    prs: Sequence[DigestPR], *, repo: str, language: Language, missing: Sequence[int] = (),
) -> Comparison:
    """The comparison of ``prs`` (in the order asked; duplicates are dropped).

    Args:
        prs: the PRs found, each with its analysis (or ``None`` while pending).
        repo: ``owner/name``.
        language: the language of the reply.
        missing: numbers asked for that the source does not hold.
    """
    unique = list({pr.number: pr for pr in prs}.values())
    ordered = [pr for _, pr in sorted(enumerate(unique), key=_key)]
    return Comparison(repo=repo, language=language, prs=tuple(ordered), missing=tuple(dict.fromkeys(missing)))
