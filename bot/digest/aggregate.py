"""From analysed PRs to the digest's computed sections: stats, trends, risk roll-up,
label view — and the heuristic narrative written from those numbers.

Everything here is a pure function of its inputs. Numbers are counted, never
written by hand; the narrative names PRs and what they change (their titles and
summaries), so that a reader learns something without an LLM.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from bot.digest import texts
from bot.digest.description import shorten
from bot.digest.labels import subject
from bot.models import DigestPR, DigestStats, HotFile, LabelGroup, LabelTrend, RiskRollup

MAX_HIGHLIGHTS = 6
MAX_KEY_CHANGES = 6
MAX_TREND_LABELS = 8
MAX_HOT_FILES = 3
MIN_RELATED_PRS = 2
HIGHLIGHT_SUMMARY_CHARS = 140

# Order in which risk kinds are shown when their counts tie: the ones a reviewer can act on first.
RISK_ORDER = ("breaking_change", "revert", "missing_tests", "core_path_change", "config_contract_change",
              "dependency_upgrade", "large_change")


def _importance(pr: DigestPR) -> int:
    return pr.analysis.importance if pr.analysis else 0


def by_importance(prs: Sequence[DigestPR]) -> list[DigestPR]:
    """PRs most important first; ties by insight, then the newer merge first, then number."""
    return sorted(
        prs,
        key=lambda p: (-_importance(p), -(p.analysis.insight if p.analysis else 0),
                       -p.merged_at.timestamp(), p.number),
    )


def stats(prs: Sequence[DigestPR], bar: int) -> DigestStats:
    """Counts and averages; averages over analysed PRs only, rounded to 2 decimals."""
    done = [p.analysis for p in prs if p.analysis is not None]
    return DigestStats(
        pr_count=len(prs),
        key_pr_count=sum(a.importance >= bar for a in done),
        avg_importance=round(sum(a.importance for a in done) / len(done), 2) if done else None,
        avg_insight=round(sum(a.insight for a in done) / len(done), 2) if done else None,
        additions=sum(p.additions for p in prs),
        deletions=sum(p.deletions for p in prs),
        pending_count=len(prs) - len(done),
        key_pr_bar=bar,
    )


def label_view(prs: Sequence[DigestPR]) -> tuple[LabelGroup, ...]:
    """Every label with its PRs (most important first); labels by PR count, then name."""
    groups: dict[str, list[DigestPR]] = defaultdict(list)
    for pr in prs:
        for label in pr.labels:
            groups[label].append(pr)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple(LabelGroup(label=k, pr_numbers=tuple(p.number for p in by_importance(v))) for k, v in ordered)


def trends(prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]], t: texts.DigestTexts) -> tuple[LabelTrend, ...]:
    """Per label: count, PRs, hot files (touched by >= 2 of the label's PRs) and a note
    naming the dominant change type.

    Args:
        prs: the digest's PRs.
        files: changed paths per PR number.
        t: texts in the digest's language.
    """
    out = []
    for group in label_view(prs):
        wanted = set(group.pr_numbers)
        members = [p for p in prs if p.number in wanted]
        path_counts = Counter(path for p in members for path in set(files.get(p.number, ())))
        hot = tuple(HotFile(path=path, pr_count=n) for path, n in
                    sorted(path_counts.items(), key=lambda kv: (-kv[1], kv[0])) if n >= 2)[:MAX_HOT_FILES]
        types = Counter(p.analysis.change_type for p in members if p.analysis)
        note = ""
        if types:
            (main_type, main_count), *rest = types.most_common()
            if rest and rest[0][1] == main_count:
                note = t.trend_mixed.format(count=len(members))
            else:
                note = t.trend_note.format(count=len(members), main_type=t.type_names[main_type],
                                           main_count=main_count)
        out.append(LabelTrend(label=group.label, count=len(members), pr_numbers=group.pr_numbers,
                              hot_files=hot, note=note))
    return tuple(out)


def risk_rollup(prs: Sequence[DigestPR], t: texts.DigestTexts) -> tuple[RiskRollup, ...]:
    """Each risk kind present: its title, count and PR numbers (most important first)."""
    members: dict[str, list[DigestPR]] = defaultdict(list)
    listed: dict[str, set[int]] = defaultdict(set)  # PR numbers per kind: a PR counts once per kind
    titles: dict[str, str] = {}
    for pr in by_importance(prs):
        for risk in pr.analysis.risks if pr.analysis else ():
            if pr.number not in listed[risk.kind]:
                listed[risk.kind].add(pr.number)
                members[risk.kind].append(pr)
            titles.setdefault(risk.kind, risk.title)
    rank = {kind: i for i, kind in enumerate(RISK_ORDER)}
    ordered = sorted(members.items(), key=lambda kv: (-len(kv[1]), rank.get(kv[0], len(rank)), kv[0]))
    return tuple(
        RiskRollup(kind=kind, title=titles[kind], count=len(group), pr_numbers=tuple(p.number for p in group),
                   note=_risk_note(group, t))
        for kind, group in ordered
    )


def _risk_note(group: Sequence[DigestPR], t: texts.DigestTexts) -> str:
    """Where a risk concentrates: the labels most common among its PRs."""
    labels = Counter(label for p in group for label in p.labels).most_common(3)
    return t.risk_where.format(labels=t.list_sep.join(t.label_count.format(label=k, count=n) for k, n in labels))


def _numbers(prs: Sequence[DigestPR], t: texts.DigestTexts) -> str:
    return t.list_sep.join(f"#{p.number}" for p in prs)


def _title(pr: DigestPR) -> str:
    """The title without its ``[modules] type:`` prefix, for running text."""
    return shorten(subject(pr.title), 80)


def headline(s: DigestStats, trend: Sequence[LabelTrend], period: str, t: texts.DigestTexts) -> str:
    """One line: counts and the busiest labels."""
    labels = t.list_sep.join(t.label_count.format(label=x.label, count=x.count) for x in trend[:3])
    return t.headline.format(count=s.pr_count, key=s.key_pr_count, labels=labels, period=period)


def highlights(
    prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]], trend: Sequence[LabelTrend], bar: int,
    t: texts.DigestTexts,
) -> tuple[str, ...]:
    """The busiest label with its top PRs, the most important PRs with what they change,
    and PRs that change the same file (to be read together)."""
    out: list[str] = []
    if trend:
        top = trend[0]
        top_numbers = set(top.pr_numbers)
        named = [p for p in by_importance(prs) if p.number in top_numbers][:3]
        refs = t.list_sep.join(t.pr_ref.format(number=p.number, title=_title(p)) for p in named)
        out.append(t.highlight_label.format(label=top.label, count=top.count, prs=refs))
    related = _related(prs, files)
    for pr in [p for p in by_importance(prs) if _importance(p) >= bar][: MAX_HIGHLIGHTS - 1 - min(1, len(related))]:
        assert pr.analysis is not None
        out.append(t.highlight_pr.format(number=pr.number, title=_title(pr),
                                         summary=shorten(pr.analysis.summary, HIGHLIGHT_SUMMARY_CHARS)))
    if related:
        path, group = related[0]
        out.append(t.highlight_related.format(prs=_numbers(group, t), path=path))
    return tuple(out)


def _related(prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]]) -> list[tuple[str, list[DigestPR]]]:
    """Source files changed by several analysed key-ish PRs, most PRs first."""
    touching: dict[str, list[DigestPR]] = defaultdict(list)
    for pr in by_importance(prs):
        if pr.analysis is None or pr.analysis.importance < 5:
            continue
        for path in files.get(pr.number, ()):
            if path.endswith((".py", ".cc", ".cu", ".cpp", ".rs", ".go", ".ts")):
                touching[path].append(pr)
    pairs = [(path, group) for path, group in touching.items() if len(group) >= MIN_RELATED_PRS]
    return sorted(pairs, key=lambda kv: (-len(kv[1]), -sum(_importance(p) for p in kv[1]), kv[0]))


def executive_summary(
    prs: Sequence[DigestPR], s: DigestStats, trend: Sequence[LabelTrend],
    risks: Sequence[RiskRollup], period: str, t: texts.DigestTexts,
) -> str:
    """A paragraph of computed facts: counts, averages, change-type mix, labels, main risks."""
    types = Counter(p.analysis.change_type for p in prs if p.analysis)
    type_text = t.list_sep.join(t.change_types.format(name=t.type_names[k], count=n) for k, n in types.most_common())
    labels = t.list_sep.join(t.label_count.format(label=x.label, count=x.count) for x in trend[:5])
    risk_text = t.risk_note.format(risks=t.list_sep.join(
        t.label_count.format(label=r.title, count=r.count) for r in risks[:3])) if risks else ""
    return t.summary.format(
        count=s.pr_count, key=s.key_pr_count, bar=s.key_pr_bar, period=period,
        avg_importance=f"{s.avg_importance:.2f}" if s.avg_importance is not None else "-",
        avg_insight=f"{s.avg_insight:.2f}" if s.avg_insight is not None else "-",
        types=type_text or "-", labels=labels or "-", risks=risk_text,
    ).strip()


def key_changes(prs: Sequence[DigestPR], bar: int, t: texts.DigestTexts) -> tuple[str, ...]:
    """The most important PRs, each with its labels, importance and summary."""
    out = []
    for pr in [p for p in by_importance(prs) if _importance(p) >= bar][:MAX_KEY_CHANGES]:
        assert pr.analysis is not None
        out.append(t.key_change.format(number=pr.number, title=_title(pr), labels=", ".join(pr.labels[:3]),
                                       importance=pr.analysis.importance,
                                       summary=shorten(pr.analysis.summary, 240)))
    return tuple(out)


def suggestions(risks: Sequence[RiskRollup], pending: Sequence[int], t: texts.DigestTexts) -> tuple[str, ...]:
    """Follow-up advice: one line per risk kind present, naming its most important PRs,
    plus the pending PRs."""
    out = [t.suggestions[r.kind].format(prs=t.list_sep.join(f"#{n}" for n in r.pr_numbers[:4]))
           for r in risks if r.kind in t.suggestions]
    if pending:
        out.append(t.pending_note.format(count=len(pending), prs=t.list_sep.join(f"#{n}" for n in pending)))
    return tuple(out) or (t.suggestion_default,)
