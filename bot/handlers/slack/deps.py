"""What the Slack listeners share: the chat core, the claims and the Slack deliverer (all from :mod:`bot.app`)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.claims import Claims
from bot.delivery.slack import SlackDeliverer
from bot.handlers.core import Core


@dataclass(frozen=True, slots=True)
class SlackDeps:
    core: Core
    claims: Claims
    deliverer: SlackDeliverer
