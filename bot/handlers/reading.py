"""What the answers do with the data's own words: near misses corrected, unknown words dropped and named,
concepts searched, "lately" laid out against the data.

:class:`DataWords` keeps one :class:`~bot.understand.vocabulary.Vocabulary` per repository (the PRs of
the last :data:`VOCABULARY_WEEKS` weeks before the latest merge: labels, authors, paths, diff
identifiers, title words), rebuilt after :data:`VOCABULARY_TTL_S` seconds, and the concept table
(shipped, plus ``[concepts]`` of ``prhub.toml``). The notes it writes ("按 megatron 理解了 megatorn",
"数据里没有“逻辑”，已忽略") go above the answer, in the reply's language.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from bot.config import Settings
from bot.digest.ask import Answer, Meaning, answer_question, glossary
from bot.digest.window import date_window, zone
from bot.models import Digest, DigestPR, Language, PullRequest, Window
from bot.sources.base import PRSource
from bot.subscriptions import known_labels
from bot.understand.concepts import Concepts
from bot.understand.vocabulary import Resolved, Vocabulary

__all__ = ["VOCABULARY_TTL_S", "VOCABULARY_WEEKS", "DataWords", "Searched", "corrected_note", "dropped_note",
           "label_note", "pr_notes", "recent_note"]

VOCABULARY_WEEKS = 12
"""Weeks of PRs (before the latest merge) whose words make a repository's vocabulary."""
VOCABULARY_TTL_S = 600.0
"""How long a repository's vocabulary is kept before it is read again (seconds)."""

_PHRASES: dict[Language, dict[str, str]] = {
    "zh": {
        "corrected": "按 {to} 理解了 {said}。",
        "dropped": "数据里没有“{words}”，已忽略，按其余的词查找。",
        "label_corrected": "没有 {said} 这个标签，按 {to} 显示。",
        "label_unknown": "没有 {said} 这个标签。这段时间的标签有：{labels}。",
        "recent": "“{said}”按有数据的最近四周算：{window}。",
        "risks": "#{number} 的风险：{risks}。",
        "no_risks": "#{number} 的分析没有列出风险。",
        "start": "#{number} 从这里开始读：{focus}。",
        "no_start": "#{number} 没有给出阅读起点：先读 PR 描述和改动最多的文件。",
        "pending": "#{number} 的分析结果尚未生成。",
        "sep": "、",
    },
    "en": {
        "corrected": "I read {said} as {to}.",
        "dropped": "Nothing in the data says “{words}”: left it out and searched for the rest.",
        "label_corrected": "There is no label {said}: showing {to}.",
        "label_unknown": "There is no label {said}. Labels of this period: {labels}.",
        "recent": "“{said}” is the last four weeks with data: {window}.",
        "risks": "Risks of #{number}: {risks}.",
        "no_risks": "The analysis of #{number} lists no risks.",
        "start": "Start reading #{number} here: {focus}.",
        "no_start": "#{number} names no starting point: read the description and the most changed files first.",
        "pending": "The analysis of #{number} is not available yet.",
        "sep": ", ",
    },
}


def corrected_note(words: Sequence[Resolved], language: Language) -> str | None:
    """"按 megatron 理解了 megatorn。" for the corrected words, or ``None``."""
    if not words:
        return None
    phrases = _PHRASES[language]
    return " ".join(phrases["corrected"].format(said=w.said, to=w.value) for w in words)


def dropped_note(words: Sequence[str], language: Language) -> str | None:
    """"数据里没有“逻辑”，已忽略。" for the words left out, or ``None``."""
    if not words:
        return None
    phrases = _PHRASES[language]
    return phrases["dropped"].format(words=phrases["sep"].join(words))


def label_note(found: Resolved, labels: Sequence[str], language: Language) -> str | None:
    """The note of a label view's label that was corrected or is unknown (``labels``: those of the window)."""
    phrases = _PHRASES[language]
    if found.how == "corrected":
        return phrases["label_corrected"].format(said=found.said, to=found.value)
    if found.how == "unknown":
        shown = phrases["sep"].join(sorted(labels)[:20]) or "-"
        return phrases["label_unknown"].format(said=found.said, labels=shown)
    return None


def recent_note(said: str | None, window_text: str, language: Language) -> str:
    """"“最近”按有数据的最近四周算：2026-03-23 – 04-19。\""""
    return _PHRASES[language]["recent"].format(said=said or ("最近" if language == "zh" else "lately"),
                                               window=window_text)


