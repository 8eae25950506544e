"""The chat core answers how people ask, on verl's full history (2,883 PRs to 2026-08-22), as a team asked it.

Every row of the issue's table, and phrasings beyond it, through :func:`bot.handlers.intents.parse_intent`
and :meth:`bot.handlers.core.Core.answer` with the real sources, digest service and a real Redis store;
each reply is also drawn for Slack and Feishu and checked for what people must never see (a server path,
an exception's text, the wrong language).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import REAL_DATA, REPO
from fakes.llm_server import FakeLLMServer, RecordedRequest, Reply, default_reply
from llm_support import llm_settings
from redis_support import redis_store

from bot.app import Services, build_services
from bot.cards.chat import render_reply_feishu, render_reply_slack
from bot.config import ChannelConfig, Settings
from bot.handlers.core import Conversation
from bot.handlers.intents import parse_command, parse_intent
from bot.replies import (
    AnswerReply,
    ClarifyReply,
    CompareReply,
    DigestReply,
    EmptyWindowReply,
    ErrorReply,
    HelpReply,
    LabelReply,
    MergedReply,
    PRReply,
    SubscriptionReply,
    SubscriptionsReply,
    is_public,
)

SHANGHAI = ZoneInfo("Asia/Shanghai")
LATE = datetime(2026, 12, 1, 10, 0, tzinfo=SHANGHAI)
"""After the data's end (2026-08-22): this week, last week and this month hold no PR."""
APRIL = datetime(2026, 4, 22, 10, 0, tzinfo=SHANGHAI)
"""Wednesday of 2026-W17: last week is W16, this month is April."""
ZH = Conversation("slack", "C0ZH", "U0ALICE")
EN = Conversation("slack", "C0EN", "U0BOB")
SERVER_TEXT = re.compile(r"/work/|/tmp/|\.jsonl|in snapshot|Traceback|File \"|not found in this source|PrhubError")
"""What only a server knows (PR texts may hold ``RuntimeError`` or ``None``: those are theirs)."""


def _settings(base: Settings) -> Settings:
    return base.model_copy(update={
        "default_source": f"jsonl:{REAL_DATA}", "default_repo": REPO, "language": "zh",
        "channels": {"slack:C0EN": ChannelConfig(language="en")},
    })


@pytest.fixture
async def late(verl_settings: Settings) -> AsyncIterator[Services]:
    async with redis_store() as store:
        services = build_services(_settings(verl_settings), store, clock=lambda: LATE)
        yield services
        await services.aclose()


@pytest.fixture
async def april(verl_settings: Settings) -> AsyncIterator[Services]:
    async with redis_store() as store:
        services = build_services(_settings(verl_settings), store, clock=lambda: APRIL)
        yield services
        await services.aclose()


def _drawn(reply: Any) -> str:
    """Everything the reply shows on both platforms, as one string."""
    return json.dumps([render_reply_slack(reply), render_reply_feishu(reply)], ensure_ascii=False)


async def _ask(services: Services, text: str, where: Conversation = ZH) -> Any:
    reply = await services.core.answer(parse_intent(text), where)
    shown = _drawn(reply)
    assert not SERVER_TEXT.search(shown), (text, SERVER_TEXT.search(shown))
    return reply


# -- the table, after the data's end ------------------------------------------------------------


