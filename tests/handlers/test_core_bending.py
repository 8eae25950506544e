"""Issue 26, second round, through :meth:`bot.handlers.core.Core.answer` with the real sources and a real Redis:
a request in a thread takes the thread's window and PR, but a new thread starts afresh; a label view of a word
that is no label answers the search for it; subscriptions change by part; a complaint gets an apology; a
traditional-Chinese or homophone-typed request is read as its simplified form."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import REPO, ROOT
from redis_support import redis_store

from bot.app import Services, build_services
from bot.config import Settings
from bot.filters import parse_filter
from bot.handlers.core import Conversation
from bot.handlers.intents import parse_intent
from bot.replies import (
    AnswerReply,
    CompareReply,
    LabelReply,
    MergedReply,
    NoteReply,
    PRReply,
    SubscriptionReply,
)
from bot.subscriptions import Subscriber

DATA = ROOT / "tests" / "data" / "verl-prs-with-patches.jsonl.gz"
TODAY = datetime(2026, 4, 20, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))


@pytest.fixture
async def services(verl_settings: Settings) -> AsyncIterator[Services]:
    settings = verl_settings.model_copy(update={"default_source": f"jsonl:{DATA}", "default_repo": REPO,
                                                "language": "zh", "channels": {}})
    async with redis_store() as store:
        made = build_services(settings, store, clock=lambda: TODAY)
        yield made
        await made.aclose()


def _in(thread: str | None, channel: str = "D0BEND") -> Conversation:
    return Conversation("slack", channel, "U0BEND", thread=thread)


async def _ask(services: Services, text: str, where: Conversation) -> Any:
    return await services.core.answer(parse_intent(text), where)


async def test_a_request_in_a_thread_takes_the_thread_s_window_and_a_new_thread_does_not(services: Services) -> None:
    first = await _ask(services, "W15 合了哪些 PR", _in("T1"))
    assert isinstance(first, MergedReply)
    ranked = await _ask(services, "那這些是誰提的最多", _in("T1"))  # traditional characters, the thread's window
    assert isinstance(ranked, MergedReply)
    assert ranked.focus == "authors"
    assert ranked.digest.window.name == "2026-W15"
    fresh = await _ask(services, "谁提的 PR 最多", _in("T2"))  # a new thread: the default window
    assert isinstance(fresh, MergedReply)
    assert fresh.digest.window.name == "2026-W16"


async def test_after_a_pr_a_question_about_it_and_a_difference_with_another(services: Services) -> None:
    assert isinstance(await _ask(services, "#6053 是干嘛的", _in("T3")), PRReply)
    risks = await _ask(services, "明白了。如果我们把这个改动合进内部分支，有没有什么潜在风险需要留意？", _in("T3"))
    assert isinstance(risks, PRReply)
    assert risks.pr.number == 6053
    compared = await _ask(services, "What are the difference with #6046?", _in("T3"))
    assert isinstance(compared, CompareReply)
    assert {pr.number for pr in compared.comparison.prs} == {6053, 6046}


async def test_a_label_view_of_a_word_that_is_no_label_is_its_search(services: Services) -> None:
    found = await _ask(services, "fp8 stuff in wk16?", _in(None))
    assert isinstance(found, AnswerReply), found
    scoped = await _ask(services, "npu 这块上周进展怎么样", _in(None))
    assert isinstance(scoped, LabelReply)
    assert scoped.label == "npu"
    assert scoped.prs


async def test_subscriptions_change_by_part_from_the_cues_around_each_value(services: Services) -> None:
    who = Subscriber("slack", "D0SUBS")
    where = _in(None, "D0SUBS")
    await services.subscriptions.add(who, REPO, parse_filter("label:npu label:rollout label:megatron"))
    reply = await _ask(services, "rollout 和 megatron 先都停掉 只看 npu", where)
    assert isinstance(reply, SubscriptionReply)
    assert reply.change == "unsubscribed", reply
    assert "之前" in reply.message
    assert "现在" in reply.message
    assert [s.filter.text() for s in await services.subscriptions.of(who)] == ["label:npu"]
    widened = await _ask(services, "再加个 vllm", where)
    assert isinstance(widened, SubscriptionReply)
    assert widened.change == "subscribed", widened
    assert [sorted(t.value for t in s.filter.include) for s in await services.subscriptions.of(who)] == [
        ["npu", "vllm"]]
    gone = await _ask(services, "取消定阅 vllm", where)  # a homophone of 订阅
    assert isinstance(gone, SubscriptionReply)
    assert gone.change == "unsubscribed"
    assert [s.filter.text() for s in await services.subscriptions.of(who)] == ["label:npu"]


async def test_a_complaint_gets_an_apology_and_a_remark_to_colleagues_no_answer(services: Services) -> None:
    sorry = await _ask(services, "bot 你这回复也太慢了吧", _in(None))
    assert isinstance(sorry, NoteReply)
    assert "抱歉" in sorry.text
    remark = parse_intent("各位，上周的周报我已经转到部门群里了，大家有空可以重点看看 npu 那几个改动")
    assert type(remark).__name__ == "HelpIntent"
    assert not remark.asked
