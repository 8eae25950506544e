"""One LLM digest run for a one-shot caller (the CLI): open the cache, build, close.

The bot's long-running process keeps its store and runtime instead; this is the
short path for ``prhub digest`` with ``PRHUB_LLM_MODEL`` set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from bot.config import Settings
from bot.digest.llm import llm_runtime
from bot.digest.service import Progress, analyze_pr_async, build_digest_async
from bot.models import Digest, DigestPR, Language, LLMUsage, PullRequest, Window
from bot.store import open_store


async def llm_digest(
    prs: Sequence[PullRequest], *, repo: str, window: Window, settings: Settings, warn: Callable[[str], None],
    language: Language | None = None, now: datetime | None = None, progress: Progress | None = None,
) -> Digest:
    """The digest with LLM analyses and narrative, cached in Redis when it answers.

    Args:
        prs, repo, window, settings, language, now, progress: as for
            :func:`bot.digest.service.build_digest`; ``settings.llm_model`` must be set.
        warn: shows one line to the person (Redis unreachable: the run continues
            with an in-process cache).

    Returns:
        The digest; ``Digest.usage`` holds calls, cache hits, tokens and cost.

    Raises:
        LLMStopError: credentials refused or quota spent.
    """
    store = await open_store(settings.redis_url, warn=warn)
    try:
        runtime = llm_runtime(settings, store)
        return await build_digest_async(
            prs, repo=repo, window=window, settings=settings, language=language, analyzer=runtime.analyzer,
            narrator=runtime.narrator, meter=runtime.meter, now=now, progress=progress,
        )
    finally:
        await store.close()


async def llm_pr(
    pr: PullRequest, *, settings: Settings, warn: Callable[[str], None], language: Language | None = None,
    window_prs: Sequence[PullRequest] = (),
) -> tuple[DigestPR, LLMUsage]:
    """One PR's LLM analysis for ``prhub pr N``: from the cache when the digest (or an
    earlier question) already analysed it, else one model call.

    Args:
        pr, settings, language, window_prs: as for :func:`bot.digest.service.analyze_pr`.
        warn: shows one line to the person (Redis unreachable).

    Returns:
        The PR as a digest shows it, and the run's usage (calls, cache hits, tokens, cost).

    Raises:
        LLMStopError: credentials refused or quota spent.
    """
    store = await open_store(settings.redis_url, warn=warn)
    try:
        runtime = llm_runtime(settings, store)
        item = await analyze_pr_async(pr, settings=settings, analyzer=runtime.analyzer, language=language,
                                      window_prs=window_prs)
        return item, runtime.meter.snapshot()
    finally:
        await store.close()
