"""The Markdown report."""

from __future__ import annotations

import re

import pytest

from bot.cards.markdown import render_markdown
from bot.models import Digest
from cards.card_digests import HOSTILE, make_digest

ZH_HEADINGS = [
    "# 2026 第 16 周 · 04-13 至 04-19 周报",
    "## 本周亮点",
    "## 风险观察",
    "## 完整周报",
    "### 1. 执行摘要",
    "### 2. 本周重点变化",
    "### 3. 模块与主题趋势",
    "### 4. 风险观察",
    "### 5. 重点 PR 速览",
    "### 6. 后续建议",
    "## 标签视图",
]
EN_HEADINGS = [
    "# 2026 week 16 · Apr 13 – Apr 19 digest",
    "## Highlights",
    "## Risk observations",
    "## Full report",
    "### 1. Executive summary",
    "### 2. Key changes",
    "### 3. Modules and trends",
    "### 4. Risk observations",
    "### 5. Key PRs at a glance",
    "### 6. Suggestions",
    "## Label view",
]


def _headings(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("#")]


@pytest.mark.parametrize(("language", "expected"), [("zh", ZH_HEADINGS), ("en", EN_HEADINGS)])
def test_sections_in_order(language: str, expected: list[str]) -> None:
    report = render_markdown(make_digest(n_prs=40, language=language))  # type: ignore[arg-type]
    headings = _headings(report)
    assert headings[: len(expected)] == expected
    assert report.endswith("\n")
    assert not report.endswith("\n\n")


def test_meta_and_sources_follow_the_headline(realistic_digest: Digest) -> None:
    lines = [line for line in render_markdown(realistic_digest).splitlines() if line]
    assert lines[1] == realistic_digest.headline
    assert lines[2].startswith("仓库：verl-project/verl 周期：2026-04-13 至 2026-04-19 来源 PR：40")
    assert lines[3].startswith("分析：LLM 分析")
    assert "启发式分析" in lines[3]


def test_key_pr_table_lists_all_key_prs_by_importance(realistic_digest: Digest) -> None:
    report = render_markdown(realistic_digest)
    table = report.split("### 5. 重点 PR 速览")[1].split("### 6.")[0].strip().splitlines()
    assert table[0] == "| PR | 标题 | 关键点 | 风险 |"
    assert table[1] == "|---|---|---|---|"
    numbers = [int(re.match(r"\| \[#(\d+)\]", row)[1]) for row in table[2:]]  # type: ignore[index]
    assert numbers == list(realistic_digest.key_prs)
    assert len(numbers) == realistic_digest.stats.key_pr_count > 10


def test_label_view_shows_level_minutes_reason_and_pending(pending_digest: Digest) -> None:
    report = render_markdown(pending_digest)
    view = report.split("## 标签视图")[1]
    for number in pending_digest.pending:
        assert re.search(rf"#{number}\]\([^)]*\) .* — \*分析结果尚未生成\*", view)
    analysed = next(pr for pr in pending_digest.prs if pr.analysis is not None)
    assert analysed.analysis is not None
    assert analysed.analysis.recommendation.reason in view
    assert "约 " in view
    assert "## 分析尚未完成的 PR" in report
    pending_list = report.split("## 分析尚未完成的 PR")[1]
    assert [int(n) for n in re.findall(r"\[#(\d+)\]", pending_list)] == list(pending_digest.pending)


def test_every_pr_is_in_the_label_view(realistic_digest: Digest) -> None:
    view = render_markdown(realistic_digest).split("## 标签视图")[1]
    assert {int(n) for n in re.findall(r"\[#(\d+)\]", view)} == {pr.number for pr in realistic_digest.prs}


def test_unlabelled_prs_get_their_own_group() -> None:
    digest = make_digest(n_prs=6)
    digest = digest.model_copy(update={"label_view": digest.label_view[:1]})
    view = render_markdown(digest).split("## 标签视图")[1]
    assert "### 未分类（" in view
    assert {int(n) for n in re.findall(r"\[#(\d+)\]", view)} == {pr.number for pr in digest.prs}


def test_empty_digest_is_a_short_report(empty_digest: Digest) -> None:
    report = render_markdown(empty_digest)
    assert report.splitlines()[0] == "# 2026 第 16 周 · 04-13 至 04-19 周报"
    assert "本周期内没有合并的 PR。" in report
    assert "来源 PR：0" in report
    assert "## 标签视图" not in report
    en = render_markdown(make_digest(n_prs=0, language="en"))
    assert "No pull requests were merged in this period." in en


def test_hostile_text_cannot_break_the_layout(hostile_digest: Digest) -> None:
    report = render_markdown(hostile_digest)
    # No raw HTML, comment or autolink can start anywhere outside a code span.
    outside_code = re.sub(r"(`+).*?\1", "", report)
    assert re.search(r"<[A-Za-z/!?]", outside_code) is None
    # Every heading is one of ours.
    for line in _headings(report):
        assert line.startswith(("# 2026", "## ", "### "))
    # Table rows keep exactly four cells.
    table = [line for line in report.split("### 5.")[1].split("### 6.")[0].splitlines() if line.startswith("|")]
    assert len(table) == 2 + hostile_digest.stats.key_pr_count
    for row in table:
        assert len(re.findall(r"(?<!\\)\|", row)) == 5, row
    # No line opens a code fence or a quote.
    assert not [line for line in report.splitlines() if line.lstrip().startswith(("```", "~~~", ">"))]
    assert "\\| pipe \\| in \\| title \\|" in report
    assert HOSTILE[0].replace("<", "&lt;") in report


def test_heuristic_source_is_marked(digest_factory: object) -> None:
    digest = make_digest(n_prs=5)
    assert "摘要：启发式生成" in render_markdown(digest)
    llm = digest.model_copy(update={"narrative_source": "llm"})
    assert "摘要：LLM 撰写" in render_markdown(llm)
