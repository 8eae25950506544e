"""The chat core's answers that know the data: windows, comparisons, questions about a window, the help.

:class:`Answers` is the part of :class:`bot.handlers.core.Core` that answers how people ask
(:mod:`bot.understand`): a digest, label view or list of merged PRs of any window ("上上周",
"本月", "W16", "4月13日到19日"), several PRs side by side, questions answered from the window's
PRs with citations (:mod:`bot.digest.ask`, phrased by the model when one is configured), a window
that cannot be read, and the help with the examples nearest to what was said (the model first
maps the message to an intent when one is configured: :class:`bot.understand.reader.IntentReader`).

What every windowed answer does:

- the window is laid out from the intent's spec in the configured time zone
  (:func:`bot.digest.window.window_from_spec`); words that depend on the day are echoed
  ("我把“上上周”理解为 2026-W47（11-16 – 11-22）。") and a window not over yet says "so far";
- an empty window says so and names the latest week with merged PRs and the date of its last
  merge, with a button that opens it (:class:`~bot.replies.EmptyWindowReply`) — "the data's last
  merged PR is from 2026-08-22", never an empty report;
- the label view, the merged PRs and the questions default to the latest week with merged PRs
  (last week when it has any).

Sources are synchronous, so they are read in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from bot.cards.i18n import ask_phrases, clarify_text, latest_window_note, so_far_note, window_notes, window_text
from bot.channels import Channels
from bot.config import Settings
from bot.digest.compare import compare_prs
from bot.digest.window import RECENT, date_window, latest_week, named_window, recent_window, window_from_spec, zone
from bot.errors import PrhubError, PRNotFoundError
from bot.handlers.reading import DataWords, label_note, recent_note
from bot.models import Digest, DigestPR, Language, PullRequest, Window
from bot.replies import (
    AnswerReply,
    ClarifyReply,
    CompareReply,
    DigestReply,
    EmptyWindowReply,
    HelpReply,
    LabelReply,
    MergedReply,
    Reply,
)
from bot.sources.base import PRSource
from bot.sources.reads import read_source
from bot.understand import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    MergedIntent,
    QuestionIntent,
)
from bot.understand.examples import nearest_examples
from bot.understand.releases import release_window
from bot.understand.vocabulary import Vocabulary

if TYPE_CHECKING:
    from bot.digest.llm.answer import AnswerWriter
    from bot.understand.reader import IntentReader

__all__ = ["LATEST_TTL_S", "LOOK_BACK_DAYS", "Answers", "CoreParts"]

log = logging.getLogger(__name__)


class Where(Protocol):
    """Where a request was made (:class:`bot.handlers.core.Conversation`): its binding's key."""

    @property
    def key(self) -> str: ...


class CoreParts(Protocol):
    """What the answers use of :class:`bot.handlers.core.Core`."""

    settings: Settings
    channels: Channels

    def now(self) -> datetime: ...

    async def window_digest(self, source: PRSource, repo: str, window: Window, prs: list[PullRequest],
                            language: Language, *, compare: bool) -> Digest: ...

    async def analysed_pr(self, source: PRSource, repo: str, number: int, language: Language) -> DigestPR: ...

    def canonical_label(self, repo: str, label: str) -> str: ...

    async def answer(self, intent: Intent, conversation: Any) -> Reply: ...

LOOK_BACK_DAYS = (7, 35, 120, 400, 800)
"""How far back the latest merge is looked for, step by step (days before today): the first step
that holds a merge ends the search, so an active repository costs one read of a week."""
LATEST_TTL_S = 600.0
"""How long the latest merge of a repository is remembered (seconds)."""


