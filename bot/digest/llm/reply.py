"""The model's JSON replies: taking the one object out of the text, validating it, re-asking once.

Accepted: a reply that is one JSON object, the object inside a Markdown code
fence, or the object with prose around it. Nothing is repaired: a reply that is
none of these, fails validation or was cut off (``finish_reason == "length"``)
gets ONE re-ask quoting the problem; a second failure is an
:class:`~bot.errors.LLMCallError` and the caller falls back to the heuristic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.digest.llm.client import LLMClient
from bot.errors import LLMCallError
from bot.models import ChangeType, RecommendationLevel

_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)```", re.S)
_REASK = ("Your previous reply could not be used: {problem}\n"
          "Answer again with exactly one JSON object in the shape described, and nothing else.")

ReplyT = TypeVar("ReplyT", bound=BaseModel)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class RiskReply(_Reply):
    """One risk as the model writes it; ``kind`` is a snake_case id."""

    kind: str = Field(pattern=r"^[a-z][a-z0-9_]{1,48}$")
    title: str = Field(min_length=1, max_length=200)
    detail: str = Field(default="", max_length=1000)
    evidence: list[str] = Field(default_factory=list, max_length=30)


class RecommendationReply(_Reply):
    """The model's reading advice."""

    level: RecommendationLevel
    minutes: int = Field(ge=0, le=24 * 60)
    reason: str = Field(min_length=1, max_length=1000)
    focus: list[str] = Field(default_factory=list, max_length=20)


EvidenceChange = Literal["removed", "renamed", "default", "added", "changed"]
_CHANGES = frozenset(("removed", "renamed", "default", "added", "changed"))
_CHANGE_WORDS = {"deleted": "removed", "remove": "removed", "removal": "removed", "delete": "removed",
                 "rename": "renamed", "default_changed": "default", "changed_default": "default",
                 "add": "added", "new": "added"}


class EvidenceReply(_Reply):
    """One place in the diff the model cites for moving a score beyond the band around the
    heuristic's (:mod:`bot.digest.llm.evidence` checks it against the diff).

    ``path`` is a file of the PR (``file`` is accepted too); ``change`` what the diff does
    there; ``name`` an identifier (function, class, parameter, config field, flag) and/or
    ``line`` one changed line quoted from the diff — at least one of the two; ``why`` the
    reason in a few words.
    """

    path: str = Field(min_length=1, max_length=500)
    change: EvidenceChange = "changed"
    name: str = Field(default="", max_length=200)
    line: str = Field(default="", max_length=500)
    why: str = Field(default="", max_length=500)

    @model_validator(mode="before")
    @classmethod
    def _file_is_path(cls, data: Any) -> Any:
        if isinstance(data, dict) and "path" not in data and "file" in data:
            return {**data, "path": data["file"]}
        return data

    @field_validator("change", mode="before")
    @classmethod
    def _change_word(cls, value: Any) -> Any:
        """Other words for the same claims; an unknown one is the weakest claim, ``changed``."""
        if not isinstance(value, str):
            return value
        word = value.strip().lower().replace("-", "_").replace(" ", "_")
        return _CHANGE_WORDS.get(word, word if word in _CHANGES else "changed")

    @model_validator(mode="after")
    def _names_something(self) -> EvidenceReply:
        if not self.name.strip() and not self.line.strip():
            raise ValueError("each score_evidence item needs a name or a quoted changed line")
        return self


class AnalysisReply(_Reply):
    """The per-PR reply (``prompts/pr_analysis.j2`` documents it to the model).

    ``importance`` and ``insight`` are plain integers here: the analyzer bounds
    them (a number out of range is not worth a re-ask). ``score_evidence`` backs a
    score or verdict beyond the band around the heuristic's; without it the band holds.
    """

    summary: str = Field(min_length=1, max_length=3000)
    change_type: ChangeType
    importance: int
    insight: int
    risks: list[RiskReply] = Field(default_factory=list, max_length=20)
    recommendation: RecommendationReply
    key_points: list[str] = Field(default_factory=list, max_length=12)
    score_evidence: list[EvidenceReply] = Field(default_factory=list, max_length=12)

    @field_validator("score_evidence", mode="before")
    @classmethod
    def _no_evidence(cls, value: Any) -> Any:
        return [] if value is None else value


class NarrativeReply(_Reply):
    """The digest narrative reply (``prompts/digest_summary.j2``)."""

    executive_summary: str = Field(min_length=1, max_length=4000)
    highlights: list[str] = Field(default_factory=list, max_length=12)
    trend_notes: dict[str, str] = Field(default_factory=dict)
    suggestions: list[str] = Field(default_factory=list, max_length=12)


def extract_json_object(text: str) -> Any:
    """The one JSON object of a reply: the whole text, else a fenced block, else the first
    ``{…}`` that parses (prose around it is ignored).

    Raises:
        ValueError: no JSON object found.
    """
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ValueError("the reply holds no JSON object")


async def ask_json(
    client: LLMClient, messages: list[dict[str, str]], model: type[ReplyT], *, max_tokens: int,
    check: Callable[[ReplyT], None] | None = None,
) -> ReplyT:
    """Ask, validate, re-ask once with the problem, then give up.

    Args:
        client: the LLM client.
        messages: the prompt's chat messages.
        model: the pydantic model of the expected reply.
        max_tokens: completion limit per attempt.
        check: extra validation of a parsed reply; raises ``ValueError`` with a message
            the model can act on.

    Returns:
        The validated reply.

    Raises:
        LLMCallError: both attempts failed (the message says why the second did), or the
            call itself failed.
        LLMStopError: from the client (auth, quota).
    """
    problem = ""
    for attempt in (1, 2):
        completion = await client.complete(messages, max_tokens=max_tokens)
        if completion.finish_reason == "length":
            problem = "the reply was cut off (finish_reason=length); keep every text shorter"
        else:
            try:
                reply = model.model_validate(extract_json_object(completion.text))
                if check is not None:
                    check(reply)
                return reply
            except ValidationError as exc:
                problem = "invalid JSON object: " + "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'root'}: {e['msg']}" for e in exc.errors()[:5])
            except ValueError as exc:
                problem = str(exc)
        if attempt == 1:
            messages = [*messages, {"role": "assistant", "content": completion.text},
                        {"role": "user", "content": _REASK.format(problem=problem)}]
    raise LLMCallError(f"no valid reply after one re-ask: {problem}")
