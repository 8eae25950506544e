"""The subscription filter as a value: what a person follows in one repository.

A :class:`Filter` is frozen, hashable and canonical: two filters that mean the same
thing are equal (terms are normalised, de-duplicated and sorted), so the same
subscription is never stored twice, and ``Filter.model_validate_json(f.model_dump_json())
== f``. :meth:`Filter.text` writes it back in the grammar (``label:npu -label:ci``), which
:func:`bot.filters.parse_filter` reads to an equal filter.

Meaning (the matcher, :mod:`bot.filters.match`, implements it)::

    include terms    grouped by key; any value of a key matches (OR), every key present must match (AND)
    bounds           importance / insight / minutes ranges, all must hold (AND)
    exclude terms    any one that matches rejects the PR — an exclusion always wins
    no include term and no bound: every PR (of the subscription's repository)

Term keys and their values (normalised):

==========  ============================================================================
``label``   a digest label, lower case, renamed through the repository's aliases
``path``    a glob (``verl/trainer/**``; a literal path also covers what lies below it),
            or a CODEOWNERS owner: ``@me`` (the subscriber's linked GitHub handle),
            ``@handle``, ``@org/team``, ``name@example.com``
``author``  a GitHub login, lower case, without ``@`` and ``[bot]``; ``@me`` = the subscriber
``title``   words the title contains (case-insensitive, blanks collapsed)
``verdict`` ``close_read``, ``skim`` or ``skip``
==========  ============================================================================
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from bot.models import RecommendationLevel

__all__ = ["BOUND_LIMITS", "ME", "SCORE_KEYS", "TERM_KEYS", "VERDICTS", "Bound", "Filter", "ScoreKey", "Term",
           "TermKey", "is_owner", "normalise"]

TermKey = Literal["label", "path", "author", "title", "verdict"]
ScoreKey = Literal["importance", "insight", "minutes"]
TERM_KEYS: tuple[TermKey, ...] = get_args(TermKey)
SCORE_KEYS: tuple[ScoreKey, ...] = get_args(ScoreKey)
VERDICTS: tuple[RecommendationLevel, ...] = get_args(RecommendationLevel)
BOUND_LIMITS: dict[ScoreKey, tuple[int, int]] = {"importance": (1, 10), "insight": (1, 10), "minutes": (0, 10_000)}
"""The values each score can take (inclusive): importance and insight are 1–10, minutes 0 or more."""
ME = "@me"
"""The subscriber themself, in ``path:@me`` and ``author:@me`` (resolved through their linked GitHub handle)."""

_BLANKS = re.compile(r"\s+")
_OWNER = re.compile(r"^@[a-z0-9](?:[a-z0-9-]*)(?:/[a-z0-9._-]+)?$|^[^/\s@]+@[^/\s@]+\.[^/\s@]+$", re.IGNORECASE)


def is_owner(value: str) -> bool:
    """Whether a ``path`` value names a CODEOWNERS owner (``@me``, ``@handle``, ``@org/team``,
    ``name@example.com``) rather than a glob."""
    return bool(_OWNER.match(value))


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Term(_Frozen):
    """One ``key:value`` condition (see the module docstring for the keys)."""

    key: TermKey
    value: str

    @property
    def is_owner(self) -> bool:
        """A ``path`` term naming a CODEOWNERS owner (``@me``, ``@handle``, ``@org/team``, an email)."""
        return self.key == "path" and is_owner(self.value)

    def text(self) -> str:
        """The term in the grammar, quoted when the value holds blanks or separators."""
        value = self.value
        if not value or re.search(r"[\s;、|\"'(){}]", re.sub(r"\{[^{}]*\}", "", value)) or "," in re.sub(
                r"\{[^{}]*\}", "", value):
            value = '"' + value.replace('"', "'") + '"'
        return f"{self.key}:{value}"


class Bound(_Frozen):
    """``low <= score <= high`` for one score; ``None`` leaves that side open."""

    key: ScoreKey
    low: int | None = None
    high: int | None = None

    @model_validator(mode="after")
    def _check(self) -> Bound:
        if self.low is None and self.high is None:
            raise ValueError(f"{self.key}: a bound needs a low or a high value")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"{self.key}: {self.low} > {self.high} never matches")
        return self

    def holds(self, score: int) -> bool:
        """Whether ``score`` lies within the bound."""
        return (self.low is None or score >= self.low) and (self.high is None or score <= self.high)

    def text(self) -> str:
        """``importance>=6``, ``minutes<=15``, ``importance:6..8``, ``importance=7``."""
        if self.low is not None and self.high is not None:
            return f"{self.key}={self.low}" if self.low == self.high else f"{self.key}:{self.low}..{self.high}"
        if self.low is not None:
            return f"{self.key}>={self.low}"
        return f"{self.key}<={self.high}"


def _term_order(term: Term) -> tuple[int, str]:
    return TERM_KEYS.index(term.key), term.value


class Filter(_Frozen):
    """What one subscription follows; canonical (see the module docstring).

    Build it with :func:`bot.filters.parse_filter`, or directly (values are normalised
    here too, so ``Filter(include=(Term(key="label", value="NPU"),))`` equals the parsed
    ``npu``).

    Raises:
        pydantic.ValidationError: a term of unknown key, two bounds on one score that
            cannot both hold, a verdict that is not ``close_read``/``skim``/``skip``.
    """

    include: tuple[Term, ...] = ()
    exclude: tuple[Term, ...] = ()
    bounds: tuple[Bound, ...] = ()

    @field_validator("include", "exclude")
    @classmethod
    def _canonical_terms(cls, terms: tuple[Term, ...]) -> tuple[Term, ...]:
        normal = {Term(key=t.key, value=normalise(t.key, t.value)) for t in terms}
        return tuple(sorted(normal, key=_term_order))

    @field_validator("bounds")
    @classmethod
    def _canonical_bounds(cls, bounds: tuple[Bound, ...]) -> tuple[Bound, ...]:
        merged: dict[ScoreKey, Bound] = {}
        for bound in bounds:
            old = merged.get(bound.key)
            if old is not None:
                lows = [x for x in (old.low, bound.low) if x is not None]
                highs = [x for x in (old.high, bound.high) if x is not None]
                bound = Bound(key=bound.key, low=max(lows) if lows else None, high=min(highs) if highs else None)
            merged[bound.key] = bound
        return tuple(merged[key] for key in SCORE_KEYS if key in merged)

    @property
    def is_everything(self) -> bool:
        """No condition at all: every PR of the repository (bots still excluded)."""
        return not (self.include or self.exclude or self.bounds)

    def values(self, key: TermKey, *, excluded: bool = False) -> tuple[str, ...]:
        """The values of ``key`` among the include (or exclude) terms, in canonical order."""
        return tuple(t.value for t in (self.exclude if excluded else self.include) if t.key == key)

    def bound(self, key: ScoreKey) -> Bound | None:
        """The bound on ``key``, if any."""
        return next((b for b in self.bounds if b.key == key), None)

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label the filter names (included or excluded), for checks against known labels."""
        return tuple(dict.fromkeys((*self.values("label"), *self.values("label", excluded=True))))

    @property
    def uses_me(self) -> bool:
        """Whether a term means the subscriber (``path:@me``, ``author:@me``)."""
        return any(t.value == ME and t.key in ("path", "author") for t in (*self.include, *self.exclude))

    @property
    def uses_codeowners(self) -> bool:
        """Whether a term needs the repository's CODEOWNERS (``path:@…``)."""
        return any(t.is_owner for t in (*self.include, *self.exclude))

    def text(self) -> str:
        """The filter in the grammar, canonical: ``label:npu label:rollout importance>=6 -label:ci``
        (``""`` for the filter of every PR)."""
        parts = [t.text() for t in self.include] + [b.text() for b in self.bounds]
        parts += ["-" + t.text() for t in self.exclude]
        return " ".join(parts)

    def __str__(self) -> str:
        return self.text()


