"""Answering one chat delivery: which intents are slow to answer, and answering a delivery once (claimed,
answered, released for the platform's retry when the answer fails), used by the Slack and Feishu doors."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot import metrics
from bot.claims import Claims
from bot.deadline import WorkDeadline
from bot.errors import DeliveryError, PrhubError
from bot.handlers.intents import (
    CompareIntent,
    DigestIntent,
    FollowUpIntent,
    Intent,
    LabelIntent,
    MergedIntent,
    PersonalDigestIntent,
    PRIntent,
    QuestionIntent,
)

__all__ = ["ANSWER_FAILURES", "RETRY_BACKOFF_S", "SLOW_INTENTS", "answer_failed", "answer_once", "is_slow"]

log = logging.getLogger(__name__)

SLOW_INTENTS = (DigestIntent, PRIntent, LabelIntent, CompareIntent, MergedIntent, QuestionIntent, FollowUpIntent)
"""Intents whose answer reads a source and analyses PRs (show "生成中…" first)."""


def is_slow(intent: Intent) -> bool:
    """Whether answering ``intent`` reads a source and analyses PRs (``我的周报`` too)."""
    return isinstance(intent, SLOW_INTENTS) or (isinstance(intent, PersonalDigestIntent) and intent.action == "show")


ANSWER_FAILURES = (PrhubError, TimeoutError, OSError)
"""What a failed answer raises: a refusal or outage of the platform or the store, a deadline, the network."""


async def answer_failed(exc: BaseException, *, what: str, tell: Callable[[], Awaitable[object]] | None) -> None:
    """Log a failed answer in one line naming ``what``; unless the delivery itself failed, ``tell`` the person."""
    reason = str(exc).splitlines()[0] if str(exc) else ""
    log.warning("%s: the answer failed (%s: %s)", what, type(exc).__name__, reason)
    metrics.FAILURES.labels(metrics.failure_kind(exc)).inc()
    if tell is None or isinstance(exc, DeliveryError):
        return
    try:
        await tell()
    except ANSWER_FAILURES as again:
        log.warning("%s: could not tell the person either (%s)", what, again)


RETRY_BACKOFF_S = 1.0
"""The first wait before an answer is tried again (doubled for each further try)."""


async def answer_once(claims: Claims, keys: list[str], answer: Callable[[], Awaitable[object]], *, what: str,
                      tell: Callable[[], Awaitable[object]] | None = None, deadline_s: float | None = None,
                      attempts: int = 1, backoff_s: float = RETRY_BACKOFF_S) -> bool:
    """Answer one chat delivery once: claim its "seen" ``keys`` in one atomic step
    (:meth:`~bot.claims.Claims.first_delivery`), run ``answer``, then mark them answered.

    ``deadline_s`` bounds the work of one try, not the waits for the platform's pacing
    (:class:`~bot.deadline.WorkDeadline`). The event was acknowledged already, so the platform
    will not deliver it again: a try that fails (the platform refused, a deadline passed, the network)
    is tried again by the bot itself, ``attempts`` times in all, after ``backoff_s``, then twice that, ….
    When the last try fails the claims are released (a redelivery, should one come, is served), the
    reason is logged in one line naming ``what`` (the event or message id), and — unless the failure
    was the delivery itself — ``tell`` gives the person one line.

    Returns:
        Whether this call answered (``False``: a redelivery already claimed, or every try failed).
    """
    if not await claims.first_delivery(*keys):
        log.info("%s: already answered (a redelivery)", what)
        return False
    loop = asyncio.get_running_loop()
    started = loop.time()
    log.info("%s: answering", what)
    waited = 0.0
    for attempt in range(1, attempts + 1):
        try:
            async with WorkDeadline(deadline_s) as deadline:
                await answer()
        except ANSWER_FAILURES as exc:
            if attempt < attempts:
                pause = backoff_s * 2 ** (attempt - 1)
                log.warning("%s: try %d of %d failed (%s: %s); trying again in %.0f s", what, attempt, attempts,
                            type(exc).__name__, _first_line(exc), pause)
                await asyncio.sleep(pause)
                continue
            await asyncio.shield(claims.release(*keys))
            await answer_failed(exc, what=f"{what} (after {attempts} tries)", tell=tell)
            return False
        except BaseException:
            await asyncio.shield(claims.release(*keys))
            log.exception("%s: the answer failed; its claim released", what)
            raise
        waited = deadline.waited_s
        break
    await claims.answered(*keys)
    log.info("%s: answered in %.1f s (%.1f s of it in the platform's pacing)", what, loop.time() - started, waited)
    return True


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else ""
