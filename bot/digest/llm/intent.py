"""When the rules do not understand a message: the model maps it to one of the same intents.

:meth:`IntentReader.read` sends the message (fenced as untrusted data) with the list of
requests and the JSON schema of :class:`IntentReply` (``bot/prompts/intent.j2``); the
reply is validated by pydantic and then against the message itself:

- ``intent`` is one of the read-only requests (digest, pr, compare, label, merged,
  question, subscriptions, help) — the model never subscribes, unsubscribes or acts;
- PR numbers, the label and the search words must occur in the message (nothing invented);
- the window must be a window spec that :func:`bot.digest.window.window_from_spec` lays out;
- each intent has what it needs (one number for ``pr``, two to six for ``compare``, a label,
  search words).

An invalid reply gets one re-ask with the problem (:func:`bot.digest.llm.reply.ask_json`);
a second failure, a failed call or a stopped model give ``None``: the caller shows the
help with the nearest examples. Nothing is cached (messages are rarely repeated).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.digest.llm.client import LLMClient
from bot.digest.llm.prompts import Prompt, load_prompt
from bot.digest.llm.reply import ask_json
from bot.digest.window import SPEC_FORMS, zone
from bot.digest.window import window_from_spec as lay_out
from bot.errors import LLMError, WindowError
from bot.models import Language
from bot.understand import (
    MAX_COMPARED,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PRIntent,
    QuestionIntent,
    normalize,
)

__all__ = ["IntentReader", "IntentReply"]

log = logging.getLogger(__name__)

MAX_REPLY_TOKENS = 300
SAID_CHARS = 40
"""Characters of the message the window echo quotes for a model's reading."""
_LABEL = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$"


class IntentReply(BaseModel):
    """Which request of prhub one chat message makes (the prompt quotes this model's JSON schema)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    intent: Literal["digest", "pr", "compare", "label", "merged", "question", "subscriptions", "help"]
    numbers: list[int] = Field(default_factory=list, max_length=MAX_COMPARED,
                               description="PR numbers copied from the message")
    what: bool = Field(default=False, description="pr only: the message asks what the PR does")
    label: str | None = Field(default=None, pattern=_LABEL, description="label copied from the message")
    window: str | None = Field(default=None, max_length=40, description="a window spec, or null")
    terms: list[str] = Field(default_factory=list, max_length=6,
                             description="question only: search words copied from the message")


def _check(reply: IntentReply, text: str, *, tz: str, now: datetime) -> None:
    """Raise ``ValueError`` (the re-ask quotes it) when the reply is not grounded in the message."""
    digits = {int(n) for n in re.findall(r"[0-9]{1,7}", text)}
    invented = [n for n in reply.numbers if n not in digits or n < 1]
    if invented:
        raise ValueError(f"numbers {invented} do not occur in the message")
    lowered = text.lower()
    if reply.label is not None and reply.label.lower() not in lowered:
        raise ValueError(f"the label {reply.label!r} does not occur in the message")
    missing = [t for t in reply.terms if not t.strip() or t.strip().lower() not in lowered or len(t) > 60]
    if missing:
        raise ValueError(f"the terms {missing} do not occur in the message as written")
    if reply.window is not None:
        try:
            lay_out(reply.window, tz=tz, now=now)
        except WindowError as exc:
            raise ValueError(f"window {reply.window!r} is not a window spec: {exc}") from exc
    need = {
        "pr": (len(set(reply.numbers)) == 1, "a pr reading needs exactly one number"),
        "compare": (len(set(reply.numbers)) >= 2, "a compare reading needs two to six numbers"),
        "label": (reply.label is not None, "a label reading needs the label"),
        "question": (bool(reply.terms), "a question reading needs its search words in terms"),
    }
    ok, problem = need.get(reply.intent, (True, ""))
    if not ok:
        raise ValueError(problem)


def to_intent(reply: IntentReply, *, language: Language | None, said: str) -> Intent:
    """The intent a validated reply names (``said``: the message, kept on help and questions)."""
    numbers = tuple(dict.fromkeys(reply.numbers))
    window = reply.window.strip() if reply.window else None
    quoted = said if len(said) <= SAID_CHARS else said[: SAID_CHARS - 1] + "…"
    said_window = quoted if window else None  # the echo quotes the message: "I read … as 2026-W16"
    match reply.intent:
        case "digest":
            return DigestIntent(week=window, language=language, said=said_window)
        case "pr":
            return PRIntent(numbers[0], language=language, question="what" if reply.what else "worth")
        case "compare":
            return CompareIntent(numbers, language=language)
        case "label":
            assert reply.label is not None  # checked
            return LabelIntent(reply.label.lower(), language=language, window=window, said=said_window)
        case "merged":
            return MergedIntent(window, language=language, said=said_window)
        case "question":
            terms = tuple(dict.fromkeys(t.strip() for t in reply.terms))
            return QuestionIntent(terms, window=window, language=language, said=said_window, text=said)
        case "subscriptions":
            return ListSubscriptionsIntent(language=language)
    return HelpIntent(language=language, said=said)


class IntentReader:
    """Maps a message the rules did not understand to an intent, with the model.

    Args:
        client: the LLM client (its meter counts the calls).
        prompt: the template; default the shipped ``intent``.
    """

    def __init__(self, *, client: LLMClient, prompt: Prompt | None = None) -> None:
        self.client = client
        self.prompt = prompt or load_prompt("intent")

    async def read(self, text: str, *, language: Language | None, tz: str, now: datetime) -> Intent | None:
        """The intent of ``text``, or ``None`` when the model cannot give a valid one.

        Args:
            text: the message as received (normalised and cut as the rules cut it).
            language: the message's language (:func:`bot.understand.detect_language`).
            tz: the time zone windows are laid out in (checks the reply's window).
            now: the current instant (aware).

        Returns:
            An intent (``HelpIntent`` when the model says help), or ``None`` after an
            invalid reply and its re-ask, a failed call, or a model that cannot be used.
        """
        clean = normalize(text)
        if not clean:
            return None
        today = now.astimezone(zone(tz)).date()
        messages = self.prompt.render(
            fence=secrets.token_hex(6), text=clean, spec_forms=SPEC_FORMS,
            today=f"{today.isoformat()} ({today.strftime('%A')})",
            schema=json.dumps(IntentReply.model_json_schema(), ensure_ascii=False),
        )
        try:
            reply = await ask_json(self.client, messages, IntentReply, max_tokens=MAX_REPLY_TOKENS,
                                   check=lambda r: _check(r, clean, tz=tz, now=now))
        except LLMError as exc:
            log.info("the model could not read the message: %s", exc)
            return None
        return to_intent(reply, language=language, said=clean)
