"""The digest narrative written by the model: one call over the per-PR analyses.

:meth:`Narrator.narrate` takes a digest assembled with the heuristic narrative
and, when the model answers well, replaces its words: ``executive_summary``,
``highlights``, the trend notes and ``suggestions`` (``narrative_source =
"llm"``). Everything else — counts, key PRs, risk roll-up, headline, key
changes — stays computed. The prompt (``bot/prompts/digest_summary.j2``) holds
the analyses and the computed numbers, never raw diffs.

The reply may name only PRs of the digest (``#N``; anything else gets the
re-ask) and notes only for labels that exist (others are ignored). It is cached
under a key made of a hash of what the prompt was written from (the analyses,
counts, trends and risks), the prompt version, the model and the language. On
failure the heuristic text stands and the fallback is counted.
"""

from __future__ import annotations

import re
from typing import Any

from bot.digest.aggregate import by_importance
from bot.digest.compose import pr_sentence
from bot.digest.llm.analyzer import LANGUAGE_NAMES
from bot.digest.llm.client import LLMClient
from bot.digest.llm.prompts import Prompt, load_prompt
from bot.digest.llm.reply import NarrativeReply, ask_json
from bot.errors import LLMCallError
from bot.models import Digest
from bot.store import Store, cache_key, digest_of

MAX_REPLY_TOKENS = 2_000
MAX_ITEMS = 6
_PR_REF = re.compile(r"#(\d+)\b")


def _payload(digest: Digest) -> dict[str, Any]:
    """What the prompt is written from (and the cache key hashes)."""
    prs = []
    for pr in by_importance(digest.prs):
        a = pr.analysis
        if a is None:
            continue
        prs.append({
            "number": pr.number, "title": pr.title, "labels": list(pr.labels[:4]), "change_type": a.change_type,
            "importance": a.importance, "insight": a.insight, "level": a.recommendation.level,
            "risks": [r.kind for r in a.risks], "summary": a.summary, "status": a.status,
            "facts": [f"{f.kind}: {f.name or f.path}" for f in a.facts],
            "sentence": pr_sentence(pr, digest.language),
        })
    return {
        "repo": digest.repo, "window": digest.window.name, "language": digest.language,
        "stats": digest.stats.model_dump(mode="json"), "pending": list(digest.pending),
        "trends": [{"label": t.label, "count": t.count} for t in digest.trends],
        "risks": [{"kind": r.kind, "count": r.count, "pr_numbers": list(r.pr_numbers)} for r in digest.risk_rollup],
        "prs": prs, "threads": digest.executive_summary, "advice": list(digest.suggestions),
    }


def narrative_key(digest: Digest, *, prompt_version: str, model: str) -> str:
    """``prhub:narrative:{repo}:{window}:{sha256 of the inputs}:{prompt_version}:{model}:{lang}``."""
    return cache_key("narrative", digest.repo, digest.window.name, digest_of(_payload(digest)),
                     prompt_version, model, digest.language)


class Narrator:
    """Writes a digest's narrative with the model.

    Args:
        client: the LLM client (shares the analyzer's meter).
        store: the cache.
        ttl_s: cache lifetime, seconds.
        prompt: the template; default the shipped ``digest_summary``.
    """

    def __init__(self, *, client: LLMClient, store: Store, ttl_s: int, prompt: Prompt | None = None) -> None:
        self.client = client
        self.store = store
        self.ttl_s = ttl_s
        self.prompt = prompt or load_prompt("digest_summary")

    async def narrate(self, digest: Digest) -> Digest:
        """``digest`` with the model's narrative, or unchanged when there is nothing to
        narrate or the model failed.

        Raises:
            LLMStopError: credentials refused or quota spent.
        """
        if not digest.prs:
            return digest
        key = narrative_key(digest, prompt_version=self.prompt.version, model=self.client.model)
        cached = await self.store.get_json(key)
        if cached is not None:
            self.client.meter.cache_hits += 1
            return apply_narrative(digest, NarrativeReply.model_validate(cached))
        payload = _payload(digest)
        numbers = {pr.number for pr in digest.prs}

        def check(reply: NarrativeReply) -> None:
            texts = [reply.executive_summary, *reply.highlights, *reply.suggestions, *reply.trend_notes.values()]
            unknown = sorted({int(n) for text in texts for n in _PR_REF.findall(text)} - numbers)
            if unknown:
                raise ValueError(f"it names {', '.join(f'#{n}' for n in unknown)}, which are not PRs of this digest")

        messages = self.prompt.render(
            repo=digest.repo, window=digest.window.name, period=f"{digest.window.start.date()} .. "
            f"{digest.window.end.date()}", stats=payload["stats"], pending=payload["pending"],
            trends=payload["trends"], risks=payload["risks"], prs=payload["prs"], threads=payload["threads"],
            advice=payload["advice"], language_name=LANGUAGE_NAMES[digest.language],
        )
        try:
            reply = await ask_json(self.client, messages, NarrativeReply, max_tokens=MAX_REPLY_TOKENS, check=check)
        except LLMCallError:
            self.client.meter.fallbacks += 1
            return digest
        await self.store.set_json(key, reply.model_dump(mode="json"), self.ttl_s)
        return apply_narrative(digest, reply)


def apply_narrative(digest: Digest, reply: NarrativeReply) -> Digest:
    """Put the reply's words into ``digest``; numbers and computed sections are untouched.

    Trend notes are replaced only for labels of the digest; the computed note about
    pending PRs stays the last suggestion. A part the model did not write — an empty summary, highlights or
    follow-ups none of which names a PR of the digest — keeps the composed words
    (:mod:`bot.digest.compose`), never pasted text.
    """
    known = {str(pr.number) for pr in digest.prs}

    def names_a_pr(text: str) -> bool:
        return any(n in known for n in _PR_REF.findall(text))

    notes = {k.strip(): v.strip() for k, v in reply.trend_notes.items() if v.strip()}
    trends = tuple(t.model_copy(update={"note": notes[t.label]}) if t.label in notes else t for t in digest.trends)
    # a follow-up names the PR it is about (no advice without a fact); one that names none falls back
    suggestions = [s.strip() for s in reply.suggestions if s.strip() and names_a_pr(s)][:MAX_ITEMS]
    if digest.pending and digest.suggestions:
        suggestions.append(digest.suggestions[-1])
    return digest.model_copy(update={
        "executive_summary": reply.executive_summary.strip() or digest.executive_summary,
        "highlights": tuple(h.strip() for h in reply.highlights if h.strip() and names_a_pr(h))[:MAX_ITEMS]
        or digest.highlights,
        "trends": trends,
        "suggestions": tuple(suggestions) or digest.suggestions,
        "narrative_source": "llm",
    })
