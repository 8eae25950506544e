"""The understanding beyond the table: slash commands, the language rule, the legacy mapping,
the bot's mention, long and hostile messages, and never raising."""

from __future__ import annotations

import random
import time

import pytest

from bot.handlers.intents import parse_command, parse_intent
from bot.understand import (
    MAX_CHARS,
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    LabelIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PRIntent,
    QuestionIntent,
    SubscribeIntent,
    UnsubscribeIntent,
    detect_language,
    normalize,
    understand,
    understand_command,
)
from understand.test_understand import TABLE, _check

BOT = "<@U0BOT>"

COMMANDS = [
    ("digest", DigestIntent()),
    ("digest 2026-W16", DigestIntent(week="2026-W16")),
    ("digest last", DigestIntent(week="last")),
    ("digest this", DigestIntent(week="this")),
    ("digest 上上周", DigestIntent(week="week-2", language="zh")),
    ("digest 本月", DigestIntent(week="month-0", language="zh")),
    ("digest last month", DigestIntent(week="month-1", language="en")),
    ("digest 2026-04-13..2026-04-19", DigestIntent(week="2026-04-13..2026-04-19")),
    ("digest W16 verl-project/verl", DigestIntent(week="*-W16", repo="verl-project/verl")),
    ("digest 第60周", ClarifyIntent("第60周", "no_such_week", "digest", language="zh")),
    ("pr 6046", PRIntent(6046)),
    ("pr #6046", PRIntent(6046)),
    ("pr https://github.com/verl-project/verl/pull/6046", PRIntent(6046, repo="verl-project/verl")),
    ("pr 6046 6029", CompareIntent((6046, 6029))),
    ("compare 6046 6029 6001", CompareIntent((6046, 6029, 6001))),
    ("compare #6046 and #6029", CompareIntent((6046, 6029), language="en")),
    ("label npu", LabelIntent("npu")),
    ("label npu W16", LabelIntent("npu", window="*-W16")),
    ("label npu 上周", LabelIntent("npu", window="last", language="zh")),
    ("label npu verl-project/verl", LabelIntent("npu", repo="verl-project/verl")),
    ("merged this month", MergedIntent("month-0", language="en")),
    ("merged 本月", MergedIntent("month-0", language="zh")),
    ("ask which PRs touched fully_async last week", QuestionIntent(("fully_async",), window="last", language="en")),
    ("ask 哪些 PR 改了 rollout 的配置", QuestionIntent(("rollout", "配置"), language="zh")),
    ("subscribe npu", SubscribeIntent(text="subscribe npu")),
    ("subscribe npu -ci", SubscribeIntent(text="subscribe npu -ci")),
    ("subscribe npu verl-project/verl", SubscribeIntent(
        repo="verl-project/verl", text="subscribe npu verl-project/verl")),
    ("unsubscribe npu", UnsubscribeIntent(text="unsubscribe npu")),
    ("unsubscribe all", UnsubscribeIntent(text="unsubscribe all")),
    ("subscriptions", ListSubscriptionsIntent()),
    ("help", HelpIntent()),
    ("", HelpIntent()),
    ("pr", HelpIntent()),
    ("PR #6046 值得读吗", PRIntent(6046, language="zh")),
    ("本月合并了哪些 PR", MergedIntent("month-0", language="zh")),
]


@pytest.mark.parametrize(("args", "expected"), COMMANDS, ids=[a or "<empty>" for a, _ in COMMANDS])
def test_slash_commands(args: str, expected: object) -> None:
    assert understand_command(args) == expected


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("npu", None), ("label npu", None), ("PR 6046", None), ("6046", None), ("#6046", None),
        ("subscribe npu", None), ("subscribe to npu", None), ("digest", None), ("help", None), ("W16", None),
        ("digest 2026-W16 verl-project/verl", None), ("https://github.com/verl-project/verl/pull/6046", None),
        ("trainer PRs last week", "en"), ("is PR 6046 worth reading", "en"), ("what merged this month", "en"),
        ("npu 标签", "zh"), ("PR 6046 值得读吗", "zh"), ("周报 last week", "zh"), ("上週週報", "zh"),
    ],
)
def test_the_language_is_the_sentence_s_and_none_for_a_bare_label_number_or_command(
    text: str, language: str | None,
) -> None:
    intent = understand(text)
    assert intent.language == language, intent
    if isinstance(intent, LabelIntent):
        assert detect_language(text, [intent.label]) == language


