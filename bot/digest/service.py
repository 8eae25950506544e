"""The digest service: the one entry point every door (CLI, Slack, Feishu, scheduler) calls.

:class:`DigestService` is what the doors hold (built once by :mod:`bot.app`): digests and PR answers
with the LLM analyzer when ``PRHUB_LLM_MODEL`` is set and the heuristic otherwise — and, when the
model is unusable (credentials refused, quota spent: :class:`~bot.errors.LLMStopError`), the heuristic
digest marked as a fallback (every analysis carries ``fallback_reason``, which the cards' analysis
line shows) plus one call of ``on_fallback`` (the CLI's stderr line). That decision is made here
for every door.

The functions below it:

``build_digest(prs, repo=…, window=…, settings=…)`` -> :class:`~bot.models.Digest`;
``analyze_pr(pr, settings=…)`` -> :class:`~bot.models.DigestPR` (one PR, "PR #6046 值得读吗");
``await build_digest_async(prs, repo=…, window=…, settings=…, analyzer=…, narrator=…, meter=…)``
-> the digest with an :class:`AsyncAnalyzer` (the LLM analyzer, which caches and bounds its own
concurrency) run on every PR concurrently before assembly, the narrative rewritten by a
:class:`Narrator`, and the run's LLM usage in ``Digest.usage``.

Both digest builders take an optional ``lookback`` (:func:`bot.digest.history.read_earlier`) and
``known`` digests of earlier windows: then ``Digest.week_over_week`` compares the window with the
ones before it (:mod:`bot.digest.weekly`; earlier windows get the heuristic, never the LLM).
:meth:`DigestService.look_back` reads both for the chat bots and the push: the source's earlier
windows, and — where the source only counts them (the GitHub API) — the digests of those windows
that were already built, from the service's :class:`DigestHistory`, which keeps every digest built.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bot.config import RepoConfig, Settings
from bot.digest import aggregate, texts
from bot.digest.heuristic import (
    AnalysisContext,
    HeuristicAnalyzer,
    core_files,
    diffs,
    history_profile,
    hot_files,
    subjects,
)
from bot.digest.history import CHART_WINDOWS, Lookback, earlier_windows, read_earlier
from bot.digest.labels import Labeler
from bot.digest.usage import UsageMeter
from bot.digest.window import contains, last_day
from bot.errors import LLMStopError, SourceError, WindowError
from bot.models import Analysis, Digest, DigestPR, Language, LLMUsage, PullRequest, Window
from bot.sources.base import is_github
from bot.sources.reads import read_source
from bot.store import redis_errors

if TYPE_CHECKING:
    from bot.sources.base import PRSource

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each PR is analysed."""


