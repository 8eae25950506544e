"""What the Slack listeners share: the core, the exactly-once guard and the poster."""

from __future__ import annotations

from dataclasses import dataclass

from bot.handlers.core import Core
from bot.handlers.slack.dedup import Dedup
from bot.handlers.slack.delivery import Delivery


@dataclass(frozen=True, slots=True)
class SlackDeps:
    core: Core
    dedup: Dedup
    delivery: Delivery


def full_report_key(channel: str, root_ts: str, window: str) -> str:
    """The once-key of "the full report of ``window`` is in the thread ``root_ts`` of ``channel``"."""
    return f"full:{channel}:{root_ts}:{window}"