@pytest.mark.parametrize(("text", "window", "echo"), [
    ("本周周报", "2026-W49", "我把“本周”理解为 2026-W49"),
    ("上周的周报", "2026-W48", "我把“上周”理解为 2026-W48"),
    ("上上周周报", "2026-W47", "我把“上上周”理解为 2026-W47"),
    ("本月合并了哪些 PR", "2026-12-01..2026-12-31", "我把“本月”理解为 2026-12-01 – 12-31"),
    ("上周 trainer 有哪些重点 PR", "2026-W48", "我把“上周”理解为 2026-W48"),
    ("这周有啥新 PR 吗", "2026-W49", "2026-W49"),
])
async def test_an_empty_window_says_so_and_names_the_data_s_last_merge(
    late: Services, text: str, window: str, echo: str,
) -> None:
    reply = await _ask(late, text)
    assert isinstance(reply, EmptyWindowReply), reply
    assert reply.window.name == window
    assert reply.latest is not None
    assert reply.latest.name == "2026-W34"
    shown = _drawn(reply)
    assert echo in shown
    assert "最后一次合并在 2026-08-22" in shown
    assert "prhub_open_window" in shown
    assert "2026-W34" in shown
    assert "本周期内没有合并的 PR" not in shown  # never an empty report


async def test_an_empty_window_in_english_for_an_english_sentence(late: Services) -> None:
    reply = await _ask(late, "weekly digest for last week")
    assert isinstance(reply, EmptyWindowReply)
    assert reply.language == "en"
    shown = _drawn(reply)
    assert "I read “last week” as 2026-W48" in shown
    assert "last merge on 2026-08-22" in shown


@pytest.mark.parametrize("text", ["第16周周报", "W16 周报", "16周的周报", "ｗ１６ 周报", "2026-W16 周报",
                                  "周报 2026w16"])
async def test_the_week_asked_for_is_the_week_answered(late: Services, text: str) -> None:
    reply = await _ask(late, text)
    assert isinstance(reply, DigestReply), reply
    assert reply.digest.window.name == "2026-W16"
    assert len(reply.digest.prs) == 39
    assert len(render_reply_slack(reply)) == 1  # one card: the rest when 完整报告 is pressed
    if "2026" not in text:
        assert reply.notes
        assert "2026-W16（04-13 – 04-19）" in reply.notes[0]


async def test_a_window_that_cannot_be_read_is_asked_back(late: Services) -> None:
    for text in ("第60周周报", "13月合并了哪些 PR", "W16 到 W18 的周报"):
        reply = await _ask(late, text)
        assert isinstance(reply, ClarifyReply), (text, reply)
        assert not is_public(reply)
        assert "可以这样写" in reply.text


async def test_the_label_view_defaults_to_the_latest_week_with_prs_and_takes_a_window(late: Services) -> None:
    recent = await _ask(late, "npu 标签最近有什么")  # issue 26: 最近 is the four weeks through the latest with PRs
    assert isinstance(recent, LabelReply)
    assert recent.digest.window.name == "2026-07-27..2026-08-23"
    assert recent.prs
    assert all("npu" in pr.labels for pr in recent.prs)
    assert "“最近”按有数据的最近四周算：2026-07-27 – 08-23" in recent.notes[0]
    latest = await _ask(late, "npu 标签")
    assert isinstance(latest, LabelReply)
    assert latest.digest.window.name == "2026-W34"
    assert "最近一个有合并 PR 的周 2026-W34" in latest.notes[0]
    w16 = await _ask(late, "npu 标签 W16")
    assert isinstance(w16, LabelReply)
    assert (w16.digest.window.name, len(w16.prs)) == ("2026-W16", 13)
    importance = [pr.analysis.importance for pr in w16.prs if pr.analysis]
    assert importance == sorted(importance, reverse=True)  # key PRs first


async def test_several_prs_are_compared(late: Services) -> None:
    for text in ("帮我看看 #6046 和 #6029 哪个更值得读", "对比 6046 6029", "compare #6046 vs #6029"):
        reply = await _ask(late, text)
        assert isinstance(reply, CompareReply), (text, reply)
        assert {pr.number for pr in reply.comparison.prs} == {6046, 6029}
        assert reply.comparison.first is not None
    shown = _drawn(await _ask(late, "帮我看看 #6046 和 #6029 哪个更值得读"))
    assert "先读" in shown
    assert "结论" in shown
    missing = await _ask(late, "#6046 和 #999999 哪个值得读")
    assert isinstance(missing, CompareReply)
    assert missing.comparison.missing == (999999,)
    assert "没有找到 #999999" in _drawn(missing)


