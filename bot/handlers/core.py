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

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

from bot import metrics
from bot.cards.i18n import bind_hint, error_text
from bot.channels import Channels
from bot.claims import Claims
from bot.codeowners import cached_codeowners
from bot.config import Settings
from bot.deadline import WorkDeadline
from bot.digest.service import DigestService
from bot.digest.window import date_window, parse_week, week_window, zone
from bot.errors import (
    AccessError,
    CodeownersError,
    DeliveryError,
    FilterError,
    PrhubError,
    PRNotFoundError,
    StoreUnavailableError,
)
from bot.filters import Filter, SubscriptionCommand, check_labels, parse_subscription
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
from bot.handlers.subedit import fit_labels, part_edits, part_note, widened
from bot.handlers.threads import ThreadMemory
from bot.models import Digest, DigestPR, Language, PullRequest, Window
from bot.people import People, Person
from bot.personal import PersonalDigests
from bot.push_spec import describe as describe_push
from bot.replies import (
    ErrorReply,
    GitHubLinkReply,
    HelpReply,
    MyDigestReply,
    NoteReply,
    NoticeReply,
    PersonalDigestReply,
    PRReply,
    Reply,
    SubscriptionReply,
    SubscriptionsReply,
)
from bot.sources.base import PRSource
from bot.sources.reads import read_source
from bot.store import Store
from bot.subscriptions import (
    KNOWN_LABEL_WEEKS,
    SubscribeGuard,
    Subscriber,
    Subscription,
    Subscriptions,
    known_labels,
    label_filter,
)
from bot.understand.vocabulary import Vocabulary

if TYPE_CHECKING:
    from bot.digest.llm import LLMRuntime

__all__ = ["ANSWER_FAILURES", "SLOW_INTENTS", "Conversation", "Core", "answer_failed", "answer_once", "is_slow"]

log = logging.getLogger(__name__)

SLOW_INTENTS = (DigestIntent, PRIntent, LabelIntent, CompareIntent, MergedIntent, QuestionIntent, FollowUpIntent)
"""Intents whose answer reads a source and analyses PRs (show "生成中…" first)."""


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


