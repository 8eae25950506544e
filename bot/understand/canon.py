"""The canonical form of a message, read before any rule: one spelling for what people type several ways.

Three steps, each bounded by the message's length (already cut at :data:`bot.understand.lexicon.MAX_CHARS`):

1. **Traditional Chinese as simplified** (``訂閱`` → ``订阅``, ``帳號`` → ``帐号``, ``什麼`` → ``什么``):
   OpenCC's phrase-aware ``t2s`` tables (opencc-purepy), loaded on the first message holding a Chinese
   character that differs between the two scripts.
2. **Homophone typos of the bot's own words** (``订悦`` / ``定阅`` → ``订阅``, ``退丁`` → ``退订``, ``周抱`` →
   ``周报``): a pair of characters that shares one character with one of :data:`OWN_WORDS`, in the same
   place, and sounds the same (pypinyin, tones ignored) is that word. Only the bot's own verbs and nouns are
   corrected, never the data's words (those are matched by :mod:`bot.understand.vocabulary`).
3. **Near-miss spellings of the bot's own English words** (``gihtub`` → ``github``, ``chnages`` →
   ``changes``, ``subscibe`` → ``subscribe``): one edit or one swap of neighbours away, in words of five
   letters or more (rapidfuzz's optimal string alignment distance).

:func:`canonical` never raises and keeps what it does not recognise as it is.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

__all__ = ["OWN_WORDS", "canonical", "warm_up"]

OWN_WORDS = ("订阅", "退订", "周报", "月报", "提醒", "通知", "推送", "合并", "合入", "标签", "账号", "风险", "贡献")
"""The bot's own Chinese words whose homophone typos, and whose pinyin typed for them (``zhoubao``), are corrected."""
"""The bot's own Chinese words whose homophone typos are corrected."""
_OWN_EN = ("github", "subscribe", "unsubscribe", "subscriptions", "subscription", "digest", "changes", "merged",
           "contributors", "authors", "labels", "please", "thanks", "summary", "summarize", "weekly",
           "monthly", "alerts",
           "deprecated", "deprecations", "recently", "lately")
"""The bot's own English words whose near misses are corrected."""

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_EN_WORD = re.compile(r"(?<![A-Za-z0-9_./-])[A-Za-z]{5,14}(?![A-Za-z0-9_/-])")
_lock = threading.Lock()
_t2s: Any = None


def _converter() -> Any:
    global _t2s
    if _t2s is None:
        with _lock:
            if _t2s is None:
                from opencc_purepy import OpenCC

                _t2s = OpenCC("t2s")
    return _t2s


@lru_cache(maxsize=1)
def _traditional() -> frozenset[str]:
    """Characters that are written differently in traditional Chinese (a message without them is converted
    by nothing)."""
    from importlib import resources

    table = resources.files("opencc_purepy").joinpath("dicts/TSCharacters.txt").read_text(encoding="utf-8")
    found = set()
    for line in table.splitlines():
        trad, _, simple = line.partition("\t")
        if trad and simple and trad not in simple.split():
            found.add(trad)
    return frozenset(found)


def _simplified(text: str) -> str:
    if not any(ch in _traditional() for ch in text):
        return text
    converted: str = _converter().convert(text)
    return converted if len(converted) == len(text) else text


@lru_cache(maxsize=4096)
def _sound(ch: str) -> str:
    from pypinyin import lazy_pinyin

    return "".join(lazy_pinyin(ch))


@lru_cache(maxsize=1)
def _by_char() -> dict[str, list[tuple[int, str]]]:
    """Each character of :data:`OWN_WORDS` → (its place, the word)."""
    found: dict[str, list[tuple[int, str]]] = {}
    for word in OWN_WORDS:
        for place, ch in enumerate(word):
            found.setdefault(ch, []).append((place, word))
    return found


