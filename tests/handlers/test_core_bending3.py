"""Issue 26, third round, through the chat core with the real sources and a real Redis: words written apart are
joined as the data writes them, a near miss of a login subscribes to that author, a short near miss of a label
held is removed, a folder named after 取消订阅 is no repository, and "that week" in a thread is its window."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from conftest import REPO, ROOT
from redis_support import redis_store

from bot.app import Services, build_services
from bot.config import Settings
from bot.filters import parse_filter
from bot.handlers.core import Conversation
from bot.handlers.intents import parse_intent
from bot.replies import AnswerReply, MergedReply, SubscriptionReply
from bot.subscriptions import Subscriber
from bot.understand import ClarifyIntent, PRIntent, QuestionIntent

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


def _in(channel: str, thread: str | None = None) -> Conversation:
    return Conversation("slack", channel, "U0BEND3", thread=thread)


async def test_words_written_apart_are_the_data_s_identifier_and_a_label_scopes_the_question(
        services: Services) -> None:
    where = _in("D0JOIN")
    read = await services.core.conversations.resolve(parse_intent("最近 fully async 的pr里 有哪些是修bug的"), where)
    assert isinstance(read, QuestionIntent)
    assert read.label == "fully_async"
    assert not {"fully", "async"} & set(read.terms)
    apart = await services.core.conversations.resolve(parse_intent("routed experts 相关的pr有哪些"), where)
    assert isinstance(apart, QuestionIntent)
    assert apart.terms == ("routed_experts",) or "routed experts" in apart.terms
    both = await services.core.conversations.resolve(parse_intent("哪些pr动了 vllm rollout 上周"), where)
    assert isinstance(both, QuestionIntent)
    assert {"vllm", "rollout"} <= set(both.terms)  # two labels stay two words
    answer = await services.core.answer(parse_intent("最近 fully async 的pr里 有哪些是修bug的"), where)
    assert isinstance(answer, AnswerReply)


async def test_the_repository_s_own_name_is_no_search_word_beside_others(services: Services) -> None:
    where = _in("D0OWN")
    read = await services.core.conversations.resolve(parse_intent("哪个 PR 把 verl 的 rollout 默认配置改了"), where)
    assert isinstance(read, QuestionIntent)
    assert "verl" not in read.terms
    assert read.terms
    alone = await services.core.conversations.resolve(parse_intent("最近有哪些 PR 提到 verl"), where)
    assert not isinstance(alone, QuestionIntent) or alone.terms == ("verl",)  # alone, it is what was asked


async def test_one_pr_named_by_its_words_is_that_pr_or_asked_which(services: Services) -> None:
    where = _in("D0ONE")
    one = await services.core.conversations.resolve(parse_intent("上周那个 fp8 padding 的 PR 讲了啥"), where)
    assert isinstance(one, PRIntent)
    assert (one.number, one.question) == (5989, "what")
    which = await services.core.conversations.resolve(parse_intent("帮我看看那个 fully async 的 PR"), where)
    assert isinstance(which, ClarifyIntent)
    assert which.problem == "which_pr"
    many = await services.core.conversations.resolve(parse_intent("那个 fully async 的 PR 都有哪些"), where)
    assert not isinstance(many, PRIntent | ClarifyIntent)  # several asked for: the search


async def test_a_near_miss_of_a_login_and_of_a_label_held(services: Services) -> None:
    who = Subscriber("slack", "D0NEAR")
    where = _in("D0NEAR")
    reply = await services.core.answer(parse_intent("关注一下 contributer-045 的pr"), where)
    assert isinstance(reply, SubscriptionReply)
    assert reply.change == "subscribed", reply
    assert "contributer-045" in reply.message  # the correction is said
    assert "author:contributor-045" in reply.message
    assert [s.filter.text() for s in await services.subscriptions.of(who)] == ["author:contributor-045"]
    await services.subscriptions.add(who, REPO, parse_filter("label:vllm label:fsdp"))
    gone = await services.core.answer(parse_intent("unsub vlm"), where)
    assert isinstance(gone, SubscriptionReply)
    assert gone.change == "unsubscribed", gone
    assert sorted(s.filter.text() for s in await services.subscriptions.of(who)) == [
        "author:contributor-045", "label:fsdp"]


async def test_a_folder_after_an_unsubscribe_verb_is_no_repository(services: Services) -> None:
    who = Subscriber("slack", "D0PATH")
    await services.subscriptions.add(who, REPO, parse_filter("path:docker/ascend/**"))
    await services.subscriptions.add(who, REPO, parse_filter("label:ci"))
    reply = await services.core.answer(parse_intent("取消訂閱 docker/ascend 那個"), _in("D0PATH"))
    assert isinstance(reply, SubscriptionReply)
    assert reply.change == "unsubscribed", reply
    assert [s.filter.text() for s in await services.subscriptions.of(who)] == ["label:ci"]


async def test_that_week_in_a_thread_is_the_thread_s_window_even_the_default_one(services: Services) -> None:
    where = _in("C0THAT", thread="T1")
    await services.core.answer(parse_intent("weekly digest pls"), where)
    merged = await services.core.answer(parse_intent("just the list of merged prs for that week"), where)
    assert isinstance(merged, MergedReply), merged
    assert merged.digest.window.name == "2026-W16"
