"""Filters and matches said back to people, in Chinese and English.

:func:`describe` — ``npu 或 rollout，排除 ci`` / ``npu or rollout, except ci``: included keys
first (labels bare, the others named), then the bounds, then the exclusions. The text reads
back to the same filter with :func:`bot.filters.parse_filter`, so a person can copy it,
change a word and send it again. :func:`explain` — why one PR matched (``标签 npu；路径
verl/trainer/**（verl/trainer/ppo.py）``).

Text is plain (unescaped): renderers escape it for their platform.
"""

from __future__ import annotations

import re

from bot.filters.grammar import RESERVED_WORDS
from bot.filters.match import Match, Reason
from bot.filters.model import ME, Bound, Filter, TermKey, is_owner
from bot.models import Language, RecommendationLevel

__all__ = ["describe", "explain", "reasons_text"]

_LEVELS: dict[Language, dict[RecommendationLevel, str]] = {
    "zh": {"close_read": "值得精读", "skim": "建议浏览", "skip": "可跳过"},
    "en": {"close_read": "close_read", "skim": "skim", "skip": "skip"},
}
_WORDS: dict[Language, dict[str, str]] = {
    "zh": {"or": " 或 ", "and": "，", "except": "排除 ", "list": "、", "all": "全部 PR", "path": "路径 ",
           "author": "作者 ", "title": "标题含", "verdict": "结论 ", "importance": "重要性", "insight": "洞察",
           "minutes": "阅读时间", "unit": " 分钟", "mine": "我负责的路径（CODEOWNERS）",
           "owned": "{owner} 负责的路径（CODEOWNERS）", "label": "标签 ", "evidence": "（{what}）", "sep": "；"},
    "en": {"or": " or ", "and": ", ", "except": "except ", "list": ", ", "all": "all PRs", "path": "path ",
           "author": "author ", "title": "title contains ", "verdict": "verdict ", "importance": "importance",
           "insight": "insight", "minutes": "minutes", "unit": "", "mine": "paths I own (CODEOWNERS)",
           "owned": "paths owned by {owner} (CODEOWNERS)", "label": "label ", "evidence": " ({what})", "sep": "; "},
}
_PLAIN_LABEL = re.compile(r"^[^\s,;、|\"'()（）:：*?\[\]{}@+\-!#][^\s,;、|\"'()（）:：]*$")


def _label(value: str) -> str:
    plain = _PLAIN_LABEL.match(value) and value.lower() not in RESERVED_WORDS
    return value if plain else '"' + value.replace('"', "'") + '"'


def _plain(value: str) -> str:
    """A path or author as typed, quoted when it holds a blank or a separator."""
    bare = re.sub(r"\{[^{}]*\}", "", value)
    return '"' + value.replace('"', "'") + '"' if re.search(r"[\s,;、|\"]", bare) else value


def _quoted(value: str, language: Language) -> str:
    return f"“{value}”" if language == "zh" else f'"{value}"'


def _values(key: TermKey, values: tuple[str, ...], language: Language, *, excluded: bool = False) -> str:
    w = _WORDS[language]
    if key == "label":
        return (w["list"] if excluded else w["or"]).join(_label(v) for v in values)
    if key == "path":
        globs = [v for v in values if not is_owner(v)]
        owners = [v for v in values if v not in globs]
        parts = [w["path"] + w["or"].join(map(_plain, globs))] if globs else []
        parts += [w["mine"] if o == ME else w["owned"].format(owner=o) for o in owners]
        return w["or"].join(parts)
    if key == "author":
        return w["author"] + w["or"].join(map(_plain, values))
    if key == "title":
        return w["or"].join(w["title"] + _quoted(v, language) for v in values)
    return w["verdict"] + w["or"].join(_LEVELS[language][v] for v in values)  # type: ignore[index]


def _bound(bound: Bound, language: Language) -> str:
    w = _WORDS[language]
    name, unit = w[bound.key], w["unit"] if bound.key == "minutes" else ""
    if bound.low is not None and bound.high is not None:
        if bound.low == bound.high:
            return f"{name} = {bound.low}{unit}"
        return f"{name} {bound.low}–{bound.high}{unit}"
    if bound.low is not None:
        return f"{name} ≥ {bound.low}{unit}"
    return f"{name} ≤ {bound.high}{unit}"


def describe(flt: Filter, language: Language) -> str:
    """``flt`` in words: ``npu 或 rollout，排除 ci`` / ``npu or rollout, except ci``; ``全部 PR`` /
    ``all PRs`` for the filter of every PR."""
    w = _WORDS[language]
    keys: tuple[TermKey, ...] = ("label", "path", "author", "title", "verdict")
    parts = [_values(k, flt.values(k), language) for k in keys if flt.values(k)]
    parts += [_bound(b, language) for b in flt.bounds]
    excluded = [_values(k, flt.values(k, excluded=True), language, excluded=True)
                for k in keys if flt.values(k, excluded=True)]
    if excluded:
        parts.append(w["except"] + w["list"].join(excluded))
    return w["and"].join(parts) if parts else w["all"]


def _reason(reason: Reason, language: Language) -> str:
    w = _WORDS[language]
    if reason.key == "label":
        return w["label"] + reason.value
    if reason.key == "path":
        if is_owner(reason.value):
            head = w["mine"] if reason.value == ME else w["owned"].format(owner=reason.value)
        else:
            head = w["path"] + reason.value
        return head + w["evidence"].format(what=reason.evidence) if reason.evidence else head
    if reason.key == "author":
        return w["author"] + reason.evidence
    if reason.key == "title":
        return w["title"] + _quoted(reason.value, language)
    if reason.key == "verdict":
        levels: dict[str, str] = {str(k): v for k, v in _LEVELS[language].items()}
        return w["verdict"] + levels.get(reason.value, reason.value)
    name = w[reason.key]
    return f"{name} {reason.evidence}" + (w["unit"] if reason.key == "minutes" else "")


def reasons_text(reasons: tuple[Reason, ...], language: Language) -> str:
    """The clauses a PR matched on, joined (``标签 npu；路径 verl/trainer/**（verl/trainer/ppo.py）``);
    ``全部 PR`` / ``all PRs`` when the filter has no clause."""
    w = _WORDS[language]
    return w["sep"].join(_reason(r, language) for r in reasons) or w["all"]


def explain(result: Match, language: Language) -> str:
    """Why a PR matched (``标签 npu；路径 verl/trainer/**（verl/trainer/ppo.py）``), or why not
    (``排除：标签 ci`` / ``bot`` / the keys that did not hold)."""
    w = _WORDS[language]
    if result.matched:
        return reasons_text(result.reasons, language)
    if result.excluded_by is not None:
        return w["except"] + _reason(result.excluded_by, language)
    if result.bot:
        return "机器人提交的 PR（订阅里没有点名这个机器人）" if language == "zh" else \
            "a bot's PR (the filter does not name this bot)"
    missing = w["list"].join(result.missing)
    return f"不满足：{missing}" if language == "zh" else f"does not match: {missing}"
