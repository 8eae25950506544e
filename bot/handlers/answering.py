"""Answering one chat delivery: which intents are slow to answer, and answering a delivery once (claimed,
answered, released for the platform's retry when the answer fails), used by the Slack and Feishu doors."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.claims import Claims
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

__all__ = ["ANSWER_FAILURES", "SLOW_INTENTS", "answer_failed", "answer_once", "is_slow"]

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
    if tell is None or isinstance(exc, DeliveryError):
        return
    try:
        await tell()
    except ANSWER_FAILURES as again:
        log.warning("%s: could not tell the person either (%s)", what, again)


async def answer_once(claims: Claims, keys: list[str], answer: Callable[[], Awaitable[object]], *, what: str,
                      tell: Callable[[], Awaitable[object]] | None = None, deadline_s: float | None = None) -> bool:
    """Answer one chat delivery once, in two steps: claim its "seen" ``keys``
    (:meth:`~bot.claims.Claims.first_delivery`), run ``answer``, then mark them answered. When the
    answer fails (the platform refused it, a deadline passed, a bug) the claims are released, so the
    platform's retry is served, the reason is logged in one line naming ``what`` (the event or message
    id), and — unless the failure was the delivery itself — ``tell`` gives the person one line.

    Returns:
        Whether this call answered (``False``: a redelivery already claimed, or the answer failed).
    """
    if not await claims.first_delivery(*keys):
        log.info("%s: already answered (a redelivery)", what)
        return False
    started = asyncio.get_running_loop().time()
    log.info("%s: answering", what)
    try:
        await asyncio.wait_for(answer(), deadline_s)
    except ANSWER_FAILURES as exc:
        await asyncio.shield(claims.release(*keys))
        await answer_failed(exc, what=f"{what} (released for the platform's retry)", tell=tell)
        return False
    except BaseException:
        await asyncio.shield(claims.release(*keys))
        log.exception("%s: the answer failed; released for the platform's retry", what)
        raise
    await claims.answered(*keys)
    log.info("%s: answered in %.1f s", what, asyncio.get_running_loop().time() - started)
    return True
