"""The LLM analyzer: one chat completion per PR, merged with the computed facts, cached.

For each PR, :meth:`LLMAnalyzer.analyze_async`:

1. runs the heuristic analyzer (the facts, and the fallback);
2. reads the cache (key: repo, number, merge commit, ``llm``, prompt version,
   model, language — see :func:`analysis_key`); a hit costs no call;
3. renders ``bot/prompts/pr_analysis.j2`` with the PR's text fenced as untrusted
   data, the file list, the facts and the diff excerpts that fit the budget
   (:mod:`bot.digest.llm.excerpts`), asks, validates, re-asks once
   (:mod:`bot.digest.llm.reply`);
4. merges the reply with the facts (:func:`merge_reply`) and caches it; a failed
   call gives the heuristic analysis with ``fallback_reason`` (not cached).

Merge rules (facts come from code, words may come from the model):

- ``importance``, ``insight`` and the verdict (``recommendation.level``) start at
  the heuristic's and move as far as the diff backs the model
  (:func:`bot.digest.llm.evidence.judge`): in a small band without evidence
  (importance ±1, never across the key-PR bar; insight ±2; the verdict stays),
  beyond it only with ``score_evidence`` that checks out against the diff's
  changed code, and not at all when the PR's own text addresses the model. The
  evidence a move rests on is kept in ``Analysis.score_evidence``.
- every computed risk stays (with its evidence); the model may reword its title
  and detail and add at most ``MAX_EXTRA_RISKS`` risks of its own; evidence and
  path-like focus items that are not files of the PR are dropped.
- ``breaking`` and ``reverts`` stay computed; a computed ``revert`` type stays.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from functools import cache
from typing import Any

from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.llm import _litellm
from bot.digest.llm.client import LLMClient
from bot.digest.llm.evidence import IMPORTANCE_BAND, INSIGHT_BAND, band, judge
from bot.digest.llm.excerpts import ExcerptPlan, plan_excerpts
from bot.digest.llm.prompts import Prompt, load_prompt
from bot.digest.llm.reply import AnalysisReply, ask_json
from bot.errors import LLMCallError
from bot.models import Analysis, Coverage, Language, PullRequest, Risk
from bot.store import Store, cache_key, digest_of

MAX_EXTRA_RISKS = 4
MAX_FOCUS = 8
MAX_FILES_LISTED = 150
MAX_BODY_CHARS = 12_000
MAX_REPLY_TOKENS = 1_500
MAX_DIFF_TOKENS = 32_000
LANGUAGE_NAMES: dict[Language, str] = {"zh": "Simplified Chinese (简体中文)", "en": "English"}
_PATHLIKE = re.compile(r"^[\w.@-]+(?:/[\w.@-]+)+$|^[\w@-]+\.[A-Za-z0-9]{1,6}$")


def analysis_key(pr: PullRequest, *, prompt_version: str, model: str, language: Language) -> str:
    """``prhub:analysis:{repo}:{number}:{merge_sha}:llm:{prompt_version}:{model}:{lang}``.

    Without a merge commit (a source that lacks it) the PR's content hash stands in.
    """
    sha = pr.merge_commit_sha or "c-" + digest_of(pr.model_dump(mode="json"))[:16]
    return cache_key("analysis", pr.repo, pr.number, sha, "llm", prompt_version, model, language)


@cache
def context_tokens(model: str, default: int) -> int:
    """The model's input context size from litellm's metadata, else ``default``."""
    try:
        info = _litellm.load().get_model_info(model)
    except Exception:  # litellm raises a bare Exception for models it does not know
        return default
    size = info.get("max_input_tokens") or info.get("max_tokens")
    return int(size) if size else default


class LLMAnalyzer:
    """Per-PR analysis by the model, cached, falling back to the heuristic.

    Args:
        client: the LLM client (its meter counts calls, tokens, cost).
        store: the cache.
        ttl_s: cache lifetime of an analysis, seconds.
        context_default: context size for models litellm has no metadata for.
        prompt: the template; default the shipped ``pr_analysis``.
        heuristic: the fallback and source of the facts.
    """

    def __init__(
        self, *, client: LLMClient, store: Store, ttl_s: int, context_default: int = 8192,
        prompt: Prompt | None = None, heuristic: HeuristicAnalyzer | None = None,
    ) -> None:
        self.client = client
        self.store = store
        self.ttl_s = ttl_s
        self.context_default = context_default
        self.prompt = prompt or load_prompt("pr_analysis")
        self.heuristic = heuristic or HeuristicAnalyzer()
        self.name = f"llm:{client.model}"
        self._preparing = asyncio.Lock()
        self._ahead = asyncio.Semaphore(2 * client.concurrency)

    def key(self, pr: PullRequest, language: Language) -> str:
        """The cache key of ``pr``'s analysis in ``language`` (:func:`analysis_key`; also its job id)."""
        return analysis_key(pr, prompt_version=self.prompt.version, model=self.client.model, language=language)

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis:
        """The analysis of ``pr``: cached, else asked, else the heuristic with ``fallback_reason``.

        Raises:
            LLMStopError: the provider refused the credentials or the quota is spent.
        """
        key = self.key(pr, context.language)
        cached = await self.store.get_json(key)
        if cached is not None:
            self.client.meter.cache_hits += 1
            return Analysis.model_validate(cached)
        # One PR's facts and prompt at a time, each request sent as soon as its prompt is ready: the
        # lock hands over to the next PR only after this one's request has had its turn on the event
        # loop, so the first wave leaves after one prompt, not after every PR's. Prompts are made at
        # most one wave ahead (twice the client's concurrency between prompt and answer): the next
        # wave's while this one is out, not every PR's at once, which would hold up the handling of
        # the answers that free the slots.
        async with self._ahead:
            async with self._preparing:
                base = self.heuristic.analyze(pr, context)
                messages, plan = self._prompt(pr, context, base)
            try:
                reply = await ask_json(self.client, messages, AnalysisReply, max_tokens=MAX_REPLY_TOKENS)
            except LLMCallError as exc:
                self.client.meter.fallbacks += 1
                return base.model_copy(update={"fallback_reason": str(exc)})
        analysis = merge_reply(base, reply, pr, plan.coverage, analyzer=self.name,
                               key_pr_bar=context.repo.key_pr_bar, generated=context.repo.generated_paths)
        await self.store.set_json(key, analysis.model_dump(mode="json"), self.ttl_s)
        return analysis

    def _prompt(self, pr: PullRequest, context: AnalysisContext,
                base: Analysis) -> tuple[list[dict[str, str]], ExcerptPlan]:
        variables = _variables(pr, context, base)
        if not any(f.patch for f in pr.files):
            plan = plan_excerpts(pr.files, budget_tokens=0, count=len, generated=context.repo.generated_paths)
            return self.prompt.render(**variables, excerpts=[], left_out=[]), plan
        model = self.client.model
        litellm = _litellm.load()

        def count(text: str) -> int:
            return int(litellm.token_counter(model=model, text=text))

        bare = self.prompt.render(**variables, excerpts=[], left_out=[])
        used = int(litellm.token_counter(model=model, messages=bare))
        room = context_tokens(model, self.context_default) - used - MAX_REPLY_TOKENS
        budget = max(0, min(MAX_DIFF_TOKENS, int(room * 0.8)))
        plan = plan_excerpts(pr.files, budget_tokens=budget, count=count, generated=context.repo.generated_paths)
        excerpts = [{"path": e.path, "text": e.text, "clipped": e.clipped} for e in plan.excerpts]
        left_out = [{"path": x.path, "reason": x.reason} for x in plan.left_out]
        return self.prompt.render(**variables, excerpts=excerpts, left_out=left_out), plan


