"""Plain-text pieces shared by the renderers (no escaping, no markup).

Everything returned here is unescaped: parts of it come from PRs, so each
renderer escapes the whole string for its format before adding its own markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.cards.i18n import level_name, minutes_text, phrases, release_text, status_name
from bot.models import Digest, DigestPR

TOP_KEY_PRS = 10
"""How many key PRs the first Slack message / Feishu card shows before the thread."""


@dataclass(frozen=True, slots=True)
class Group:
    """One label of the label view with its PRs (most important first)."""

    label: str
    prs: tuple[DigestPR, ...]


def key_prs(digest: Digest) -> list[DigestPR]:
    """The key PRs in ``Digest.key_prs`` order (highest importance first)."""
    index = digest.by_number()
    return [index[number] for number in digest.key_prs]


def pending_prs(digest: Digest) -> list[DigestPR]:
    """The PRs listed in ``Digest.pending``, in that order."""
    index = digest.by_number()
    return [index[number] for number in digest.pending]


def label_groups(digest: Digest) -> list[Group]:
    """``Digest.label_view``, plus an *unlabelled* group holding every PR no label lists.

    So the label view shows each PR of the digest at least once.
    """
    index = digest.by_number()
    groups = [Group(g.label, tuple(index[n] for n in g.pr_numbers)) for g in digest.label_view]
    listed = {pr.number for group in groups for pr in group.prs}
    rest = tuple(pr for pr in digest.prs if pr.number not in listed)
    if rest:
        groups.append(Group(phrases(digest.language).unlabelled, rest))
    return groups


def pr_badges(pr: DigestPR, digest: Digest) -> str:
    """``值得精读 · 约 15 分钟 · 启发式分析`` (``· 已发布于 v0.7.1`` / ``· 尚未发布`` when the source knows the
    releases) — or the pending placeholder."""
    language = digest.language
    release = release_text(pr.released_in, pr.release_known, language)
    if pr.analysis is None:
        return " · ".join(x for x in (phrases(language).pending_placeholder, release) if x)
    rec = pr.analysis.recommendation
    return " · ".join(x for x in (
        level_name(rec.level, language),
        minutes_text(rec.minutes, language),
        status_name(pr.analysis.status, language),
        release,
    ) if x)


def pr_scores(pr: DigestPR, digest: Digest) -> str:
    """``重要性 9/10 · 洞察 7/10``, or the pending placeholder."""
    words = phrases(digest.language)
    if pr.analysis is None:
        return words.pending_placeholder
    return words.pr_scores.format(importance=pr.analysis.importance, insight=pr.analysis.insight)


def risk_titles(pr: DigestPR, digest: Digest) -> str:
    """The PR's risk titles joined (``缺少测试覆盖；核心路径变更``), or a no-risk / pending note."""
    words = phrases(digest.language)
    if pr.analysis is None:
        return words.pending_placeholder
    titles = [risk.title for risk in pr.analysis.risks]
    return words.clause_sep.join(titles) if titles else words.no_risks


def key_points(pr: DigestPR, digest: Digest) -> str:
    """The PR's key points joined, else its summary, else the pending placeholder."""
    words = phrases(digest.language)
    if pr.analysis is None:
        return words.pending_placeholder
    return words.clause_sep.join(pr.analysis.key_points) or pr.analysis.summary


def pr_numbers(numbers: tuple[int, ...], digest: Digest) -> str:
    """``#6046、#6029`` (every number, none elided)."""
    return phrases(digest.language).list_sep.join(f"#{n}" for n in numbers)
