"""The model phrases the answer to a question over the PRs the search found, with citations.

:meth:`AnswerWriter.phrase` sends the question and ONLY the matched PRs of an
:class:`~bot.digest.ask.Answer` (number, title, labels, the analysis summary, what
matched), fenced as untrusted data (``bot/prompts/answer.j2``). The reply is a list of
claims, each citing PRs by number. A claim is **dropped** when it cites no PR, or cites
(in ``prs`` or as ``#N`` in its text) any PR the answer does not list — so a PR outside
the window can never be named. The deterministic answer (the matches and their
evidence) is always shown; the claims only sum it up above it.

Nothing is phrased for an answer without matches ("none in that window" is said by the
answer itself, never by the model). A failed call or an invalid reply gives ``None``.
Phrasings are cached in the store by the answer's content, prompt version, model and
language when a store is given.
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.digest.ask import Answer, Claim, Phrasing
from bot.digest.llm.analyzer import LANGUAGE_NAMES
from bot.digest.llm.client import LLMClient
from bot.digest.llm.prompts import Prompt, load_prompt
from bot.digest.llm.reply import ask_json
from bot.errors import LLMError
from bot.store import Store, cache_key, digest_of

__all__ = ["AnswerReply", "AnswerWriter", "keep_cited"]

log = logging.getLogger(__name__)

MAX_CLAIMS = 5
MAX_REPLY_TOKENS = 800
_PR_REF = re.compile(r"#\s?([0-9]{1,7})(?![0-9])")


class ClaimReply(BaseModel):
    """One claim as the model writes it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    text: str = Field(min_length=1, max_length=600)
    prs: list[int] = Field(default_factory=list, max_length=10)


class AnswerReply(BaseModel):
    """The reply of ``bot/prompts/answer.j2``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    claims: list[ClaimReply] = Field(default_factory=list, max_length=20)


def keep_cited(reply: AnswerReply, allowed: set[int], *, model: str = "") -> Phrasing:
    """The claims that cite at least one PR and only PRs of ``allowed``; the rest counted as dropped."""
    kept: list[Claim] = []
    dropped = 0
    for claim in reply.claims:
        cited = set(claim.prs) | {int(n) for n in _PR_REF.findall(claim.text)}
        text = " ".join(claim.text.split())
        if not claim.prs or not cited <= allowed or not text:
            dropped += 1
            continue
        kept.append(Claim(text=text, prs=tuple(dict.fromkeys(claim.prs))))
    return Phrasing(claims=tuple(kept[:MAX_CLAIMS]), dropped=dropped + max(0, len(kept) - MAX_CLAIMS), model=model)


def _payload(answer: Answer) -> dict[str, Any]:
    prs = []
    for match in answer.matches:
        analysis = match.pr.analysis
        prs.append({
            "number": match.pr.number, "title": match.pr.title, "labels": list(match.pr.labels[:6]),
            "level": analysis.recommendation.level if analysis else "",
            "importance": analysis.importance if analysis else "",
            "summary": analysis.summary[:600] if analysis else "",
            "evidence": [{"term": e.term, "kind": e.kind, "path": e.path, "text": e.text} for e in match.evidence],
        })
    return {"repo": answer.digest.repo, "window": answer.digest.window.name, "question": answer.question,
            "terms": list(answer.terms), "language": answer.digest.language, "prs": prs}


class AnswerWriter:
    """Phrases question answers with the model.

    Args:
        client: the LLM client.
        store: where phrasings are cached (``None``: not cached).
        ttl_s: cache lifetime, seconds.
        prompt: the template; default the shipped ``answer``.
    """

    def __init__(self, *, client: LLMClient, store: Store | None = None, ttl_s: int = 86_400,
                 prompt: Prompt | None = None) -> None:
        self.client = client
        self.store = store
        self.ttl_s = ttl_s
        self.prompt = prompt or load_prompt("answer")

    async def phrase(self, answer: Answer) -> Phrasing | None:
        """The model's claims over ``answer.matches``, or ``None`` (no matches, a failed or
        invalid reply). Never raises for a model failure."""
        if answer.none:
            return None
        payload = _payload(answer)
        key = cache_key("answer", answer.digest.repo, answer.digest.window.name, digest_of(payload),
                        self.prompt.version, self.client.model, answer.digest.language)
        allowed = {m.pr.number for m in answer.matches}
        if self.store is not None and (cached := await self.store.get_json(key)) is not None:
            self.client.meter.cache_hits += 1
            return keep_cited(AnswerReply.model_validate(cached), allowed, model=self.client.model)
        messages = self.prompt.render(
            repo=answer.digest.repo, window=answer.digest.window.name, fence=secrets.token_hex(6),
            question=answer.question or " ".join(answer.terms), prs=payload["prs"], max_claims=MAX_CLAIMS,
            language_name=LANGUAGE_NAMES[answer.digest.language],
        )
        try:
            reply = await ask_json(self.client, messages, AnswerReply, max_tokens=MAX_REPLY_TOKENS)
        except LLMError as exc:
            log.info("the model could not phrase the answer: %s", exc)
            self.client.meter.fallbacks += 1
            return None
        if self.store is not None:
            await self.store.set_json(key, reply.model_dump(mode="json"), self.ttl_s)
        return keep_cited(reply, allowed, model=self.client.model)
