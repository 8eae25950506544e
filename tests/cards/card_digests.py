"""Hand-built digests for the renderer tests (imported by ``conftest.py`` and the tests).

``make_digest`` builds a consistent :class:`~bot.models.Digest` (stats, key
PRs, trends, risk roll-up, label view and pending list all derived from the
PRs it makes), deterministically, so golden snapshots stay stable.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

from bot.models import (
    Analysis,
    Coverage,
    Digest,
    DigestPR,
    DigestStats,
    HotFile,
    LabelGroup,
    LabelTrend,
    Language,
    Recommendation,
    RecommendationLevel,
    Risk,
    RiskRollup,
    Window,
)

SHANGHAI = timezone(timedelta(hours=8))
GENERATED_AT = datetime(2026, 4, 20, 1, 3, tzinfo=SHANGHAI)
W16 = Window(
    start=datetime(2026, 4, 13, tzinfo=SHANGHAI),
    end=datetime(2026, 4, 20, tzinfo=SHANGHAI),
    timezone="Asia/Shanghai",
    name="2026-W16",
)
LABELS = ("trainer", "rollout", "npu", "ci", "docker", "megatron", "fully_async", "doc", "perf", "algo")
RISKS = {
    "missing_tests": ("缺少测试覆盖", "Missing tests"),
    "core_path_change": ("核心路径变更", "Core path change"),
    "config_contract_change": ("配置契约变更", "Config contract change"),
    "dependency_upgrade": ("依赖升级", "Dependency upgrade"),
}
HOSTILE = (
    "<!channel> please read",
    "ping <@U123> and <!here>",
    "a < b && c > d",
    '<at user_id="all">所有人</at> 注意',
    "&lt;at id=all&gt;&lt;/at&gt; encoded",
    "| pipe | in | title |",
    "line one\nline two\n```\nfenced",
    "<font color=red>red</font> <https://evil.example|click>",
    "# not a heading",
)
LONG_UNIT = "训练器🚀改进 émoji👩‍👩‍👧 flag🇨🇳 text & more <x> "


def _text(base: str, size: int) -> str:
    """``base`` followed by filler up to about ``size`` characters (0 = ``base`` alone)."""
    if size <= len(base):
        return base
    filler = (LONG_UNIT * (size // len(LONG_UNIT) + 1))[: size - len(base)]
    return base + " " + filler


def make_digest(
    *,
    n_prs: int = 40,
    language: Language = "zh",
    pending: Sequence[int] = (),
    long_text: int = 0,
    hostile: bool = False,
    n_labels: int = len(LABELS),
) -> Digest:
    """A consistent digest of ``n_prs`` PRs.

    Args:
        n_prs: number of PRs (0 gives the empty digest).
        language: digest language.
        pending: indexes (0-based) of PRs whose analysis is ``None``.
        long_text: size in characters of the long narrative fields (0 = short texts).
        hostile: put hostile strings into titles, reasons, labels and narrative.
        n_labels: how many labels to use (extra ones are ``label-NN``).
    """
    zh = language == "zh"
    labels = (LABELS + tuple(f"label-{i:02d}" for i in range(len(LABELS), n_labels)))[:n_labels]
    if hostile:
        labels = (*labels[:-1], "<!subteam^S1> team")
    prs: list[DigestPR] = []
    for i in range(n_prs):
        number = 5900 + 4 * i
        own: tuple[str, ...] = (labels[i % len(labels)], labels[(i * 3 + 1) % len(labels)])
        own = tuple(dict.fromkeys(own))
        title = f"[{', '.join(own)}] fix: improve part {i} of the pipeline"
        if hostile:
            title = f"{HOSTILE[i % len(HOSTILE)]} #{i}"
        title = _text(title, long_text // 80)
        importance = (i * 7) % 10 + 1
        analysis = None
        if i not in pending:
            risk_kinds = list(RISKS)[: (i % 3)]
            risks = tuple(
                Risk(kind=k, title=RISKS[k][0 if zh else 1], evidence=(f"verl/mod_{i}.py",)) for k in risk_kinds
            )
            level: RecommendationLevel = "close_read" if importance >= 8 else "skim" if importance >= 5 else "skip"
            reason = (
                f"第 {i} 个 PR 的阅读建议：先看 verl/mod_{i}.py 的改动。"
                if zh
                else f"Reading advice for PR {i}: start with verl/mod_{i}.py."
            )
            if hostile:
                reason = f"{HOSTILE[(i + 3) % len(HOSTILE)]} — {reason}"
            analysis = Analysis(
                summary=f"Summary of PR {i}",
                change_type="fix",
                importance=importance,
                insight=(i * 3) % 10 + 1,
                risks=risks,
                recommendation=Recommendation(
                    level=level, minutes=5 + i % 20, reason=_text(reason, long_text // 15), focus=()
                ),
                key_points=(_text(f"关键点 {i}" if zh else f"key point {i}", long_text // 40), "second point"),
                coverage=Coverage(files_seen=3, files_total=3, lines_seen=50, lines_total=50),
                status="heuristic" if i % 5 == 0 else "llm",
                fallback_reason="llm timeout" if i % 10 == 0 else None,
                language=language,
            )
        prs.append(
            DigestPR(
                number=number,
                title=title,
                url=f"https://github.com/verl-project/verl/pull/{number}",
                author=f"contributor-{i:03d}",
                labels=own,
                merged_at=W16.start + timedelta(hours=3 * i + 1),
                additions=10 * i,
                deletions=i,
                changed_files=1 + i % 7,
                analysis=analysis,
            )
        )
    return _assemble(prs, language=language, long_text=long_text, hostile=hostile, labels=labels)


def _assemble(
    prs: list[DigestPR], *, language: Language, long_text: int, hostile: bool, labels: tuple[str, ...]
) -> Digest:
    zh = language == "zh"

    def importance(pr: DigestPR) -> int:
        return pr.analysis.importance if pr.analysis else 0

    ranked = sorted(prs, key=lambda p: (-importance(p), p.number))
    key = tuple(p.number for p in ranked if importance(p) >= 6)
    by_label: dict[str, list[DigestPR]] = defaultdict(list)
    for pr in ranked:
        for label in pr.labels:
            by_label[label].append(pr)
    by_risk: dict[str, list[int]] = defaultdict(list)
    for pr in prs:
        for risk in pr.analysis.risks if pr.analysis else ():
            by_risk[risk.kind].append(pr.number)
    analysed = [p.analysis for p in prs if p.analysis]
    extra = HOSTILE[2] + " " if hostile else ""
    n = len(prs)
    return Digest(
        repo="verl-project/verl",
        window=W16,
        language=language,
        generated_at=GENERATED_AT,
        analyzer="heuristic-1",
        narrative_source="heuristic",
        stats=DigestStats(
            pr_count=n,
            key_pr_count=len(key),
            avg_importance=round(sum(a.importance for a in analysed) / len(analysed), 2) if analysed else None,
            avg_insight=round(sum(a.insight for a in analysed) / len(analysed), 2) if analysed else None,
            additions=sum(p.additions for p in prs),
            deletions=sum(p.deletions for p in prs),
            pending_count=n - len(analysed),
        ),
        prs=tuple(prs),
        key_prs=key,
        headline=(extra + (f"本周合并 {n} 个 PR，训练器与 rollout 是主线。" if zh else f"{n} PRs merged."))
        if n
        else "",
        executive_summary=_text(
            extra
            + (
                "本周仓库共合并若干 PR。\n\n第二段：异步训练修复。"
                if zh
                else "Several PRs merged.\n\nSecond paragraph."
            ),
            long_text,
        ),
        highlights=tuple(
            _text(extra + (f"亮点 {k}：训练器改进" if zh else f"highlight {k}: trainer work"), long_text // 4)
            for k in range(min(n, 6))
        ),
        key_changes=tuple(_text(extra + f"change {k}", long_text // 4) for k in range(min(n, 2))),
        trends=tuple(
            LabelTrend(
                label=label,
                count=len(members),
                pr_numbers=tuple(p.number for p in members),
                hot_files=(HotFile(path=f"verl/{label}/main__init__.py", pr_count=2),),
                note=_text(extra + f"trend {label}", long_text // 10),
            )
            for label, members in by_label.items()
        ),
        risk_rollup=tuple(
            RiskRollup(
                kind=kind,
                title=RISKS[kind][0 if zh else 1],
                count=len(numbers),
                pr_numbers=tuple(numbers),
                note=_text(extra + "note", long_text // 10),
            )
            for kind, numbers in by_risk.items()
        ),
        suggestions=tuple(_text(extra + f"suggestion {k}", long_text // 5) for k in range(min(n, 4))),
        label_view=tuple(
            LabelGroup(label=label, pr_numbers=tuple(p.number for p in by_label[label]))
            for label in labels
            if by_label.get(label)
        ),
        pending=tuple(p.number for p in prs if p.analysis is None),
    )


ALL_DIGESTS = ("realistic_digest", "empty_digest", "huge_digest", "pending_digest", "hostile_digest")


def every_pr_number(digest: Digest) -> set[int]:
    """All PR numbers of ``digest``."""
    return {pr.number for pr in digest.prs}
