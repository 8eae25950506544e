"""The platform-neutral core of the chat bots: an :class:`~bot.handlers.intents.Intent` in, a reply out.

Slack (``bot/handlers/slack/``) and Feishu call :meth:`Core.answer` with what a
person asked and where (:class:`Conversation`), and draw the :mod:`bot.replies` reply
it returns with the renderers of :mod:`bot.cards.chat`. Nothing here knows a platform.

What it uses, all built once by :mod:`bot.app` and shared with the scheduler:

- :class:`~bot.channels.Channels` — the channel's repository, source and language (what the
  message names wins), and the opened sources;
- :class:`~bot.digest.service.DigestService` — digests and PR analyses (LLM or heuristic; the
  fallback when the model is unusable is decided there);
- :class:`~bot.subscriptions.Subscriptions` — the label subscriptions (one record each).

Sources are synchronous (file, git or HTTP reads), so they are read in a worker thread; the
service keeps CPU work off the event loop too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.channels import Channels
from bot.config import Settings
from bot.digest.service import DigestService
from bot.digest.window import date_window, named_window, week_window, zone
from bot.errors import PrhubError, PRNotFoundError
from bot.handlers.intents import (
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    ListSubscriptionsIntent,
    PRIntent,
    SubscribeIntent,
    UnsubscribeIntent,
)
from bot.models import Digest, Language, PullRequest
from bot.replies import (
    DigestReply,
    ErrorReply,
    HelpReply,
    LabelReply,
    PRReply,
    Reply,
    SubscriptionChange,
    SubscriptionReply,
    SubscriptionsReply,
)
from bot.sources.base import PRSource
from bot.subscriptions import KNOWN_LABEL_WEEKS, Subscriber, Subscription, Subscriptions, known_labels

__all__ = ["SLOW_INTENTS", "Conversation", "Core", "is_slow"]

SLOW_INTENTS = (DigestIntent, PRIntent, LabelIntent)
"""Intents whose answer reads a source and analyses PRs (show "生成中…" first)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """Where a request was made: ``platform`` (``slack``, ``feishu``), the ``channel`` id
    (a channel or a direct-message conversation) and the asking ``user`` id."""

    platform: str
    channel: str
    user: str

    @property
    def key(self) -> str:
        """``platform:channel``, the key of the channel's binding in the config file."""
        return f"{self.platform}:{self.channel}"

    @property
    def subscriber(self) -> Subscriber:
        """Who the conversation's subscriptions alert: the conversation itself."""
        return Subscriber(self.platform, self.channel)