def _variables(pr: PullRequest, context: AnalysisContext, base: Analysis) -> dict[str, Any]:
    listed = sorted(pr.files, key=lambda f: -f.changed_lines)[:MAX_FILES_LISTED]
    keep = {f.path for f in listed}
    body = pr.body if len(pr.body) <= MAX_BODY_CHARS else pr.body[:MAX_BODY_CHARS] + "\n… (cut)"
    fence = hashlib.sha256(f"{pr.repo}#{pr.number}\n{pr.title}\n{pr.body}".encode()).hexdigest()[:12]
    return {
        "repo": pr.repo, "number": pr.number, "merged_at": pr.merged_at.isoformat(), "author": pr.author or "-",
        "files_total": len(pr.files) or pr.changed_files, "additions": pr.additions, "deletions": pr.deletions,
        "fence": fence, "title": pr.title, "body": body.strip(),
        "files": [{"path": f.path, "status": f.status, "additions": f.additions if f.additions is not None else "?",
                   "deletions": f.deletions if f.deletions is not None else "?"}
                  for f in pr.files if f.path in keep],
        "files_omitted": max(0, len(pr.files) - len(listed)),
        "facts": {
            "change_type": base.change_type, "breaking": base.breaking, "importance": base.importance,
            "insight": base.insight, "level": base.recommendation.level, "minutes": base.recommendation.minutes,
            "risks": [{"kind": r.kind, "detail": r.detail, "evidence": list(r.evidence)} for r in base.risks],
            "changes": [f"{f.kind} {f.name or f.path}" for f in base.facts], "sentence": base.summary,
        },
        "importance_band": band(base.importance, IMPORTANCE_BAND, bar=context.repo.key_pr_bar),
        "insight_band": band(base.insight, INSIGHT_BAND),
        "key_pr_bar": context.repo.key_pr_bar,
        "language_name": LANGUAGE_NAMES[context.language],
    }