def pr_notes(pr: DigestPR, question: str, language: Language) -> tuple[str, ...]:
    """The line above a PR's analysis that answers what was asked of it: its risks (``risks``) or where to
    start reading (``start``); nothing for ``worth`` and ``what`` (the analysis answers those)."""
    if question not in ("risks", "start"):
        return ()
    phrases = _PHRASES[language]
    if pr.analysis is None:
        return (phrases["pending"].format(number=pr.number),)
    if question == "risks":
        risks = [r.title + (f"（{', '.join(r.evidence[:2])}）" if language == "zh" and r.evidence else
                            f" ({', '.join(r.evidence[:2])})" if r.evidence else "") for r in pr.analysis.risks]
        if not risks:
            return (phrases["no_risks"].format(number=pr.number),)
        return (phrases["risks"].format(number=pr.number, risks=phrases["sep"].join(risks)),)
    focus = pr.analysis.recommendation.focus
    if not focus:
        return (phrases["no_start"].format(number=pr.number),)
    return (phrases["start"].format(number=pr.number, focus=phrases["sep"].join(focus[:3])),)


@dataclass(frozen=True, slots=True)
class Searched:
    """A question's answer after its words were resolved: the answer, the words corrected and those dropped."""

    answer: Answer
    corrected: tuple[Resolved, ...]
    dropped: tuple[str, ...]

    def notes(self, language: Language) -> list[str]:
        """The notes of the corrections and the words left out, in ``language``."""
        found = [corrected_note(self.corrected, language),
                 dropped_note(self.dropped, language)]
        return [n for n in found if n]


class DataWords:
    """The vocabulary of each repository and the concept table (one per process, in the answers).

    Args:
        settings: the configuration (its ``[concepts]``, label rules and time zone).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.concepts = Concepts(settings.concepts)
        self._words = {**glossary(), **self.concepts.glossary()}
        self._meanings: dict[str, Meaning] = {
            word: (c.risks, c.change_types) for word in self.concepts.words()
            if (c := self.concepts.find(word)) is not None and (c.risks or c.change_types)}
        self._kept: dict[tuple[int, str], tuple[float, Vocabulary]] = {}

    async def vocabulary(self, source: PRSource, repo: str, latest: Window | None) -> Vocabulary:
        """``repo``'s vocabulary: the PRs of :data:`VOCABULARY_WEEKS` weeks through ``latest`` (the latest
        week with merged PRs; ``None``: an empty one), kept :data:`VOCABULARY_TTL_S` seconds."""
        key = (id(source), repo.lower())
        kept = self._kept.get(key)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        prs: list[PullRequest] = []
        if latest is not None:
            tz = self.settings.timezone
            last = latest.end.astimezone(zone(tz)).date() - timedelta(days=1)
            window = date_window(last - timedelta(weeks=VOCABULARY_WEEKS) + timedelta(days=1), last, tz)
            prs = await asyncio.to_thread(source.merged_prs, repo, window)
        vocab = await asyncio.to_thread(self._build, prs, repo)
        self._kept[key] = (time.monotonic() + VOCABULARY_TTL_S, vocab)
        return vocab

    def _build(self, prs: list[PullRequest], repo: str) -> Vocabulary:
        return Vocabulary.of(prs, labels=known_labels(prs, self.settings, repo), concepts=self.concepts)

    def window_vocabulary(self, base: Vocabulary, digest: Digest, records: Sequence[PullRequest]) -> Vocabulary:
        """``base`` with the words of the window's own PRs and the labels its digest gives them."""
        labels = {label for pr in digest.prs for label in pr.labels}
        return base.merge(Vocabulary.of(records, labels=labels, concepts=self.concepts))

    def search(self, vocab: Vocabulary, digest: Digest, records: Sequence[PullRequest], terms: Sequence[str], *,
               label: str | None, question: str) -> Searched:
        """Answer a question over the window with its words resolved: near misses corrected, concept words
        searched with their spellings, risks and change types; a word neither the data nor the concepts know
        that no PR of the window matches is dropped (and named), unless it is the only word."""
        resolution = vocab.resolve_all(terms)
        wanted = resolution.kept
        answer = answer_question(digest, records, wanted, label=label, question=question, words=self._words,
                                 meanings=self._meanings)
        unknown = {w.lower() for w in resolution.unknown}
        dropped = tuple(t for t in answer.missing_terms if t.lower() in unknown)
        if len(dropped) == len(wanted):  # nothing else to search for: the answer is that nothing matches
            dropped = ()
        if dropped:
            rest = tuple(t for t in wanted if t not in dropped)
            answer = answer_question(digest, records, rest, label=label, question=question, words=self._words,
                                     meanings=self._meanings)
        return Searched(answer, resolution.corrected, dropped)