class Analyzer(Protocol):
    """Anything that turns one PR into an analysis.

    ``analyze`` returns ``None`` when the analysis is not available yet (the PR is
    then shown as pending); it raises only for programming errors.
    """

    name: str

    def analyze(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None: ...


class AsyncAnalyzer(Protocol):
    """An analyzer that waits on I/O (the LLM, the cache); same contract as :class:`Analyzer`."""

    name: str

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None: ...


class Narrator(Protocol):
    """Rewrites the narrative of an assembled digest (numbers untouched); returns it unchanged
    when it cannot. With an async analyzer it is given the digest before week over week is added
    (which neither reads nor changes the narrative)."""

    async def narrate(self, digest: Digest) -> Digest: ...


def build_digest(
    prs: Sequence[PullRequest],
    *,
    repo: str,
    window: Window,
    settings: Settings,
    language: Language | None = None,
    analyzer: Analyzer | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
    lookback: Lookback | None = None,
    known: Mapping[str, Digest] | None = None,
    history: Sequence[PullRequest] | None = None,
) -> Digest:
    """Build the digest of ``repo`` for ``window``.

    Args:
        prs: merged PRs from any source; those of other repositories or merged
            outside ``window`` (half-open, compared as aware instants) are ignored.
        repo: ``owner/name``.
        window: the time window (see :mod:`bot.digest.window`).
        settings: configuration; ``settings.repo(repo)`` gives labels, core paths,
            key-PR bar and the PR URL template.
        language: ``zh`` or ``en`` for every text written; default ``settings.language``.
        analyzer: the per-PR analyzer; default the embedded :class:`HeuristicAnalyzer`.
        now: the generation instant (aware); default the current UTC time.
        progress: optional callback ``(done, total)``.
        lookback: the windows before ``window`` as read from the source; when given,
            ``Digest.week_over_week`` is filled (earlier windows analysed by the heuristic).
        known: digests already built for earlier windows, by window name (used where the
            lookback only counted, e.g. the GitHub API).
        history: PR records merged before ``window`` (:meth:`DigestService.earlier_records`): the
            repository's core files come from them (:func:`~bot.digest.heuristic.core_files`); default
            ``lookback``'s records; when there are none, the window's own hot files.

    Returns:
        A frozen :class:`Digest`; an empty window gives a short digest with
        ``stats.pr_count == 0``, not an error.
    """
    lang: Language = language or settings.language
    config = settings.repo(repo)
    analyzer = analyzer or HeuristicAnalyzer()
    selected = _select(prs, repo, window)
    context = _context(selected, config, lang, lookback, history)
    analyses: list[Analysis | None] = []
    for done, pr in enumerate(selected, start=1):
        analyses.append(analyzer.analyze(pr, context))
        if progress is not None:
            progress(done, len(selected))
    items = _items(selected, analyses, repo, settings)
    files = {pr.number: tuple(f.path for f in pr.files) for pr in selected}
    now = now or datetime.now(UTC)
    digest = _assemble(repo, window, lang, items, files, config.key_pr_bar, analyzer.name, now, settings.config_name)
    return with_week_over_week(digest, lookback, settings=settings, known=known, now=now)


async def build_digest_async(
    prs: Sequence[PullRequest],
    *,
    repo: str,
    window: Window,
    settings: Settings,
    language: Language | None = None,
    analyzer: AsyncAnalyzer | None = None,
    narrator: Narrator | None = None,
    meter: UsageMeter | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
    lookback: Lookback | None = None,
    known: Mapping[str, Digest] | None = None,
    history: Sequence[PullRequest] | None = None,
    sending: Callable[[], Awaitable[None]] | None = None,
) -> Digest:
    """Build the digest with an async analyzer; arguments as :func:`build_digest`, plus:

    Args:
        analyzer: e.g. :class:`bot.digest.llm.LLMAnalyzer`; all PRs are analysed
            concurrently (the analyzer bounds its own concurrency); default the heuristic.
        narrator: rewrites the executive summary, highlights, trend notes and suggestions
            (e.g. :class:`bot.digest.llm.Narrator`); default: the heuristic narrative stays.
        meter: the run's LLM usage counter; its snapshot becomes ``Digest.usage``.
        progress: called ``(done, total)`` as each analysis completes (in completion order).
        sending: returns once the model's first request has left (:meth:`bot.digest.llm.LLMClient.sending`);
            week over week's earlier digests, built in a worker thread, start then (or once the analyses
            are done) rather than share the interpreter with the import of litellm and the first prompts;
            ``None``: they start with the analyses.

    Raises:
        LLMStopError: the analyzer or narrator found the model unusable (auth, quota);
            requests in flight finish, no new one is sent.
    """
    lang: Language = language or settings.language
    config = settings.repo(repo)
    selected = _select(prs, repo, window)
    context = _context(selected, config, lang, lookback, history)
    now = now or datetime.now(UTC)
    files = {pr.number: tuple(f.path for f in pr.files) for pr in selected}
    if analyzer is None:
        heuristic = HeuristicAnalyzer()
        analyses: list[Analysis | None] = [heuristic.analyze(pr, context) for pr in selected]
        if progress is not None and selected:
            progress(len(selected), len(selected))
        digest = _assemble(repo, window, lang, _items(selected, analyses, repo, settings), files,
                           config.key_pr_bar, heuristic.name, now, settings.config_name)
        digest = with_week_over_week(digest, lookback, settings=settings, known=known, now=now)
        if narrator is not None:
            digest = await narrator.narrate(digest)
        return digest if meter is None else digest.model_copy(update={"usage": meter.snapshot()})
    # The earlier windows' heuristic digests (week over week) are built in a worker thread while the model
    # is being waited for — the analyses' requests, then the narrative's (which week over week does not
    # change, nor it the narrative) — and only once a request is out (see `sending`).
    analysing = asyncio.ensure_future(_analyze_all(analyzer, selected, context, progress))
    earlier: asyncio.Future[dict[str, Digest]] | None = None
    try:
        if lookback is not None and lookback.prs:
            if sending is not None:
                await _first_done(sending(), analysing)
            earlier = asyncio.ensure_future(asyncio.to_thread(_earlier_digests, lookback, repo, settings, lang, now))
        analyses = await analysing
        digest = _assemble(repo, window, lang, _items(selected, analyses, repo, settings), files,
                           config.key_pr_bar, analyzer.name, now, settings.config_name)
        if narrator is not None:
            digest = await narrator.narrate(digest)
        built = await earlier if earlier is not None else None
    except BaseException:
        analysing.cancel()
        if earlier is not None:
            earlier.cancel()
        raise
    digest = with_week_over_week(digest, lookback, settings=settings, known=known, now=now, built=built)
    return digest if meter is None else digest.model_copy(update={"usage": meter.snapshot()})


async def _first_done(signal: Awaitable[None], work: asyncio.Future[Any]) -> None:
    """Wait until ``signal`` returns or ``work`` is done, whichever comes first (``signal`` is dropped)."""
    waiting: asyncio.Future[Any] = asyncio.ensure_future(signal)
    try:
        await asyncio.wait({waiting, work}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()


_COUNTED = HeuristicAnalyzer(descriptions=False)
"""The analyzer of week over week's earlier windows: they are only counted (labels, hot files, risks),
so their descriptions are left unread."""


def with_week_over_week(
    digest: Digest, lookback: Lookback | None, *, settings: Settings, known: Mapping[str, Digest] | None = None,
    now: datetime | None = None, built: Mapping[str, Digest] | None = None,
) -> Digest:
    """``digest`` with ``week_over_week`` computed from ``lookback`` (unchanged when ``None``).

    Earlier windows read as records get heuristic digests in ``digest.language`` (no LLM call);
    ``known`` adds digests already built for earlier windows, by window name; ``built`` holds
    those heuristic digests already made (:func:`_earlier_digests`), by window name.
    """
    if lookback is None:
        return digest
    from bot.digest import weekly

    def build(prs: Sequence[PullRequest], window: Window) -> Digest:
        if built is not None and window.name in built:
            return built[window.name]
        return build_digest(prs, repo=digest.repo, window=window, settings=settings, language=digest.language,
                            analyzer=_COUNTED, now=now or digest.generated_at)

    return digest.model_copy(update={"week_over_week": weekly.compare(digest, lookback, build=build, known=known)})


def _earlier_digests(lookback: Lookback, repo: str, settings: Settings, language: Language,
                     now: datetime) -> dict[str, Digest]:
    """The heuristic digest of every earlier window ``lookback`` holds records of, by window name
    (what :func:`with_week_over_week` would build)."""
    return {w.name: build_digest(lookback.prs[w.name], repo=repo, window=w, settings=settings, language=language,
                                 analyzer=_COUNTED, now=now)
            for w in lookback.windows if w.name in lookback.prs}


async def _analyze_all(
    analyzer: AsyncAnalyzer, selected: list[PullRequest], context: AnalysisContext, progress: Progress | None,
) -> list[Analysis | None]:
    done = 0

    async def one(pr: PullRequest) -> Analysis | None:
        nonlocal done
        result = await analyzer.analyze_async(pr, context)
        done += 1
        if progress is not None:
            progress(done, len(selected))
        return result

    # Every task runs to its end (an analyzer whose model became unusable fails the rest at once),
    # so no request is cancelled half-way; then the first error, if any, is raised.
    results = await asyncio.gather(*(one(pr) for pr in selected), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return [r for r in results if not isinstance(r, BaseException)]


def _context(selected: Sequence[PullRequest], config: RepoConfig, lang: Language, lookback: Lookback | None,
             history: Sequence[PullRequest] | None, *, calibrated: bool = True) -> AnalysisContext:
    records = history if history is not None else (lookback.records if lookback is not None else ())
    context = AnalysisContext(repo=config, language=lang, hot_files=_core(selected, config, lookback, history),
                              subjects=subjects([*records, *selected]),
                              diffs=diffs([*records, *selected], undoers=selected))
    if not calibrated:
        return context
    # what the repository usually merges calibrates every importance (bot.digest.judgement)
    return dataclasses.replace(context, profile=history_profile(records, context))


def _core(selected: Sequence[PullRequest], config: RepoConfig, lookback: Lookback | None,
          history: Sequence[PullRequest] | None) -> frozenset[str]:
    """The files counted as core beside the configured ``core_paths``: from the PR records of the windows before
    (the repository's own history) when the source gave some; else the window's hot files (a series once)."""
    records = history if history is not None else (lookback.records if lookback is not None else ())
    return core_files(records, config) if records else hot_files(list(selected), config)


def _select(prs: Sequence[PullRequest], repo: str, window: Window) -> list[PullRequest]:
    """The PRs of ``repo`` merged in ``window``, in merge order, one per number: where a source gave a PR twice,
    the record merged last (a digest lists, counts and links each PR once)."""
    one: dict[int, PullRequest] = {}
    for p in sorted((p for p in prs if p.repo.lower() == repo.lower() and contains(window, p.merged_at)),
                    key=lambda p: (p.merged_at, p.number)):
        one[p.number] = p
    return sorted(one.values(), key=lambda p: (p.merged_at, p.number))


def _items(
    selected: list[PullRequest], analyses: list[Analysis | None], repo: str, settings: Settings,
) -> list[DigestPR]:
    config = settings.repo(repo)
    labeler = Labeler(config)
    return [
        DigestPR(
            number=pr.number, title=pr.title, url=pr.url or config.pr_url(repo, pr.number), author=pr.author,
            labels=labeler.labels(pr), merged_at=pr.merged_at, additions=pr.additions,
            deletions=pr.deletions, changed_files=pr.changed_files or len(pr.files), analysis=analysis,
            released_in=pr.released_in, release_known=pr.release_known,
        )
        for pr, analysis in zip(selected, analyses, strict=True)
    ]


def analyze_pr(
    pr: PullRequest,
    *,
    settings: Settings,
    language: Language | None = None,
    analyzer: Analyzer | None = None,
    window_prs: Sequence[PullRequest] = (),
    history: Sequence[PullRequest] | None = None,
) -> DigestPR:
    """Analyse one PR as a digest shows it: its labels, web address and analysis.

    Args:
        pr: the merged PR (any source).
        settings: configuration; ``settings.repo(pr.repo)`` gives labels, core
            paths and the PR URL template (used when the source has no ``url``).
        language: ``zh`` or ``en`` for the texts written; default ``settings.language``.
        analyzer: the per-PR analyzer; default the embedded :class:`HeuristicAnalyzer`.
        window_prs: PRs merged around ``pr`` (e.g. its ISO week, ``pr`` included or
            not); the source files several of them touch count as hot files, as in
            :func:`build_digest`, so the answer matches that week's digest. Empty:
            only the configured ``core_paths`` are core.
        history: PR records merged before that week; when given (and not empty) the core files
            come from them, as in :func:`build_digest`, instead of ``window_prs``.

    Returns:
        A frozen :class:`DigestPR`; ``analysis`` is ``None`` when the analyzer
        has no result yet (pending).
    """
    context = pr_context(pr, settings=settings, language=language, window_prs=window_prs, history=history)
    return _digest_pr(pr, context, (analyzer or HeuristicAnalyzer()).analyze(pr, context))


async def analyze_pr_async(
    pr: PullRequest,
    *,
    settings: Settings,
    analyzer: AsyncAnalyzer,
    language: Language | None = None,
    window_prs: Sequence[PullRequest] = (),
    history: Sequence[PullRequest] | None = None,
) -> DigestPR:
    """:func:`analyze_pr` with an async analyzer (the LLM analyzer, which reads and fills
    the cache: a PR already analysed for a digest costs no call).

    Raises:
        LLMStopError: the analyzer found the model unusable (auth, quota).
    """
    context = pr_context(pr, settings=settings, language=language, window_prs=window_prs, history=history)
    return _digest_pr(pr, context, await analyzer.analyze_async(pr, context))


def pr_context(
    pr: PullRequest, *, settings: Settings, language: Language | None = None, window_prs: Sequence[PullRequest] = (),
    history: Sequence[PullRequest] | None = None, calibrated: bool = True,
) -> AnalysisContext:
    """The analysis context of one PR: its repository's config, the language, and the core files — from
    ``history`` when given, else the hot files of ``window_prs`` (with ``pr`` itself) — as :func:`build_digest`
    computes them; with ``calibrated``, also the history's profile (the fitting script leaves it out: it reads
    the history itself)."""
    config = settings.repo(pr.repo)
    neighbours = {p.number: p for p in window_prs if p.repo.lower() == pr.repo.lower()}
    neighbours[pr.number] = pr
    return _context(list(neighbours.values()), config, language or settings.language, None, history or None,
                    calibrated=calibrated)


def _digest_pr(pr: PullRequest, context: AnalysisContext, analysis: Analysis | None) -> DigestPR:
    config = context.repo
    return DigestPR(
        number=pr.number, title=pr.title, url=pr.url or config.pr_url(pr.repo, pr.number), author=pr.author,
        labels=Labeler(config).labels(pr), merged_at=pr.merged_at, additions=pr.additions,
        deletions=pr.deletions, changed_files=pr.changed_files or len(pr.files), analysis=analysis,
        released_in=pr.released_in, release_known=pr.release_known,
    )


def _assemble(
    repo: str, window: Window, lang: Language, items: list[DigestPR], files: dict[int, tuple[str, ...]],
    bar: int, analyzer_name: str, now: datetime, config_file: str | None = None,
) -> Digest:
    t = texts.DIGEST[lang]
    s = aggregate.stats(items, bar)
    pending = tuple(p.number for p in items if p.analysis is None)
    if not items:
        fmt = {"repo": repo, "start": window.start.date().isoformat(), "end": last_day(window).isoformat()}
        return Digest(
            repo=repo, window=window, language=lang, generated_at=now, analyzer=analyzer_name, stats=s, prs=(),
            config_file=config_file, pending=(), key_prs=(), headline=t.empty_headline,
            executive_summary=t.empty_summary.format(**fmt),
            highlights=(), key_changes=(), trends=(), risk_rollup=(), suggestions=(), label_view=(),
        )
    period = t.period_week if "-W" in window.name else t.period_other
    trend = aggregate.trends(items, files, t)
    risks = aggregate.risk_rollup(items, t)
    return Digest(
        repo=repo, window=window, language=lang, generated_at=now, analyzer=analyzer_name, stats=s,
        prs=tuple(items), pending=pending, config_file=config_file,
        key_prs=tuple(p.number for p in aggregate.by_importance(items) if p.analysis and p.analysis.importance >= bar),
        headline=aggregate.headline(s, trend, period, t, items, repo),
        executive_summary=aggregate.executive_summary(items, s, trend, risks, period, t, files),
        highlights=aggregate.highlights(items, files, trend, bar, t),
        key_changes=aggregate.key_changes(items, bar, t, period, files),
        trends=trend,
        risk_rollup=risks,
        suggestions=aggregate.suggestions(risks, pending, t, items),
        label_view=aggregate.label_view(items),
    )


class DeadlineAnalyzer:
    """An :class:`AsyncAnalyzer` whose answers not ready ``seconds`` after it was made are ``None`` —
    pending — while the inner analysis goes on in the background (it fills the cache for the next
    digest); :meth:`cancel` stops what is still running."""

    def __init__(self, inner: AsyncAnalyzer, *, seconds: float, clock: Callable[[], float] | None = None) -> None:
        self.name = inner.name
        self._inner = inner
        self._clock = clock or asyncio.get_running_loop().time
        self._deadline = self._clock() + seconds
        self._tasks: set[asyncio.Task[Analysis | None]] = set()

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None:
        """The inner analysis, or ``None`` when the deadline passes first."""
        task = asyncio.ensure_future(self._inner.analyze_async(pr, context))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(0.0, self._deadline - self._clock()))
        except TimeoutError:
            return None

    def remaining(self) -> float:
        """Seconds left before the deadline (0 once it passed)."""
        return max(0.0, self._deadline - self._clock())

    async def cancel(self) -> None:
        """Stop the analyses still running in the background (shutdown, tests)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class LLMParts(Protocol):
    """What the LLM runtime (:class:`bot.digest.llm.LLMRuntime`) gives the service: one analyzer and one
    narrator on one client (one concurrency limit), and their usage meter."""

    @property
    def analyzer(self) -> AsyncAnalyzer: ...

    @property
    def narrator(self) -> Narrator: ...

    @property
    def meter(self) -> UsageMeter: ...


@runtime_checkable
class Sending(Protocol):
    """LLM parts that can say when their first request has left (:meth:`bot.digest.llm.LLMRuntime.sending`);
    parts without it (a job queue: the requests leave from the workers) let the earlier digests start at once."""

    async def sending(self) -> None: ...


class DigestHistory(Protocol):
    """Digests already built, by repository, window name and language (the bot's is
    :class:`bot.web.pages.DigestPages`, in Redis; it also serves their pages)."""

    async def put(self, digest: Digest) -> str:
        """Keep ``digest``; returns its id."""
        ...

    async def known(self, repo: str, windows: Iterable[str], language: Language) -> dict[str, Digest]:
        """The kept digests of ``windows`` (names), by name."""
        ...


@dataclass(frozen=True, slots=True)
class Earlier:
    """What :meth:`DigestService.look_back` found about the windows before a digest's window:
    the source's ``lookback`` and the ``known`` digests of those windows (by name)."""

    lookback: Lookback
    known: Mapping[str, Digest] = field(default_factory=dict)


class _DeadlineNarrator:
    """The narrator within what is left of a digest's deadline: past it, the heuristic narrative stays
    (so the model's calls add up to no more than the deadline, plus :data:`NARRATIVE_GRACE_S`)."""

    def __init__(self, inner: Narrator, limited: DeadlineAnalyzer) -> None:
        self._inner = inner
        self._limited = limited

    async def narrate(self, digest: Digest) -> Digest:
        try:
            return await asyncio.wait_for(self._inner.narrate(digest), self._limited.remaining() + NARRATIVE_GRACE_S)
        except TimeoutError:
            log.warning("%s %s: the model's summary did not come within the deadline; the heuristic one stays",
                        digest.repo, digest.window.name)
            return digest


NARRATIVE_GRACE_S = 2.0
"""Seconds the summary call may run past a digest's deadline (it starts once the analyses are done)."""


class _Fallback:
    """The heuristic analyzer, each analysis marked as standing in for the model (``fallback_reason``)."""

    def __init__(self, reason: str) -> None:
        self._inner = HeuristicAnalyzer()
        self.name = self._inner.name
        self._reason = reason

    def analyze(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None:
        analysis = self._inner.analyze(pr, context)
        return None if analysis is None else analysis.model_copy(update={"fallback_reason": self._reason})


class DigestService:
    """Digests and PR analyses for every door.

    Args:
        settings: repositories' configuration, default language.
        llm: the LLM runtime when a model is configured (``None``: the heuristic).
        analyzer: a fixed per-PR analyzer instead of the LLM (tests; ``None``: the heuristic).
        on_fallback: called with one line when the model turned out unusable and the heuristic
            answered instead (the CLI prints it; the bot logs it in any case).
        history: keeps every digest :meth:`digest` builds and gives them back to :meth:`look_back`
            (``None``: nothing kept; a store failure there is logged, never raised).
    """

    def __init__(self, settings: Settings, *, llm: LLMParts | None = None, analyzer: Analyzer | None = None,
                 on_fallback: Callable[[str], None] | None = None, history: DigestHistory | None = None) -> None:
        self.settings = settings
        self._llm = llm if analyzer is None else None
        self._analyzer = analyzer
        self._on_fallback = on_fallback
        self._history = history
        self._deadlines: list[DeadlineAnalyzer] = []

    @property
    def uses_llm(self) -> bool:
        """Whether answers come from the model (when it is usable)."""
        return self._llm is not None

    def usage(self) -> LLMUsage | None:
        """The model's usage so far (calls, cache hits, tokens, cost), or ``None`` without a model."""
        return self._llm.meter.snapshot() if self._llm is not None else None

    async def look_back(self, source: PRSource, repo: str, window: Window, *,
                        language: Language | None = None) -> Earlier:
        """The windows before ``window``, for week over week: :func:`~bot.digest.history.read_earlier`
        on ``source`` (in a worker thread; snapshots and clones give records, the GitHub API counts
        within its request budget) and, where the source gave no records, the digests of those windows
        this service built before (its history), if built after their window ended. Never calls a model;
        never raises for a source or store failure (the comparison then says what is missing)."""
        lookback = await read_source(source, read_earlier, source, repo, window)
        if not lookback.history and lookback.windows:
            history = await self._github_history(source, repo, lookback.windows[0].start, window.start)
            lookback = dataclasses.replace(lookback, history=history) if history else lookback
        known: dict[str, Digest] = {}
        wanted = [w.name for w in lookback.windows if w.name not in lookback.prs]
        if self._history is not None and wanted:
            try:
                kept = await self._history.known(repo, wanted, language or self.settings.language)
            except redis_errors() as exc:
                log.warning("earlier digests of %s could not be read: %s", repo, exc)
                kept = {}
            # a digest built before its window ended (本周周报 on a Wednesday) saw part of it only
            known = {name: d for name, d in kept.items() if d.generated_at >= d.window.end}
        return Earlier(lookback, known)

    async def earlier_records(self, source: PRSource, repo: str, window: Window) -> tuple[PullRequest, ...]:
        """The PR records merged in the :data:`~bot.digest.history.CHART_WINDOWS` windows before ``window``, as
        far as the source gives them in one read (a snapshot, a git clone; the GitHub API up to
        ``github_history_prs`` of them, file paths only, :meth:`~bot.sources.github.GitHubSource.history`)
        — the repository's recent history, where core files come from when a door does not compare
        (:meth:`look_back` reads the same records). Never raises for a source failure (empty then)."""
        if is_github(source):
            try:
                windows = earlier_windows(window, CHART_WINDOWS - 1)
            except WindowError:
                return ()
            return await self._github_history(source, repo, windows[0].start, window.start) if windows else ()
        lookback = await read_source(source, read_earlier, source, repo, window, records=0)
        return lookback.history

    async def _github_history(self, source: PRSource, repo: str, start: datetime,
                              end: datetime) -> tuple[PullRequest, ...]:
        """The GitHub API's bounded look back (:meth:`~bot.sources.github.GitHubSource.history`, at most
        ``github_history_prs`` PRs); ``()`` for other sources, without a token or on a source failure."""
        if not is_github(source) or self.settings.github_history_prs <= 0:
            return ()
        try:
            return await read_source(source, source.history, repo, start, end,
                                           max_prs=self.settings.github_history_prs)
        except SourceError as exc:
            log.warning("the history of %s before %s could not be read: %s", repo, end.date(), exc)
            return ()

    async def digest(
        self, prs: Sequence[PullRequest], *, repo: str, window: Window, language: Language | None = None,
        now: datetime | None = None, progress: Progress | None = None, deadline_s: float | None = None,
        lookback: Lookback | None = None, known: Mapping[str, Digest] | None = None,
        history: Sequence[PullRequest] | None = None,
    ) -> Digest:
        """The digest of ``prs`` (see :func:`build_digest` for the arguments, ``lookback`` and ``known``
        included; :meth:`look_back` gives both), kept in the service's history.

        Args:
            deadline_s: with the LLM, analyses not done this many seconds after the start are shown
                as pending (they go on in the background and fill the cache); ``None``: wait for all.

        Never raises :class:`~bot.errors.LLMStopError`: an unusable model gives the heuristic
        digest, its analyses marked with the reason (see the module docstring).
        """
        digest = await self._digest(prs, repo=repo, window=window, language=language, now=now, progress=progress,
                                    deadline_s=deadline_s, lookback=lookback, known=known, history=history)
        if self._history is not None:
            try:
                await self._history.put(digest)
            except redis_errors() as exc:
                log.warning("the digest of %s %s could not be kept: %s", repo, window.name, exc)
        return digest

    async def _digest(
        self, prs: Sequence[PullRequest], *, repo: str, window: Window, language: Language | None,
        now: datetime | None, progress: Progress | None, deadline_s: float | None,
        lookback: Lookback | None, known: Mapping[str, Digest] | None, history: Sequence[PullRequest] | None,
    ) -> Digest:
        if self._llm is None:
            return await asyncio.to_thread(build_digest, prs, repo=repo, window=window, settings=self.settings,
                                           language=language, analyzer=self._analyzer, now=now, progress=progress,
                                           lookback=lookback, known=known, history=history)
        analyzer: AsyncAnalyzer = self._llm.analyzer
        narrator: Narrator = self._llm.narrator
        if deadline_s is not None:
            limited = DeadlineAnalyzer(analyzer, seconds=deadline_s)
            self._deadlines = [*(d for d in self._deadlines if d._tasks), limited]
            analyzer = limited
            narrator = _DeadlineNarrator(narrator, limited)
        try:
            return await build_digest_async(
                prs, repo=repo, window=window, settings=self.settings, language=language, analyzer=analyzer,
                narrator=narrator, meter=self._llm.meter, now=now, progress=progress, lookback=lookback,
                known=known, history=history, sending=self._llm.sending if isinstance(self._llm, Sending) else None)
        except LLMStopError as exc:
            reason = self._fell_back(exc, f"{repo} {window.name}")
        digest = await asyncio.to_thread(build_digest, prs, repo=repo, window=window, settings=self.settings,
                                         language=language, analyzer=_Fallback(reason), now=now, progress=progress,
                                         lookback=lookback, known=known, history=history)
        usage = self._llm.meter.snapshot()
        return digest.model_copy(update={"usage": usage.model_copy(
            update={"fallbacks": usage.fallbacks + digest.stats.pr_count})})

    async def pr(self, pr: PullRequest, *, language: Language | None = None,
                 window_prs: Sequence[PullRequest] = (), history: Sequence[PullRequest] | None = None,
                 deadline_s: float | None = None) -> DigestPR:
        """One PR's analysis as a digest shows it (see :func:`analyze_pr`); with the LLM, from its cache
        when a digest already analysed it. With ``deadline_s``, a model that has not answered by then
        gives way to the heuristic analysis (marked as a fallback, the reason said). Never raises
        :class:`~bot.errors.LLMStopError`."""
        analyzer = self._analyzer
        if self._llm is not None:
            try:
                return await asyncio.wait_for(
                    analyze_pr_async(pr, settings=self.settings, analyzer=self._llm.analyzer, language=language,
                                     window_prs=window_prs, history=history), deadline_s)
            except LLMStopError as exc:
                analyzer = _Fallback(self._fell_back(exc, f"{pr.repo}#{pr.number}"))
            except TimeoutError:
                reason = f"the model did not answer within {deadline_s:.0f} s"
                log.warning("%s#%d: %s; answering with the heuristic analysis", pr.repo, pr.number, reason)
                analyzer = _Fallback(reason)
        return await asyncio.to_thread(analyze_pr, pr, settings=self.settings, language=language,
                                       analyzer=analyzer, window_prs=window_prs, history=history)

    def _fell_back(self, exc: LLMStopError, what: str) -> str:
        reason = f"LLM unusable: {exc}"
        log.warning("%s: answering with the heuristic analyzer (%s)", what, reason)
        if self._on_fallback is not None:
            self._on_fallback(f"the LLM is unusable ({exc}); {what} uses the heuristic analysis instead")
        return reason

    async def settled(self, timeout_s: float) -> int:
        """Wait, at most ``timeout_s`` seconds, until the analyses still running past a digest's deadline
        land (they fill the cache); returns how many are still running then."""
        tasks = [task for limited in self._deadlines for task in limited._tasks]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)
        return sum(not task.done() for task in tasks)

    async def aclose(self) -> None:
        """Stop the analyses still running past a deadline (shutdown)."""
        for limited in self._deadlines:
            await limited.cancel()
        self._deadlines.clear()
