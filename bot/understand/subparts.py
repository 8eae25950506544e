"""Subscriptions changed by part, read from the cues around each value rather than from whole phrasings.

A message such as ``rollout 和 megatron 先都停掉 只看 npu``, ``那个npu的我不想要了…rollout的留着``, ``fsdp 那边我们
暂时不太关注了，…megatron 的继续保留就好``, ``please stop the alerts of contributor-048, keep the other`` or ``drop
the author part, keep the folder`` names values (labels, logins, numbers, folders) or kinds of value (``目录``,
``作者``, ``folder``, ``author``), each next to a cue:

- a **stop** cue (``不用了``, ``别推``, ``停掉``, ``去掉``, ``不想要``, ``不关注``, ``stop``, ``drop``, ``no more`` …):
  the value is removed;
- a **keep** cue (``留着``, ``保留``, ``继续``, ``照旧``, ``只看``, ``keep``, ``only`` …): the value stays.

Each value takes the cue of its clause: a keep cue right before it (``只看 npu``), else, in Chinese, the first
cue after it (``npu 的不用了``), in English the nearest before it (``stop the alerts of contributor-048``); a
value with none takes the next value's (``rollout 和 megatron 先都停掉``). :func:`part_request` gives the values
to remove, or those to add (``再加个 trtllm``, ``顺便把 vllm 也算上``, ``also throw in sglang``: the asker's
subscription widened). The core resolves them against the subscriptions held (near misses, a login's number).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice
from typing import Literal

__all__ = ["PartRequest", "part_request"]

_A = r"(?<![A-Za-z])"
_Z = r"(?![A-Za-z])"
_STOP = re.compile(r"不用了|不要了|不想要了?|不想收|不要再?推|别再?推了?|别发了?|不用再?推|不用再?发|停掉|停了|先停|"
                   r"去掉|删掉|删了|拿掉|取消掉?|退掉|退订|不(?:太)?关注了?|不用再?(?:通知|提醒)|不再需要|不需要了|不看了|"
                   r"不用再?盯了?|别再?盯了?|不盯了|关了吧|关掉|撤掉|撤了|撤销|"
                   r"(?<![A-Za-z])take(?=\s+\S{1,40}\s+off(?![A-Za-z]))|"
                   rf"{_A}(?:stop|drop|remove|delete|no\s+more|mute|unsubscribe|don['’]?t\s+need|not\s+interested){_Z}",
                   re.IGNORECASE)
_KEEP = re.compile(r"留着|保留|继续|照旧|不变|还要|只看|只留|只要|只关注|"
                   rf"{_A}(?:keep|only|still\s+want){_Z}", re.IGNORECASE)
_KEEP_BEFORE = re.compile(r"(?:只看|只留|只要|只关注|保留|留着|(?<![A-Za-z])(?:keep|only))\s*(?:the\s+)?$",
                          re.IGNORECASE)
_CONTEXT = re.compile(r"订阅|退订|提醒|通知|推送|推|留着|保留|只看|只留|照旧|盯|太吵|好吵|吵死|刷屏|打扰|不看了|不跟了|"
                      r"^\s*(?:取消|退掉|删掉)|(?:取消|退订|退掉)\s*(?:吧|了|掉)?\s*$|"
                      rf"{_A}(?:alert(?:s|ing)?|ping(?:s|ing)?|notif(?:y|ying|ications?)|subscriptions?|subs|keep|"
                      rf"noisy|spam(?:my)?|(?:off\s+)?my\s+(?:watch\s?)?list){_Z}", re.IGNORECASE)
"""Words that say the message is about alerts (a stop cue alone, ``不要了``, changes nothing without one)."""
_ADD = re.compile(r"^(?:那|那就|顺便|另外|再|也)?\s*(?:再加(?:个|一个|上)?|加上|加个|也加上?|也算上|也加进去)|"
                  r"也算上|也加上|也加进来|"
                  rf"^(?:and\s+)?(?:also\s+)?(?:add|throw\s+in|include|plus){_Z}|"
                  rf"{_A}also\s+(?:add|throw\s+in|include){_Z}",
                  re.IGNORECASE)
_CLAUSES = re.compile(r"[,，。.;；!！?？]")
_TOKEN = re.compile(r"(?<![A-Za-z0-9_./-])(?P<t>[A-Za-z][A-Za-z0-9_.+-]{1,63}(?:/[A-Za-z0-9_.*+-]{1,63}){0,6}/?|"
                    r"[0-9]{3,7})(?![A-Za-z0-9_])")
_KINDS = {"目录": "path", "路径": "path", "文件夹": "path", "folder": "path", "path": "path", "directory": "path",
          "作者": "author", "author": "author", "标签": "label", "label": "label"}
_KIND = re.compile(r"目录|路径|文件夹|作者|标签|" + rf"{_A}(?:folder|path|directory|author|label){_Z}", re.IGNORECASE)
_NOT_VALUES = frozenset({
    "a", "add", "alert", "alerts", "all", "also", "an", "and", "any", "author", "delete", "directory", "don",
    "dont", "drop", "folder", "for", "from", "get", "in", "include", "interested", "it", "just", "keep",
    "label", "labels", "me", "more", "mute", "my", "need", "no", "not", "notification", "notifications", "of",
    "one", "ones", "only", "or", "other", "others", "our", "part", "parts", "path", "ping", "pings", "please",
    "pls", "plus", "plz", "pr", "prs", "receive", "remove", "rest", "still", "stop", "sub", "subs",
    "subscribe", "subscription", "subscriptions", "thanks", "that", "the", "them", "this", "throw", "thx",
    "to", "too", "unsubscribe", "us", "want", "with",
})


@dataclass(frozen=True, slots=True)
class PartRequest:
    """What a message changes of the asker's subscriptions: ``remove`` these values (``kind:author`` for every
    value of a kind), or ``add`` these to the subscription held."""

    action: Literal["remove", "add"]
    values: tuple[str, ...]


def _items(clause: str) -> list[tuple[int, int, str]]:
    found = [(m.start(), m.end(), m["t"]) for m in islice(_TOKEN.finditer(clause), 12)
             if m["t"].lower() not in _NOT_VALUES]
    if not found:
        found = [(m.start(), m.end(), "kind:" + _KINDS[m.group(0).lower()]) for m in _KIND.finditer(clause)]
    return found


def _cue(clause: str, start: int, end: int) -> str | None:
    if _KEEP_BEFORE.search(clause[max(0, start - 8): start]):
        return "keep"
    cues = sorted([(m.start(), "stop", m.group(0)) for m in _STOP.finditer(clause)]
                  + [(m.start(), "keep", m.group(0)) for m in _KEEP.finditer(clause)])
    after = [(at, kind, word) for at, kind, word in cues if at >= end]
    before = [(at, kind, word) for at, kind, word in cues if at < start]
    zh_after = [c for c in after if not c[2].isascii()]
    if zh_after:
        return zh_after[0][1]
    if before:
        return before[-1][1]
    return after[0][1] if after else None


def part_request(text: str) -> PartRequest | None:
    """The part of the asker's subscriptions ``text`` removes or adds (see the module docstring), else ``None``."""
    if len(text) > 200:
        return None
    if (add := _ADD.search(text)) is not None:
        rest = text[: add.start()] + " " + text[add.end():]
        values = [v for _, _, v in _items(rest) if not v.startswith("kind:")]
        return PartRequest("add", tuple(values)) if values else None
    if _STOP.search(text) is None or _CONTEXT.search(text) is None:
        return None
    removed: list[str] = []
    for clause in _CLAUSES.split(text):
        items = _items(clause)
        pending: list[str] = []
        for start, end, value in items:
            cue = _cue(clause, start, end)
            if cue is None:
                pending.append(value)
                continue
            if cue == "stop":
                removed.extend([*pending, value])
            pending = []
    unique = tuple(dict.fromkeys(removed))
    return PartRequest("remove", unique) if unique else None