def _homophones(text: str) -> str:
    index = _by_char()
    chars = list(text)
    for i, ch in enumerate(chars):
        for place, word in index.get(ch, ()):
            start = i - place
            if start < 0 or start + len(word) > len(chars):
                continue
            span = "".join(chars[start:start + len(word)])
            if span == word or not all(_CJK.match(c) for c in span):
                continue
            if all(a == b or _sound(a) == _sound(b) for a, b in zip(span, word, strict=True)):
                chars[start:start + len(word)] = list(word)
    return "".join(chars)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _english(text: str) -> str:
    from rapidfuzz.distance import OSA

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        lower = word.lower()
        if lower in _OWN_EN:
            return word
        for own in _OWN_EN:
            if own.startswith(lower) or lower.startswith(own) or _stem(own) == _stem(lower):
                continue  # another form of the word (label, labels, changed), no typo
            if abs(len(own) - len(lower)) <= 1 and lower[0] == own[0] and OSA.distance(lower, own) == 1:
                return own
        return word

    return _EN_WORD.sub(fix, text)


_COLLOQUIAL = re.compile(r"(?<!预)订(?:上|一下|下)(?![阅])|(?<!预)给我订(?![阅])")
"""Spoken forms of 订阅 (``帮我订上``, ``订一下``)."""


_ZH_DIGITS = re.compile(r"[零〇一二三四五六七八九]{3,7}")
"""A number spelled digit by digit in Chinese characters (``六零二九``, ``五九八九``): a PR number said aloud."""
_DIGIT_OF = str.maketrans("零〇一二三四五六七八九", "00123456789")
_ZH_DAY = re.compile(r"(?<=[月到至~\-～ ])(?P<n>[一二三四五六七八九十]{1,3})(?=\s?[号號日])")
"""A day of the month in Chinese numerals (``四月十三号到十九号``): written in digits, as the window words read them."""


def _day_digits(m: re.Match[str]) -> str:
    from bot.understand.numbers import number

    value = number(m["n"])
    return str(value) if value is not None and 1 <= value <= 31 else m.group(0)
_O_IN_NUMBER = re.compile(r"(?<=[0-9])[Oo](?=[0-9])|(?<=#)[Oo](?=[0-9]{2})")
"""A letter O typed for a zero inside a number (``#6O46``)."""


@lru_cache(maxsize=1)
def _pinyin_words() -> re.Pattern[str]:
    """The bot's Chinese words typed as their pinyin (``zhoubao``, ``dingyue``, ``tuiding``), as whole words."""
    spelled = sorted({p for w in OWN_WORDS if len(p := _pinyin_of(w)) >= 6}, key=len, reverse=True)
    return re.compile(rf"(?<![A-Za-z])(?:{'|'.join(spelled)})(?![A-Za-z])", re.IGNORECASE)


def _pinyin_of(word: str) -> str:
    return "".join(_sound(ch) for ch in word)


@lru_cache(maxsize=1)
def _by_pinyin() -> dict[str, str]:
    return {_pinyin_of(w): w for w in OWN_WORDS}


def _typed_in_pinyin(text: str) -> str:
    if not re.search(r"[a-z]{6}", text, re.IGNORECASE):
        return text
    return _pinyin_words().sub(lambda m: _by_pinyin()[m.group(0).lower()], text)


_CHAT_SHORT = re.compile(r"(?<![A-Za-z'’])(?:wat|wut|wot)(?P<s>s)?(?![A-Za-z'’])", re.IGNORECASE)
"""``wat``, ``wats``: "what", "what's" as typed in chat."""


def canonical(text: str) -> str:
    """``text`` with traditional characters simplified, homophone typos of the bot's Chinese words and near
    misses of its English words corrected, numbers said in Chinese digits or typed with a letter O and days of
    the month in Chinese numerals written in digits, the bot's words typed in pinyin as Chinese (never raises)."""
    if _CJK.search(text):
        text = _COLLOQUIAL.sub("订阅", _homophones(_simplified(text)))
        text = _ZH_DIGITS.sub(lambda m: m.group(0).translate(_DIGIT_OF), text)
        text = _ZH_DAY.sub(_day_digits, text)
    text = _CHAT_SHORT.sub(lambda m: "what's" if m["s"] else "what", text)
    return _english(_typed_in_pinyin(_O_IN_NUMBER.sub("0", text)))


def warm_up() -> None:
    """Load what the first messages would load (OpenCC's tables, pypinyin's dictionary), e.g. in a worker thread
    at the bot's start, so that no early message waits for it."""
    _traditional()
    _converter()
    _sound("订")