def test_the_doors_get_every_intent_with_the_sentence_s_language() -> None:
    assert parse_intent("label npu") == LabelIntent("npu")  # the channel's language applies
    assert parse_intent("#6046 和 #6029 哪个更值得读") == CompareIntent((6046, 6029), language="zh")
    assert parse_intent("哪些 PR 改了 rollout 的配置") == QuestionIntent(("rollout", "配置"), language="zh")
    assert parse_intent("上上周周报") == DigestIntent("week-2", language="zh")
    assert parse_intent("本月合并了哪些 PR") == MergedIntent("month-0", language="zh")
    assert parse_intent("谁贡献最多") == MergedIntent(language="zh", focus="authors")
    assert parse_command("subscribe npu") == SubscribeIntent(text="subscribe npu")
    assert parse_command("digest last") == DigestIntent("last")
    assert parse_intent("第60周周报") == ClarifyIntent("第60周", "no_such_week", "digest", language="zh")


@pytest.mark.parametrize(("text", "kind", "window", "fields"), TABLE[:60], ids=[row[0] for row in TABLE[:60]])
def test_the_bot_mention_is_removed_wherever_it_stands(text: str, kind: type, window: str | None,
                                                        fields: dict[str, object]) -> None:
    _check(f"{BOT}\u3000{text}\u00a0", kind, window, fields)  # the mention of the bot is not a word
    assert understand(f"{BOT} {text}", bot_mentions=[BOT]) == understand(text)


def test_other_mentions_stay_and_invisible_characters_go() -> None:
    assert understand(f"{BOT} <@U0ALICE> PR #6046 值得读吗", bot_mentions=[BOT]) == PRIntent(6046, language="zh")
    assert "<@U0ALICE>" in normalize(f"{BOT} <@U0ALICE> hi", [BOT])
    assert normalize("上\u200b周\u202e周报") == "上周周报"
    assert understand("上\u200b周周报") == DigestIntent("last", language="zh")


LONG = [
    "9" * 40_000,  # issue 14: this stalled the parser of today for 16 s
    "a" * 40_000,
    "订阅" * 20_000,
    "npu 标签" * 6_000,
    "#6046 " * 6_000,
    "上周" * 20_000,
    "a/" * 20_000,
    "4/13-" * 8_000,
    "PR 6046 和 " * 4_000,
    "w1" * 20_000,
    "https://github.com/" + "a" * 39_980,
    "".join(random.Random(14).choice("周报上第16Ww-/#和0123456789 abc标签订阅PR.") for _ in range(40_000)),
]


@pytest.mark.parametrize("text", LONG, ids=[f"{t[:12]!r}x{len(t)}" for t in LONG])
def test_a_40000_character_message_is_read_in_milliseconds(text: str) -> None:
    # A regression guard with a generous bound (the parser of today took 16 s on the first one);
    # bench/bench_intents.py measures the ratios.
    started = time.perf_counter()
    intent = understand(text)
    understand_command(text)
    parse_intent(text)
    assert time.perf_counter() - started < 0.5, intent


def test_only_the_first_max_chars_are_read() -> None:
    assert isinstance(understand("x " * MAX_CHARS + " PR #6046 值得读吗"), HelpIntent)
    assert understand("PR #6046 值得读吗 " + "x " * MAX_CHARS).number == 6046  # type: ignore[union-attr]


def test_never_raises_on_random_text() -> None:
    rng = random.Random(13)
    alphabet = [*"周报上本第月日号到至和哪些改了的PRprWwk#＃-/.:：,，、?？ 0123456789abcxyz标签订阅取消",
                *"<@>|`\"'()\n\t", "\u200b", "\u202e", "🚀",
                "👩‍👩‍👧", "\U0001f1e8\U0001f1f3", "\x00", "\ud7ff", "İ", "ß"]
    for _ in range(1_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert understand(text) is not None
        assert understand_command(text) is not None
        assert parse_intent(text) is not None


@pytest.mark.parametrize("text", ["digest w/c apr 13", "上周 i/o 相关的周报", "n/a"])
def test_a_one_letter_slash_abbreviation_is_no_repository(text: str) -> None:
    assert getattr(understand(text), "repo", None) is None


def test_a_marked_short_repository_is_still_one() -> None:
    intent = understand("in a/b 上周周报")
    assert isinstance(intent, DigestIntent)
    assert intent.repo == "a/b"
