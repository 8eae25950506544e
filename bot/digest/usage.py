"""A mutable counter of LLM usage for one run, shared by the analyzer and the narrator.

Everything runs on one event loop, so plain attribute updates need no lock.
:meth:`UsageMeter.snapshot` freezes the counts into the
:class:`~bot.models.LLMUsage` a digest carries.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import LLMUsage


@dataclass
class UsageMeter:
    """Counts of one run; see :class:`~bot.models.LLMUsage` for the meaning of each field."""

    llm_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    fallbacks: int = 0

    def add_cost(self, cost: float | None) -> None:
        """Add the price of one call in US dollars (``None``: unknown, ignored)."""
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def snapshot(self) -> LLMUsage:
        """The counts so far, frozen (cost rounded to 1e-6 USD)."""
        return LLMUsage(
            llm_calls=self.llm_calls, cache_hits=self.cache_hits, prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost_usd=None if self.cost_usd is None else round(self.cost_usd, 6), fallbacks=self.fallbacks,
        )



def describe_usage(usage: LLMUsage) -> str:
    """One line for people, e.g. ``LLM: 40 calls, 0 cache hits, 36000 prompt + 12000 completion
    tokens, cost unknown``."""
    cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    text = (f"LLM: {usage.llm_calls} calls, {usage.cache_hits} cache hits, "
            f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens, cost {cost}")
    return text + (f", {usage.fallbacks} heuristic fallbacks" if usage.fallbacks else "")