class Core:
    """Answers intents for every chat platform.

    Args:
        settings: configuration (repositories, time zone, language).
        channels: channel bindings and sources.
        digests: the digest service.
        subscriptions: where subscriptions live.
        clock: the current instant (aware); tests pin it.
    """

    def __init__(self, *, settings: Settings, channels: Channels, digests: DigestService,
                 subscriptions: Subscriptions, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.settings = settings
        self.channels = channels
        self.digests = digests
        self._subscriptions = subscriptions
        self._clock = clock

    def language(self, intent: Intent | None, conversation: Conversation) -> Language:
        """The reply language: the message's, else the channel's, else the configured default."""
        lang = intent.language if intent is not None else None
        return lang or self.channels.binding(conversation.key).language or self.settings.language

    async def answer(self, intent: Intent, conversation: Conversation) -> Reply:
        """The reply to ``intent`` asked in ``conversation``.

        Never raises a :class:`~bot.errors.PrhubError`: those become an :class:`~bot.replies.ErrorReply`
        (unknown repository, PR not in the source, bad week, unreadable source, no repository bound
        to the channel). Store failures (Redis down) propagate.
        """
        lang = self.language(intent, conversation)
        try:
            match intent:
                case DigestIntent():
                    return DigestReply(await self.digest(intent.repo, intent.week, conversation, lang))
                case PRIntent():
                    return await self._pr(intent, conversation, lang)
                case LabelIntent():
                    return await self._label(intent, conversation, lang)
                case SubscribeIntent() | UnsubscribeIntent():
                    return await self._change_subscription(intent, conversation, lang)
                case ListSubscriptionsIntent():
                    return SubscriptionsReply(await self.subscriptions(conversation), lang)
                case HelpIntent():
                    return HelpReply(lang, self.channels.binding(conversation.key).repo)
        except PrhubError as exc:
            return ErrorReply(str(exc), lang)

    # -- digests and PRs ------------------------------------------------------------------------

    async def digest(
        self, repo: str | None, week: str | None, conversation: Conversation, language: Language, *,
        compare: bool = True,
    ) -> Digest:
        """The digest of ``repo`` (default: the channel's) for ``week`` (``this``, ``last``,
        ``YYYY-Www``; ``None`` = the last complete week), or for a window named as
        :attr:`~bot.models.Window.name` (``2026-04-13..2026-04-19``, from a card's button); with
        ``compare``, against the windows before it (week over week, no LLM call:
        :meth:`~bot.digest.service.DigestService.look_back`).

        Raises:
            PrhubError: no repository bound, unknown repository, bad week, unreadable source.
        """
        source, name = self.channels.resolve(conversation.key, repo)
        window = named_window(week, tz=self.settings.timezone, now=self._clock())
        prs = await asyncio.to_thread(source.merged_prs, name, window)
        earlier = await self.digests.look_back(source, name, window, language=language) if compare else None
        return await self.digests.digest(prs, repo=name, window=window, language=language, now=self._clock(),
                                         lookback=earlier.lookback if earlier else None,
                                         known=earlier.known if earlier else None)

    async def _pr(self, intent: PRIntent, conversation: Conversation, lang: Language) -> PRReply:
        source, name = self.channels.resolve(conversation.key, intent.repo)
        found = await asyncio.to_thread(_pull_request, source, name, intent.number)
        day = found.merged_at.astimezone(zone(self.settings.timezone)).date().isocalendar()
        week = await asyncio.to_thread(
            source.merged_prs, found.repo, week_window(day.year, day.week, self.settings.timezone)
        )
        item = await self.digests.pr(found, language=lang, window_prs=week)
        return PRReply(item, name, lang, self.settings.timezone)

    async def _label(self, intent: LabelIntent, conversation: Conversation, lang: Language) -> LabelReply:
        digest = await self.digest(intent.repo, None, conversation, lang, compare=False)
        label = self._canonical_label(digest.repo, intent.label)
        numbers = next((g.pr_numbers for g in digest.label_view if g.label.lower() == label), ())
        return LabelReply(digest, label, tuple(digest.pr(n) for n in numbers))

    def _canonical_label(self, repo: str, label: str) -> str:
        wanted = label.strip().lower()
        aliases = {k.lower(): v.lower() for k, v in self.settings.repo(repo).aliases.items()}
        return aliases.get(wanted, wanted)

    # -- subscriptions --------------------------------------------------------------------------

    async def subscriptions(self, conversation: Conversation) -> tuple[Subscription, ...]:
        """The subscriptions of ``conversation``'s subscriber (its channel), sorted."""
        return await self._subscriptions.of(conversation.subscriber)

    async def _change_subscription(
        self, intent: SubscribeIntent | UnsubscribeIntent, conversation: Conversation, lang: Language,
    ) -> SubscriptionReply:
        binding = self.channels.binding(conversation.key)
        repo = (intent.repo or binding.repo or "").strip()
        if "/" not in repo:
            _, repo = self.channels.resolve(conversation.key, intent.repo)
        label = self._canonical_label(repo, intent.label)
        who = conversation.subscriber
        change: SubscriptionChange
        if isinstance(intent, SubscribeIntent):
            added = await self._subscriptions.add(who, repo, label, by=conversation.user, now=self._clock())
            change = "subscribed" if added else "already_subscribed"
        else:
            change = "unsubscribed" if await self._subscriptions.remove(who, repo, label) else "not_subscribed"
        sub = Subscription(repo=repo, label=label)
        known = await self._known_labels(repo, conversation) if change == "subscribed" else None
        return SubscriptionReply(change, sub, lang, None if known is None or label in known else tuple(known))

    async def _known_labels(self, repo: str, conversation: Conversation) -> list[str] | None:
        """Labels ``repo`` used in the last :data:`~bot.subscriptions.KNOWN_LABEL_WEEKS` weeks plus those its
        rules can give; ``None`` when the source cannot tell (the subscription is then not warned about)."""
        try:
            source, name = self.channels.resolve(conversation.key, repo)
            today = self._clock().astimezone(zone(self.settings.timezone)).date()
            window = date_window(today - timedelta(weeks=KNOWN_LABEL_WEEKS) + timedelta(days=1), today,
                                 self.settings.timezone)
            prs = await asyncio.to_thread(source.merged_prs, name, window)
        except PrhubError:
            return None
        return known_labels(prs, self.settings, name)


def _pull_request(source: PRSource, repo: str, number: int) -> PullRequest:
    try:
        return source.pull_request(repo, number)
    except PRNotFoundError as exc:
        raise PRNotFoundError(f"PR #{number} not found in this source ({exc})") from exc


def is_slow(intent: Intent) -> bool:
    """Whether answering ``intent`` reads a source and analyses PRs."""
    return isinstance(intent, SLOW_INTENTS)
