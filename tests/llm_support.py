"""Helpers shared by the LLM tests: settings pointing at the fake server, a Redis store under a
unique key prefix (removed afterwards), and one call that builds the verl 2026-W16 digest."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from bot.config import Settings
from bot.digest.llm import LLMAnalyzer, LLMClient, Narrator
from bot.digest.llm.prompts import Prompt
from bot.digest.service import build_digest_async
from bot.digest.usage import UsageMeter
from bot.models import Digest, PullRequest, Window
from bot.store import Store

FAKE_MODEL = "openai/fake-model"


def llm_settings(base: Settings, api_base: str, **changes: Any) -> Settings:
    """``base`` with the fake LLM configured (short timeout, fast retries)."""
    values: dict[str, Any] = {"llm_model": FAKE_MODEL, "llm_api_base": api_base,
                              "llm_api_key": SecretStr("test-key"), "llm_timeout_s": 2.0, "llm_max_retries": 2,
                              "llm_concurrency": 8}
    values.update(changes)
    return base.model_copy(update=values)


async def llm_build(
    prs: list[PullRequest], *, window: Window, settings: Settings, store: Store, repo: str = "verl-project/verl",
    prompt: Prompt | None = None, narrate: bool = True,
) -> tuple[Digest, UsageMeter]:
    """The digest with a fresh LLM client, analyzer and narrator on ``store``."""
    meter = UsageMeter()
    client = LLMClient.from_settings(settings, meter)
    analyzer = LLMAnalyzer(client=client, store=store, ttl_s=settings.cache_ttl_s,
                           context_default=settings.llm_context_default, prompt=prompt)
    narrator = Narrator(client=client, store=store, ttl_s=settings.cache_ttl_s) if narrate else None
    digest = await build_digest_async(prs, repo=repo, window=window, settings=settings, analyzer=analyzer,
                                      narrator=narrator, meter=meter)
    return digest, meter