class Answers:
    """The answers of :class:`~bot.handlers.core.Core` to windowed requests, comparisons and the help.

    Args:
        core: the chat core (its settings, channels, digest service and clock).
        reader: maps a message the rules did not understand to an intent (``None``: no model).
        writer: phrases question answers over the PRs found (``None``: no model).
    """

    def __init__(self, core: CoreParts, *, reader: IntentReader | None = None,
                 writer: AnswerWriter | None = None) -> None:
        self.core = core
        self.reader = reader
        self.writer = writer
        self._latest: dict[tuple[int, str], tuple[float, tuple[Window, datetime] | None]] = {}
        self.data_words = DataWords(core.settings)

    @property
    def _tz(self) -> str:
        return self.core.settings.timezone

    def lay_out(self, spec: str | None) -> Window:
        """The window of ``spec`` now (``None``: the last complete week).

        Raises:
            WindowError: the spec names no window that exists.
        """
        now = self.core.now()
        return named_window(None, tz=self._tz, now=now) if spec is None else window_from_spec(spec, tz=self._tz,
                                                                                             now=now)

    async def _prs(self, source: PRSource, repo: str, window: Window) -> list[PullRequest]:
        return await read_source(source, source.merged_prs, repo, window)

    async def latest(self, source: PRSource, repo: str) -> tuple[Window, datetime] | None:
        """The latest ISO week of ``repo`` with a merged PR and that PR's merge time (``None``: none in
        the last :data:`LOOK_BACK_DAYS` days), remembered for :data:`LATEST_TTL_S` seconds."""
        today = self.core.now().astimezone(zone(self._tz)).date()
        key = (id(source), repo.lower())
        kept = self._latest.get(key)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        found: tuple[Window, datetime] | None = None
        for days in LOOK_BACK_DAYS:
            prs = await self._prs(source, repo, date_window(today - timedelta(days=days - 1), today, self._tz))
            if prs:
                found = latest_week((pr.merged_at for pr in prs), self._tz)
                break
        self._latest[key] = (time.monotonic() + LATEST_TTL_S, found)
        return found

    async def _window(
        self, source: PRSource, repo: str, spec: str | None, said: str | None, lang: Language,
    ) -> tuple[Window, list[PullRequest], list[str]]:
        """The window a label view, list or question is about, its PRs and the notes: ``spec``'s
        window, or (``None``) last week, or the latest week with merged PRs when last week had none."""
        window, notes = await self._lay_out(source, repo, spec, said, lang)
        prs = await self._prs(source, repo, window)
        if spec is None and not prs and (found := await self.latest(source, repo)) is not None:
            window = found[0]
            prs = await self._prs(source, repo, window)
            notes = [ask_phrases(lang).default_window.format(window=window_text(window, lang))]
        return window, prs, notes

    async def _lay_out(self, source: PRSource, repo: str, spec: str | None, said: str | None,
                       lang: Language) -> tuple[Window, list[str]]:
        """The window of ``spec`` and its notes; "lately" (``recent``) is the four weeks through the latest
        week with merged PRs, and says so."""
        if spec == RECENT:
            found = await self.latest(source, repo)
            window = recent_window(found[0], self._tz) if found is not None else self.lay_out(spec)
            notes = [recent_note(said, window_text(window, lang), lang)]
            if (so_far := so_far_note(window, self.core.now(), lang)) is not None:
                notes.append(so_far)
            return window, notes
        window = self.lay_out(spec)
        return window, window_notes(window, spec=spec, said=said, now=self.core.now(), language=lang)

    async def _empty(self, source: PRSource, repo: str, window: Window, lang: Language,
                     notes: list[str]) -> EmptyWindowReply:
        so_far = so_far_note(window, self.core.now(), lang)
        notes = [n for n in notes if n != so_far]  # "merged so far" has nothing to say of an empty window
        found = await self.latest(source, repo)
        if found is None:
            return EmptyWindowReply(window, repo, lang, notes=tuple(notes))
        latest, last_merge = found
        return EmptyWindowReply(window, repo, lang, latest if latest.name != window.name else None, last_merge,
                                notes=(*notes, latest_window_note(latest, last_merge, lang)))

    # -- the intents --------------------------------------------------------------------------------

    async def digest(self, intent: DigestIntent, conversation: Where, lang: Language) -> Reply:
        """The digest of the intent's window (an empty window says which one has PRs)."""
        source, repo = self.core.channels.resolve_visible(conversation.key, intent.repo)
        if (asked := release_window(intent.week)) is not None:  # "v0.7.1 改了啥", "since v0.7.0"
            return await self._release_digest(asked, source, repo, conversation, lang)
        window, notes = await self._lay_out(source, repo, intent.week, intent.said, lang)
        prs = await self._prs(source, repo, window)
        if not prs:
            return await self._empty(source, repo, window, lang, notes)
        digest = await self.core.window_digest(source, repo, window, prs, lang, compare=True)
        whole = self.core.channels.binding(conversation.key).full_digest
        return DigestReply(digest, tuple(notes), whole=whole)

    async def _release_digest(self, asked: tuple[str, str], source: PRSource, repo: str, conversation: Where,
                              lang: Language) -> Reply:
        """The digest of a release (the PRs first released in the tag, with its release notes) or of what was
        merged since one (:mod:`bot.digest.releases`).

        Raises:
            SourceError: the source knows no releases (a snapshot) or could not be read.
            WindowError: no such release (the latest named).
        """
        from bot.digest.releases import release_span, since_span

        kind, tag = asked
        settings = self.core.settings
        tz = settings.channel(conversation.key).timezone or settings.timezone
        span = (await read_source(source, release_span, source, repo, tag, tz) if kind == "release" else
                await read_source(source, since_span, source, repo, tag, tz, self.core.now()))
        digest = await self.core.window_digest(source, repo, span.window, span.prs, lang, compare=False)
        digest = digest.model_copy(update={"release": span.release.tag if span.release else None,
                                           "previous_release": span.previous.tag if span.previous else None})
        whole = self.core.channels.binding(conversation.key).full_digest
        return DigestReply(digest, (), whole=whole)

    async def _window_digest(
        self, intent: LabelIntent | MergedIntent | QuestionIntent, conversation: Where, lang: Language,
    ) -> tuple[Digest, list[PullRequest], tuple[str, ...]] | EmptyWindowReply:
        """The digest of the intent's window (no comparison with earlier weeks), its records and the
        notes; or the answer about an empty window."""
        source, repo = self.core.channels.resolve_visible(conversation.key, intent.repo)
        window, prs, notes = await self._window(source, repo, intent.window, intent.said, lang)
        if not prs:
            return await self._empty(source, repo, window, lang, notes)
        return await self.core.window_digest(source, repo, window, prs, lang, compare=False), prs, tuple(notes)

    async def label(self, intent: LabelIntent, conversation: Where, lang: Language) -> Reply:
        """The label view of the intent's window (default: the latest week with merged PRs)."""
        found = await self._window_digest(intent, conversation, lang)
        if isinstance(found, EmptyWindowReply):
            return found
        digest, records, notes = found
        label = self.core.canonical_label(digest.repo, intent.label)
        labels = {g.label.lower() for g in digest.label_view}
        if label not in labels:  # a near miss of a label is corrected and said; an unknown one named
            vocab = await self._vocabulary(intent, conversation, digest, records)
            resolved = vocab.resolve_label(label)
            own_name = label == digest.repo.rsplit("/", 1)[-1].lower()
            if resolved.how == "unknown" and vocab.knows(label) and not own_name:  # "fp8 stuff in wk16": a word
                return await self.question(QuestionIntent((intent.label,), window=intent.window, repo=intent.repo,
                                                          language=intent.language, said=intent.said,
                                                          text=intent.label), conversation, lang)
            if own_name or (intent.loose and resolved.how == "unknown"):
                # "verl 最近有啥动静", "oncall 最近有啥动静": no label, the window's digest
                return await self.digest(DigestIntent(week=intent.window, repo=intent.repo, language=intent.language,
                                                      said=intent.said), conversation, lang)
            label = resolved.value or label
            note = label_note(resolved, sorted(labels), lang)
            notes = (*notes, note) if note else notes
        numbers = next((g.pr_numbers for g in digest.label_view if g.label.lower() == label), ())
        index = digest.by_number()
        return LabelReply(digest, label, tuple(index[n] for n in numbers), notes)

    async def _vocabulary(self, intent: LabelIntent | QuestionIntent, conversation: Where, digest: Digest,
                          records: list[PullRequest]) -> Vocabulary:
        """The repository's vocabulary with the window's own words."""
        source, repo = self.core.channels.resolve_visible(conversation.key, intent.repo)
        found = await self.latest(source, repo)
        base = await self.data_words.vocabulary(source, repo, found[0] if found else None)
        return self.data_words.window_vocabulary(base, digest, records)

    async def merged(self, intent: MergedIntent, conversation: Where, lang: Language) -> Reply:
        """The PRs merged in the intent's window, or who merged them."""
        found = await self._window_digest(intent, conversation, lang)
        if isinstance(found, EmptyWindowReply):
            return found
        digest, _, notes = found
        return MergedReply(digest, intent.focus, notes)

    async def question(self, intent: QuestionIntent, conversation: Where, lang: Language) -> Reply:
        """The window's PRs that answer the question, with what matched (and the model's cited claims)."""
        found = await self._window_digest(intent, conversation, lang)
        if isinstance(found, EmptyWindowReply):
            return found
        digest, prs, notes = found
        vocab = await self._vocabulary(intent, conversation, digest, prs)
        label = self.core.canonical_label(digest.repo, intent.label) if intent.label else None
        if label is not None and label not in {x.lower() for pr in digest.prs for x in pr.labels}:
            resolved = vocab.resolve_label(label)
            if resolved.how == "corrected" and resolved.value:
                notes = (*notes, label_note(resolved, (), lang) or "")
                label = resolved.value
        searched = await asyncio.to_thread(self.data_words.search, vocab, digest, prs, intent.terms, label=label,
                                           question=intent.text)
        answer = searched.answer
        phrasing = await self.writer.phrase(answer) if self.writer is not None and not answer.none else None
        return AnswerReply(answer, phrasing, (*notes, *searched.notes(lang)))

    async def fitted(self, intent: QuestionIntent, conversation: Where) -> QuestionIntent:
        """``intent`` with its words written apart joined as the data writes them (:meth:`Vocabulary.joined`); a
        joined label becomes the question's label when other words are left (``最近 fully async 的 pr 里有哪些是修 bug
        的``: label fully_async, searched for bug); the repository's own name (``verl``) dropped when other words are
        left. Unchanged when the data cannot be read."""
        if len(intent.terms) < 2:
            return intent
        try:
            source, repo = self.core.channels.resolve_visible(conversation.key, intent.repo)
            found = await self.latest(source, repo)
            vocab = await self.data_words.vocabulary(source, repo, found[0] if found else None)
        except PrhubError:
            return intent
        own = {part.lower() for part in repo.split("/")}  # the repository's own name is on every path: no filter
        kept = tuple(t for t in intent.terms if t.lower() not in own)
        if kept and kept != intent.terms:
            intent = replace(intent, terms=kept)
        terms = vocab.joined(intent.terms)
        if terms == intent.terms:
            return intent
        label = intent.label
        if label is None and len(terms) > 1:
            labels = [t for t in terms if t not in intent.terms and t in vocab.labels]
            if labels:
                label = labels[0]
                terms = tuple(t for t in terms if t != label)
        return replace(intent, terms=terms, label=label)

    async def pick_prs(self, terms: tuple[str, ...], window: str | None, label: str | None,
                       conversation: Where) -> list[int]:
        """The PRs of ``window`` (``None``: the latest week with merged PRs) that ``terms`` pick
        (``那个 fp8 padding 的 PR``): the best match alone when it stands out, else every match, best first."""
        intent = QuestionIntent(terms, window=window, label=label)
        found = await self._window_digest(intent, conversation, "en")
        if isinstance(found, EmptyWindowReply):
            return []
        digest, prs, _ = found
        vocab = await self._vocabulary(intent, conversation, digest, prs)
        searched = await asyncio.to_thread(self.data_words.search, vocab, digest, prs, terms, label=label,
                                           question=" ".join(terms))
        matches = searched.answer.matches
        if len(matches) > 1 and matches[0].score >= 2 * matches[1].score:
            return [matches[0].pr.number]
        return [m.pr.number for m in matches]

    async def compare(self, intent: CompareIntent, conversation: Where, lang: Language) -> CompareReply:
        """The PRs side by side and which to read first; numbers the source does not hold are named.

        Raises:
            PRNotFoundError: none of the numbers is a merged PR of the repository.
        """
        source, repo = self.core.channels.resolve_visible(conversation.key, intent.repo)
        found: list[DigestPR] = []
        missing: list[int] = []
        for number in intent.numbers:
            try:
                found.append(await self.core.analysed_pr(source, repo, number, lang))
            except PRNotFoundError:
                missing.append(number)
        if not found:
            raise PRNotFoundError(f"none of {intent.numbers} is a merged PR of {repo}")
        return CompareReply(compare_prs(found, repo=repo, language=lang, missing=missing))

    @staticmethod
    def clarify(intent: ClarifyIntent, lang: Language) -> ClarifyReply:
        """The question back about a window that could not be read."""
        return ClarifyReply(clarify_text(intent.said, intent.problem, lang), lang)

    async def help(self, intent: HelpIntent, conversation: Where, lang: Language) -> Reply:
        """The help: all of it when asked for; for a message not understood, the model's reading of
        it when a model is configured, else the nearest example phrasings."""
        repo = self.core.channels.binding(conversation.key).repo
        if intent.asked or not intent.said.strip():
            return HelpReply(lang, repo)
        if self.reader is not None:
            tz = self.core.settings.timezone
            read = await self.reader.read(intent.said, language=intent.language, tz=tz, now=self.core.now())
            if read is not None and not isinstance(read, HelpIntent):
                log.info("the model read %r as %s", intent.said[:80], type(read).__name__)
                return await self.core.answer(read, conversation)
        return HelpReply(lang, repo, nearest_examples(intent.said, lang))