class Core:
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

    async def _pr(self, intent: PRIntent, conversation: Conversation, lang: Language) -> PRReply:
        source, name = self.channels.resolve_visible(conversation.key, intent.repo)
        item = await self.analysed_pr(source, name, intent.number, lang)
        return PRReply(item, name, lang, self.settings.timezone, pr_notes(item, intent.question, lang))

    def canonical_label(self, repo: str, label: str) -> str:
        """``label`` as ``repo``'s label view spells it (lower case, its aliases applied)."""
        return self._canonical_label(repo, label)

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
        """Subscribe, unsubscribe or unsubscribe from everything, as ``intent`` asks (see docs/user-guide.md
        "Subscriptions and alerts"): the request is read with the repository's aliases (and, to subscribe, its
        known labels); a channel's subscriptions change only by its admins when the config names any."""
        who = conversation.subscriber
        try:
            command = self._read_request(intent)
            repo = self._repo_of(command, intent, conversation)
            if (refusal := await self._refusal(conversation, lang)) is not None:
                return SubscriptionReply("refused", None, lang, message=refusal)
            if await self._is_direct(conversation):
                await self._people.remember_direct(conversation.person, conversation.channel, now=self._clock())
            if command.action == "unsubscribe_all":
                removed = await self._subscriptions.remove_all(who, command.repo and repo, by=conversation.user,
                                                               now=self._clock())
                kept = [s for s in await self._subscriptions.of(who) if s.from_config]
                note = self._config_note(kept, lang) if kept else ""
                return SubscriptionReply("unsubscribed_all" if removed else "nothing_to_unsubscribe", None, lang,
                                         removed=removed, message=note)
            flt = self._filter(intent, command, repo, known=None)
            if command.action == "unsubscribe":
                sub = Subscription(repo=repo, filter=flt)
                if await self._subscriptions.remove(who, repo, flt, by=conversation.user, now=self._clock()):
                    return SubscriptionReply("unsubscribed", sub, lang)
                if (edited := await self._remove_part(who, repo, flt, conversation, lang)) is not None:
                    return edited
                configured = [s for s in await self._subscriptions.of(who) if s.from_config and s.field == sub.field]
                return SubscriptionReply("not_subscribed", sub, lang,
                                         message=self._config_note(configured, lang) if configured else "")
            fitted_notes: tuple[str, ...] = ()
            if flt.labels:  # names labels: they must be ones the repository uses (the message lists them)
                known = await self._known_labels(repo, conversation)
                if known is not None:
                    fitted = fit_labels(flt, known, await self._vocabulary(repo, conversation), lang)
                    if not fitted.filter.include and not fitted.filter.bounds and not fitted.filter.exclude:
                        flt = self._filter(intent, command, repo, known=known)  # nothing left: say which labels exist
                    flt, fitted_notes = fitted.filter, fitted.notes
                    check_labels(Filter(exclude=flt.exclude), known)
            sub = Subscription(repo=repo, filter=flt)
            held = await self._subscriptions.of(who)
            if any(s.field == sub.field for s in held):
                return SubscriptionReply("already_subscribed", sub, lang)
            for old in widened(held, sub):  # npu, then npu + rollout: one subscription, widened
                await self._subscriptions.remove(who, old.repo, old.filter, by=conversation.user, now=self._clock())
                fitted_notes = (*fitted_notes, part_note(old.filter, flt, lang))
            note = await self._check_owners(flt, repo, conversation, lang)
            async with self._subscriptions.writing():  # the caps checked and the record stored as one step
                if (refused := await self._guarded(who, conversation.user, repo, lang)) is not None:
                    return SubscriptionReply("refused", None, lang, message=refused)
                added = await self._subscriptions.add(who, repo, flt, by=conversation.user, now=self._clock())
        except FilterError as exc:
            return SubscriptionReply("refused", None, lang, message=exc.message(lang))
        except (CodeownersError, AccessError, StoreUnavailableError) as exc:
            return SubscriptionReply("refused", None, lang, message=exc.message(lang))
        message = "\n".join(x for x in (*fitted_notes, note) if x)
        return SubscriptionReply("subscribed" if added else "already_subscribed", sub, lang, message=message,
                                 batch_minutes=round(self.settings.alerts_batch_s / 60))

    async def _vocabulary(self, repo: str, conversation: Conversation) -> Vocabulary | None:
        """``repo``'s vocabulary (authors, paths), or ``None`` when the source cannot be read."""
        try:
            source, name = self.channels.resolve_visible(conversation.key, repo)
            latest = await self.answers.latest(source, name)
            return await self.answers.data_words.vocabulary(source, name, latest[0] if latest else None)
        except PrhubError:
            return None

    async def _remove_part(self, who: Subscriber, repo: str, flt: Filter, conversation: Conversation,
                           lang: Language) -> SubscriptionReply | None:
        """Remove the terms of ``flt`` from the subscriptions that hold them among others ("unsubscribe me
        from rollout" with ``npu rollout``); the reply shows each filter before and after. ``None``: no
        subscription holds them."""
        subs = [s for s in await self._subscriptions.of(who, stored_only=True) if s.repo.lower() == repo.lower()]
        edits = part_edits(subs, flt)
        if not edits:
            return None
        notes = []
        for old, new in edits:
            await self._subscriptions.remove(who, old.repo, old.filter, by=conversation.user, now=self._clock())
            if new.include or new.bounds:
                await self._subscriptions.add(who, old.repo, new, by=conversation.user, now=self._clock())
            notes.append(part_note(old.filter, new, lang))
        return SubscriptionReply("unsubscribed", Subscription(repo=repo, filter=flt), lang, message="\n".join(notes))

    async def _guarded(self, who: Subscriber, user: str, repo: str, lang: Language) -> str | None:
        """Why the access check (issue 14: the repositories a channel may see, the per-person and
        per-channel caps) refuses this subscription, or ``None``."""
        if self._guard is None:
            return None
        try:
            await self._guard.check_subscribe(who, user, repo)
        except PrhubError as exc:
            said = getattr(exc, "message", None)
            return str(said(lang)) if callable(said) else str(exc)
        return None

    def _read_request(self, intent: SubscribeIntent | UnsubscribeIntent) -> SubscriptionCommand:
        """The request without the repository's words (its repository, action and whether it reads at all)."""
        if intent.text:
            return parse_subscription(intent.text, known_repos=self._known_repos(intent.repo))
        if not intent.label.strip():
            raise FilterError("subscribe to what? e.g. subscribe npu rollout -ci",
                              zh="订阅什么？例如：订阅 npu rollout -ci")
        action: Literal["subscribe", "unsubscribe"] = "subscribe" if isinstance(intent, SubscribeIntent) \
            else "unsubscribe"
        return SubscriptionCommand(action, intent.repo, label_filter(intent.label), intent.language)

    def _known_repos(self, named: str | None) -> list[str]:
        names = [named, self.settings.default_repo, *(c.repo for c in self.settings.channels.values()),
                 *self.settings.repositories]
        return sorted({n for n in names if n and "/" in n})

    def _repo_of(self, command: SubscriptionCommand, intent: SubscribeIntent | UnsubscribeIntent,
                 conversation: Conversation) -> str:
        repo = (command.repo or intent.repo or self.channels.binding(conversation.key).repo or "").strip()
        if "/" not in repo:  # may the conversation see it: the guard's question (AccessGuard)
            _, repo = self.channels.resolve(conversation.key, repo or None)
        return repo

    def _filter(self, intent: SubscribeIntent | UnsubscribeIntent, command: SubscriptionCommand, repo: str, *,
                known: list[str] | None) -> Filter:
        """The request's filter with ``repo``'s aliases (and, when given, only its ``known`` labels)."""
        aliases = self.settings.repo(repo).aliases
        if intent.text:
            again = parse_subscription(intent.text, aliases=aliases, known_labels=known,
                                       known_repos=self._known_repos(intent.repo))
            return again.filter or Filter()
        label = self._canonical_label(repo, intent.label)
        flt = label_filter(label)
        if known is not None:
            check_labels(flt, known)
        return flt

    async def _is_direct(self, conversation: Conversation) -> bool:
        """Whether the conversation is the asker's DM with the bot (Slack ``D…``; Feishu: as the door said,
        else as remembered from their messages)."""
        if conversation.direct is not None:
            return conversation.direct
        if conversation.platform == "slack":
            return conversation.channel.startswith("D")
        return await self._people.direct(conversation.person) == conversation.channel

    async def _refusal(self, conversation: Conversation, lang: Language) -> str | None:
        """Why the asker may not change the conversation's subscriptions, or ``None`` when they may: a DM
        is its person's; a channel's are changed by its members, or only by the admins the config names."""
        if await self._is_direct(conversation):
            return None
        admins = self.channels.binding(conversation.key).admins or ()
        if not admins or conversation.user in admins or f"{conversation.platform}:{conversation.user}" in admins:
            return None
        names = ", ".join(a.partition(":")[2] if ":" in a else a for a in admins)
        if lang == "zh":
            return (f"只有这个频道的管理员可以修改它的订阅（管理员：{names}）。"
                    "想要自己的提醒，可以在与我的私聊里订阅。")
        return (f"Only this channel's admins can change its subscriptions (admins: {names}). "
                "For alerts of your own, subscribe in a direct message with me.")

    @staticmethod
    def _config_note(configured: list[Subscription], lang: Language) -> str:
        if lang == "zh":
            return f"另有 {len(configured)} 个订阅来自配置文件，要在配置文件（[[subscriptions]]）里修改。"
        return f"{len(configured)} more come from the config file and are changed there ([[subscriptions]])."

    async def _check_owners(self, flt: Filter, repo: str, conversation: Conversation, lang: Language) -> str:
        """Check what ``path:@…`` / ``author:@me`` need before subscribing; a note about it (or ``""``).

        Raises:
            FilterError: ``@me`` without a linked GitHub handle.
            CodeownersError: the repository's CODEOWNERS cannot be read (the source has no files, no file).
        """
        me = await self._people.github(conversation.person) if flt.uses_me else None
        if flt.uses_me and not me:
            raise FilterError('path:@me and author:@me need your GitHub handle first: say "my GitHub is NAME"',
                              zh="path:@me 和 author:@me 需要先告诉我你的 GitHub 账号：发送“我的 GitHub 是 NAME”")
        if not flt.uses_codeowners:
            return ""
        source, _ = self.channels.resolve_visible(conversation.key, repo)
        owners = await cached_codeowners(self._store, source, repo, ttl_s=self.settings.codeowners_ttl_s)
        wanted = [("@" + me) if t.value == "@me" and me else t.value
                  for t in (*flt.include, *flt.exclude) if t.is_owner]
        empty = [w for w in wanted if not owners.patterns_of(w)]
        if not empty:
            return ""
        if lang == "zh":
            return f"注意：{repo} 的 {owners.path} 里还没有分给 {'、'.join(empty)} 的路径，暂时不会有提醒。"
        return f"Note: {owners.path} of {repo} gives {', '.join(empty)} no paths yet, so nothing will match for now."

    async def _known_labels(self, repo: str, conversation: Conversation) -> list[str] | None:
        """Labels ``repo`` used in the last :data:`~bot.subscriptions.KNOWN_LABEL_WEEKS` weeks plus those its
        rules can give; ``None`` when the source cannot tell (then any label is accepted)."""
        try:
            source, name = self.channels.resolve_visible(conversation.key, repo)
            today = self._clock().astimezone(zone(self.settings.timezone)).date()
            window = date_window(today - timedelta(weeks=KNOWN_LABEL_WEEKS) + timedelta(days=1), today,
                                 self.settings.timezone)
            prs = await read_source(source, source.merged_prs, name, window)
        except PrhubError:
            return None
        return known_labels(prs, self.settings, name)

    # -- the person: GitHub handle, weekly personal digest -------------------------------------------------

    async def _link_github(self, intent: LinkGitHubIntent, conversation: Conversation,
                           lang: Language) -> GitHubLinkReply:
        await self._people.link_github(conversation.person, intent.handle, now=self._clock())
        repo = self.channels.binding(conversation.key).repo
        if not repo:
            return GitHubLinkReply(intent.handle, lang)
        try:
            source, repo = self.channels.resolve_visible(conversation.key, repo)
            owners = await cached_codeowners(self._store, source, repo, ttl_s=self.settings.codeowners_ttl_s)
        except PrhubError:
            return GitHubLinkReply(intent.handle, lang, repo)
        return GitHubLinkReply(intent.handle, lang, repo, owners.patterns_of("@" + intent.handle))

    async def _personal_digest(self, intent: PersonalDigestIntent, conversation: Conversation,
                               lang: Language) -> PersonalDigestReply | MyDigestReply:
        person = conversation.person
        direct = await self._is_direct(conversation)
        if direct:
            await self._people.remember_direct(person, conversation.channel, now=self._clock())
        home = conversation.channel if direct else await self._people.direct(person)
        if intent.action == "show":
            window = parse_week("last", tz=self.settings.channel(conversation.key).timezone or self.settings.timezone,
                                now=self._clock())
            built = await self._personal.build(person, home, window, lang, now=self._clock(),
                                               binding=conversation.key)
            note = ("；" if lang == "zh" else "; ").join(f"{s.filter.text()}: {why}" for s, why in built.skipped)
            return MyDigestReply(built.digests, lang, message=note)
        if intent.action == "off":
            return PersonalDigestReply("off" if await self._people.opt_out(person) else "not_on", lang)
        target = home or (person.user if person.platform == "slack" else None)
        if target is None:  # a Feishu group: the bot has no DM with this person yet
            message = ("请在与我的私聊里发送这句话，我会每周把你的周报发到那里。" if lang == "zh" else
                       "Say this in a direct message with me: your weekly digest goes there.")
            return PersonalDigestReply("refused", lang, message=message)
        fresh = await self._people.opt_in(person, target, lang, now=self._clock())
        subs = await self._personal.subscriptions_of(person, home)
        return PersonalDigestReply("on" if fresh else "already_on", lang,
                                   when=describe_push(self.settings.personal_digest_at), filters=subs)


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
