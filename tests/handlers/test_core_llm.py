"""The chat bots' shared core uses the LLM analyzer and its cache when a model is configured."""

from __future__ import annotations

from datetime import UTC, datetime

from conftest import EXAMPLE
from fakes.llm_server import FakeLLMServer
from llm_support import llm_settings
from redis_support import redis_store

from bot.app import build_services
from bot.config import Settings
from bot.handlers.core import Conversation
from bot.handlers.intents import DigestIntent, PRIntent
from bot.replies import DigestReply, PRReply

NOW = datetime(2026, 4, 20, 2, 0, tzinfo=UTC)
HERE = Conversation(platform="slack", channel="C1", user="U1")


async def test_core_answers_with_the_llm_and_reuses_the_cache(verl_settings: Settings) -> None:
    with FakeLLMServer() as fake:
        settings = llm_settings(verl_settings, fake.base_url).model_copy(
            update={"default_source": f"jsonl:{EXAMPLE}", "default_repo": "verl-project/verl"})
        async with redis_store() as store:
            core = build_services(settings, store, clock=lambda: NOW).core
            reply = await core.answer(PRIntent(number=6046, language="zh"), HERE)
            assert isinstance(reply, PRReply)
            assert reply.pr.analysis is not None
            assert reply.pr.analysis.status == "llm"
            assert len(fake.pr_requests()) == 1
            digest = await core.answer(DigestIntent(week="2026-W16", language="zh"), HERE)
            assert isinstance(digest, DigestReply)
            assert digest.digest.narrative_source == "llm"
            assert all(p.analysis is not None and p.analysis.status == "llm" for p in digest.digest.prs)
            assert len(fake.pr_requests()) == 39  # #6046 came from the cache
            again = await core.answer(PRIntent(number=6046, language="zh"), HERE)
            assert isinstance(again, PRReply)
            assert len(fake.pr_requests()) == 39
