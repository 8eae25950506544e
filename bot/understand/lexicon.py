"""The words of the understanding: the vocabulary patterns of ``bot/defaults/words.toml``, normalising a
message, its language, and the search words and label of a question (segmented by
:mod:`bot.understand.tokens`, filler dropped).

Every pattern is bounded; a message is cut at :data:`MAX_CHARS` before any of them runs.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from itertools import islice
from typing import Any

from bot.models import Language
from bot.understand.concepts import Concepts, shipped_concepts

MAX_CHARS = 1_000
"""Characters of a message that are read; the rest is ignored (no question needs more)."""
MAX_TERMS = 6
"""Search words kept from one question."""
MAX_REFS = 24
"""PR references of each kind that are read (a comparison holds at most six)."""

_REPO = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9_.-]{0,99}[A-Za-z0-9_]"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_A = r"(?<![A-Za-z])"
_Z = r"(?![A-Za-z])"

_URL = re.compile(r"https?://[^\s<>|]{1,2000}")
_COMMANDS = {"digest", "pr", "label", "subscribe", "unsubscribe", "subscriptions", "help", "compare", "ask",
             "merged"}

_WORDS: dict[str, dict[str, Any]] = tomllib.loads(
    resources.files("bot").joinpath("defaults/words.toml").read_text(encoding="utf-8"))


def _vocabulary(section: str, *, prefix: str = "", suffix: str = "") -> re.Pattern[str]:
    """One section of ``bot/defaults/words.toml`` as a pattern: the Chinese phrases (longest
    first) or the English fragments as whole words, each between ``prefix`` and ``suffix``."""
    words = _WORDS[section]
    zh = sorted(words.get("zh", []), key=len, reverse=True)
    parts = [re.escape(w) for w in zh]
    if words.get("en"):
        parts.append(rf"{_A}(?:{'|'.join(words['en'])}){_Z}")
    return re.compile(f"{prefix}(?:{'|'.join(parts)}){suffix}", re.IGNORECASE)


_HELP = _vocabulary("help", prefix=r"^(?:请问|请|麻烦|please\s|pls\s|hey\s|hi\s|so\s)?\s?",
                    suffix=r"(?:\s?(?:一下|一下吧|吧|呀|啊|呢|嘛|吗|嗎|me|pls|please|plz))?$")
"""The whole message asks for help: the words of ``[help]`` alone, with polite padding (``请``, ``一下``, ``pls``)."""
_LIST_SUBS_MORE = _vocabulary("list_subscriptions")
_COMPARE = _vocabulary("compare")
_WHAT = _vocabulary("what")
_WORTH = _vocabulary("worth")
_ANALYZE = _vocabulary("analyze")
_LOOK = _vocabulary("look")
_PR_WORD = _vocabulary("pr_word")
_DIGEST = _vocabulary("digest")
_MERGED = _vocabulary("merged")
_LISTING = _vocabulary("listing")
_KEY = _vocabulary("key")
_CHANGE = _vocabulary("change")
_OPENER = _vocabulary("opener")
_WHO = _vocabulary("who")
_ZH_STOP_RE = re.compile("|".join(re.escape(w) for w in sorted(_WORDS["stop"]["zh"].split(), key=len, reverse=True)),
                         re.IGNORECASE)
_EN_STOP = frozenset(_WORDS["stop"]["en"].split())
_ZH_STOP = frozenset(_WORDS["stop"]["zh"].split())

_LABEL_ZH = re.compile(r"(?<![A-Za-z0-9_.+-])(?P<a>[A-Za-z0-9][A-Za-z0-9_.+-]{0,63})\s?(?:这个|這個|的)?\s?"
                       r"(?:标签|標籤|label|模块|模塊)|"
                       r"(?:标签|標籤)\s?(?:为|是|:|：)?\s?(?P<b>[A-Za-z0-9][A-Za-z0-9_.+-]{0,63})", re.IGNORECASE)
_LABEL_EN = re.compile(rf"{_A}labels?\s?[:=]?\s?(?P<a>[A-Za-z0-9][A-Za-z0-9_.+-]{{0,63}})|"
                       rf"(?P<b>[A-Za-z0-9][A-Za-z0-9_.+-]{{0,63}})\s(?:label|area|module){_Z}", re.IGNORECASE)
_LABEL_LIKE = re.compile(r"[a-z][a-z0-9_.+-]{0,40}")
_AREA = re.compile(rf"{_A}(?:in|for|on|about|of)\s(?:the\s)?"
                   r"(?!(?:call|duty|leave|vacation|holiday|it|board|track|time|site|hold|fire)(?![A-Za-z]))"
                   rf"(?P<a>[A-Za-z][A-Za-z0-9_.+-]{{0,40}}){_Z}|"
                   r"(?P<b>[A-Za-z][A-Za-z0-9_.+-]{0,40})\s{0,12}的?\s?(?:最近|近来|近期)?\s?"
                   r"(?:有啥|有什么|有没有什么|有没有啥|有何|都有啥|有些啥)?\s?(?:大|新|最新)?(?:周报|週報|动态|動態|进展|"
                   r"進展|情况|情況|方面|怎么样|怎樣|怎样|咋样|如何|近况|动静|动向|新闻|消息)|"
                   rf"{_A}how(?:['’]s|\sis|\sare)\s(?:the\s)?(?P<c>[A-Za-z][A-Za-z0-9_.+-]{{0,40}})\s(?:work\s)?"
                   r"(?:doing|going|looking|coming\salong)(?![A-Za-z])",
                   re.IGNORECASE)
_QUOTED = re.compile(r"[\"“”'‘’`「『](?P<t>[^\"“”'‘’`「」『』\n]{1,60})[\"“”'‘’`」』]")
_PUNCT_EDGE = ".,;:!?()[]{}<>\"'“”‘’`。，；：！？（）【】「」《》、…~～*"


def normalize(text: str, bot_mentions: Sequence[str] = ()) -> str:
    """``text`` without the bot's own mention tokens, NFKC-normalised, invisible format characters
    (zero-width, bidi overrides) removed, spaces collapsed, cut at :data:`MAX_CHARS` characters."""
    for mention in bot_mentions:
        if mention:
            text = text.replace(mention, " ")
    text = unicodedata.normalize("NFKC", text[: MAX_CHARS * 4])
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())[:MAX_CHARS]


def detect_language(text: str, ignore: Iterable[str] = ()) -> Language | None:
    """``zh`` if ``text`` holds Chinese; ``en`` if it holds English words other than commands,
    the words in ``ignore`` (the message's label), numbers, week names, URLs, paths and
    repository names; else ``None`` (the caller's default applies)."""
    if _CJK.search(text):
        return "zh"
    if " " not in text.strip() and not text.strip().isdigit():
        return None  # one word ("npu", "hello") tells nothing about the language
    skip = {w.lower() for w in ignore} | _COMMAND_WORDS
    said: list[str] = []
    for token in _URL.sub(" ", text).split():
        if any(ch.isdigit() for ch in token) or "/" in token or token.startswith("#"):
            continue
        for word in re.findall(r"[A-Za-z]{2,}", token):
            if word.lower() not in skip:
                return "en"
            said.append(word.lower())
    if len(said) >= 2 and any(w in _SENTENCE_WORDS for w in said) and said[0] not in _COMMANDS:
        return "en"  # "fsdp PRs in W34": an English sentence of labels and dates
    return None


_SENTENCE_WORDS = frozenset({"in", "of", "for", "from", "the", "on", "to", "since", "this", "last"})
"""Words that make a sentence of labels and dates English (a command's arguments stay the channel's)."""
_COMMAND_WORDS = frozenset({"pr", "prs", "label", "labels", "digest", "subscribe", "unsubscribe", "subscriptions",
                            "subscription", "help", "ask", "merged", "this", "last", "to", "from", "in",
                            "on", "for", "of", "the"})


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (offsets stay valid)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


_PATH_HEADS = frozenset({"src", "lib", "tests", "test", "docs", "doc", "examples", "example", "scripts", "script",
                         "configs", "config", "verl", "recipe", "docker", "ci", ".github", "bot", "torchtitan",
                         "openrlhf", "models", "model", "utils", "tools", "benchmarks", "bench", "csrc", "include",
                         "python", "trainer", "workers", "experimental", "third_party"})


def _terms(rest: str, label: str | None = None) -> list[str]:
    """The search words of a question: quoted phrases, identifiers and paths, and the Chinese
    words left after the function words are taken out."""
    found: list[str] = []
    for m in _QUOTED.finditer(rest):
        found.append(m["t"].strip())
    rest = _blank(rest, [(m.start(), m.end()) for m in _QUOTED.finditer(rest)])
    phrases = list(islice(_concept_phrases().finditer(rest), MAX_TERMS))  # "speed up", "out of memory": one word
    found.extend(m.group(0).lower() for m in phrases)
    rest = _blank(rest, [m.span() for m in phrases])
    for token in re.findall(r"(?<![A-Za-z0-9_])\.?[A-Za-z0-9_][A-Za-z0-9_./+-]{0,99}", rest):
        edge = _PUNCT_EDGE.replace(".", "") if "/" in token else _PUNCT_EDGE  # .github/workflows keeps its dot
        word = token.rstrip(_PUNCT_EDGE).lstrip(edge).removesuffix("'s").lower()
        if len(word) < 2 or word in _EN_STOP or word.isdigit() or (label and word == label):
            continue
        found.append(word)
    found.extend(_chinese_terms(rest))
    out: list[str] = []
    for term in found:
        term = term.rstrip(_PUNCT_EDGE).lstrip(_PUNCT_EDGE.replace(".", "")) if "/" in term else term.strip(_PUNCT_EDGE)
        if term and term.lower() not in (t.lower() for t in out):
            out.append(term)
    if any(t not in _QUALIFIERS for t in out):
        out = [t for t in out if t not in _QUALIFIERS]
    return out[:MAX_TERMS]


_QUALIFIERS = frozenset({"版本", "版本号"})
"""Words that say which side of another named thing is asked (``vllm 的版本要求``, ``基于哪个 CANN 版本``): beside
that thing they are no search word of their own; alone (``升级版本的 PR``) they are searched."""


def _chinese_terms(rest: str) -> list[str]:
    """The Chinese search words of ``rest``: its runs of Chinese (function phrases blanked) cut into words
    by the segmenter (:mod:`bot.understand.tokens`), without stop words and filler (``逻辑``, ``东西``)."""
    zh = _function_words_blanked(re.sub(r"[A-Za-z0-9_./+-]+", " ", rest))
    runs = re.findall(r"[\u3400-\u9fff\uf900-\ufaff]{2,40}", zh)
    if not runs:
        return []
    from bot.understand.tokens import chinese_words

    out: list[str] = []
    for run in runs:
        out.extend(w for w in chinese_words(run, keep=_concept_words()) if w not in _ZH_STOP
                   and not _ZH_STOP_RE.fullmatch(w))
    return out


_COUNTED = re.compile(r"[一二两兩三四五六七八九十几幾0-9]{1,3}\s?(?:个|個|条|條|项|項|位|次)")
_LABEL_IN = re.compile(r"(?<![A-Za-z0-9_./-])(?P<l>[A-Za-z][A-Za-z0-9_.+-]{0,40})\s?(?:标签|標籤)?\s?(?:里面|里|"
                       r"下面|下|中)\s?"
                       r"(?:有)?(?:哪些|哪个|什么|啥)")
_BY_LABEL = re.compile(r"按\s?(?:标签|標籤|label)\s?(?:看|查看|显示|列)")
_HOW_TO = re.compile(r"(?:怎么|怎样|如何|咋)\s?(?:才能)?\s?(?:订阅|退订|取消订阅|关注)|"
                     r"(?<![A-Za-z])how\s+(?:do|can|should)\s+(?:i|we)\s+(?:un)?subscribe|"
                     r"(?<![A-Za-z])how\s+(?:do|can|should)\s+(?:i|we)\s+(?:set\s?up|create|add|configure|get|turn\s+on)\s+"
                     r"(?:an?\s+|the\s+|my\s+|some\s+)?(?:alerts?|subscriptions?|notifications?)|(?<![A-Za-z])how\s+to\s+(?:un)?subscribe",
                     re.IGNORECASE)
"""A question about how to subscribe (``怎么订阅某个目录啊``): the help, not a subscription."""


@lru_cache(maxsize=1)
def _concept_phrases() -> re.Pattern[str]:
    """The concept words of several English words, as whole words (longest first)."""
    phrases = sorted((w for w in _concepts().words() if " " in w and w.isascii()), key=len, reverse=True)
    spaced = "|".join(r"\s+".join(re.escape(part) for part in p.split()) for p in phrases)
    return re.compile(rf"{_A}(?:{spaced}){_Z}", re.IGNORECASE)


@lru_cache(maxsize=1)
def _concept_words() -> frozenset[str]:
    return frozenset(_concepts().words())


def _concepts() -> Concepts:
    return shipped_concepts()


def _function_words_blanked(text: str) -> str:
    """``text`` with the phrases of every vocabulary section (compare, what, digest, change …,
    longest first) and counted nouns (``两个``) blanked, so the stop list cannot split a word
    like 对比 into 对 + 比."""
    return _FUNCTION_RE.sub(lambda m: " " * len(m.group(0)), _COUNTED.sub(lambda m: " " * len(m.group(0)), text))


_FUNCTION_RE = re.compile("|".join(re.escape(w) for w in sorted(
    {w for name, section in _WORDS.items() if name != "stop" for w in section.get("zh", [])}, key=len, reverse=True)))


_CONTRACTION = re.compile(r"(?<=[A-Za-z])['’](?:s|re|ve|ll|d|m)(?![A-Za-z])", re.IGNORECASE)


def _leftover(rest: str, *, stop: bool = True) -> int:
    """How many words of ``rest`` are not function words: English words (outside the stop list,
    unless ``stop`` is false) plus the Chinese characters the stop phrases leave (``我上周请假了``
    leaves 假: it is not a bare window)."""
    rest = _CONTRACTION.sub(" ", rest)  # "what's" is "what": no word of its own
    words = [w for w in re.findall(r"[A-Za-z0-9_][A-Za-z0-9_./+-]{0,99}", rest)
             if not (stop and w.strip(_PUNCT_EDGE).lower() in _EN_STOP) and not w.isdigit()]
    zh = _ZH_STOP_RE.sub(" ", _function_words_blanked(re.sub(r"[A-Za-z0-9_./+-]+", " ", rest)))
    return len(words) + len(_CJK.findall(zh))


def _label(text: str) -> tuple[str, tuple[int, int]] | None:
    for pattern in (_LABEL_ZH, _LABEL_EN):
        at = 0
        for _ in range(MAX_TERMS * 4):  # "the label rollout": "the label" is no label, "label rollout" is
            m = pattern.search(text, at)
            if m is None:
                break
            word = (m["a"] or m["b"]).lower()
            if word in _EN_STOP or word.isdigit():
                at = m.end("a") if m["a"] else m.end("b")
                continue
            return word, m.span()
    return None
