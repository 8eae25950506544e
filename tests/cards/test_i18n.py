"""Titles, dates and fixed phrases."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from bot.cards.i18n import (
    analysis_line,
    digest_title,
    level_name,
    meta_line,
    minutes_text,
    n_prs,
    status_name,
    window_days,
)
from bot.models import Window
from cards.card_digests import W16, make_digest

SHANGHAI = timezone(timedelta(hours=8))


def test_week_title_zh_and_en() -> None:
    assert digest_title(make_digest(n_prs=3)) == "2026 第 16 周 · 04-13 至 04-19 周报"
    assert digest_title(make_digest(n_prs=3, language="en")) == "2026 week 16 · Apr 13 – Apr 19 digest"


def test_range_title_has_no_week() -> None:
    window = W16.model_copy(update={"name": "2026-04-13..2026-04-19"})
    digest = make_digest(n_prs=1).model_copy(update={"window": window})
    assert digest_title(digest) == "04-13 至 04-19 周报"


def test_title_spanning_two_years_prints_years() -> None:
    window = Window(
        start=datetime(2025, 12, 29, tzinfo=SHANGHAI),
        end=datetime(2026, 1, 5, tzinfo=SHANGHAI),
        timezone="Asia/Shanghai",
        name="2026-W01",
    )
    digest = make_digest(n_prs=1).model_copy(update={"window": window})
    assert digest_title(digest) == "2026 第 1 周 · 2025-12-29 至 2026-01-04 周报"


def test_window_end_is_exclusive_and_read_in_the_window_zone() -> None:
    assert window_days(W16) == (date(2026, 4, 13), date(2026, 4, 19))
    # The same instants given in UTC still print Shanghai calendar days.
    utc = W16.model_copy(update={"start": W16.start.astimezone(UTC), "end": W16.end.astimezone(UTC)})
    assert window_days(utc) == window_days(W16)
    # A window ending mid-day includes that day.
    noon = W16.model_copy(update={"end": datetime(2026, 4, 15, 12, tzinfo=SHANGHAI)})
    assert window_days(noon)[1].isoformat() == "2026-04-15"


def test_meta_line_matches_the_reference_shape() -> None:
    digest = make_digest(n_prs=40)
    assert meta_line(digest) == (
        f"仓库：verl-project/verl 周期：2026-04-13 至 2026-04-19 来源 PR：40 · "
        f"重点 PR：{digest.stats.key_pr_count} · 生成于 2026-04-20 01:03 · 无配置文件"
    )
    named = digest.model_copy(update={"config_file": "prhub.toml", "language": "en"})
    assert meta_line(named).endswith(" · config: prhub.toml")


def test_analysis_line_says_who_analysed_what() -> None:
    line = analysis_line(make_digest(n_prs=12, pending=(1, 2)))
    assert line == "分析：LLM 分析 7 · 启发式分析 3（其中 2 个为模型失败后的启发式回退） · 待分析 2 · 摘要：启发式生成"
    en = analysis_line(make_digest(n_prs=3, language="en"))
    assert (
        en == "Analysis: LLM analysis 2 · heuristic analysis 1 (1 of them heuristic fallbacks after a model failure)"
        " · narrative: heuristic"
    )


@pytest.mark.parametrize(
    ("level", "zh", "en"),
    [("close_read", "值得精读", "worth a close read"), ("skim", "建议浏览", "skim"), ("skip", "可跳过", "skip")],
)
def test_level_names(level: str, zh: str, en: str) -> None:
    assert level_name(level, "zh") == zh  # type: ignore[arg-type]
    assert level_name(level, "en") == en  # type: ignore[arg-type]


def test_badges_and_counts() -> None:
    assert status_name("heuristic", "zh") == "启发式分析"
    assert status_name("llm", "en") == "LLM analysis"
    assert minutes_text(15, "zh") == "约 15 分钟"
    assert minutes_text(15, "en") == "~15 min"
    assert (n_prs(1, "en"), n_prs(2, "en"), n_prs(1, "zh")) == ("1 PR", "2 PRs", "1 个 PR")
