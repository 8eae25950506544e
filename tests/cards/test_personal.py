"""Renderers of the personal weekly digest: content, language, escaping and platform limits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.cards.personal import budget_line, render_personal_feishu, render_personal_markdown, render_personal_slack
from bot.digest.personal import Budget, PersonalDigest, personal_digest
from bot.filters import parse_filter
from bot.models import Digest
from cards.card_checks import check_feishu, check_slack, feishu_texts, slack_texts
from cards.card_digests import make_digest

NOW = datetime(2026, 4, 20, 2, 0, tzinfo=UTC)


def mine(digest: Digest, text: str = "") -> PersonalDigest:
    return personal_digest(digest, [], parse_filter(text), now=NOW)


def test_budget_line_in_both_languages() -> None:
    budget = Budget(close_reads=3, close_read_minutes=45, skims=5, skim_minutes=20)
    assert budget_line(budget, "zh") == "本周阅读预算：精读 3 个，约 45 分钟；浏览 5 个，约 20 分钟"
    assert budget_line(budget, "en") == "Reading budget this week: close reads 3, ~45 minutes; skims 5, ~20 minutes"
    more = budget.model_copy(update={"skips": 2, "pending": 1})
    assert budget_line(more, "zh").endswith("；可跳过 2 个；分析尚未完成 1 个")
    assert budget_line(more, "en").endswith("; skips 2; pending 1")


@pytest.mark.parametrize("language", ["zh", "en"])
def test_markdown_lists_every_match_with_verdict_minutes_and_why(language: str) -> None:
    digest = make_digest(n_prs=12, language=language, pending=(4,))  # type: ignore[arg-type]
    pd = mine(digest, "npu trainer -ci")
    text = render_personal_markdown(pd)
    zh = language == "zh"
    title = "我的周报 · 2026 第 16 周 · 04-13 至 04-19" if zh else "My digest · 2026 week 16 · Apr 13 – Apr 19"
    assert text.startswith(f"# {title}\n")
    assert ("订阅：npu 或 trainer，排除 ci" if language == "zh" else "Subscribed: npu or trainer, except ci") in text
    for item in pd.prs:
        assert f"#{item.pr.number} " in text
    assert text.count("匹配：" if language == "zh" else "Matched: ") == len(pd.prs)
    assert (f"本周另有 {pd.others} 个 PR 合并" if zh else f"Also merged this week: {pd.others} PRs") in text
    positions = [text.index(f"#{item.pr.number} ") for item in pd.prs]
    assert positions == sorted(positions)


def test_nothing_matches_says_so() -> None:
    pd = mine(make_digest(n_prs=5), "label:nothing")
    assert "本周没有符合你订阅的 PR。" in render_personal_markdown(pd)
    check_slack(render_personal_slack(pd))
    check_feishu(render_personal_feishu(pd))


@pytest.mark.parametrize("kind", ["realistic", "huge", "hostile", "empty"])
def test_slack_and_feishu_within_limits(kind: str) -> None:
    digest = {"realistic": lambda: make_digest(n_prs=40, pending=(7,)),
              "huge": lambda: make_digest(n_prs=120, long_text=20_000, n_labels=30, pending=(3, 50)),
              "hostile": lambda: make_digest(n_prs=20, hostile=True, language="en"),
              "empty": lambda: make_digest(n_prs=0)}[kind]()
    pd = mine(digest)
    messages = render_personal_slack(pd)
    check_slack(messages)
    cards = render_personal_feishu(pd)
    check_feishu(cards)
    joined_slack = "\n".join(slack_texts(messages))
    joined_feishu = "\n".join(feishu_texts(cards))
    for item in pd.prs:  # nothing dropped
        assert f"#{item.pr.number} " in joined_slack
        assert f"#{item.pr.number} " in joined_feishu
    if kind == "huge":
        assert len(messages) > 1
        assert "（续 2/" in messages[1]["text"]
    if kind == "hostile":
        assert "<!channel>" not in joined_slack
        assert "<@U123>" not in joined_slack
        assert "<at " not in joined_feishu
