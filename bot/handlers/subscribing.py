"""The chat core's subscriptions and the person's own settings: what :class:`bot.handlers.core.Core` does for
subscribe / unsubscribe requests (a whole filter or one part of it), the listing, the GitHub handle behind
``path:@me`` and the weekly personal digest.

:class:`SubscriptionDesk` is a part of :class:`~bot.handlers.core.Core` (it inherits it): the attributes it
declares are the core's, set by the core's constructor.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Literal, Protocol

from bot.channels import Channels
from bot.codeowners import cached_codeowners
from bot.config import Settings
from bot.digest.ask import glossary
from bot.digest.service import DigestService
from bot.digest.window import date_window, parse_week, zone
from bot.errors import AccessError, CodeownersError, FilterError, PrhubError, StoreUnavailableError
from bot.filters import Filter, SubscriptionCommand, Term, check_labels, parse_subscription
from bot.handlers.answers import Answers
from bot.handlers.intents import LinkGitHubIntent, PersonalDigestIntent, SubscribeIntent, UnsubscribeIntent
from bot.handlers.subedit import fit_labels, held_terms, part_edits, part_note, widened
from bot.models import DigestPR, Language, PullRequest
from bot.people import People, Person
from bot.personal import PersonalDigests
from bot.push_spec import describe as describe_push
from bot.replies import GitHubLinkReply, MyDigestReply, PersonalDigestReply, SubscriptionReply
from bot.sources.reads import read_source
from bot.store import Store
from bot.subscriptions import (
    KNOWN_LABEL_WEEKS,
    PREVIEW_WEEKS,
    SubscribeGuard,
    Subscriber,
    Subscription,
    Subscriptions,
    known_labels,
    label_filter,
    preview_alerts,
)
from bot.understand.vocabulary import Vocabulary

__all__ = ["SubscriptionDesk"]


class Asker(Protocol):
    """Where a request was made (:class:`bot.handlers.core.Conversation`), as the desk uses it."""

    @property
    def platform(self) -> str: ...
    @property
    def channel(self) -> str: ...
    @property
    def user(self) -> str: ...
    @property
    def direct(self) -> bool | None: ...
    @property
    def key(self) -> str: ...
    @property
    def person(self) -> Person: ...
    @property
    def subscriber(self) -> Subscriber: ...


class SubscriptionDesk:
    """Subscriptions, the GitHub link and the personal digest, for :class:`~bot.handlers.core.Core`."""

    settings: Settings
    channels: Channels
    answers: Answers
    _subscriptions: Subscriptions
    _people: People
    _personal: PersonalDigests
    _store: Store
    _guard: SubscribeGuard | None
    _clock: Callable[[], datetime]
    digests: DigestService

    def _canonical_label(self, repo: str, label: str) -> str:
        wanted = label.strip().lower()
        aliases = {k.lower(): v.lower() for k, v in self.settings.repo(repo).aliases.items()}
        return aliases.get(wanted, wanted)

    async def subscriptions(self, conversation: Asker) -> tuple[Subscription, ...]:
        """The subscriptions of ``conversation``'s subscriber (its channel), sorted."""
        return await self._subscriptions.of(conversation.subscriber)

    async def _change_subscription(
        self, intent: SubscribeIntent | UnsubscribeIntent, conversation: Asker, lang: Language,
    ) -> SubscriptionReply:
        """Subscribe, unsubscribe or unsubscribe from everything, as ``intent`` asks (see docs/user-guide.md
        "Subscriptions and alerts"): the request is read with the repository's aliases (and, to subscribe, its
        known labels); a channel's subscriptions change only by its admins when the config names any."""
        who = conversation.subscriber
        try:
            command = self._read_parts(intent) or self._read_request(intent)
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
            if isinstance(intent, UnsubscribeIntent) and intent.parts:
                return await self._remove_parts(who, repo, intent, conversation, lang)
            flt = self._filter(intent, command, repo, known=None)
            if isinstance(intent, SubscribeIntent) and intent.add:
                flt = await self._added(who, repo, flt)
            if command.action == "unsubscribe":
                sub = Subscription(repo=repo, filter=flt)
                if await self._subscriptions.remove(who, repo, flt, by=conversation.user, now=self._clock()):
                    return SubscriptionReply("unsubscribed", sub, lang)
                if (edited := await self._remove_part(who, repo, flt, conversation, lang)) is not None:
                    return edited
                said = command.filter  # as said, before the aliases: "docs" names the folder docs/** held
                if said is not None and said != flt and (
                        edited := await self._remove_part(who, repo, said, conversation, lang)) is not None:
                    return edited
                meant = await self._glossed(who, repo, flt)  # 文档: the label doc held
                if meant != flt and (
                        edited := await self._remove_part(who, repo, meant, conversation, lang)) is not None:
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
            if any(s.field == sub.field for s in held):  # say what was left out ("no label trtllm")
                return SubscriptionReply("already_subscribed", sub, lang, message="\n".join(fitted_notes))
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
        preview = await self._preview(flt, repo, conversation, lang) if added else ""
        return SubscriptionReply("subscribed" if added else "already_subscribed", sub, lang, message=message,
                                 batch_minutes=round(self.settings.alerts_batch_s / 60), preview=preview)

    async def _preview(self, flt: Filter, repo: str, conversation: Asker, lang: Language) -> str:
        """What ``flt`` would have sent in the last :data:`~bot.subscriptions.PREVIEW_WEEKS` weeks
        (:func:`~bot.subscriptions.preview_alerts`, the day of the conversation's zone), said in ``lang``;
        ``""`` when the source cannot be read (the subscription is saved all the same)."""
        try:
            source, name = self.channels.resolve_visible(conversation.key, repo)
            tz = self.settings.channel(conversation.key).timezone or self.settings.timezone
            last = self._clock().astimezone(zone(tz)).date()
            first = last - timedelta(weeks=PREVIEW_WEEKS) + timedelta(days=1)
            prs = await read_source(source, source.merged_prs, name, date_window(first, last, tz))
            me = await self._people.github(conversation.person) if flt.uses_me else None
            owners = (await cached_codeowners(self._store, source, name, ttl_s=self.settings.codeowners_ttl_s)
                      if flt.uses_codeowners else None)

            async def analyse(pr: PullRequest) -> DigestPR:
                return await self.digests.pr(pr, language=lang, window_prs=prs)

            found = await preview_alerts(prs, flt, settings=self.settings, repo=name, first=first, last=last,
                                         analyse=analyse, me=me, codeowners=owners, language=lang)
        except (PrhubError, CodeownersError):
            return ""
        return found.text(lang)

    async def _vocabulary(self, repo: str, conversation: Asker) -> Vocabulary | None:
        """``repo``'s vocabulary (authors, paths), or ``None`` when the source cannot be read."""
        try:
            source, name = self.channels.resolve_visible(conversation.key, repo)
            latest = await self.answers.latest(source, name)
            return await self.answers.data_words.vocabulary(source, name, latest[0] if latest else None)
        except PrhubError:
            return None

    async def _added(self, who: Subscriber, repo: str, flt: Filter) -> Filter:
        """``flt`` joined to the one subscription of ``repo`` whose values are of the same kind ("再加个 trtllm" with
        ``vllm sglang`` held: ``vllm sglang trtllm``); ``flt`` alone when there is none, or several."""
        keys = {t.key for t in flt.include}
        held = [s for s in await self._subscriptions.of(who, stored_only=True) if s.repo.lower() == repo.lower()
                and s.filter.include and not s.filter.exclude and {t.key for t in s.filter.include} <= keys | {"label"}]
        if len(held) != 1:
            return flt
        old = held[0].filter.include
        return Filter(include=tuple(dict.fromkeys((*old, *flt.include))))

    def _read_parts(self, intent: SubscribeIntent | UnsubscribeIntent) -> SubscriptionCommand | None:
        """An unsubscription by parts as a command (its words need not read as a filter), else ``None``."""
        if not isinstance(intent, UnsubscribeIntent) or not intent.parts:
            return None
        try:
            return self._read_request(intent)
        except FilterError:
            return SubscriptionCommand("unsubscribe", intent.repo, Filter(), intent.language)

    async def _remove_parts(self, who: Subscriber, repo: str, intent: UnsubscribeIntent, conversation: Asker,
                            lang: Language) -> SubscriptionReply:
        """Take the values ``intent.parts`` names out of the subscriptions held (see
        :attr:`~bot.understand.UnsubscribeIntent.parts`): a whole subscription the request's words name exactly
        goes; else the reply shows each filter before and after, or says which values no subscription holds."""
        parts = intent.parts
        try:
            whole = self._filter(intent, self._read_request(intent), repo, known=None)
        except FilterError:
            whole = None
        if whole is not None and whole.include and await self._subscriptions.remove(
                who, repo, whole, by=conversation.user, now=self._clock()):
            return SubscriptionReply("unsubscribed", Subscription(repo=repo, filter=whole), lang)
        subs = [s for s in await self._subscriptions.of(who, stored_only=True) if s.repo.lower() == repo.lower()]
        terms = held_terms(subs, parts)
        if not terms:
            flt = Filter(include=tuple(Term(key="label", value=p.lower()) for p in parts if ":" not in p))
            return SubscriptionReply("not_subscribed", Subscription(repo=repo, filter=flt), lang)
        removal = Filter(include=tuple(terms))
        edited = await self._remove_part(who, repo, removal, conversation, lang, any_of=True)
        assert edited is not None  # the terms were found among the subscriptions held
        return edited

    async def _glossed(self, who: Subscriber, repo: str, flt: Filter) -> Filter:
        """``flt`` with each label word said in other words (``文档``, ``文件``: the glossary's) replaced by the one
        of those words that a subscription held names as a label (``doc``); unchanged when none does."""
        held = {t.value.lower() for s in await self._subscriptions.of(who, stored_only=True)
                if s.repo.lower() == repo.lower() for t in s.filter.include if t.key == "label"}
        words = glossary()

        def meant(term: Term) -> Term:
            if term.key != "label":
                return term
            return next((Term(key="label", value=w) for w in words.get(term.value.lower(), ()) if w in held), term)

        return Filter(include=tuple(meant(t) for t in flt.include), exclude=flt.exclude, bounds=flt.bounds)

    async def _remove_part(self, who: Subscriber, repo: str, flt: Filter, conversation: Asker,
                           lang: Language, *, any_of: bool = False) -> SubscriptionReply | None:
        """Remove the terms of ``flt`` from the subscriptions that hold them among others ("unsubscribe me
        from rollout" with ``npu rollout``); the reply shows each filter before and after. ``None``: no
        subscription holds them."""
        subs = [s for s in await self._subscriptions.of(who, stored_only=True) if s.repo.lower() == repo.lower()]
        edits = part_edits(subs, flt, any_of=any_of)
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
                 conversation: Asker) -> str:
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

    async def _is_direct(self, conversation: Asker) -> bool:
        """Whether the conversation is the asker's DM with the bot (Slack ``D…``; Feishu: as the door said,
        else as remembered from their messages)."""
        if conversation.direct is not None:
            return conversation.direct
        if conversation.platform == "slack":
            return conversation.channel.startswith("D")
        return await self._people.direct(conversation.person) == conversation.channel

    async def _refusal(self, conversation: Asker, lang: Language) -> str | None:
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

    async def _check_owners(self, flt: Filter, repo: str, conversation: Asker, lang: Language) -> str:
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

    async def _known_labels(self, repo: str, conversation: Asker) -> list[str] | None:
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

    async def _link_github(self, intent: LinkGitHubIntent, conversation: Asker,
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

    async def _personal_digest(self, intent: PersonalDigestIntent, conversation: Asker,
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
