"""The last reading of a message the rules do not understand: the request of the nearest phrasing people used.

``bot/defaults/phrasings.toml`` holds phrasings of the tuning corpora, each with the request it makes (a digest,
the authors of a window, the subscriptions, the help, a PR …). A message the rules read as nothing, and that is no
remark to colleagues, is compared with them (TF-IDF cosine over its English words and its Chinese characters and
character pairs, numbers as one sign): when the nearest phrasings agree on a request and are near enough
(:data:`MIN_SIMILARITY`, :data:`MIN_SHARE`), the message makes that request, with its own window, PR numbers,
label or values (``上周仓库里都忙活了些啥`` → last week's digest; ``我现在订着哪些`` → the subscriptions). A request
that needs a part the message does not hold (a PR without a number, a label view without a label) stays
unread, and the help answers it. Only requests that read are guessed this way: a subscription is never started,
changed or stopped by a guess (as the model's reader, :mod:`bot.understand.reader`, never acts either).

The phrasings load once, on the first message that reaches this step; a scan touches only the phrasings that
share a feature with the message (an inverted index), so it stays well under a millisecond.
"""

from __future__ import annotations

import math
import re
import threading
import tomllib
from collections import Counter, defaultdict
from importlib import resources
from itertools import islice

from bot.understand import followup as fu
from bot.understand.intents import (
    CompareIntent,
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PersonalDigestIntent,
    PRIntent,
    SmallTalkIntent,
)
from bot.understand.lexicon import _EN_STOP, _LABEL_LIKE, _blank, _terms, detect_language
from bot.understand.parts import _BARE_NUMBER, _Reading
from bot.understand.smalltalk import small_talk
from bot.understand.windows import read_windows

__all__ = ["MIN_SHARE", "MIN_SIMILARITY", "nearest_kind", "read_by_nearest"]

MIN_SIMILARITY = 0.4
"""The cosine the nearest phrasing needs."""
MIN_SHARE = 0.7
"""The share of the nearest phrasings' weight (:data:`NEIGHBOURS`) the request must hold."""
NEIGHBOURS = 5
CLOSE = 0.6
"""A phrasing votes when its cosine is at least this share of the nearest one's."""
_MAX_TEXT = 200
"""A longer message is not compared (a long message that says nothing the rules read is no short request)."""

_ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z'’_-]{1,30}")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_lock = threading.Lock()
_bank: tuple[list[str], list[dict[str, float]], dict[str, list[tuple[int, float]]], dict[str, float]] | None = None


def _frame(text: str) -> str:
    """``text`` without its window words: the phrasings are compared by how they ask, not by when."""
    _, spans = read_windows(text)
    return _blank(text, spans) if spans else text


def _features(text: str) -> Counter[str]:
    lowered = re.sub(r"[0-9]+", " 0 ", _frame(text).lower())
    found: Counter[str] = Counter()
    for word in _ASCII_WORD.findall(lowered):
        found["w:" + re.sub("['’]", "", word)] += 1  # "what's" is "whats", as people type it either way
    if " 0 " in lowered:
        found["n"] += 1
    for run in _CJK_RUN.findall(lowered):
        found.update("c:" + ch for ch in run)
        found.update("b:" + run[i:i + 2] for i in range(len(run) - 1))
    return found


def _load() -> tuple[list[str], list[dict[str, float]], dict[str, list[tuple[int, float]]], dict[str, float]]:
    global _bank
    if _bank is not None:
        return _bank
    with _lock:
        if _bank is None:
            rows = tomllib.loads(resources.files("bot").joinpath("defaults/phrasings.toml").read_text(
                encoding="utf-8"))["phrase"]
            counts = [_features(r["text"]) for r in rows]
            df: Counter[str] = Counter(f for c in counts for f in c)
            idf = {f: math.log((1 + len(rows)) / (1 + n)) + 1 for f, n in df.items()}
            vectors = [_unit({f: v * idf[f] for f, v in c.items()}) for c in counts]
            index: dict[str, list[tuple[int, float]]] = defaultdict(list)
            for i, vector in enumerate(vectors):
                for f, v in vector.items():
                    index[f].append((i, v))
            _bank = ([r["kind"] for r in rows], vectors, dict(index), idf)
    return _bank


def _unit(vector: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
    return {f: v / norm for f, v in vector.items()}


def nearest_kind(text: str) -> tuple[str, float] | None:
    """The request the phrasings nearest to ``text`` agree on, with the nearest one's cosine; ``None`` when none is
    near enough or they disagree."""
    if not text.strip() or len(text) > _MAX_TEXT:
        return None
    kinds, vectors, index, idf = _load()
    query = _unit({f: v * idf[f] for f, v in _features(text).items() if f in idf})
    if sum(1 for f in query if f[0] in "wb") < 2:
        return None  # one word ("npu", "hello") says too little to compare
    scores: dict[int, float] = defaultdict(float)
    for f, v in query.items():
        for i, w in index.get(f, ()):
            scores[i] += v * w
    best = sorted(scores.items(), key=lambda item: -item[1])[:NEIGHBOURS]
    if not best or best[0][1] < MIN_SIMILARITY:
        return None
    if sum(1 for f in query if f in vectors[best[0][0]] and f[0] in "wb") < 2:
        return None  # one shared word ("my" of "I changed my mind" and "my subs") is no likeness
    weight: dict[str, float] = {}
    for i, score in best:
        if score >= CLOSE * best[0][1]:  # only the phrasings about as near as the nearest one vote
            weight[kinds[i]] = weight.get(kinds[i], 0.0) + score
    kind, share = max(weight.items(), key=lambda item: item[1])
    if share < MIN_SHARE * sum(weight.values()) or kinds[best[0][0]] != kind:
        return None
    return kind, best[0][1]


def read_by_nearest(text: str) -> Intent | None:
    """``text`` (a normalised message the rules did not understand, no remark) read as the request of its nearest
    phrasings, with its own parts; ``None`` when there is none or the message lacks what the request needs."""
    found = nearest_kind(text)
    if found is None:
        return None
    kind = found[0]
    lang = detect_language(text)
    reading = _Reading(text)
    window = reading.window.spec if reading.window is not None and reading.window.problem is None else None
    if reading.window is not None and reading.window.problem is not None:
        return None
    numbers = reading.numbers() or [int(m["n"]) for m in islice(_BARE_NUMBER.finditer(reading.rest), 8)
                                    if len(m["n"]) >= 3]
    match kind:
        case "digest":
            return DigestIntent(week=window, language=lang, said=reading.window.said if reading.window else None)
        case "authors" | "merged":
            return MergedIntent(window, language=lang, focus="authors" if kind == "authors" else "list")
        case "list_subscriptions":
            return ListSubscriptionsIntent(language=lang)
        case "help":
            return HelpIntent(language=lang, said=text, asked=True)
        case "smalltalk":
            return SmallTalkIntent(small_talk(text) or "ack", language=lang)
        case "personal_digest:show":
            return PersonalDigestIntent("show", language=lang)
        case "pr" if len(set(numbers)) == 1:
            return PRIntent(numbers[0], language=lang, question=fu.question_of(text) or "worth", text=text)
        case "compare" if len(set(numbers)) >= 2:
            return CompareIntent(tuple(dict.fromkeys(numbers))[:6], language=lang)
    values = [t for t in _terms(reading.rest) if _LABEL_LIKE.fullmatch(t) and t not in _EN_STOP]
    if kind == "label" and len(values) == 1 and window is not None:
        return LabelIntent(values[0], language=detect_language(text, values), window=window, loose=True)
    return None  # a subscription, a question or a remark: never read by a guess