def normalise(key: TermKey, value: str) -> str:
    """The canonical form of a ``key`` value (lower case where case does not matter).

    ``label``: lower case, blanks collapsed, a leading ``#`` dropped; ``path``: without a
    leading ``./`` or ``/``, owners lower case with one ``@``; ``author``: lower case,
    without ``@`` and a ``[bot]`` suffix (``@me`` stays); ``title``: case-folded, blanks
    collapsed; ``verdict``: as given (validated).

    Raises:
        ValueError: an empty value, or a verdict that is not ``close_read``/``skim``/``skip``.
    """
    text = _BLANKS.sub(" ", value).strip()
    if key == "label":
        text = text.lstrip("#").strip().lower()
    elif key == "path":
        if is_owner(text):
            text = text.lower()
        else:
            while text.startswith(("./", "/")):
                text = text[2:] if text.startswith("./") else text[1:]
    elif key == "author":
        lowered = text.lower()
        text = ME if lowered == ME else lowered.lstrip("@").removesuffix("[bot]")
    elif key == "title":
        text = text.casefold()
    elif key == "verdict" and text not in VERDICTS:
        raise ValueError(f"verdict {value!r}: expected one of {', '.join(VERDICTS)}")
    if not text:
        raise ValueError(f"{key}: empty value")
    return text
