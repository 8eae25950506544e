"""The tokenizer stage: a message's Chinese runs cut into words by jieba, and the filler dropped.

jieba is imported and its dictionary loaded on the first Chinese message only (about half a
second, once per process; the CLI's digest path never gets here), with the words of the
understanding's own vocabulary added as user words: the phrases of ``bot/defaults/words.toml``,
the concept words (``兼容性``, ``显存``, ``存档`` …), and whatever :func:`add_words` is given (a
repository's Chinese vocabulary). Loading is guarded by a lock, so two threads reading their first
messages at once load it once.

:func:`chinese_words` gives the content words of a run of Chinese text: jieba's words without the
function words and filler (:data:`FILLER`: ``逻辑``, ``东西``, ``部分``, ``的更新`` …), each of two
characters or more unless it is a concept word.
"""

from __future__ import annotations

import logging
import threading
import tomllib
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["FILLER", "add_words", "chinese_words", "is_content", "segment", "warm_up"]

FILLER = frozenset(tomllib.loads(resources.files("bot").joinpath("defaults/words.toml").read_text(
    encoding="utf-8"))["filler"]["words"].split())
"""Chinese words that are never search words (``[filler]`` of ``bot/defaults/words.toml``): generic nouns
(``逻辑``, ``东西``, ``部分``), the words of change and news (``更新``, ``改动``), question words, particles."""

_lock = threading.Lock()
_tokenizer: Any = None
_pos: dict[str, str] | None = None
_user: set[str] = set()
_pending: set[str] = set()
log = logging.getLogger(__name__)


def add_words(words: Iterable[str]) -> None:
    """Teach the segmenter ``words`` (those holding Chinese; others are ignored): now when it is
    loaded, else when it loads."""
    wanted = {w.strip() for w in words if w.strip() and any("\u3400" <= ch <= "\u9fff" for ch in w)}
    if not wanted:
        return
    _user.update(wanted)
    with _lock:
        if _tokenizer is None:
            _pending.update(wanted)
            return
        for word in wanted:
            _tokenizer.add_word(word)


def _own_words() -> set[str]:
    """The Chinese phrases of ``bot/defaults/words.toml`` (every section) and the concept words."""
    from bot.understand.concepts import shipped_concepts

    sections = tomllib.loads(resources.files("bot").joinpath("defaults/words.toml").read_text(encoding="utf-8"))
    found: set[str] = set()
    for section in sections.values():
        zh = section.get("zh", [])
        found.update(zh.split() if isinstance(zh, str) else zh)
    return found | set(shipped_concepts().words())


def _load() -> Any:
    """jieba's tokenizer with the dictionary loaded and the user words added (once per process)."""
    global _tokenizer
    if _tokenizer is not None:
        return _tokenizer
    with _lock:
        if _tokenizer is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.Tokenizer()
            tokenizer.initialize()
            for word in sorted(_own_words() | _pending):
                if any("\u3400" <= ch <= "\u9fff" for ch in word):
                    tokenizer.add_word(word)
            _user.update(_pending)
            _tags()
            _pending.clear()
            _tokenizer = tokenizer
    return _tokenizer


def segment(text: str) -> list[str]:
    """``text`` cut into words by jieba (its HMM joins characters of unknown words)."""
    if not text:
        return []
    return [w for w in _load().lcut(text) if w.strip()]


CONTENT_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "ng", "eng", "j"})
"""Parts of speech (jieba's dictionary tags) of words that can be searched: nouns, proper nouns, foreign words,
abbreviations. Verbs, adverbs, pronouns, particles, prepositions, numerals, time and place words
(``了解``, ``就是``, ``别的``, ``基于``, ``提前``) are function words and fillers of a question, never search words."""


def _tags() -> dict[str, str]:
    """Each word of jieba's dictionary with its part of speech (read once, with the segmenter)."""
    global _pos
    if _pos is None:
        import jieba

        found: dict[str, str] = {}
        path = Path(jieba.__file__).with_name("dict.txt")
        with path.open(encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    found[parts[0]] = parts[2]
        _pos = found
    return _pos


def is_content(word: str) -> bool:
    """Whether ``word`` can be a search word by its part of speech: a noun-like word of jieba's dictionary, a word
    the bot or the data added, or a word the dictionary does not know that has a character of content."""
    if word in _user:
        return True
    tags = _tags()
    tag = tags.get(word)
    if tag is not None:
        return tag in CONTENT_TAGS
    # a word the segmenter joined: content unless every character is a function word of its own (做个, 一并)
    return not all(tags.get(ch, "n") not in CONTENT_TAGS for ch in word)


def chinese_words(run: str, *, keep: Iterable[str] = ()) -> list[str]:
    """The content words of a run of Chinese ``run``: jieba's words less :data:`FILLER` and the words whose
    part of speech is not a noun's (:func:`is_content`), each of at least two characters; a word of ``keep`` (concept
    words) always stays."""
    kept = set(keep)
    out: list[str] = []
    for word in segment(run):
        if word in kept:
            out.append(word)
        elif word in FILLER or len(word) < 2 or not is_content(word):
            continue
        else:
            out.append(word)
    return out


def warm_up() -> None:
    """Load the segmenter and its parts of speech now (about a second, e.g. in a worker thread at the bot's start)
    rather than on the first Chinese message."""
    _load()
    _tags()
