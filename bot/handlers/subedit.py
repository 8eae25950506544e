"""Subscriptions read against the data and edited by part.

- :func:`fit_labels`: the words a subscription request reads as labels, checked against the labels the
  repository uses: a GitHub login of the data's authors becomes ``author:…`` ("follow contributor-195"),
  a file or folder of the data becomes ``path:…`` ("ray_trainer.py" → ``verl/trainer/ppo/ray_trainer.py``),
  a near miss is corrected ("megatorn" → ``megatron``), anything else is dropped and named — never the
  whole request refused for one word, unless nothing is left.
- :func:`part_edits`: "unsubscribe me from rollout" with ``npu rollout`` subscribed removes ``rollout``
  and keeps ``npu``: the subscriptions holding every term asked to be removed, with those terms taken out
  (a near miss of a subscribed value, a folder's last name, a login said as a label all count).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from bot.filters import Filter, Term, describe
from bot.models import Language
from bot.subscriptions import Subscription
from bot.understand.vocabulary import Vocabulary

__all__ = ["Fitted", "fit_labels", "held_terms", "part_edits", "part_note", "widened"]

_FILE_SUFFIXES = (".py", ".yaml", ".yml", ".toml", ".json", ".sh", ".md", ".txt", ".cfg", ".cu", ".cc", ".h")
_NOTES: dict[Language, dict[str, str]] = {
    "zh": {"author": "{word} 是作者，按 author:{word} 订阅。", "path": "按路径 {path} 订阅了 {word}。",
           "corrected": "按 {to} 理解了 {word}。", "dropped": "没有 {words} 这些标签，已忽略。",
           "edited": "之前：{before}；现在：{after}。", "removed": "已删除整个订阅：{before}。", "sep": "、"},
    "en": {"author": "{word} is an author: subscribed to author:{word}.", "path": "Read {word} as the path {path}.",
           "corrected": "I read {word} as {to}.", "dropped": "No label {words}: left out.",
           "edited": "Before: {before}; now: {after}.", "removed": "Removed the whole subscription: {before}.",
           "sep": ", "},
}


@dataclass(frozen=True, slots=True)
class Fitted:
    """A request's filter fitted to the data, and the notes that say what changed."""

    filter: Filter
    notes: tuple[str, ...]
    dropped: tuple[str, ...]


def _path_of(word: str, vocab: Vocabulary) -> str | None:
    """The one path of the data ``word`` names (a file name or a folder), else ``None``."""
    if not (word.endswith(_FILE_SUFFIXES) or "/" in word):
        return None
    folder = word.strip("/")
    if "/" in word and any(p.startswith(folder + "/") for p in vocab.paths):
        return folder + "/**"
    hits = sorted((p for p in vocab.paths if p == word or p.endswith("/" + word)),
                  key=lambda p: (-vocab.paths[p], p.count("/"), p))
    return hits[0] if hits else None  # several: the one changed most often (the package's own, not a copy)


def _near_author(word: str, vocab: Vocabulary) -> str | None:
    """The one login of the data ``word`` is a near miss of (one or two letters off, at least six letters long:
    ``contributer-045`` → ``contributor-045``), else ``None``."""
    if len(word) < 6 or not vocab.authors:
        return None
    found = process.extractOne(word, list(vocab.authors), scorer=fuzz.ratio, score_cutoff=88)
    return str(found[0]) if found else None


def fit_labels(flt: Filter, known: Collection[str], vocab: Vocabulary | None, language: Language) -> Fitted:
    """``flt`` with every label term that is not one of ``known`` turned into an author, a path, the label
    it nearly is, or dropped (see the module docstring)."""
    labels = {k.lower() for k in known}
    include: list[Term] = []
    notes: list[str] = []
    dropped: list[str] = []
    words = _NOTES[language]
    near_vocab = Vocabulary(labels=set(labels))
    unknown = {t.value for t in flt.include if t.key == "label" and t.value not in labels}
    spelled_apart: dict[str, str] = {}  # "fully" and "async" said apart: the label fully_async
    for label in sorted(labels):
        parts = [p for p in re.split(r"[_-]", label) if p]
        if len(parts) >= 2 and set(parts) <= unknown and not set(parts) & set(spelled_apart):
            spelled_apart.update(dict.fromkeys(parts, label))
    for term in flt.include:
        if term.key == "label" and term.value in spelled_apart:
            joined = Term(key="label", value=spelled_apart[term.value])
            if joined not in include:
                include.append(joined)
            continue
        if term.key != "label" or term.value in labels:
            include.append(term)
            continue
        word = term.value
        if vocab is not None and word in vocab.authors:
            include.append(Term(key="author", value=word))
            notes.append(words["author"].format(word=word))
        elif vocab is not None and (path := _path_of(word, vocab)) is not None:
            include.append(Term(key="path", value=path))
            notes.append(words["path"].format(word=word, path=path))
        elif vocab is not None and (login := _near_author(word, vocab)) is not None:  # contributer-045
            include.append(Term(key="author", value=login))
            notes.append(words["corrected"].format(word=word, to=f"author:{login}"))
        elif (near := near_vocab.resolve_label(word)).how == "corrected" and near.value:
            include.append(Term(key="label", value=near.value))
            notes.append(words["corrected"].format(word=word, to=near.value))
        elif len(word) > 1 or word.isascii():  # a lone Chinese character (有, 合) is a leftover, not a label
            dropped.append(word)
    if dropped:
        notes.append(words["dropped"].format(words=words["sep"].join(dropped)))
    fitted = Filter(include=tuple(include), exclude=flt.exclude, bounds=flt.bounds)
    return Fitted(fitted, tuple(notes), tuple(dropped))


