"""The platform-neutral core of the chat bots: an :class:`~bot.handlers.intents.Intent` in, a reply out.

Slack (``bot/handlers/slack/``) and Feishu call :meth:`Core.answer` with what a
person asked and where (:class:`Conversation`), and render the reply it returns
with their own cards. Nothing here knows a platform's JSON.

Replies (all frozen; the platform picks the card)::

    DigestReply(digest)                       a digest: "本周周报", "/prhub digest 2026-W16"
    PRReply(pr, repo, language, timezone)     one PR's analysis: "PR #6046 值得读吗"
    LabelReply(digest, label, prs)            the label view of the current digest: "npu 标签"
    SubscriptionReply(change, subscription)   "订阅 npu" / "取消订阅 npu" done (or nothing to do)
    SubscriptionsReply(subscriptions)         "我的订阅"
    HelpReply(language, repo)                 anything else
    ErrorReply(message, language)             a :class:`~bot.errors.PrhubError`, in one line

Where the data comes from: the channel's binding (:meth:`bot.config.Settings.channel`:
repository, source spec, language), overridden by what the message names. The
digest and PR calls are the same service functions the CLI uses
(:func:`~bot.digest.service.build_digest`, :func:`~bot.digest.service.analyze_pr`);
they are synchronous (file, git or HTTP reads and CPU), so they run in a worker thread.

Subscriptions (read by the label alerts of a later release) live in the store:

- ``prhub:sub:{platform}:{subscriber}`` — JSON list of ``[repo, label]`` pairs,
  sorted; ``subscriber`` is the conversation the alerts go to (a channel, or a
  person's direct-message conversation);
- ``prhub:sub-index`` — JSON list of ``"{platform}:{subscriber}"`` that have at
  least one subscription.

Both are read-modify-write without a lock: two changes at the same instant
may lose one (acceptable for a person's own list; the alerts' issue may move
them to Redis sets).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

from bot.cards.chat import chat_phrases
from bot.config import Settings
from bot.digest.service import Analyzer, analyze_pr, analyze_pr_async, build_digest, build_digest_async
from bot.digest.window import date_window, parse_week, resolve_window, week_window, zone
from bot.errors import LLMStopError, PrhubError, PRNotFoundError, SourceError
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
from bot.models import Digest, DigestPR, Language, PullRequest, Window
from bot.sources.base import PRSource, canonical_repo, open_source
from bot.store import Store

if TYPE_CHECKING:
    from bot.digest.llm import LLMRuntime

SUB_KEY = "prhub:sub:{platform}:{subscriber}"
"""Store key of one subscriber's subscriptions (JSON list of ``[repo, label]``)."""
SUB_INDEX_KEY = "prhub:sub-index"
"""Store key of the list of ``platform:subscriber`` with subscriptions."""

SourceOpener = Callable[[str], PRSource]


log = logging.getLogger(__name__)

KNOWN_LABEL_WEEKS = 4
"""A subscription to a label not seen in this many weeks (nor given by a rule) gets a warning."""


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


@dataclass(frozen=True, slots=True)
class Subscription:
    """Alerts for PRs of ``repo`` (``owner/name``) carrying ``label`` (canonical, lower case)."""

    repo: str
    label: str


@dataclass(frozen=True, slots=True)
class DigestReply:
    digest: Digest


@dataclass(frozen=True, slots=True)
class PRReply:
    pr: DigestPR
    repo: str
    language: Language
    timezone: str


@dataclass(frozen=True, slots=True)
class LabelReply:
    """``prs``: the digest's PRs carrying ``label``, most important first (empty: none this window)."""

    digest: Digest
    label: str
    prs: tuple[DigestPR, ...]


@dataclass(frozen=True, slots=True)
class SubscriptionReply:
    change: Literal["subscribed", "already_subscribed", "unsubscribed", "not_subscribed"]
    subscription: Subscription
    language: Language
    known_labels: tuple[str, ...] | None = None
    """Set when the label was not seen lately: the labels the repository does use (the
    subscription is kept all the same; a new label may appear later)."""

    def unknown_label_note(self) -> str | None:
        """The warning to show with the reply, or ``None``."""
        if self.known_labels is None:
            return None
        words = chat_phrases(self.language)
        sep = "、" if self.language == "zh" else ", "
        return words.unknown_label.format(repo=self.subscription.repo, label=self.subscription.label,
                                          weeks=KNOWN_LABEL_WEEKS, known=sep.join(self.known_labels) or "-")


@dataclass(frozen=True, slots=True)
class SubscriptionsReply:
    subscriptions: tuple[Subscription, ...]
    language: Language


@dataclass(frozen=True, slots=True)
class HelpReply:
    language: Language
    repo: str | None


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """A request that could not be answered; ``message`` is one line for people."""

    message: str
    language: Language


Reply = DigestReply | PRReply | LabelReply | SubscriptionReply | SubscriptionsReply | HelpReply | ErrorReply