async def test_what_a_pr_does_and_what_i_subscribed_to(late: Services) -> None:
    what = await _ask(late, "6046这个PR讲了什么")
    assert isinstance(what, PRReply)
    assert what.pr.number == 6046
    link = await _ask(late, "看下 https://github.com/verl-project/verl/pull/6046 这个 PR 做了啥")
    assert isinstance(link, PRReply)
    assert link.pr.number == 6046
    mine = await _ask(late, "我订阅了什么")
    assert isinstance(mine, SubscriptionsReply)
    assert not is_public(mine)


async def test_an_unknown_pr_is_told_in_the_asker_s_language_without_server_paths(late: Services) -> None:
    zh = await _ask(late, "PR #999999 值得读吗")
    assert isinstance(zh, ErrorReply)
    assert zh.message.startswith("没有找到 PR #999999：verl-project/verl")
    assert "owner/name#999999" in zh.message
    en = await _ask(late, "is PR #999999 worth reading?")
    assert isinstance(en, ErrorReply)
    assert en.message.startswith("PR #999999 not found: verl-project/verl")
    bare = await _ask(late, "PR 999999", EN)  # no sentence: the channel's language
    assert isinstance(bare, ErrorReply)
    assert bare.language == "en"


# -- language: the sentence's, else the channel's ----------------------------------------------------------


@pytest.mark.parametrize(("text", "where", "language"), [
    ("PR 6046", ZH, "zh"),
    ("label npu", ZH, "zh"),
    ("npu", ZH, "zh"),
    ("PR 6046", EN, "en"),
    ("label npu", EN, "en"),
    ("PR #6046 值得读吗", EN, "zh"),
    ("is PR 6046 worth reading?", ZH, "en"),
    ("W16 npu", ZH, "zh"),
    ("W16 npu", EN, "en"),
])
async def test_the_reply_language_is_the_sentence_s_else_the_channel_s(
    late: Services, text: str, where: Conversation, language: str,
) -> None:
    reply = await _ask(late, text, where)
    said = reply.pr.analysis and reply.language if isinstance(reply, PRReply) else (
        reply.digest.language if isinstance(reply, LabelReply) else getattr(reply, "language", None))
    assert said == language, (text, reply)


async def test_a_slash_command_with_only_a_label_keeps_the_channel_s_language(late: Services) -> None:
    reply = await late.core.answer(parse_command("subscribe npu"), ZH)
    assert isinstance(reply, SubscriptionReply)
    assert (reply.change, reply.language) == ("subscribed", "zh")
    assert not is_public(reply)
    again = await late.core.answer(parse_command("subscribe npu"), EN)
    assert isinstance(again, SubscriptionReply)
    assert again.language == "en"


# -- questions about the week ------------------------------------------------------------------------------


async def test_questions_are_answered_from_the_window_s_prs_with_citations(april: Services) -> None:
    config = await _ask(april, "哪些 PR 改了 rollout 的配置？")
    assert isinstance(config, AnswerReply)
    assert config.answer.digest.window.name == "2026-W16"  # no window named: last week, which has PRs
    assert config.answer.matches
    window = {pr.number for pr in config.answer.digest.prs}
    assert all(m.pr.number in window and m.evidence for m in config.answer.matches)
    async_ = await _ask(april, "which PRs touched fully_async last week?")
    assert isinstance(async_, AnswerReply)
    assert async_.answer.digest.language == "en"
    assert 6046 in {m.pr.number for m in async_.answer.matches}
    shown = _drawn(async_)
    assert "fully_async" in shown
    assert "I read “last week” as 2026-W16" in shown
    megatron = await _ask(april, "W16 有没有改 megatron 的 PR")
    assert isinstance(megatron, AnswerReply)
    assert megatron.answer.matches
    none = await _ask(april, "上周有没有改 tokenizer_zzz 的 PR")
    assert isinstance(none, AnswerReply)
    assert none.answer.none
    assert "没有与“tokenizer_zzz”相关的 PR" in _drawn(none)