def _same(asked: Term, held: Term) -> bool:
    """Whether a term asked to be removed names the subscribed ``held`` term."""
    a, h = asked.value.lower(), held.value.lower()
    if asked.key == held.key and a == h:
        return True
    if held.key == "path" and asked.key in ("path", "label"):
        parts = [p for p in h.replace("**", "").split("/") if p and p != "*"]
        return a.strip("/") in parts or h.rstrip("/*") == a.rstrip("/*") or h.rstrip("/*").endswith("/" + a.strip("/"))
    if held.key == "author" and asked.key in ("label", "author"):
        a = a.lstrip("@")  # a login, or its number ("048" of contributor-048)
        return a == h or (a.isdigit() and len(a) >= 3 and h.endswith(("-" + a, "_" + a)))
    if held.key == asked.key == "label" and len(a) >= 3:  # rollot, vlm: a near miss of the label held
        return fuzz.ratio(a, h) >= (80 if len(a) >= 4 else 85) or _swapped(a, h)
    return False


def _swapped(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with two neighbouring letters swapped (``fdsp`` for ``fsdp``), at four letters or more."""
    if len(a) != len(b) or len(a) < 4 or a == b:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def held_terms(subs: Sequence[Subscription], values: Sequence[str]) -> list[Term]:
    """The terms of ``subs`` that ``values`` name: a value as a label, login (or its number), folder or near miss
    of one; ``kind:author`` / ``kind:path`` / ``kind:label`` every term of that kind."""
    found: list[Term] = []
    for value in values:
        kind = value.partition("kind:")[2]
        every = [h for sub in subs for h in sub.filter.include]
        exact = [h for h in every if h.value.lower() == value.lower()]
        hits = exact or [h for h in every if (h.key == kind if kind else _same(Term(key="label", value=value.lower()),
                                                                                 h))]
        found.extend(h for h in hits if h not in found)
    return found


def part_edits(subs: Sequence[Subscription], removal: Filter, *, any_of: bool = False) -> list[tuple[Subscription,
                                                                                                     Filter]]:
    """The subscriptions that hold every include term of ``removal`` (``any_of``: any of them), each with its
    filter less those terms (an empty filter: the subscription goes). Exact values first; near misses only
    when nothing is exact."""
    asked = removal.include
    if not asked:
        return []
    edits: list[tuple[Subscription, Filter]] = []
    for sub in subs:
        held = list(sub.filter.include)
        matched = [next((h for h in held if _same(a, h) or (any_of and a == h)), None) for a in asked]
        if any_of:
            matched = [m for m in matched if m is not None]
            if not matched:
                continue
        elif any(m is None for m in matched):
            continue
        kept = tuple(h for h in held if h not in matched)
        edits.append((sub, Filter(include=kept, exclude=sub.filter.exclude, bounds=sub.filter.bounds)))
    return edits


def part_note(before: Filter, after: Filter, language: Language) -> str:
    """"之前：npu 或 rollout；现在：npu。" (or that the whole subscription went)."""
    words = _NOTES[language]
    if not after.include and not after.bounds:
        return words["removed"].format(before=describe(before, language))
    return words["edited"].format(before=describe(before, language), after=describe(after, language))



def widened(held: Sequence[Subscription], new: Subscription) -> list[Subscription]:
    """The stored subscriptions ``new`` widens: same repository, include terms of one key only (values of
    one key are alternatives), all of them among ``new``'s, and nothing else (``npu`` → ``npu rollout``)."""
    keys = {t.key for t in new.filter.include}
    if len(keys) != 1 or new.filter.exclude or new.filter.bounds:
        return []
    mine = set(new.filter.include)
    return [s for s in held if not s.from_config and s.repo.lower() == new.repo.lower() and s.filter.include
            and set(s.filter.include) < mine and not s.filter.exclude and not s.filter.bounds]