SLOW_INTENTS = (DigestIntent, PRIntent, LabelIntent)
"""Intents whose answer reads a source and analyses PRs (show "生成中…" first)."""


class Core:
    """Answers intents for every chat platform.

    Args:
        settings: configuration (channel bindings, repositories, time zone, language).
        store: where subscriptions live (Redis in the bot).
        open_source: opens a source spec (default :func:`bot.sources.base.open_source`);
            each spec is opened once and kept.
        analyzer: per-PR analyzer for digests and PR answers (default: the LLM analyzer,
            cached in ``store``, when ``PRHUB_LLM_MODEL`` is set; else the heuristic).
        clock: the current instant (aware); tests pin it.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        store: Store,
        open_source: SourceOpener = open_source,
        analyzer: Analyzer | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self.store = store
        self._open = open_source
        self._sources: dict[str, PRSource] = {}
        self._analyzer = analyzer
        self._clock = clock
        self._llm: LLMRuntime | None = None

    def _llm_runtime(self) -> LLMRuntime | None:
        """The LLM analyzer and narrator (built once, on first use), or ``None`` without a model
        or when a fixed analyzer was given."""
        if self._analyzer is not None or not self.settings.llm_model:
            return None
        if self._llm is None:
            from bot.digest.llm import llm_runtime  # imports litellm: only when a model is configured

            self._llm = llm_runtime(self.settings, self.store)
        return self._llm

    def language(self, intent: Intent | None, conversation: Conversation) -> Language:
        """The reply language: the message's, else the channel's, else the configured default."""
        lang = intent.language if intent is not None else None
        return lang or self.settings.channel(conversation.key).language or self.settings.language

    async def answer(self, intent: Intent, conversation: Conversation) -> Reply:
        """The reply to ``intent`` asked in ``conversation``.

        Never raises a :class:`~bot.errors.PrhubError`: those become an :class:`ErrorReply`
        (unknown repository, PR not in the source, bad week, unreadable source, no
        repository bound to the channel). Store failures (Redis down) propagate.
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
                    return HelpReply(lang, self.settings.channel(conversation.key).repo)
        except PrhubError as exc:
            return ErrorReply(str(exc), lang)

    # -- digests and PRs ------------------------------------------------------------------------

    async def digest(
        self, repo: str | None, week: str | None, conversation: Conversation, language: Language,
    ) -> Digest:
        """The digest of ``repo`` (default: the channel's) for ``week`` (``this``, ``last``,
        ``YYYY-Www``; ``None`` = the last complete week), or for a window named as
        :attr:`~bot.models.Window.name` (``2026-04-13..2026-04-19``, from a card's button).

        Raises:
            PrhubError: no repository bound, unknown repository, bad week, unreadable source.
        """
        source, name = self._source_and_repo(repo, conversation)
        window = self._window(week)
        prs = await asyncio.to_thread(source.merged_prs, name, window)
        if (llm := self._llm_runtime()) is not None:
            # Usage is counted on the runtime's client for the bot's lifetime, not per digest.
            try:
                return await build_digest_async(
                    prs, repo=name, window=window, settings=self.settings, language=language,
                    analyzer=llm.analyzer, narrator=llm.narrator, now=self._clock(),
                )
            except LLMStopError as exc:  # key refused or quota spent: the heuristic answers meanwhile
                log.warning("LLM unusable, answering with the heuristic analyzer: %s", exc)
        return await asyncio.to_thread(
            build_digest, prs, repo=name, window=window, settings=self.settings, language=language,
            analyzer=self._analyzer, now=self._clock(),
        )

    def _window(self, spec: str | None) -> Window:
        tz = self.settings.timezone
        if spec is not None and ".." in spec:
            first, _, last = spec.partition("..")
            try:
                since, until = datetime.fromisoformat(first).date(), datetime.fromisoformat(last).date()
            except ValueError as exc:
                raise PrhubError(f"cannot read the window {spec!r}: expected YYYY-MM-DD..YYYY-MM-DD") from exc
            return date_window(since, until, tz)
        if spec is None:
            return resolve_window(week=None, since=None, until=None, tz=tz, now=self._clock())
        return parse_week(spec, tz=tz, now=self._clock())

    async def _pr(self, intent: PRIntent, conversation: Conversation, lang: Language) -> PRReply:
        source, name = self._source_and_repo(intent.repo, conversation)
        found = await asyncio.to_thread(_pull_request, source, name, intent.number)
        day = found.merged_at.astimezone(zone(self.settings.timezone)).date().isocalendar()
        week = await asyncio.to_thread(
            source.merged_prs, found.repo, week_window(day.year, day.week, self.settings.timezone)
        )
        item: DigestPR | None = None
        if (llm := self._llm_runtime()) is not None:
            try:
                item = await analyze_pr_async(found, settings=self.settings, analyzer=llm.analyzer, language=lang,
                                              window_prs=week)
            except LLMStopError as exc:  # key refused or quota spent: the heuristic answers meanwhile
                log.warning("LLM unusable, answering with the heuristic analyzer: %s", exc)
        if item is None:
            item = await asyncio.to_thread(
                analyze_pr, found, settings=self.settings, language=lang, analyzer=self._analyzer, window_prs=week
            )
        return PRReply(item, name, lang, self.settings.timezone)

    async def _label(self, intent: LabelIntent, conversation: Conversation, lang: Language) -> LabelReply:
        digest = await self.digest(intent.repo, None, conversation, lang)
        label = self._canonical_label(digest.repo, intent.label)
        numbers = next((g.pr_numbers for g in digest.label_view if g.label.lower() == label), ())
        return LabelReply(digest, label, tuple(digest.pr(n) for n in numbers))

    def _canonical_label(self, repo: str, label: str) -> str:
        wanted = label.strip().lower()
        aliases = {k.lower(): v.lower() for k, v in self.settings.repo(repo).aliases.items()}
        return aliases.get(wanted, wanted)

    def _source_and_repo(self, repo: str | None, conversation: Conversation) -> tuple[PRSource, str]:
        """The channel's source and the repository to answer about (the source's spelling).

        Raises:
            SourceError: no repository named or bound and the source holds several (or none).
        """
        binding = self.settings.channel(conversation.key)
        spec = binding.source or self.settings.default_source
        source = self._sources.get(spec)
        if source is None:
            source = self._sources[spec] = self._open(spec)
        wanted = repo or binding.repo
        if wanted is not None and "/" in wanted:
            return source, wanted.strip()
        try:
            held = source.repos()
        except SourceError:
            held = []
        return source, canonical_repo(wanted, held)

    # -- subscriptions --------------------------------------------------------------------------

    async def subscriptions(self, conversation: Conversation) -> tuple[Subscription, ...]:
        """The subscriptions of ``conversation``'s subscriber (its channel), sorted."""
        raw = await self.store.get_json(_sub_key(conversation)) or []
        return tuple(Subscription(repo, label) for repo, label in raw)

    async def _change_subscription(
        self, intent: SubscribeIntent | UnsubscribeIntent, conversation: Conversation, lang: Language,
    ) -> SubscriptionReply:
        binding = self.settings.channel(conversation.key)
        repo = (intent.repo or binding.repo or "").strip()
        if "/" not in repo:
            _, repo = self._source_and_repo(intent.repo, conversation)
        sub = Subscription(repo, self._canonical_label(repo, intent.label))
        current = set(await self.subscriptions(conversation))
        if isinstance(intent, SubscribeIntent):
            change: Literal["subscribed", "already_subscribed", "unsubscribed", "not_subscribed"] = (
                "already_subscribed" if sub in current else "subscribed"
            )
            current.add(sub)
        else:
            change = "unsubscribed" if sub in current else "not_subscribed"
            current.discard(sub)
        if change in ("subscribed", "unsubscribed"):
            await self._save(conversation, current)
        known = await self._known_labels(repo, conversation) if change == "subscribed" else None
        return SubscriptionReply(change, sub, lang, None if known is None or sub.label in known else tuple(known))

    async def _known_labels(self, repo: str, conversation: Conversation) -> list[str] | None:
        """Labels ``repo`` used in the last ``KNOWN_LABEL_WEEKS`` weeks plus those its rules can give;
        ``None`` when the source cannot tell (the subscription is then not warned about)."""
        from bot.scheduler.alerts import known_labels

        try:
            source, name = self._source_and_repo(repo, conversation)
            today = self._clock().astimezone(zone(self.settings.timezone)).date()
            window = date_window(today - timedelta(weeks=KNOWN_LABEL_WEEKS) + timedelta(days=1), today,
                                 self.settings.timezone)
            prs = await asyncio.to_thread(source.merged_prs, name, window)
        except PrhubError:
            return None
        return known_labels(prs, self.settings, name)

    async def _save(self, conversation: Conversation, subs: set[Subscription]) -> None:
        key = _sub_key(conversation)
        member = f"{conversation.platform}:{conversation.channel}"
        index = set(await self.store.get_json(SUB_INDEX_KEY) or [])
        if subs:
            await self.store.set_json(key, sorted([s.repo, s.label] for s in subs))
            index.add(member)
        else:
            await self.store.delete(key)
            index.discard(member)
        await self.store.set_json(SUB_INDEX_KEY, sorted(index))


def _sub_key(conversation: Conversation) -> str:
    return SUB_KEY.format(platform=conversation.platform, subscriber=conversation.channel)


def _pull_request(source: PRSource, repo: str, number: int) -> PullRequest:
    try:
        return source.pull_request(repo, number)
    except PRNotFoundError as exc:
        raise PRNotFoundError(f"PR #{number} not found in this source ({exc})") from exc


def is_slow(intent: Intent) -> bool:
    """Whether answering ``intent`` reads a source and analyses PRs."""
    return isinstance(intent, SLOW_INTENTS)

