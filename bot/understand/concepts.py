"""Concepts people ask about, with their words in Chinese and English, and what they mean in the data.

The table ships as ``bot/defaults/concepts.toml`` (breaking / 破坏性 / 不兼容 / 兼容性, checkpoint /
ckpt / 存档, config / 配置, deprecate / 弃用, performance / 性能 / 提速, memory / 显存 / OOM, and
the risk kinds the digest names); a team adds words or concepts under ``[concepts.NAME]`` in
``prhub.toml`` (:class:`bot.config.ConceptConfig`).

:meth:`Concepts.find` gives the concept a word of a question stands for (case-insensitive, the whole
word or phrase); a question's search then looks for every word of the concept's ``search`` and for
PRs whose analysis names one of its ``risks`` or whose change type is one of its ``change_types``
(:func:`bot.digest.ask.answer_question`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["Concept", "Concepts", "shipped_concepts"]

_ASCII_WORD = re.compile(r"[a-z]")


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept: its ``name`` (the table's key), the ``words`` people use for it (lower case), the
    ``search`` spellings looked for in PRs, and the ``risks`` kinds and ``change_types`` that mean it."""

    name: str
    words: tuple[str, ...]
    search: tuple[str, ...]
    risks: tuple[str, ...] = ()
    change_types: tuple[str, ...] = ()


def _concept(name: str, raw: Mapping[str, Any], base: Concept | None = None) -> Concept:
    words = tuple(dict.fromkeys(w.strip().lower() for w in raw.get("words", ()) if str(w).strip()))
    search_raw = raw.get("search")
    search = tuple(dict.fromkeys(s.strip().lower() for s in search_raw if str(s).strip())) \
        if search_raw is not None else None
    if base is not None:
        words = tuple(dict.fromkeys((*base.words, *words)))
        search = tuple(dict.fromkeys((*base.search, *(search or ())))) if search is not None else base.search
        risks = tuple(dict.fromkeys((*base.risks, *raw.get("risks", ()))))
        types = tuple(dict.fromkeys((*base.change_types, *raw.get("change_types", ()))))
        return Concept(name, words, search, risks, types)
    if search is None:
        search = tuple(w for w in words if w.isascii() and _ASCII_WORD.search(w))
    return Concept(name, words, search, tuple(raw.get("risks", ())), tuple(raw.get("change_types", ())))


class Concepts:
    """The concept table: the shipped concepts, then those of the config (``extra``: ``{name: {words,
    search, risks, change_types}}``; a shipped name gets the words added, a new name is a new concept).

    Args:
        extra: the ``[concepts.NAME]`` tables of ``prhub.toml`` (models or plain dicts), or ``None``.
    """

    def __init__(self, extra: Mapping[str, Any] | None = None) -> None:
        raw = tomllib.loads(resources.files("bot").joinpath("defaults/concepts.toml").read_text(encoding="utf-8"))
        table = {name: _concept(name, spec) for name, spec in raw["concepts"].items()}
        for name, spec in (extra or {}).items():
            values = spec.model_dump(exclude_none=True) if hasattr(spec, "model_dump") else dict(spec)
            table[name] = _concept(name, values, table.get(name))
        self.table: dict[str, Concept] = table
        self._by_word: dict[str, Concept] = {}
        for concept in table.values():
            for word in concept.words:
                self._by_word.setdefault(word, concept)

    def find(self, word: str) -> Concept | None:
        """The concept ``word`` (any case, spaces and ``-``/``_`` alike) is one of the words of, else ``None``."""
        key = " ".join(word.strip().lower().split())
        found = self._by_word.get(key) or self._by_word.get(key.replace("_", " ").replace("-", " "))
        if found is None and key.isascii() and len(key) > 4:  # another form of a word: deprecations, checkpoints
            for suffix in ("s", "es", "ing", "ed", "d"):
                if key.endswith(suffix) and (found := self._by_word.get(key[: -len(suffix)])) is not None:
                    break
        return found

    def words(self) -> tuple[str, ...]:
        """Every word of every concept (lower case), for the segmenter and the fuzzy match."""
        return tuple(self._by_word)

    def glossary(self) -> dict[str, tuple[str, ...]]:
        """Each concept word → the concept's ``search`` spellings (the shape of :func:`bot.digest.ask.glossary`)."""
        return {word: concept.search for word, concept in self._by_word.items() if concept.search}


@cache
def shipped_concepts() -> Concepts:
    """The shipped table alone (no config), built once."""
    return Concepts()