async def test_what_merged_and_who_merged_the_most(april: Services) -> None:
    month = await _ask(april, "本月合并了哪些 PR")
    assert isinstance(month, MergedReply)
    assert month.digest.window.name == "2026-04-01..2026-04-30"
    assert "还没有结束" in " ".join(month.notes)  # the month is in progress: so far
    assert all(pr.merged_at.month == 4 for pr in month.digest.prs)
    who = await _ask(april, "上周谁贡献最多")
    assert isinstance(who, MergedReply)
    assert who.focus == "authors"
    counts: dict[str, int] = {}
    for pr in who.digest.prs:
        counts[pr.author] = counts.get(pr.author, 0) + 1
    top = max(counts.values())
    shown = _drawn(who)
    assert f"{top} 个 PR" in shown
    english = await _ask(april, "top contributors last week")
    assert isinstance(english, MergedReply)
    assert english.digest.language == "en"


async def test_what_is_not_understood_gets_the_nearest_examples_privately(late: Services) -> None:
    reply = await _ask(late, "今天天气怎么样")
    assert isinstance(reply, HelpReply)
    assert reply.examples
    assert not is_public(reply)
    full = await _ask(late, "help")
    assert isinstance(full, HelpReply)
    assert not full.examples
    assert full.language == "zh"


async def test_a_channel_may_ask_for_the_whole_digest_at_once(verl_settings: Settings) -> None:
    settings = _settings(verl_settings).model_copy(update={
        "channels": {"slack:C0ALL": ChannelConfig(full_digest=True)}})
    async with redis_store() as store:
        services = build_services(settings, store, clock=lambda: LATE)
        reply = await services.core.answer(parse_intent("W16 周报"), Conversation("slack", "C0ALL", "U1"))
        assert isinstance(reply, DigestReply)
        assert reply.whole
        assert len(render_reply_slack(reply)) > 1
        await services.aclose()


# -- the model behind the rules ------------------------------------------------------------------------------


def _scripted(request: RecordedRequest) -> Reply:
    """Intent readings, answer phrasings that cite a PR outside the window, analyses otherwise."""
    text = request.text
    if "Matching pull requests" in text:
        return Reply(content=json.dumps({"claims": [
            {"text": "#6046 keeps the routed experts of every iteration.", "prs": [6046]},
            {"text": "#5000 also rewrote the rollout config.", "prs": [5000]},  # not of this window
            {"text": "Nobody knows.", "prs": []},
        ]}))
    if '"intent"' in text and "zorp" in text:
        return Reply(content=json.dumps({"intent": "merged", "window": "last", "numbers": [], "terms": []}))
    return default_reply(request)


async def test_the_model_reads_what_the_rules_missed_and_cites_only_prs_of_the_window(
    verl_settings: Settings,
) -> None:
    with FakeLLMServer(responder=_scripted) as fake:
        settings = llm_settings(_settings(verl_settings), fake.base_url)
        async with redis_store() as store:
            services = build_services(settings, store, clock=lambda: APRIL)
            answer = await services.core.answer(parse_intent("which PRs touched fully_async last week?"), EN)
            assert isinstance(answer, AnswerReply)
            assert answer.phrasing is not None
            assert [c.prs for c in answer.phrasing.claims] == [(6046,)]
            assert answer.phrasing.dropped == 2  # the claim citing #5000 (outside W16) and the one citing none
            assert "#5000" not in _drawn(answer)
            read = await services.core.answer(parse_intent("zorp zorp the blorps"), EN)
            assert isinstance(read, MergedReply)  # the model mapped it to "what merged last week"
            assert read.digest.window.name == "2026-W16"
            await services.aclose()
