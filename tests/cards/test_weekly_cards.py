"""Week over week in the chat cards: the section is there, in the digest's words, and the
cards still pass the platform limits."""

from __future__ import annotations

import pytest
from page_support import compared_w16

from bot.cards.feishu import render_feishu
from bot.cards.slack import render_slack
from bot.config import Settings
from bot.models import Language
from cards.card_checks import check_feishu, check_slack, feishu_texts, slack_texts


@pytest.mark.parametrize("language", ["zh", "en"])
def test_cards_carry_week_over_week_within_limits(verl_settings: Settings, language: Language) -> None:
    digest = compared_w16(verl_settings, language)
    line = "本周 39 个 PR：上周 27 个（+12），前 4 周平均 31.3 个（+7.7）" if language == "zh" else \
        "39 PRs this week: 27 last week (+12), 31.3 on average over the previous 4 weeks (+7.7)"
    slack = render_slack(digest)
    check_slack(slack)
    assert line in "\n".join(slack_texts(slack))  # in the full report under the card: the card stays one screen
    feishu = render_feishu(digest)
    check_feishu(feishu)
    assert line in "\n".join(feishu_texts(feishu))
