"""The renderers over digests built from the real verl PRs (tests/data/verl-prs.jsonl.gz).

Every ISO week of 2026 (Asia/Shanghai; the weeks after the data ends give empty
digests) and the busiest week of the file, 2025-W23 (63 PRs): the Slack
messages validate and keep every limit, the Feishu cards stay under the size
bound, and every PR of the digest shows up in both.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.cards.feishu import render_feishu
from bot.cards.markdown import render_markdown
from bot.cards.slack import render_slack
from bot.config import Settings
from bot.digest.service import build_digest
from bot.digest.window import iso_weeks_in_year, week_window
from bot.models import Digest, Language
from bot.sources.jsonl import SnapshotSource
from cards.card_checks import check_feishu, check_slack, feishu_texts, slack_texts

REPO = "verl-project/verl"
NOW = datetime(2026, 8, 24, 9, 0, tzinfo=UTC)
WEEKS = [(2026, week) for week in range(1, iso_weeks_in_year(2026) + 1)] + [(2025, 23)]


def _digest(source: SnapshotSource, settings: Settings, year: int, week: int, language: Language) -> Digest:
    window = week_window(year, week, "Asia/Shanghai")
    prs = source.merged_prs(REPO, window)
    return build_digest(prs, repo=REPO, window=window, settings=settings, language=language, now=NOW)


def _numbers(texts: list[str]) -> set[int]:
    return {int(n) for n in re.findall(r"#(\d+)", "\n".join(texts))}


@pytest.mark.parametrize(("year", "week"), WEEKS, ids=[f"{y}-W{w:02d}" for y, w in WEEKS])
def test_real_week_renders_within_limits(
    year: int, week: int, real_source: SnapshotSource, verl_settings: Settings, caplog: Any
) -> None:
    digest = _digest(real_source, verl_settings, year, week, "zh")
    if (year, week) == (2025, 23):
        assert digest.stats.pr_count == 63
    if (year, week) == (2026, 16):
        assert digest.stats.pr_count == 39
    expected = {pr.number for pr in digest.prs}

    messages = render_slack(digest)
    check_slack(messages, caplog)
    assert expected <= _numbers(slack_texts(messages))

    cards = render_feishu(digest)
    check_feishu(cards)
    assert expected <= _numbers(feishu_texts(cards))

    report = render_markdown(digest)
    assert expected <= _numbers([report])


@pytest.mark.parametrize(("year", "week"), [(2026, 16), (2025, 23)])
def test_real_week_in_english(year: int, week: int, real_source: SnapshotSource, verl_settings: Settings) -> None:
    digest = _digest(real_source, verl_settings, year, week, "en")
    check_slack(render_slack(digest))
    check_feishu(render_feishu(digest))
    assert render_markdown(digest).startswith(f"# {year} week {week} · ")