def _pathlike(text: str) -> bool:
    return bool(_PATHLIKE.match(text.strip().strip("`")))


def merge_reply(
    base: Analysis, reply: AnalysisReply, pr: PullRequest, coverage: Coverage, *, analyzer: str,
    key_pr_bar: int = 6, generated: tuple[str, ...] = (),
) -> Analysis:
    """The model's analysis bounded by the facts (see the module docstring for the rules).

    Args:
        base: the heuristic analysis of ``pr``.
        reply: the validated reply.
        pr: the PR (its files bound evidence and focus; its diff checks ``score_evidence``).
        coverage: what the prompt held.
        analyzer: the analyzer name recorded (``llm:MODEL``).
        key_pr_bar: the repository's key-PR importance (the band never crosses it).
        generated: the repository's generated-file globs (never evidence).
    """
    paths = {f.path for f in pr.files} | {f.previous_path for f in pr.files if f.previous_path}
    judgement = judge(base, reply.importance, reply.insight, reply.recommendation.level, reply.score_evidence, pr,
                      key_pr_bar=key_pr_bar, generated=generated)
    by_kind = {r.kind: r for r in reply.risks}
    risks: list[Risk] = []
    for computed in base.risks:
        said = by_kind.get(computed.kind)
        extra = [e for e in (said.evidence if said else []) if e in paths and e not in computed.evidence]
        risks.append(Risk(kind=computed.kind, title=said.title if said else computed.title,
                          detail=said.detail if said and said.detail else computed.detail,
                          evidence=(*computed.evidence, *extra)))
    known = {r.kind for r in base.risks}
    for own in [r for r in reply.risks if r.kind not in known][:MAX_EXTRA_RISKS]:
        risks.append(Risk(kind=own.kind, title=own.title, detail=own.detail,
                          evidence=tuple(dict.fromkeys(e for e in own.evidence if e in paths))))
    focus = [f.strip() for f in reply.recommendation.focus
             if f.strip() and (not _pathlike(f) or f.strip().strip("`") in paths)][:MAX_FOCUS]
    return Analysis(
        summary=reply.summary.strip() or base.summary,  # the composed summary where the model wrote none
        change_type="revert" if base.change_type == "revert" else reply.change_type,
        breaking=base.breaking,
        importance=judgement.importance,
        insight=judgement.insight,
        risks=tuple(risks),
        recommendation=base.recommendation.model_copy(update={
            "level": judgement.level, "minutes": max(1, reply.recommendation.minutes),
            "reason": reply.recommendation.reason.strip(),
            "focus": tuple(focus) or base.recommendation.focus,
        }),
        key_points=tuple(p.strip() for p in reply.key_points if p.strip())[:6] or base.key_points,
        coverage=coverage,
        status="llm",
        reverts=base.reverts,
        analyzer=analyzer,
        language=base.language,
        score_evidence=judgement.evidence,
        facts=base.facts,
    )
