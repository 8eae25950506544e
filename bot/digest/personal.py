""""My area this week": a person's weekly digest — the week's digest seen through their filter.

:func:`personal_digest` takes the week's :class:`~bot.models.Digest` (the same core, the same
analyses, so verdicts and minutes agree with the team digest) and the PR records it was built
from (the digest keeps no file paths; ``path:`` terms need them), keeps the PRs the filter — or
any of the person's several filters (one per subscription) — matches (:func:`bot.filters.match`:
exclusions win within each filter, bots left out), orders them by what to read first, sums the
reading budget, and counts everything else that merged in one line.

Reading order: close reads, then skims, then skips, then PRs still pending; within a verdict
the most important first, then the more insightful, then the shorter read, then by number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime

from pydantic import AwareDatetime, BaseModel, ConfigDict

from bot.filters import DEFAULT_BOTS, Candidate, Filter, OwnerMap, Reason, match
from bot.models import Digest, DigestPR, Language, PullRequest, RecommendationLevel, Window

__all__ = ["Budget", "LabelCount", "PersonalDigest", "PersonalPR", "personal_digest", "reading_order"]

OTHER_LABELS = 3
"""How many labels the line about the other PRs names."""

_RANK: dict[RecommendationLevel, int] = {"close_read": 0, "skim": 1, "skip": 2}


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PersonalPR(_Value):
    """A matching PR as the digest shows it, and why it matched (one reason per clause)."""

    pr: DigestPR
    reasons: tuple[Reason, ...] = ()


class Budget(_Value):
    """The week's reading budget over the matching PRs: counts and summed ``Recommendation.minutes``
    per verdict, and how many are still pending (no analysis, no minutes)."""

    close_reads: int = 0
    close_read_minutes: int = 0
    skims: int = 0
    skim_minutes: int = 0
    skips: int = 0
    skip_minutes: int = 0
    pending: int = 0

    @property
    def minutes(self) -> int:
        """Minutes of the close reads and skims (skips are not read)."""
        return self.close_read_minutes + self.skim_minutes


class LabelCount(_Value):
    """A label and how many of the other PRs carry it."""

    label: str
    count: int


class PersonalDigest(_Value):
    """One person's week: ``prs`` (matching, in reading order), the ``budget``, and the ``others``
    (how many PRs merged that the filters left out, and their most frequent labels). ``filters``: the
    person's filters of this repository (a PR is theirs when any one matches)."""

    repo: str
    window: Window
    language: Language
    generated_at: AwareDatetime
    filters: tuple[Filter, ...]
    prs: tuple[PersonalPR, ...]
    budget: Budget
    others: int
    other_labels: tuple[LabelCount, ...] = ()


def reading_order(item: DigestPR) -> tuple[int, int, int, int, int]:
    """Sort key: verdict (close read first, pending last), then importance and insight (high
    first), then minutes (short first), then the PR number."""
    analysis = item.analysis
    if analysis is None:
        return (3, 0, 0, 0, item.number)
    rec = analysis.recommendation
    return (_RANK[rec.level], -analysis.importance, -analysis.insight, rec.minutes, item.number)


def _budget(items: Sequence[DigestPR]) -> Budget:
    counts: dict[str, int] = Counter()
    for item in items:
        if item.analysis is None:
            counts["pending"] += 1
            continue
        rec = item.analysis.recommendation
        plural = {"close_read": "close_reads", "skim": "skims", "skip": "skips"}[rec.level]
        counts[plural] += 1
        counts[plural.removesuffix("s") + "_minutes"] += rec.minutes
    return Budget(**counts)


def personal_digest(digest: Digest, prs: Sequence[PullRequest], flt: Filter | Sequence[Filter], *,
                    bots: Collection[str] = DEFAULT_BOTS, me: str | None = None,
                    codeowners: OwnerMap | None = None, now: datetime | None = None,
                    mine: Mapping[Filter, str | None] | None = None) -> PersonalDigest:
    """The personal digest of ``digest`` under ``flt``.

    Args:
        digest: the week's digest (any language; its texts and analyses are reused).
        prs: the PR records the digest was built from (their files and authors); a digest PR
            missing here is matched without file paths.
        flt: the person's filter, or their several filters (one per subscription): a PR is in when
            any one matches, with the reasons of the first that does (in the order given).
        bots, me, codeowners: as :func:`bot.filters.match`.
        now: the generation instant (default: now, UTC).
        mine: a filter's own ``me`` (the handle of whoever made that subscription), instead of ``me``.

    Raises:
        FilterError: a filter needs ``me`` or ``codeowners`` and it was not given.
    """
    filters = (flt,) if isinstance(flt, Filter) else tuple(flt)
    records = {pr.number: pr for pr in prs if pr.repo.lower() == digest.repo.lower()}
    chosen: list[PersonalPR] = []
    rest: list[DigestPR] = []
    for item in digest.prs:
        record = records.get(item.number)
        if record is not None:
            candidate = Candidate.of(record, item)
        else:
            candidate = Candidate(repo=digest.repo, number=item.number, title=item.title, author=item.author,
                                  labels=tuple(label.lower() for label in item.labels), paths=(),
                                  analysis=item.analysis)
        hit = next((result for f in filters
                    if (result := match(f, candidate, bots=bots, me=(mine or {}).get(f, me), codeowners=codeowners))),
                   None)
        if hit is not None:
            chosen.append(PersonalPR(pr=item, reasons=hit.reasons))
        else:
            rest.append(item)
    chosen.sort(key=lambda p: reading_order(p.pr))
    labels = Counter(label for item in rest for label in item.labels)
    top = sorted(labels.items(), key=lambda kv: (-kv[1], kv[0]))[:OTHER_LABELS]
    return PersonalDigest(
        repo=digest.repo, window=digest.window, language=digest.language, generated_at=now or datetime.now(UTC),
        filters=filters, prs=tuple(chosen), budget=_budget([p.pr for p in chosen]), others=len(rest),
        other_labels=tuple(LabelCount(label=k, count=v) for k, v in top))
