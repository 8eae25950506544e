"""A refused key or a spent quota stops the model for a while, not for the bot's lifetime; meanwhile the
chat core answers with the heuristic analyzer instead of an error."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import EXAMPLE
from fakes.llm_server import FakeLLMServer, default_reply, quota_exceeded, unauthorized
from llm_support import FAKE_MODEL, llm_settings

from bot.app import build_services
from bot.config import Settings
from bot.digest.llm.client import LLMClient
from bot.errors import LLMAuthError
from bot.handlers.core import Conversation
from bot.handlers.intents import DigestIntent
from bot.replies import DigestReply
from bot.store import MemoryStore

MESSAGES = [{"role": "user", "content": "Pull request: o/r#1\nsay hi"}]


async def test_stop_expires_and_the_provider_is_asked_again() -> None:
    with FakeLLMServer() as fake:
        fake.responder = lambda request: unauthorized()
        client = LLMClient(model=FAKE_MODEL, api_base=fake.base_url, api_key="k", timeout_s=5, max_retries=0)
        now = [100.0]
        client._clock = lambda: now[0]
        with pytest.raises(LLMAuthError):
            await client.complete(MESSAGES, max_tokens=50)
        with pytest.raises(LLMAuthError):  # within the stop: no request
            await client.complete(MESSAGES, max_tokens=50)
        assert len(fake.requests) == 1
        fake.responder = default_reply
        now[0] += client.stop_for_s + 1
        reply = await client.complete(MESSAGES, max_tokens=50)
        assert reply.text
        assert len(fake.requests) == 2


async def test_core_answers_with_the_heuristic_while_the_quota_is_spent(verl_settings: Settings) -> None:
    with FakeLLMServer() as fake:
        fake.responder = lambda request: quota_exceeded()
        settings = llm_settings(verl_settings, fake.base_url).model_copy(
            update={"default_source": f"jsonl:{EXAMPLE}", "default_repo": "verl-project/verl"})
        core = build_services(settings, MemoryStore(), clock=lambda: datetime(2026, 4, 21, tzinfo=UTC)).core
        reply = await core.answer(DigestIntent(week="2026-W16", language="zh"),
                                  Conversation(platform="slack", channel="C1", user="U1"))
        assert isinstance(reply, DigestReply)
        assert reply.digest.stats.pr_count == 39
        assert {p.analysis.status for p in reply.digest.prs if p.analysis} == {"heuristic"}
        # and says so: every analysis names the reason, so the card's analysis line counts them as fallbacks
        assert all(p.analysis is not None and "quota" in (p.analysis.fallback_reason or "")
                   for p in reply.digest.prs)
        from bot.cards.i18n import analysis_line

        assert "39 个为模型失败后的启发式回退" in analysis_line(reply.digest)
