"""The doors' intent table: what ``parse_intent`` gives the chat core, in Chinese and English.

Language: a message with nothing but a command, a label, a number or a name (``label npu``,
``subscribe npu``, ``digest last``, ``help``) has no language of its own (``None``): the channel's applies.

The full understanding (comparisons, questions, windows, the language rule, near-misses) is tested
in ``tests/understand/``; this table is also read through Feishu (``tests/handlers/feishu/test_events.py``).
"""

from __future__ import annotations

import pytest

from bot.handlers.intents import (
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    ListSubscriptionsIntent,
    PRIntent,
    SmallTalkIntent,
    SubscribeIntent,
    UnsubscribeIntent,
    parse_command,
    parse_intent,
)

BOT = "<@U0BOT>"

TABLE: list[tuple[str, Intent]] = [
    # digest
    ("本周周报", DigestIntent(week="this", language="zh")),
    ("上周周报", DigestIntent(week="last", language="zh")),
    ("周报 2026-W16", DigestIntent(week="2026-W16", language="zh")),
    ("周报 2026w16", DigestIntent(week="2026-W16", language="zh")),
    ("2026年第16周周报", DigestIntent(week="2026-W16", language="zh")),
    ("周报", DigestIntent(week=None, language="zh")),
    ("digest", DigestIntent(week=None)),
    ("weekly report last week", DigestIntent(week="last", language="en")),
    ("digest 2026-W16 for verl-project/verl", DigestIntent(week="2026-W16", repo="verl-project/verl")),
    ("verl-project/verl 本周周报", DigestIntent(week="this", repo="verl-project/verl", language="zh")),
    # PR questions
    ("PR #6046 值得读吗", PRIntent(number=6046, language="zh")),
    ("#6046 值得看吗", PRIntent(number=6046, language="zh")),
    ("分析一下 6046", PRIntent(number=6046, language="zh")),
    ("6046 值得读吗", PRIntent(number=6046, language="zh")),
    ("is PR 6046 worth reading", PRIntent(number=6046, language="en")),
    ("is pr #6046 worth reading?", PRIntent(number=6046, language="en")),
    ("https://github.com/verl-project/verl/pull/6046", PRIntent(number=6046, repo="verl-project/verl")),
    ("看看 https://github.com/verl-project/verl/pull/6046 值得读吗",
     PRIntent(number=6046, repo="verl-project/verl", language="zh")),
    ("verl-project/verl#6046", PRIntent(number=6046, repo="verl-project/verl")),
    ("PR ＃６０４６ 值得读吗", PRIntent(number=6046, language="zh")),  # full-width
    # label view
    ("npu 标签", LabelIntent(label="npu", language="zh")),
    ("标签 fully_async", LabelIntent(label="fully_async", language="zh")),
    ("label npu", LabelIntent(label="npu")),
    ("label NPU in verl-project/verl", LabelIntent(label="npu", repo="verl-project/verl")),
    # subscriptions
    ("订阅 npu", SubscribeIntent(text="订阅 npu", language="zh")),
    ("订阅 verl-project/verl 的 npu", SubscribeIntent(
        repo="verl-project/verl", text="订阅 verl-project/verl 的 npu", language="zh")),
    ("取消订阅 npu", UnsubscribeIntent(text="取消订阅 npu", language="zh")),
    ("退订 npu", UnsubscribeIntent(text="退订 npu", language="zh")),
    ("我的订阅", ListSubscriptionsIntent(language="zh")),
    ("subscribe npu", SubscribeIntent(text="subscribe npu")),
    ("subscribe to npu", SubscribeIntent(text="subscribe to npu")),
    ("subscribe npu in owner/name", SubscribeIntent(
        repo="owner/name", text="subscribe npu in owner/name")),
    ("unsubscribe npu", UnsubscribeIntent(text="unsubscribe npu")),
    ("my subscriptions", ListSubscriptionsIntent(language="en")),
    # help
    ("help", HelpIntent()),
    ("帮助", HelpIntent(language="zh")),
    ("weekly digest for last week", DigestIntent(week="last", language="en")),
    ("PR 6046", PRIntent(number=6046)),
    ("你好", SmallTalkIntent("greeting", language="zh")),  # issue 26: small talk, not the help
    ("", HelpIntent()),
    ("what can you do", HelpIntent(language="en")),
]


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=[t or "<empty>" for t, _ in TABLE])
def test_intent_table(text: str, expected: Intent) -> None:
    assert parse_intent(text) == expected


@pytest.mark.parametrize(("text", "expected"), TABLE[:12], ids=[t for t, _ in TABLE[:12]])
def test_bot_mention_is_removed_and_spaces_normalised(text: str, expected: Intent) -> None:
    assert parse_intent(f"{BOT}\u3000{text}\u00a0", bot_mentions=[BOT]) == expected


def test_other_mentions_stay() -> None:
    # another user's mention is not removed; it does not change what is asked
    assert parse_intent(f"{BOT} <@U0ALICE> PR #6046 值得读吗", bot_mentions=[BOT]) == PRIntent(6046, language="zh")
    assert "<@U0ALICE>" in __import__("bot.handlers.intents", fromlist=["normalize"]).normalize(
        f"{BOT} <@U0ALICE> hi", [BOT])


COMMANDS: list[tuple[str, Intent]] = [
    ("digest", DigestIntent()),
    ("digest 2026-W16", DigestIntent(week="2026-W16")),
    ("digest last", DigestIntent(week="last")),  # as `prhub digest --week last`
    ("digest last week", DigestIntent(week="last", language="en")),
    ("digest 2026-W16 verl-project/verl", DigestIntent(week="2026-W16", repo="verl-project/verl")),
    ("pr 6046", PRIntent(number=6046)),
    ("pr #6046", PRIntent(number=6046)),
    ("pr https://github.com/verl-project/verl/pull/6046", PRIntent(number=6046, repo="verl-project/verl")),
    ("label npu", LabelIntent(label="npu")),
    ("subscribe npu", SubscribeIntent(text="subscribe npu")),
    ("subscribe npu verl-project/verl", SubscribeIntent(
        repo="verl-project/verl", text="subscribe npu verl-project/verl")),
    ("unsubscribe npu", UnsubscribeIntent(text="unsubscribe npu")),
    ("subscriptions", ListSubscriptionsIntent()),
    ("help", HelpIntent()),
    ("", HelpIntent()),
    ("PR #6046 值得读吗", PRIntent(number=6046, language="zh")),
]


@pytest.mark.parametrize(("args", "expected"), COMMANDS, ids=[a or "<empty>" for a, _ in COMMANDS])
def test_slash_command_table(args: str, expected: Intent) -> None:
    assert parse_command(args) == expected
