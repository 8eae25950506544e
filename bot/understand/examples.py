"""The example phrasings the help shows, and the ones nearest to a message the bot did not understand.

:data:`EXAMPLES` lists one example per thing the bot understands, in Chinese and English
(each is a row of the understanding table, so every suggestion works as written).
:func:`nearest_examples` ranks them by a deterministic similarity to what was asked: the
overlap of character bigrams (Chinese) and of words and word trigrams (English), digits
folded so that ``PR 1234`` is as near to ``PR #6046`` as ``PR 6046`` is, compared with
the Chinese and English forms of each example and a few more ways to ask it (``also``);
ties keep the order of :data:`EXAMPLES`. Examples below :data:`MIN_SIMILARITY` are not
near; the list is filled up with the first examples (the most asked for).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from bot.models import Language

__all__ = ["EXAMPLES", "Example", "nearest_examples"]


@dataclass(frozen=True, slots=True)
class Example:
    """One thing the bot understands: what it gives (``kind``) and how to ask, in both languages."""

    kind: str
    zh: str
    en: str
    also: tuple[str, ...] = ()
    """More ways to ask (either language), compared but never shown."""

    def text(self, language: Language) -> str:
        """The phrasing in ``language``."""
        return self.zh if language == "zh" else self.en


EXAMPLES: tuple[Example, ...] = (
    Example("digest", "上周周报", "last week's digest", ("周报", "weekly report", "digest", "summary", "总结")),
    Example("pr", "PR #6046 值得读吗", "is PR #6046 worth reading?",
            ("值不值得看 6046", "should I read 6046", "分析 6046")),
    Example("question", "上周哪些 PR 改了 rollout 的配置？", "which PRs touched rollout config last week?",
            ("哪些 PR 改了", "哪些 PR 修改了 文件", "which PRs changed", "did any PR touch", "有没有 PR 动了")),
    Example("label", "上周 trainer 有哪些重点 PR", "trainer PRs last week", ("trainer 的 PR", "key PRs in trainer")),
    Example("digest", "本周周报", "this week's digest", ("这周 周报", "this week")),
    Example("digest", "周报 2026-W16", "digest 2026-W16", ("第16周 周报", "W16 周报", "week 16 digest")),
    Example("digest", "上上周周报", "digest for the week before last", ("两周前 周报", "2 weeks ago")),
    Example("digest", "4月13日到19日的周报", "digest April 13-19", ("4/13-4/19", "since Monday", "4月", "本月")),
    Example("what", "6046 这个 PR 讲了什么", "what does #6046 do?", ("PR 做了什么", "explain PR", "summarize PR")),
    Example("compare", "#6046 和 #6029 哪个更值得读", "compare #6046 and #6029",
            ("对比 6046 6029", "比较两个 PR", "6046 vs 6029", "which is better")),
    Example("label", "npu 标签 W16", "label npu W16", ("npu 标签", "label npu", "npu")),
    Example("merged", "本月合并了哪些 PR", "what merged this month?", ("合并了哪些", "merged PRs", "list PRs")),
    Example("authors", "上周谁贡献最多", "top contributors last week",
            ("谁最活跃", "贡献者", "作者", "who merged the most", "contributors", "authors")),
    Example("question", "W16 有没有改 megatron 的 PR", "any PRs about megatron in W16?",
            ("有没有 megatron 的 PR", "anything on megatron")),
    Example("subscribe", "订阅 npu", "subscribe npu", ("提醒我 npu", "alert me npu", "notify")),
    Example("subscriptions", "我订阅了什么", "my subscriptions", ("我的订阅", "what am I subscribed to")),
    Example("unsubscribe", "取消订阅 npu", "unsubscribe npu", ("退订 npu", "stop alerts")),
    Example("subscribe", "订阅 path:verl/trainer/** -ci", "subscribe path:verl/trainer/** -ci",
            ("path glob", "subscribe path", "follow folder", "排除 ci")),
    Example("github", "我的 GitHub 是 alice", "my GitHub is alice", ("绑定 GitHub", "link github", "github 账号")),
    Example("mydigest", "每周给我发我的周报", "send me my weekly digest",
            ("我的周报", "个人周报", "my digest", "personal digest", "my area this week")),
)
"""Every kind of request, most asked for first."""

_DIGITS = re.compile(r"[0-9]+")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z#][a-z0-9_#'-]{0,40}")
_STOP = frozenset({"the", "a", "an", "of", "in", "on", "to", "for", "is", "are", "it", "me", "my", "you", "i", "do",
                   "can", "please", "what", "s", "pr", "prs"})


def _features(text: str) -> Counter[str]:
    """Character bigrams of the Chinese runs (and single characters of one-character runs),
    English words and their trigrams, digits folded to ``0``."""
    text = _DIGITS.sub("0", unicodedata.normalize("NFKC", text).lower())
    found: Counter[str] = Counter()
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            found["z:" + run] += 1
        found.update("z:" + run[i:i + 2] for i in range(len(run) - 1))
    for word in _WORD.findall(text):
        if word in _STOP:
            continue
        found["w:" + word] += 2
        padded = f" {word} "
        found.update("t:" + padded[i:i + 3] for i in range(len(padded) - 2))
    if "0" in text:
        found["n:0"] += 1
    return found


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(count * b[key] for key, count in a.items() if key in b)
    return dot / math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))


_INDEX = tuple((example, tuple(_features(t) for t in (example.zh, example.en, *example.also)))
               for example in EXAMPLES)
MIN_SIMILARITY = 0.15
"""Below this cosine similarity an example is not "near"; with none near, the first ones are shown."""


def nearest_examples(text: str, language: Language, *, k: int = 3) -> tuple[str, ...]:
    """The ``k`` example phrasings (in ``language``) nearest to ``text``.

    Args:
        text: what was asked (any length; the first 1,000 characters are compared).
        language: the language to show the examples in.
        k: how many to return (at most ``len(EXAMPLES)``).

    Returns:
        Distinct phrasings, nearest first; the first ``k`` examples when nothing is similar.
    """
    wanted = _features(text[:1_000])
    scored = [(max(_cosine(wanted, f) for f in forms), -i, example) for i, (example, forms) in enumerate(_INDEX)]
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    near = [example for score, _, example in scored if score >= MIN_SIMILARITY]
    rest = [example for example in EXAMPLES if example not in near]
    return tuple(example.text(language) for example in [*near, *rest][:k])
