"""The platform-neutral core of the chat bots: an :class:`~bot.handlers.intents.Intent` in, a reply out.

Slack (``bot/handlers/slack/``) and Feishu call :meth:`Core.answer` with what a
person asked and where (:class:`Conversation`), and draw the :mod:`bot.replies` reply
it returns with the renderers of :mod:`bot.cards.chat`. Nothing here knows a platform.

What it uses, all built once by :mod:`bot.app` and shared with the scheduler:

- :class:`~bot.channels.Channels` — the channel's repository, source and language (what the
  message names wins), and the opened sources;
- :class:`~bot.digest.service.DigestService` — digests and PR analyses (LLM or heuristic; the
  fallback when the model is unusable is decided there);
- :class:`~bot.subscriptions.Subscriptions` — the subscriptions (one record per filter), read with
  the grammar of :mod:`bot.filters`; who may change a channel's (its members, or the config's admins);
- :class:`~bot.people.People` and :class:`~bot.personal.PersonalDigests` — the GitHub handle behind
  ``path:@me``, the weekly personal digest ("my area this week").

Sources are synchronous (file, git or HTTP reads), so they are read in a worker thread; the
service keeps CPU work off the event loop too.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot import metrics
from bot.cards.i18n import bind_hint, error_text
from bot.channels import Channels
from bot.config import Settings
from bot.digest.service import DigestService
from bot.digest.window import week_window, zone
from bot.errors import (
    AccessError,
    PrhubError,
    PRNotFoundError,
    StoreUnavailableError,
)
from bot.handlers.answering import ANSWER_FAILURES, SLOW_INTENTS, answer_failed, answer_once, is_slow
from bot.handlers.answers import Answers
from bot.handlers.followups import Conversations, small_talk_text
from bot.handlers.intents import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    FollowUpIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PersonalDigestIntent,
    PRIntent,
    QuestionIntent,
    SmallTalkIntent,
    SubscribeIntent,
    UnsubscribeIntent,
)
from bot.handlers.reading import pr_notes
from bot.handlers.subscribing import SubscriptionDesk
from bot.handlers.threads import ThreadMemory
from bot.models import Digest, DigestPR, Language, PullRequest, Window
from bot.people import People, Person
from bot.personal import PersonalDigests
from bot.replies import (
    ClarifyReply,
    ErrorReply,
    HelpReply,
    NoteReply,
    NoticeReply,
    PRReply,
    Reply,
    SubscriptionsReply,
)
from bot.sources.base import PRSource
from bot.sources.reads import read_source
from bot.store import Store
from bot.subscriptions import (
    SubscribeGuard,
    Subscriber,
    Subscriptions,
)

if TYPE_CHECKING:
    from bot.digest.llm import LLMRuntime

__all__ = ["ANSWER_FAILURES", "SLOW_INTENTS", "Conversation", "Core", "answer_failed", "answer_once", "is_slow"]

log = logging.getLogger(__name__)



@dataclass(frozen=True, slots=True)
class Conversation:
    """Where a request was made: ``platform`` (``slack``, ``feishu``), the ``channel`` id
    (a channel or a direct-message conversation) and the asking ``user`` id. ``direct``: a person's
    direct-message conversation with the bot (Feishu ``p2p``), ``None`` when the door cannot tell
    (Slack's ``D…`` ids tell by themselves)."""

    platform: str
    channel: str
    user: str
    direct: bool | None = None
    thread: str | None = None
    """The thread the message is in (Slack ``thread_ts`` or its own ``ts``; Feishu ``root_id`` or its own
    id): follow-ups read against the thread's last request; ``None``: the person's last in the conversation."""
    locale: str | None = None
    """The person's platform locale (``zh-CN``, ``en-US``) when the door knows it."""

    @property
    def key(self) -> str:
        """``platform:channel``, the key of the channel's binding in the config file."""
        return f"{self.platform}:{self.channel}"

    @property
    def person(self) -> Person:
        """The asker."""
        return Person(self.platform, self.user)

    @property
    def subscriber(self) -> Subscriber:
        """Who the conversation's subscriptions alert: the conversation itself."""
        return Subscriber(self.platform, self.channel)


class Core(SubscriptionDesk):
    """Answers intents for every chat platform.

    Args:
        settings: configuration (repositories, time zone, language, admins, bots).
        channels: channel bindings and sources.
        digests: the digest service.
        subscriptions: where subscriptions live.
        people: GitHub handles, DM conversations, weekly-digest opt-ins.
        personal: builds "my area this week".
        store: the cache of CODEOWNERS files (``path:@me``).
        guard: a check before a subscription is stored (issue 14's access control), or ``None``.
        clock: the current instant (aware); tests pin it.
        llm: the LLM runtime when a model is configured: it reads messages the rules do not
            understand and phrases question answers (``None``: rules and retrieval alone).
    """

    def __init__(self, *, settings: Settings, channels: Channels, digests: DigestService,
                 subscriptions: Subscriptions, people: People, personal: PersonalDigests, store: Store,
                 guard: SubscribeGuard | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC), llm: LLMRuntime | None = None) -> None:
        self.settings = settings
        self.channels = channels
        self.digests = digests
        self._subscriptions = subscriptions
        self._people = people
        self._personal = personal
        self._store = store
        self._guard = guard
        self._clock = clock
        self.answers = _answers(self, llm, store, settings)
        self.conversations = Conversations(self, ThreadMemory(store, ttl_s=settings.thread_memory_ttl_s))
        self._told_unbound: set[str] = set()

    def now(self) -> datetime:
        """The current instant (aware)."""
        return self._clock()

    def language(self, intent: Intent | None, conversation: Conversation) -> Language:
        """The reply language: the message's, else the channel's, else the configured default."""
        lang = intent.language if intent is not None else None
        return lang or self.channels.binding(conversation.key).language or self.settings.language

    async def reply_language(self, intent: Intent | None, conversation: Conversation) -> Language:
        """The reply language for the person: the message's, their previous messages', their locale, the
        channel's, the default (:meth:`bot.handlers.followups.Conversations.language`)."""
        return await self.conversations.language(intent, conversation)

    async def answer(self, intent: Intent, conversation: Conversation) -> Reply:
        """The reply to ``intent`` asked in ``conversation`` (a follow-up read against the thread's last request).

        Never raises a :class:`~bot.errors.PrhubError`: those become an :class:`~bot.replies.ErrorReply`
        (unknown repository, PR not in the source, bad week, unreadable source, no repository bound
        to the channel). Store failures (Redis down) propagate. The first request in a channel that sees no
        repository gets a :class:`~bot.replies.NoticeReply` saying how to bind one (once per channel and
        process). Each request is counted (:mod:`bot.metrics`: received, answered by outcome, seconds).
        """
        intent = await self.conversations.resolve(intent, conversation)
        label = metrics.intent_label(intent)
        metrics.EVENTS_RECEIVED.labels(conversation.platform, label).inc()
        started = time.monotonic()
        try:
            reply = await self._answer(intent, conversation)
        finally:
            metrics.ANSWER_SECONDS.labels(conversation.platform, label).observe(time.monotonic() - started)
        outcome = "error" if isinstance(reply, ErrorReply) else "ok"
        metrics.EVENTS_ANSWERED.labels(conversation.platform, label, outcome).inc()
        return reply

    async def _unbound_notice(self, intent: Intent, conversation: Conversation) -> Reply | None:
        """How to bind the channel, the first time someone asks in a channel that sees no repository."""
        if conversation.key in self._told_unbound or isinstance(intent, LinkGitHubIntent):
            return None
        if self.channels.visible(conversation.key):
            return None
        self._told_unbound.add(conversation.key)
        lang = await self.conversations.language(intent, conversation)
        log.info("%s sees no repository: told how to bind one", conversation.key)
        return NoticeReply(bind_hint(conversation.key, lang), lang)

    async def _answer(self, intent: Intent, conversation: Conversation) -> Reply:
        notice = await self._unbound_notice(intent, conversation)
        if notice is not None:
            return notice
        lang = await self.conversations.language(intent, conversation)
        try:
            match intent:
                case SmallTalkIntent():
                    return NoteReply(small_talk_text(intent, lang), lang)
                case FollowUpIntent():  # resolve() never leaves one
                    return HelpReply(lang, self.channels.binding(conversation.key).repo)
                case DigestIntent():
                    return await self.answers.digest(intent, conversation, lang)
                case PRIntent():
                    return await self._pr(intent, conversation, lang)
                case LabelIntent():
                    return await self.answers.label(intent, conversation, lang)
                case CompareIntent():
                    return await self.answers.compare(intent, conversation, lang)
                case MergedIntent():
                    return await self.answers.merged(intent, conversation, lang)
                case QuestionIntent():
                    return await self.answers.question(intent, conversation, lang)
                case ClarifyIntent():
                    return self.answers.clarify(intent, lang)
                case SubscribeIntent() | UnsubscribeIntent():
                    return await self._change_subscription(intent, conversation, lang)
                case ListSubscriptionsIntent():
                    return SubscriptionsReply(await self.subscriptions(conversation), lang)
                case LinkGitHubIntent():
                    return await self._link_github(intent, conversation, lang)
                case PersonalDigestIntent():
                    return await self._personal_digest(intent, conversation, lang)
                case HelpIntent():
                    return await self.answers.help(intent, conversation, lang)
        except PrhubError as exc:
            log.warning("could not answer %s in %s: %s", type(intent).__name__, conversation.key, exc)
            metrics.FAILURES.labels(metrics.failure_kind(exc)).inc()
            return ErrorReply(self._error_text(exc, intent, conversation, lang), lang)
        return HelpReply(lang, self.channels.binding(conversation.key).repo)  # pragma: no cover - exhaustive

    def _error_text(self, exc: PrhubError, intent: Intent, conversation: Conversation, lang: Language) -> str:
        """What the asker reads about ``exc``: in their language, naming what to do, no server path (a
        refusal of access, or the store being down, in its own words)."""
        if isinstance(exc, AccessError | StoreUnavailableError):
            return exc.message(lang)
        repo = getattr(intent, "repo", None) or self.channels.binding(conversation.key).repo
        number = intent.number if isinstance(intent, PRIntent) else \
            intent.numbers[0] if isinstance(intent, CompareIntent) else None
        window = getattr(intent, "said", None) or getattr(intent, "window", None)
        return error_text(exc, lang, repo=repo, number=number, window=window if isinstance(window, str) else None)

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
        source, name = self.channels.resolve_visible(conversation.key, repo)
        window = self.answers.lay_out(week)
        prs = await read_source(source, source.merged_prs, name, window)
        return await self.window_digest(source, name, window, prs, language, compare=compare)

    async def window_digest(self, source: PRSource, repo: str, window: Window, prs: list[PullRequest],
                            language: Language, *, compare: bool) -> Digest:
        """The digest of ``prs``, the PRs ``source`` merged in ``window``; with ``compare``, against the
        windows before it (no LLM call). Either way the core files come from the earlier records the source
        gives (:meth:`~bot.digest.service.DigestService.earlier_records`).

        Raises:
            PrhubError: an unreadable source.
        """
        earlier = await self.digests.look_back(source, repo, window, language=language) if compare else None
        history = earlier.lookback.records if earlier else await self.digests.earlier_records(source, repo, window)
        try:
            digest = await self.digests.digest(prs, repo=repo, window=window, language=language, now=self._clock(),
                                               deadline_s=self._llm_deadline_s,
                                               lookback=earlier.lookback if earlier else None,
                                               known=earlier.known if earlier else None, history=history)
        except PrhubError:
            metrics.DIGESTS.labels("chat", "failed").inc()
            raise
        metrics.DIGESTS.labels("chat", "built" if digest.stats.pr_count else "empty").inc()
        return digest

    @property
    def _llm_deadline_s(self) -> float:
        """How long the model may take within a chat answer (``answer_deadline_s`` less the time to read
        the source and post): analyses not ready then are shown pending, or the PR's heuristic analysis."""
        return max(1.0, self.settings.answer_deadline_s * 0.75)

    async def analysed_pr(self, source: PRSource, repo: str, number: int, language: Language) -> DigestPR:
        """PR ``number`` of ``repo`` analysed with its own week as context (the verdict of that week's digest).

        Raises:
            PRNotFoundError: no merged PR with that number.
        """
        found = await read_source(source, _pull_request, source, repo, number)
        day = found.merged_at.astimezone(zone(self.settings.timezone)).date().isocalendar()
        window = week_window(day.year, day.week, self.settings.timezone)
        week = await read_source(source, source.merged_prs, found.repo, window)
        history = await self.digests.earlier_records(source, found.repo, window)
        return await self.digests.pr(found, language=language, window_prs=week, history=history,
                                     deadline_s=self._llm_deadline_s)

    async def _pr(self, intent: PRIntent, conversation: Conversation, lang: Language) -> PRReply | ClarifyReply:
        repo = intent.repo
        if repo is None and len(self.channels.binding(conversation.key).repos) > 1:
            found = await self._which_repo(intent, conversation, lang)
            if isinstance(found, ClarifyReply):
                return found
            repo = found
        source, name = self.channels.resolve_visible(conversation.key, repo)
        item = await self.analysed_pr(source, name, intent.number, lang)
        return PRReply(item, name, lang, self.settings.timezone, pr_notes(item, intent.question, lang))

    async def _which_repo(self, intent: PRIntent, conversation: Conversation,
                          lang: Language) -> str | ClarifyReply | None:
        """In a channel that follows several repositories, the one a PR question means: the one the message
        names ("verl 的 #6046", its short or full name), else the only one that has the number; several that
        have it are asked back. ``None``: none has it (the first repository's answer says so)."""
        followed = self.channels.repos_of(conversation.key)
        text = intent.text.lower()
        named = [name for name, _ in followed
                 if re.search(rf"(?<![\w/.-]){re.escape(name.lower().rsplit('/', 1)[-1])}(?![\w/.-])", text)
                 or name.lower() in text]
        if len(named) == 1:
            return named[0]
        having = []
        for name, source in followed:
            try:
                await read_source(source, source.pull_request, name, intent.number)
            except PRNotFoundError:
                continue
            except PrhubError as exc:  # a repository that cannot be read now is not one to ask about
                log.warning("PR #%d: %s could not be read: %s", intent.number, name, exc)
                continue
            having.append(name)
        if len(having) > 1:
            shorts = [name.rsplit("/", 1)[-1] for name in having]
            if lang == "zh":
                text_back = (f"#{intent.number} 在 {'、'.join(having)} 里都有。请说是哪一个，例如“{shorts[0]} 的 "
                             f"#{intent.number}”或“{shorts[1]} 的 #{intent.number}”。")
            else:
                text_back = (f"#{intent.number} exists in {', '.join(having)}. Which one? Say e.g. "
                             f"\"{shorts[0]} #{intent.number}\" or \"{shorts[1]} #{intent.number}\".")
            return ClarifyReply(text_back, lang)
        return having[0] if having else None

    def canonical_label(self, repo: str, label: str) -> str:
        """``label`` as ``repo``'s label view spells it (lower case, its aliases applied)."""
        return self._canonical_label(repo, label)


def _pull_request(source: PRSource, repo: str, number: int) -> PullRequest:
    try:
        return source.pull_request(repo, number)
    except PRNotFoundError as exc:
        log.info("PR #%d of %s not found: %s", number, repo, exc)
        raise PRNotFoundError(f"PR #{number} not found in this source") from exc


def _answers(core: Core, llm: LLMRuntime | None, store: Store, settings: Settings) -> Answers:
    """The core's :class:`~bot.handlers.answers.Answers`, with the model's reader and writer when one is set."""
    if llm is None:
        return Answers(core)
    from bot.digest.llm.answer import AnswerWriter
    from bot.understand.reader import IntentReader

    return Answers(core, reader=IntentReader(client=llm.client),
                   writer=AnswerWriter(client=llm.client, store=store, ttl_s=settings.cache_ttl_s))
