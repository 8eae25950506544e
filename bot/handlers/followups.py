"""The conversation around a request: follow-ups resolved against the thread's last request, the reply's
language chosen for the person, small talk answered.

:class:`Conversations` is the part of :class:`bot.handlers.core.Core` that remembers
(:class:`bot.threads.ThreadMemory`):

- :meth:`Conversations.resolve` turns a :class:`~bot.understand.FollowUpIntent` ("那上周呢", "and #6029?",
  "有啥风险", "那个 fp8 padding 的 PR 有啥风险") into a whole request with the thread's last one
  (:func:`bot.understand.followup.resolve`; words that pick a PR are searched in that request's window),
  and keeps every request it answers as the thread's last;
- :meth:`Conversations.language` is the reply's language: the message's own, else the person's last
  one (their previous messages), else their platform locale when the door knows it, else the channel's,
  else the configured default;
- :func:`small_talk_text` is the one friendly line for thanks, greetings and praise.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from bot.config import Settings
from bot.errors import PrhubError
from bot.handlers.threads import ThreadMemory
from bot.models import Language
from bot.understand import ClarifyIntent, FollowUpIntent, Intent, PRIntent, QuestionIntent, SmallTalkIntent
from bot.understand.followup import names_one_pr, question_of, remembered
from bot.understand.followup import resolve as resolve_follow_up
from bot.understand.inherit import inherit
from bot.understand.intents import SmallTalkKind


class Conversation(Protocol):
    """Where a request was made (:class:`bot.handlers.core.Conversation`)."""

    @property
    def platform(self) -> str: ...
    @property
    def channel(self) -> str: ...
    @property
    def user(self) -> str: ...
    @property
    def thread(self) -> str | None: ...
    @property
    def locale(self) -> str | None: ...


class PickPRs(Protocol):
    async def pick_prs(self, terms: tuple[str, ...], window: str | None, label: str | None,
                       conversation: Any) -> list[int]: ...

    async def fitted(self, intent: QuestionIntent, conversation: Any) -> QuestionIntent: ...


class Core(Protocol):
    """What the conversation needs of :class:`bot.handlers.core.Core`."""

    settings: Settings

    @property
    def answers(self) -> PickPRs: ...

    def now(self) -> datetime: ...

    def language(self, intent: Intent | None, conversation: Any) -> Language: ...


__all__ = ["Conversations", "small_talk_text"]

log = logging.getLogger(__name__)

_SMALL_TALK: dict[Language, dict[SmallTalkKind, str]] = {
    "zh": {
        "thanks": "不客气！有需要随时 @ 我。",
        "greeting": "你好！可以问我“上周周报”“#6046 值得读吗”或“订阅 npu”。",
        "praise": "谢谢，很高兴帮上忙！",
        "ack": "好的。",
        "how_are_you": "挺好的，随时可以帮你看 PR。",
        "bye": "回头见！",
        "complaint": "抱歉！整周的分析要读很多 PR，可能要几秒；说具体点（比如“#6046 有啥风险”）会更快更准。",
    },
    "en": {
        "thanks": "You're welcome — mention me any time.",
        "greeting": "Hi! Try “last week's digest”, “is #6046 worth reading?” or “subscribe npu”.",
        "praise": "Thanks, glad it helps!",
        "ack": "OK.",
        "how_are_you": "All good — ready to look at PRs with you.",
        "bye": "See you!",
        "complaint": "Sorry! A whole week's analysis reads many PRs and can take a few seconds; a precise ask "
                     "(“risks of #6046”) is faster and sharper.",
    },
}


def small_talk_text(intent: SmallTalkIntent, language: Language) -> str:
    """The one friendly line for ``intent`` in ``language``."""
    return _SMALL_TALK[language][intent.kind]


class Conversations:
    """Follow-ups and reply languages for :class:`~bot.handlers.core.Core`.

    Args:
        core: the chat core (its settings, channels, clock and answers).
        memory: where threads and languages are kept.
    """

    def __init__(self, core: Core, memory: ThreadMemory) -> None:
        self.core = core
        self.memory = memory

    async def resolve(self, intent: Intent, conversation: Conversation) -> Intent:
        """``intent`` made whole with the thread's last request (a follow-up), kept as the thread's last."""
        resolved = intent
        c = conversation
        if isinstance(intent, FollowUpIntent):
            previous = await self.memory.recall(c.platform, c.channel, c.thread, c.user)
            lang = intent.language or (previous.language if previous is not None else None)
            follow = replace(intent, language=lang)
            if intent.terms and intent.question is not None:
                resolved = await self._pick(follow, previous, conversation)
            else:
                resolved = resolve_follow_up(follow, previous, tz=self.core.settings.timezone, now=self.core.now())
            log.info("follow-up %r read as %s", intent.text[:60], type(resolved).__name__)
        else:  # in a thread: what the message leaves unsaid comes from the thread's own last request
            resolved = inherit(intent, await self.memory.recall_thread(c.platform, c.channel, c.thread))
        if isinstance(resolved, QuestionIntent):  # "fully async": the data's fully_async
            resolved = await self.core.answers.fitted(resolved, conversation)
            if names_one_pr(resolved.text):
                resolved = await self._one(resolved, conversation)
        record = remembered(resolved)
        if record is not None:
            await self.memory.remember(c.platform, c.channel, c.thread, c.user, record)
        language = getattr(intent, "language", None)
        if language is not None and not isinstance(intent, FollowUpIntent):
            await self.memory.set_language(c.platform, c.user, language)
        return resolved

    async def _pick(self, follow: FollowUpIntent, previous: object, conversation: Conversation) -> Intent:
        """The PR the words of ``follow`` pick in the last request's window (``那个 fp8 padding 的 PR``): the one
        match, or a question back naming the candidates."""
        from bot.understand.followup import Remembered

        prev = previous if isinstance(previous, Remembered) else None
        window = prev.window if prev is not None and prev.kind != "pr" else None
        label = prev.label if prev is not None else None
        try:
            found = await self.core.answers.pick_prs(follow.terms, window, label, conversation)
        except PrhubError as exc:
            log.info("could not search for %s: %s", follow.terms, exc)
            found = []
        if len(found) == 1:
            return PRIntent(found[0], language=follow.language, question=follow.question or "worth")
        if not found:
            return ClarifyIntent(follow.text, "no_pr", "pr", language=follow.language)
        return ClarifyIntent(", ".join(f"#{n}" for n in found[:6]), "which_pr", "pr", language=follow.language)

    async def _one(self, asked: QuestionIntent, conversation: Conversation) -> Intent:
        """``那个 fully async 的 PR``: one PR named by its words — that PR when they pick one, else a question back
        naming the candidates; the search itself when they pick none (its answer names the words it dropped)."""
        try:
            found = await self.core.answers.pick_prs(asked.terms, asked.window, asked.label, conversation)
        except PrhubError as exc:
            log.info("could not search for %s: %s", asked.terms, exc)
            return asked
        if len(found) == 1:
            return PRIntent(found[0], repo=asked.repo, language=asked.language,
                            question=question_of(asked.text) or "worth")
        if len(found) > 1:
            return ClarifyIntent(", ".join(f"#{n}" for n in found[:6]), "which_pr", "pr", language=asked.language)
        return asked

    async def language(self, intent: Intent | None, conversation: Conversation) -> Language:
        """The reply language: the message's, the person's last, their locale, the channel's, the default."""
        lang = getattr(intent, "language", None) if intent is not None else None
        if lang is not None:
            return lang  # type: ignore[no-any-return]
        mine = await self.memory.language(conversation.platform, conversation.user)
        if mine is not None:
            return mine
        locale = (conversation.locale or "").lower()
        if locale.startswith("zh"):
            return "zh"
        if locale.startswith("en"):
            return "en"
        return self.core.language(None, conversation)
