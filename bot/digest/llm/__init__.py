"""LLM analysis through litellm: the per-PR analyzer, the digest narrative and their client.

The digest core imports this package only when ``PRHUB_LLM_MODEL`` is set, and
litellm itself (a few seconds) is imported only when a request is about to be built
(:mod:`bot.digest.llm._litellm`): a run answered from the cache never loads it.
:func:`llm_runtime` builds the three
parts from the settings around one shared :class:`~bot.digest.usage.UsageMeter`.

Modules: ``client`` (the one call, timeouts, retries, error mapping), ``prompts``
(templates), ``excerpts`` (diff token budget), ``reply`` (JSON extraction,
validation, re-ask), ``analyzer`` (per PR, merge with the facts, cache),
``evidence`` (how far the model may move the scores: the evidence it cites,
checked against the diff; instructions in PR text), ``diffscan`` (changed lines
split into code and prose), ``narrative`` (the digest's words).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config import Settings
from bot.digest.llm.analyzer import LLMAnalyzer
from bot.digest.llm.client import LLMClient
from bot.digest.llm.narrative import Narrator
from bot.digest.usage import UsageMeter
from bot.store import Store

__all__ = ["LLMAnalyzer", "LLMClient", "LLMRuntime", "Narrator", "llm_runtime"]


@dataclass(frozen=True)
class LLMRuntime:
    """The analyzer and narrator of one run, sharing a client and its usage meter."""

    client: LLMClient
    analyzer: LLMAnalyzer
    narrator: Narrator

    @property
    def meter(self) -> UsageMeter:
        """The run's usage counts."""
        return self.client.meter

    async def sending(self) -> None:
        """Return once the client's first request has left (:meth:`LLMClient.sending`)."""
        await self.client.sending()


def llm_runtime(settings: Settings, store: Store) -> LLMRuntime:
    """The LLM parts ``PRHUB_LLM_*`` describe, caching in ``store``.

    Raises:
        ValueError: no model configured.
    """
    client = LLMClient.from_settings(settings)
    return LLMRuntime(
        client=client,
        analyzer=LLMAnalyzer(client=client, store=store, ttl_s=settings.cache_ttl_s,
                             context_default=settings.llm_context_default),
        narrator=Narrator(client=client, store=store, ttl_s=settings.cache_ttl_s),
    )
