"""The heuristic analyzer: a deterministic, offline analysis of one PR.

It reads the PR's title, description, file statistics and — where the source has them —
the per-file patches (:mod:`bot.digest.diff`; never the network, never an LLM) and writes an
:class:`~bot.models.Analysis` with ``status = "heuristic"``. Every rule below is a product
decision, kept as named constants and small functions so it is easy to read, to test and to change.

Change type
    A ``Revert "…"`` title is ``revert``; a PR whose files are all docs / CI / tests is
    ``doc`` / ``ci`` / ``test`` whatever its title says; one whose changed source lines are all
    comments, docstrings or prose strings is ``doc``; then the title's conventional type
    (``[mod] fix: …``, ``feat(x): …``) and its verb; code changed without either is ``feat``
    when it mostly adds (>= 3x more lines added, >= 50), else ``fix``; otherwise ``chore``.

Risks (each with the files or facts behind it)
    ``missing_tests``          >= MISSING_TESTS_MIN_LINES source lines changed by a
                               feat/fix/refactor/perf and no test file touched.
    ``core_path_change``       a non-test file under the repository's ``core_paths`` or one of its
                               core files (``AnalysisContext.hot_files``: :func:`core_files` of the
                               history before the window, else the window's :func:`hot_files`).
    ``config_contract_change`` the diff removes a public name (function, class, config field,
                               parameter, CLI flag, config key) that no added line brings back, or
                               changes a default; or a source file is removed or renamed. Evidence
                               ``path: name``. Without patches: a config file removed or renamed.
    ``dependency_upgrade``     a dependency moved to another exact version, added or dropped, a base
                               image or installed package version changed (or, without patches, a
                               manifest changed or the title bumps/upgrades).
    ``dependency_range``       a version range widened or narrowed, or code that branches on a
                               dependency's version.
    ``dependency_pin``         an exact pin or an upper bound put on (to be removed later).
    ``ci_action_bump``         a CI action's version; ``version_bump``: the repository's own version, to a
                               release; ``dev_version_bump``: to a development version (``0.19.2.dev0``, or the
                               bump a title says follows a release), which is no release.
    ``deprecation``            the diff deprecates a name (a warning that says so, ``@deprecated``, a
                               ``deprecate()`` call, docs); ``deprecated_removal``: it removes deprecated code;
                               ``behavior_change``: it raises where the removed lines fell back; ``numerics_change``:
                               changed lines of modified source touch what is computed (a loss, a scale, a dtype, a
                               seed, a learning rate); ``object_cache``: a cache keyed on live objects. Evidence
                               ``path:line name`` (:mod:`bot.digest.meaning`).
    ``large_change``           >= LARGE_CHANGE_LINES reviewable lines or >= LARGE_CHANGE_FILES files.
    ``revert``                 the PR reverts another (the number when the title or body names it, else
                               the PR of the window or before it whose title the ``Revert "…"`` quotes).
    ``breaking_change``        ``[BREAKING]`` / ``type!:`` in the title or a
                               ``BREAKING CHANGE:`` line in the description.

Importance (1–10) and the verdict come from the fitted judgement (:mod:`bot.digest.judgement`): the facts
    above and a few more — the rubric's kinds of change (a real fix in a core path, a feature in a central or a
    secondary part, a contract change, a fix of what the code computes, a small or local fix, a minor or
    trivial non-code change), how much code is left to read once moves and substitutions are taken out, how
    much the description explains, whether the change is mechanical, a revert, a guard, instrumentation —
    become named features (:func:`features`); two linear models fitted on the hand-judged weeks of seven
    repositories weigh them, calibrated to the repository by what its recent PRs usually score
    (:func:`history_profile`). ``prhub pr N --explain`` prints every contribution.
Insight (1–10) = 1 + how much the description explains (PROSE_BUCKETS) + 1 for
    design points, + 1 for test notes + source size (INSIGHT_SIZE_BUCKETS)
    + 1 for a new source module + 1 for a core path.
Recommendation: the fitted verdict. Minutes =
    lines to read (not generated, lock, notebook, snapshot or vendored files) / LINES_PER_MINUTE +
    description words / WORDS_PER_MINUTE, at least 1. Where to start: files that lose a public
    name or change a default, then core files, then source before config, tests and docs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath

from bot.config import RepoConfig
from bot.digest import compose, texts
from bot.digest.description import Description, parse_description, shorten
from bot.digest.diff import DiffFacts, fingerprint, read_dependencies, read_diff
from bot.digest.files import FileKind, classify, is_config_schema, is_reading, matches_any
from bot.digest.history import series_keys
from bot.digest.judgement import Judgement, Model, judge, repository_offset, shipped_model
from bot.digest.labels import TITLE_TAIL, Labeler, subject, title_key
from bot.models import (
    Analysis,
    ChangeFact,
    ChangeType,
    Coverage,
    FileChange,
    Language,
    LeftOutFile,
    PullRequest,
    Recommendation,
    RecommendationLevel,
    Risk,
)

ANALYZER_NAME = "heuristic-v2"  # v2: importance and verdict from the fitted judgement

HOT_FILE_MIN_PRS = 3
HOT_FILE_MAX = 10  # at most this many hot files, however long the window
CORE_MIN_SERIES = 3  # earlier PRs (a series once) that touched a source file before it counts as core
CORE_FILE_MAX = 20  # at most this many core files from the history
MECHANICAL_DIFF_SHARE = 0.7  # of changed code lines that only move or repeat one substitution
MECHANICAL_MIN_CODE_LINES = 10  # fewer changed code lines are read, however they look
MISSING_TESTS_MIN_LINES = 10
LARGE_CHANGE_LINES = 1000
LARGE_CHANGE_FILES = 40
MECHANICAL_MIN_FILES = 20
MECHANICAL_SHARE = 0.8  # of files with as many lines added as deleted: a find-and-replace sweep

# A non-code change this broad (examples, CI workflows, images, docs; not only tests) changes what users run or
# read, though no line of it is code to review (a feature of the judgement).
BROAD_NON_CODE_FILES = 3
BROAD_NON_CODE_LINES = 40
BROAD_NON_CODE_MANY_FILES = 10  # this many example / CI / doc files changed is broad however short each edit is

PROSE_BUCKETS = ((1200, 3), (500, 2), (150, 1))  # (letters of prose at least, points)
INSIGHT_SIZE_BUCKETS = ((300, 2), (50, 1))

LINES_PER_MINUTE = 50
WORDS_PER_MINUTE = 200
MAX_FOCUS_FILES = 5
MAX_FOCUS_POINTS = 3

_CONVENTIONAL_TYPES: dict[str, ChangeType] = {
    "feat": "feat", "feature": "feat", "fix": "fix", "bugfix": "fix", "hotfix": "fix",
    "refactor": "refactor", "perf": "perf", "doc": "doc", "docs": "doc", "ci": "ci",
    "build": "ci", "chore": "chore", "misc": "chore", "style": "chore", "release": "chore",
    "test": "test", "tests": "test", "revert": "revert",
}
_TYPE_IN_TITLE = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*([A-Za-z]+)\s*(?:\([^)]*\))?\s*(!)?\s*:")
_VERBS: tuple[tuple[re.Pattern[str], ChangeType], ...] = (
    (re.compile(r"\b(?:fix|fixes|fixed|bug|crash|error|wrong|incorrect|avoid|prevent|handle|guard|preserve|"
                r"restore|correct|ensure|stop|reject|respect|workaround|validate)\b", re.I), "fix"),
    (re.compile(r"\b(?:speed|faster|optimi[sz]e|perf|performance|accelerate)\b", re.I), "perf"),
    (re.compile(r"\b(?:refactor|remove|clean|rename|move|simplify|deprecate)\b", re.I), "refactor"),
    (re.compile(r"\b(?:add|support|introduce|enable|new|implement)\b", re.I), "feat"),
)
# What a fix may have got wrong silently: the numbers a program computes, not whether it runs. Words of numeric
# code in any field (losses, gradients, masks, padding, normalisation, dtypes, scales), read in the title.
_NUMERICS_TITLE = re.compile(
    r"\b(?:loss(?:es)?|grad(?:s|ient|ients)?|backward|requires_grad|log[-_ ]?(?:softmax|sum[-_ ]?exp|probs?|its?)|"
    r"softmax|logits?|dtype|pad(?:s|ded|ding)?|mask(?:s|ed|ing)?|normali[sz](?:e|es|ed|ation)|bias|"
    r"interpolat\w*|entropy|overflow|underflow|rounding|(?:tp|dp|pp|ep|cp)\s+(?:size|degree))\b", re.I)
# A guard that validates an input or a config and only turns a later failure into an earlier error.
_GUARD_TITLE = re.compile(r"^\s*(?:validate|validation\s+(?:of|for))\b", re.I)
# Instrumentation: a change to what a run reports about itself (log output, timers, profiles, dumps, debug aids)
# leaves what it trains and computes as it was. Metrics are not in it: a metric computed wrong misleads every run.
# A fix is not instrumentation: the reporting code may have crashed the run.
_OBSERVABILITY_TITLE = re.compile(
    r"\b(?:logging|logger|tim(?:ing|ings|er|ers)|profil(?:e|es|er|ers|ing)|dump(?:s|ed|ing)?|debug(?:ger|ging)?|"
    r"wandb|tensorboard)\b", re.I)
_REVERT_TITLE = re.compile(r"^\s*revert\b", re.I)
_REVERTED_NUMBER = re.compile(r"#(\d+)")
_REVERT_BODY = re.compile(r"\breverts?\s+(?:[\w.-]+/[\w.-]+)?#(\d+)", re.I)
_BREAKING_BODY = re.compile(r"^\s*BREAKING[ -]CHANGE\s*:", re.M)
_UPGRADE_TITLE = re.compile(r"\b(?:bump|upgrade)\b|\bupdate\s+\S+(?:\s+\S+)?\s+to\s+v?\d|\bto\s+v\d+(?:\.\d+)+", re.I)
DEPENDENCY_KINDS = frozenset({"dependency_upgrade", "dependency_range", "dependency_pin", "ci_action_bump",
                              "version_bump"})
_CODE_KINDS = {FileKind.SOURCE, FileKind.CONFIG, FileKind.DEPENDENCY}
_FOCUS_ORDER = {FileKind.SOURCE: 0, FileKind.CONFIG: 1, FileKind.DEPENDENCY: 1, FileKind.SCRIPT: 2,
                FileKind.EXAMPLE: 2, FileKind.DOCKER: 2, FileKind.CI: 3, FileKind.TEST: 3, FileKind.DOC: 4,
                FileKind.OTHER: 4}


@dataclass(frozen=True)
class AnalysisContext:
    """What an analysis may know beyond the PR itself.

    Attributes:
        repo: the repository's effective configuration (core paths, generated globs).
        language: the language of the texts written.
        hot_files: the core files beside the configured ``core_paths`` (from the repository's history, see
            :func:`core_files`, or the window's hot files).
        subjects: titles (:func:`title_key`) of the PRs merged in the window and before it, each to its
            number: a ``Revert "<title>"`` is linked to the PR it reverts by them.
        diffs: what the PRs merged in the window and before it change (:func:`diffs`): a PR whose diff is the
            inverse of an earlier one's is linked to it as its revert, whatever its title says.
        profile: the mean path-level feature values of the repository's recent PRs (:func:`history_profile`),
            which calibrate every importance to the repository (:func:`bot.digest.judgement.repository_offset`);
            ``None`` when the history is unknown or too short.
    """

    repo: RepoConfig
    language: Language = "zh"
    hot_files: frozenset[str] = field(default_factory=frozenset)
    subjects: Mapping[str, int] = field(default_factory=dict)
    diffs: Mapping[str, Undone] = field(default_factory=dict)
    profile: Mapping[str, float] | None = None


@dataclass(frozen=True)
class Undone:
    """An earlier PR another one may undo: its number and when it was merged."""

    number: int
    merged_at: datetime


def _shape(pr: PullRequest, inverted: bool = False) -> tuple[tuple[str, int | None, int | None], ...]:
    return tuple(sorted((f.path, f.deletions, f.additions) if inverted else (f.path, f.additions, f.deletions)
                        for f in pr.files))


def diffs(prs: Iterable[PullRequest], undoers: Iterable[PullRequest] | None = None) -> dict[str, Undone]:
    """:attr:`AnalysisContext.diffs` of ``prs``: each PR's :func:`bot.digest.diff.fingerprint` to the PR (the
    earliest of the same diff wins). With ``undoers`` (the PRs that will be looked up), only the PRs one of them
    could undo are read: the same files, with its added and removed line counts swapped."""
    wanted = None if undoers is None else {_shape(p, inverted=True) for p in undoers}
    out: dict[str, Undone] = {}
    for p in sorted(prs, key=lambda p: p.merged_at, reverse=True):
        if wanted is not None and _shape(p) not in wanted:
            continue
        key = fingerprint(p)
        if key is not None:
            out[key] = Undone(p.number, p.merged_at)
    return out


_REVERT_SUBJECT = re.compile(r"^\s*revert\b\s*:?\s*[\"“'`]?(.+?)[\"”'`]?\s*$", re.I)


def subjects(prs: Iterable[PullRequest]) -> dict[str, int]:
    """:attr:`AnalysisContext.subjects` of ``prs`` (a later PR of the same title wins)."""
    return {title_key(p.title): p.number for p in sorted(prs, key=lambda p: p.merged_at)}


@dataclass(frozen=True)
class _Facts:
    pr: PullRequest
    kinds: dict[str, FileKind]
    description: Description
    change_type: ChangeType
    breaking: bool
    reverts: int | None
    diff: DiffFacts = field(default_factory=DiffFacts)

    def files(self, *kinds: FileKind) -> list[FileChange]:
        return [f for f in self.pr.files if self.kinds[f.path] in kinds]

    def lines(self, *kinds: FileKind) -> int:
        return sum(f.changed_lines for f in self.files(*kinds))

    @property
    def reviewable_lines(self) -> int:
        return sum(f.changed_lines for f in self.pr.files if is_reading(f.path, self.kinds[f.path]))

    @property
    def mechanical(self) -> bool:
        """A find-and-replace sweep by file counts, or (where the diff is read) code that only moves or
        repeats one substitution."""
        diff = self.diff
        if diff.all_code_lines >= MECHANICAL_MIN_CODE_LINES and diff.mechanical_share >= MECHANICAL_DIFF_SHARE:
            return True
        counted = [f for f in self.pr.files if f.additions is not None]
        balanced = sum(1 for f in counted if f.additions == f.deletions and f.changed_lines > 0)
        return len(counted) >= MECHANICAL_MIN_FILES and balanced >= MECHANICAL_SHARE * len(counted)

    @property
    def code_size(self) -> int:
        """Source lines to read: from the diff, code lines less moves and substitutions; else the file stats."""
        return self.diff.residual_lines if self.diff.patched else self.lines(FileKind.SOURCE)

    @property
    def touches_code(self) -> bool:
        return any(k in _CODE_KINDS for k in self.kinds.values())

    @property
    def broad_non_code(self) -> bool:
        """No code, and at least BROAD_NON_CODE_FILES files / BROAD_NON_CODE_LINES lines (or BROAD_NON_CODE_MANY_FILES
        files) of examples, CI, images or docs (not tests only)."""
        kinds = set(self.kinds.values()) - {FileKind.GENERATED}
        files = len(self.pr.files)
        broad = sum(1 for f in self.pr.files  # tests, lock files and generated files do not make a change broad
                    if self.kinds[f.path] is not FileKind.TEST and is_reading(f.path, self.kinds[f.path]))
        return (not self.touches_code and kinds != {FileKind.TEST} and files >= BROAD_NON_CODE_FILES
                and (self.reviewable_lines >= BROAD_NON_CODE_LINES or broad >= BROAD_NON_CODE_MANY_FILES))


def core_files(history: Sequence[PullRequest], repo: RepoConfig, min_series: int = CORE_MIN_SERIES) -> frozenset[str]:
    """The repository's core source files as its history shows them: touched by at least ``min_series``
    of ``history`` (PRs merged *before* the window; a series or one author's stack counts once, see
    :func:`bot.digest.history.series_keys`), at most ``CORE_FILE_MAX`` (most touched first)."""
    touched: dict[str, set[str]] = {}
    keys = series_keys(history)
    for pr in history:
        key = keys[pr.number]
        for f in pr.files:
            if classify(f.path, repo.generated_paths) is FileKind.SOURCE:
                touched.setdefault(f.path, set()).add(key)
    ranked = sorted(((len(keys), path) for path, keys in touched.items() if len(keys) >= min_series),
                    key=lambda x: (-x[0], x[1]))
    return frozenset(path for _, path in ranked[:CORE_FILE_MAX])


def hot_files(prs: list[PullRequest], repo: RepoConfig, min_prs: int = HOT_FILE_MIN_PRS) -> frozenset[str]:
    """Source files touched by at least ``min_prs`` of ``prs`` (the window's most-churned code),
    at most ``HOT_FILE_MAX`` of them (most PRs first), so a long window does not make every
    busy file "core"."""
    touched: dict[str, set[str]] = {}
    keys = series_keys(prs)
    for pr in prs:
        for f in pr.files:
            if classify(f.path, repo.generated_paths) is FileKind.SOURCE:
                touched.setdefault(f.path, set()).add(keys[pr.number])
    ranked = sorted(((len(k), path) for path, k in touched.items() if len(k) >= min_prs),
                    key=lambda x: (-x[0], x[1]))
    return frozenset(path for _, path in ranked[:HOT_FILE_MAX])


class HeuristicAnalyzer:
    """The embedded, deterministic analyzer (no network, no model).

    Args:
        descriptions: read each PR's description (its summary, design points, test notes); ``False``
            leaves it unread — for digests that are only counted (week over week's earlier windows:
            labels, hot files and risks, none of which comes from the description).
    """

    name = ANALYZER_NAME

    def __init__(self, *, descriptions: bool = True, model: Model | None = None) -> None:
        self.descriptions = descriptions
        self.model = model

    def features(self, pr: PullRequest, context: AnalysisContext) -> dict[str, float]:
        """The named facts the judgement weighs for ``pr`` (:func:`features`; 0-valued ones left out)."""
        facts = _facts(pr, context.repo, context.subjects, descriptions=self.descriptions, undone=context.diffs)
        return features(facts, {r.kind for r in _risks(facts, context, texts.ANALYSIS[context.language])})

    def judge(self, pr: PullRequest, context: AnalysisContext) -> Judgement:
        """The fitted judgement of ``pr`` (importance, verdict and what moved them; see
        :mod:`bot.digest.judgement`), calibrated to the repository by ``context.profile``."""
        model = self.model or shipped_model()
        return judge(self.features(pr, context), model=model, offset=repository_offset(model, context.profile))

    def analyze(self, pr: PullRequest, context: AnalysisContext) -> Analysis:
        """Analyse one PR from its title, description and file statistics.

        Args:
            pr: the merged PR (any source).
            context: repository config, output language and the window's hot files.

        Returns:
            An :class:`Analysis` with ``status="heuristic"``; never raises on odd input
            (empty body, no files, binary files).
        """
        facts = _facts(pr, context.repo, context.subjects, descriptions=self.descriptions, undone=context.diffs)
        t = texts.ANALYSIS[context.language]
        risks = _risks(facts, context, t)
        kinds = {r.kind for r in risks}
        model = self.model or shipped_model()
        judgement = judge(features(facts, kinds), model=model, offset=repository_offset(model, context.profile))
        importance = judgement.importance
        insight = _insight(facts, "core_path_change" in kinds)
        analysis = Analysis(
            summary="",
            change_type=facts.change_type,
            breaking=facts.breaking,
            importance=importance,
            insight=insight,
            risks=tuple(risks),
            recommendation=_recommendation(facts, importance, insight, judgement.verdict, risks, t),
            key_points=_key_points(facts, t),
            coverage=_coverage(facts),
            status="heuristic",
            reverts=facts.reverts,
            analyzer=ANALYZER_NAME,
            language=context.language,
            facts=change_facts(facts),
        )
        labels = Labeler(context.repo).labels(pr)
        return analysis.model_copy(update={"summary": compose.summary(pr.title, analysis, context.language,
                                                                       [f.path for f in pr.files], labels)})


def _facts(pr: PullRequest, repo: RepoConfig, known: Mapping[str, int] | None = None, *,
           descriptions: bool = True, undone: Mapping[str, Undone] | None = None) -> _Facts:
    kinds = {f.path: classify(f.path, repo.generated_paths) for f in pr.files}
    description = parse_description(pr.body, pr.title) if descriptions else Description()
    diff = read_diff(pr, kinds)
    change_type, bang = _change_type(pr, kinds, diff)
    breaking = (
        bang
        or "breaking" in (m.lower() for m in title_modules_raw(pr.title))
        or bool(_BREAKING_BODY.search(pr.body))
    )
    reverts = pr.reverts  # the source may know it (git: "This reverts commit <sha>")
    if change_type == "revert" and reverts is None:
        found = _REVERTED_NUMBER.findall(pr.title) or _REVERT_BODY.findall(pr.body)
        reverts = int(found[-1]) if found else None
        subject_of = _REVERT_SUBJECT.match(TITLE_TAIL.sub("", pr.title))
        if reverts is None and subject_of and known:
            target = known.get(title_key(subject_of.group(1)))
            reverts = target if target != pr.number else None
    if reverts is None and undone:
        inverse = fingerprint(pr, inverted=True)
        earlier = undone.get(inverse) if inverse is not None else None
        if earlier is not None and earlier.number != pr.number and earlier.merged_at <= pr.merged_at:
            # it undoes that PR line for line: linked and told as a revert, but its type and score stay what its
            # title and diff say (a follow-up that takes a line back out, a reland of a reverted PR, is no
            # revert to skip)
            reverts = earlier.number
    return _Facts(pr, kinds, description, change_type, breaking, reverts, diff)


def title_modules_raw(title: str) -> list[str]:
    """Bracket words of a title including markers such as ``BREAKING`` (which
    :func:`bot.digest.labels.title_modules` leaves out)."""
    head = re.match(r"^\s*((?:\[[^\]]*\]\s*)+)", title)
    if not head:
        return []
    return [p.strip() for g in re.findall(r"\[([^\]]*)\]", head.group(1)) for p in g.split(",")]


def _change_type(pr: PullRequest, kinds: dict[str, FileKind], diff: DiffFacts) -> tuple[ChangeType, bool]:
    if _REVERT_TITLE.match(pr.title):
        return "revert", False
    match = _TYPE_IN_TITLE.match(pr.title)
    bang = bool(match and match.group(2))
    present = set(kinds.values()) - {FileKind.GENERATED}
    for only, change_type in ((FileKind.DOC, "doc"), (FileKind.CI, "ci"), (FileKind.TEST, "test")):
        if present == {only}:
            return change_type, bang  # type: ignore[return-value]  # what the files are wins over the title's word
    if diff.prose_only and present <= {FileKind.SOURCE, FileKind.CONFIG, FileKind.SCRIPT, FileKind.DOC}:
        return "doc", bang  # comments, docstrings, help texts only
    if match and match.group(1).lower() in _CONVENTIONAL_TYPES:
        return _CONVENTIONAL_TYPES[match.group(1).lower()], bang
    for pattern, verb_type in _VERBS:
        if pattern.search(pr.title):
            return verb_type, False
    if present & {FileKind.SOURCE, FileKind.CONFIG}:
        # code changed and the title names no type: new code is a feature, changed code a fix
        return ("feat" if pr.additions >= 3 * max(pr.deletions, 1) and pr.additions >= 50 else "fix"), False
    return "chore", False


def _top(files: list[FileChange], n: int) -> list[str]:
    return [f.path for f in sorted(files, key=lambda f: (-f.changed_lines, f.path))[:n]]


def _risks(facts: _Facts, context: AnalysisContext, t: texts.AnalysisTexts) -> list[Risk]:
    pr = facts.pr
    risks: list[Risk] = []
    source = facts.files(FileKind.SOURCE)
    source_lines = facts.lines(FileKind.SOURCE)
    if facts.breaking:
        risks.append(Risk(kind="breaking_change", title=t.breaking_title, detail=t.breaking_detail,
                          evidence=(pr.title,)))
    if facts.change_type == "revert" or facts.reverts is not None:
        target = f"#{facts.reverts}" if facts.reverts else pr.title
        risks.append(Risk(kind="revert", title=t.revert_title, detail=t.revert_detail.format(target=target),
                          evidence=(target,)))
    core = [
        f.path for f in pr.files
        if facts.kinds[f.path] not in (FileKind.TEST, FileKind.DOC, FileKind.GENERATED)
        and (matches_any(f.path, context.repo.core_paths) or f.path in context.hot_files)
    ]
    if core:
        risks.append(Risk(kind="core_path_change", title=t.core_title,
                          detail=t.core_detail.format(n=len(core), s="" if len(core) == 1 else "s"),
                          evidence=tuple(core[:5])))
    if (
        source_lines >= MISSING_TESTS_MIN_LINES
        and facts.change_type in ("feat", "fix", "refactor", "perf")
        and not facts.files(FileKind.TEST)
    ):
        risks.append(Risk(kind="missing_tests", title=t.tests_title,
                          detail=t.tests_detail.format(lines=source_lines), evidence=tuple(_top(source, 3))))
    contract = _contract(facts)
    if contract:
        touched = len({path for path, _ in contract})
        risks.append(Risk(kind="config_contract_change", title=t.contract_title,
                          detail=t.contract_detail.format(n=touched, s="" if touched == 1 else "s"),
                          evidence=tuple(f"{path}: {name}" if name else path for path, name in contract[:5])))
    risks += _meaning_risks(facts, t)
    risks += _dependency_risks(facts, t)
    if facts.reviewable_lines >= LARGE_CHANGE_LINES or len(pr.files) >= LARGE_CHANGE_FILES:
        risks.append(Risk(kind="large_change", title=t.large_title,
                          detail=t.large_detail.format(files=len(pr.files), lines=facts.reviewable_lines),
                          evidence=(f"{len(pr.files)} files", f"+{pr.additions}/-{pr.deletions}")))
    return risks


MEANING_KINDS = ("deprecation", "deprecated_removal", "behavior_change", "numerics_change", "object_cache")
"""Risk kinds read from what the changed lines mean (:mod:`bot.digest.meaning`), in the order they are listed."""


# A title that deprecates (``Deprecate X``, ``[core] start deprecating Y``), not one that moves off another project's
# deprecated API (``Replace deprecated torch_dtype``, ``fix deprecation warning``); one that removes deprecated code.
_DEPRECATES_TITLE = re.compile(r"^(?:start\s+|begin\s+)?deprecat(?:e|es|ing)\b|"
                               r"(?:^|[,;&]|\band)\s*deprecat(?:e|es|ing)\s+(?!warning)", re.I)
_REMOVES_DEPRECATED_TITLE = re.compile(r"\b(?:remove[sd]?|removing|drop(?:s|ped)?|delete[sd]?|clean(?:s|ed)?\s*up)\s+"
                                       r"(?:the\s+|all\s+)?(?:[\w`.-]+\s+)?deprecated\b", re.I)


def _meaning_risks(facts: _Facts, t: texts.AnalysisTexts) -> list[Risk]:
    """One risk per kind of meaning the diff shows, the file, line and name of each finding as its evidence. Where
    the title deprecates something or removes deprecated code and no line says so, the title is the evidence (with
    the names the diff removes, for a removal)."""
    diff = facts.diff
    found = dict(zip(MEANING_KINDS, (diff.deprecations, diff.deprecated_removals, diff.raises_instead, diff.numerics,
                                     diff.object_caches), strict=True))
    said = subject(facts.pr.title)
    risks = []
    for kind, findings in found.items():
        title, template = t.meaning_kinds[kind]
        if findings:
            evidence = tuple(f.evidence for f in findings[:5])
            names = list(dict.fromkeys(f.name for f in findings))[:3]
        elif kind == "deprecated_removal" and _REMOVES_DEPRECATED_TITLE.search(said) and facts.touches_code:
            gone = [f"{path}: {name}" if name else path for path, name in _contract(facts)]
            evidence, names = (facts.pr.title, *gone[:4]), [said]
        elif kind == "deprecation" and _DEPRECATES_TITLE.search(said) and not _REMOVES_DEPRECATED_TITLE.search(said):
            evidence, names = (facts.pr.title,), [said]
        else:
            continue
        risks.append(Risk(kind=kind, title=title, detail=template.format(evidence=t.reason_sep.join(names)),
                          evidence=evidence))
    return risks


def _dependency_risks(facts: _Facts, t: texts.AnalysisTexts) -> list[Risk]:
    """One risk per kind of dependency change the patches show (upgrade, range, pin, CI action, own version),
    each with its evidence; where no manifest had a patch, a changed manifest or a title that bumps or upgrades
    is a ``dependency_upgrade`` as before."""
    pr = facts.pr
    changes = read_dependencies(pr, facts.kinds)
    manifests = facts.files(FileKind.DEPENDENCY)
    read = all(f.patch for f in manifests) and (bool(manifests) or facts.diff.patched)
    by_kind: dict[str, list[str]] = {}
    for change in changes:
        by_kind.setdefault(change.kind, []).append(change.evidence)
    if "dependency_upgrade" not in by_kind and _UPGRADE_TITLE.search(pr.title) and not by_kind.keys() - {
            "version_bump", "dev_version_bump"} and (facts.touches_code or not read):
        by_kind["dependency_upgrade"] = [pr.title]
    if not read and manifests and not by_kind:
        by_kind["dependency_upgrade"] = [f.path for f in manifests]
    risks = []
    for kind in ("dependency_upgrade", "dependency_range", "dependency_pin", "ci_action_bump", "version_bump",
                 "dev_version_bump"):
        evidence = tuple(dict.fromkeys(by_kind.get(kind, ())))[:5]
        if not evidence:
            continue
        if kind == "dependency_upgrade":
            title, detail = t.dependency_title, t.dependency_detail
        else:
            title, template = t.dependency_kinds[kind]
            detail = template.format(evidence=t.reason_sep.join(evidence[:3]))
        risks.append(Risk(kind=kind, title=title, detail=detail, evidence=evidence))
    return risks


def _contract(facts: _Facts) -> list[tuple[str, str]]:
    """(path, name) of what users' configs or callers may lose: where the diff is read, the public names it
    removes and the defaults it changes; else (no patch) config and config-schema files removed or renamed."""
    gone = [
        (f.previous_path or f.path, "") for f in facts.pr.files
        if facts.kinds[f.path] is FileKind.SOURCE and f.status in ("removed", "renamed")
        and PurePosixPath(f.previous_path or f.path).name != "__init__.py"
    ]
    if facts.diff.patched:
        names = sorted(facts.diff.contract, key=lambda x: not (facts.kinds.get(x[0]) is FileKind.CONFIG
                                                               or is_config_schema(x[0])))
        return [*gone, *names][:8]
    return gone + [
        (f.path, "") for f in facts.pr.files
        if facts.kinds[f.path] is FileKind.CONFIG and f.status in ("removed", "renamed")
    ]


def _bucket(value: int, buckets: tuple[tuple[int, int], ...]) -> int:
    return next((points for at_least, points in buckets if value >= at_least), 0)


def _removed_modules(facts: _Facts) -> list[str]:
    """Source modules the PR deletes (not a package's ``__init__.py``): import paths that stop working."""
    return [f.path for f in facts.pr.files if f.status == "removed" and facts.kinds[f.path] is FileKind.SOURCE
            and PurePosixPath(f.path).name != "__init__.py"]


def _numerics_fix(facts: _Facts) -> bool:
    """A fix (or performance change) of source code whose title names what the code computes."""
    return (facts.change_type in ("fix", "perf") and bool(facts.files(FileKind.SOURCE))
            and bool(_NUMERICS_TITLE.search(subject(facts.pr.title))))


def _insight(facts: _Facts, core: bool) -> int:
    d = facts.description
    score = 1 + _bucket(d.prose_chars, PROSE_BUCKETS)
    score += 1 if len(d.design_points) >= 2 else 0
    score += 1 if d.has_test_notes else 0
    score += _bucket(facts.lines(FileKind.SOURCE), INSIGHT_SIZE_BUCKETS)
    score += 1 if any(f.status == "added" for f in facts.files(FileKind.SOURCE)) else 0
    score += 1 if core else 0
    return max(1, min(10, score))


def _recommendation(
    facts: _Facts, importance: int, insight: int, level: RecommendationLevel, risks: list[Risk],
    t: texts.AnalysisTexts,
) -> Recommendation:
    words = len(" ".join(facts.description.paragraphs).split())
    minutes = max(1, math.ceil(facts.reviewable_lines / LINES_PER_MINUTE + words / WORDS_PER_MINUTE))
    core = {p for r in risks if r.kind == "core_path_change" for p in r.evidence}
    contract = {path for path, _ in _contract(facts)}
    readable = [f for f in facts.pr.files if is_reading(f.path, facts.kinds[f.path])]
    # where to start: files that lose a public name or change a default, then core files, then by kind and size
    ordered = sorted(readable, key=lambda f: (f.path not in contract and f.previous_path not in contract,
                                              f.path not in core, _FOCUS_ORDER.get(facts.kinds[f.path], 4),
                                              -f.changed_lines, f.path))
    focus = [f.path for f in ordered[:MAX_FOCUS_FILES]]
    design = [p for p in facts.description.design_points if not p.endswith((":", "："))]
    focus += [shorten(p, 120) for p in design[:MAX_FOCUS_POINTS]]
    reasons = [t.reason_importance.format(importance=importance, insight=insight)]
    if facts.mechanical:
        reasons.append(t.reason_mechanical)
    reasons += [r.title for r in risks[:3]]
    return Recommendation(level=level, minutes=minutes, reason=t.reason_sep.join(reasons), focus=tuple(focus))


def _main_dir(files: list[FileChange]) -> str:
    weights: Counter[str] = Counter()
    for f in files:
        parent = f.path.rsplit("/", 1)[0] if "/" in f.path else "/"  # repository paths are normalised
        weights[parent] += max(1, f.changed_lines)
    return weights.most_common(1)[0][0] if weights else ""


MAX_FACTS_PER_KIND = 4


def change_facts(facts: _Facts) -> tuple[ChangeFact, ...]:
    """What the diff shows, as :class:`~bot.models.ChangeFact` (at most :data:`MAX_FACTS_PER_KIND` of a kind, the
    names without repeats): the names removed, the required parameters and changed defaults, the meaning findings,
    the source files added, removed or moved, and the test files changed."""
    diff = facts.diff
    out: list[ChangeFact] = []

    def add(kind: str, pairs: Iterable[tuple[str, str]]) -> None:
        seen: set[str] = set()
        for path, name in pairs:
            if len(seen) >= MAX_FACTS_PER_KIND:
                break
            if (name or path) not in seen:
                seen.add(name or path)
                out.append(ChangeFact(kind=kind, path=path, name=name))

    removed_findings = {f.name for f in diff.deprecated_removals}
    add("deprecated_removal", ((f.path, f.name) for f in diff.deprecated_removals if f.name))
    add("removed", ((path, name) for path, name in diff.removed_names if name not in removed_findings))
    add("required", diff.required_parameters)
    add("default", diff.changed_defaults)
    add("raises", ((f.path, f.name) for f in diff.raises_instead))
    add("deprecated", ((f.path, f.name) for f in diff.deprecations if f.name))
    add("numerics", ((f.path, f.name) for f in diff.numerics if f.name))
    add("cache", ((f.path, f.name) for f in diff.object_caches))
    source = [f for f in facts.files(FileKind.SOURCE) if PurePosixPath(f.path).name != "__init__.py"]
    add("added", ((f.path, "") for f in sorted(source, key=lambda f: -f.changed_lines) if f.status == "added"))
    add("removed", ((f.path, "") for f in source if f.status == "removed"))
    add("renamed", ((f.path, f.previous_path or "") for f in source if f.status == "renamed"))
    tests = facts.files(FileKind.TEST)
    if tests:
        out.append(ChangeFact(kind="tests", path=tests[0].path, name=str(len(tests))))
    return tuple(out)


def _key_points(facts: _Facts, t: texts.AnalysisTexts) -> tuple[str, ...]:
    pr = facts.pr
    # where the change sits: among the files that are not tests, when there are any (a fix with a large
    # regression test is not "in tests/")
    where = _main_dir([f for f in pr.files if facts.kinds[f.path] is not FileKind.TEST] or list(pr.files))
    points = [t.point_scope.format(files=len(pr.files), additions=pr.additions, deletions=pr.deletions,
                                   where=t.root_dir if where == "/" else where or "-")]
    added = _top([f for f in facts.files(FileKind.SOURCE) if f.status == "added"], len(pr.files))
    removed = [f.path for f in facts.pr.files if f.status == "removed"]
    if added:
        said = t.point_added_one if len(added) == 1 else t.point_added
        points.append(said.format(first=PurePosixPath(added[0]).name, n=len(added)))
    if removed:
        said = t.point_removed_one if len(removed) == 1 else t.point_removed
        points.append(said.format(first=PurePosixPath(removed[0]).name, n=len(removed)))
    design = [p for p in facts.description.design_points if not p.endswith((":", "："))]
    if design:
        points.append(shorten(design[0], 140))
    tests = facts.files(FileKind.TEST)
    points.append(t.point_tests.format(n=len(tests)) if tests else t.point_no_tests)
    return tuple(points[:4])


def _coverage(facts: _Facts) -> Coverage:
    pr = facts.pr
    left_out = [LeftOutFile(path=f.path, reason="generated") for f in pr.files
                if facts.kinds[f.path] is FileKind.GENERATED]
    left_out += [LeftOutFile(path=f.path, reason="binary") for f in pr.files if f.additions is None]
    with_patch = [f for f in pr.files if f.patch is not None and facts.kinds[f.path] is not FileKind.GENERATED]
    return Coverage(
        files_seen=len(pr.files) - len({x.path for x in left_out}),
        files_total=len(pr.files),
        lines_seen=sum(f.changed_lines for f in with_patch),
        lines_total=sum(f.changed_lines for f in pr.files),
        left_out=tuple(left_out),
    )


def _log2(n: float) -> float:
    return math.log2(1 + max(0.0, n))


def features(facts: _Facts, risk_kinds: set[str]) -> dict[str, float]:
    """The named facts of one PR that :mod:`bot.digest.judgement` weighs (see its ``FEATURES``).

    Sizes are on a log2 scale (``log2(1 + n)``); everything else is 0 or 1. A mechanical change counts neither
    its size nor its core files: there is little to read in it, wherever it lands."""
    sweep = facts.mechanical
    contract = facts.diff.removed_names + facts.diff.required_parameters if facts.diff.patched else ()
    values: dict[str, float] = {
        f"type_{facts.change_type}": 1.0,
        "code_size": 0.0 if sweep else _log2(facts.code_size),
        "files": _log2(sum(1 for f in facts.pr.files if is_reading(f.path, facts.kinds[f.path]))),
        "no_code": float(not facts.touches_code),
        "broad_non_code": float(facts.broad_non_code),
        "mechanical": float(sweep),
        "core": float("core_path_change" in risk_kinds and not sweep),
        "removed_names": _log2(len(contract)),
        "changed_default": float(bool(facts.diff.changed_defaults)),
        "removed_module": float(bool(_removed_modules(facts)) or any(
            f.status == "renamed" and facts.kinds[f.path] is FileKind.SOURCE for f in facts.pr.files)),
        "breaking": float(facts.breaking),
        "numerics_fix": float(_numerics_fix(facts)),
        "guard": float(bool(_GUARD_TITLE.match(subject(facts.pr.title)))),
        "instrumentation": float(facts.change_type != "fix"
                                 and bool(_OBSERVABILITY_TITLE.search(subject(facts.pr.title)))),
        "explained": _log2(facts.description.prose_chars / 100),
        "tests": float(bool(facts.files(FileKind.TEST))),
        "new_module": float(any(f.status == "added" for f in facts.files(FileKind.SOURCE))),
        "prose_only": float(facts.change_type == "doc" and facts.diff.prose_only),
        "large": float("large_change" in risk_kinds),
        "project_rename": float(sweep and len(facts.pr.files) >= MECHANICAL_MIN_FILES
                                and bool(facts.files(FileKind.DEPENDENCY))),
    }
    for kind in ("dependency_upgrade", "dependency_range", "dependency_pin", "ci_action_bump", "version_bump",
                 "dev_version_bump", *MEANING_KINDS):
        values[kind] = float(kind in risk_kinds)
    title = subject(facts.pr.title)
    source = facts.files(FileKind.SOURCE)
    new_lines = sum(f.changed_lines for f in source if f.status == "added")
    existing = [f for f in source if f.status != "added"]
    changed = sum(f.changed_lines for f in existing)
    values["code_new"] = 0.0 if sweep else _log2(new_lines)
    values["tiny"] = float(facts.touches_code and not sweep and facts.code_size <= TINY_CODE_LINES)
    values["crash_fix"] = float(facts.change_type == "fix" and bool(_CRASH_TITLE.search(title)))
    first = facts.description.first_paragraph or ""
    values["correctness_words"] = float(bool(_CORRECTNESS.search(title) or _CORRECTNESS.search(first)))
    values["spread"] = _log2(len({_area(f.path) for f in source}) - 1) if source else 0.0
    values["title_docs"] = float(bool(_DOCS_TITLE.search(title)))
    values["deleted_share"] = (sum(f.deletions or 0 for f in existing) / changed) if changed else 0.0
    values["config_schema"] = float(any(is_config_schema(f.path) for f in source))
    values.update(_rubric(values))
    return {k: v for k, v in values.items() if v}


def _rubric(v: Mapping[str, float]) -> dict[str, float]:
    """The rubric's kinds of change (tests/data/judged/RUBRIC.md), each a combination of the facts above: a real
    fix in a core path, a feature in a central or a secondary part, a contract change, a fix of what the code
    computes, an upgrade that needed code, a local or a small fix, a minor or a trivial non-code change."""
    fix = bool(v.get("type_fix") or v.get("type_perf"))
    feat = bool(v.get("type_feat"))
    core = bool(v.get("core"))
    size = v.get("code_size", 0.0)
    sweep = bool(v.get("mechanical"))
    return {
        "fix_core": float(fix and core and size >= _log2(RUBRIC_FIX_LINES)),
        "feature_core": float(feat and core and size >= _log2(RUBRIC_FEATURE_LINES)),
        "feature_secondary": float(feat and not core and size >= _log2(RUBRIC_SMALL_FEATURE_LINES)),
        "contract": float(not sweep and bool(v.get("removed_names") or v.get("changed_default")
                                             or v.get("removed_module"))),
        "numerics": float(bool(v.get("numerics_fix")) or (fix and bool(v.get("correctness_words")))),
        "upgrade_with_code": float(bool(v.get("dependency_upgrade")) and size >= _log2(RUBRIC_UPGRADE_LINES)),
        "local_fix": float(fix and not core and size >= _log2(RUBRIC_FIX_LINES)),
        "small_fix": float(fix and size < _log2(RUBRIC_FIX_LINES)),
        "minor_non_code": float(bool(v.get("no_code")) and not v.get("broad_non_code")),
        "trivial": float(bool(v.get("prose_only")) or (bool(v.get("ci_action_bump")) and bool(v.get("no_code")))
                         or (bool(v.get("title_docs")) and size < _log2(RUBRIC_DOCS_LINES))),
    }


RUBRIC_FIX_LINES = 5  # fewer code lines: a small fix, whatever it touches
RUBRIC_FEATURE_LINES = 50  # a feature in a core file at least this big is a new capability in a central part
RUBRIC_SMALL_FEATURE_LINES = 20
RUBRIC_UPGRADE_LINES = 10  # an upgrade that needed this much code changed
RUBRIC_DOCS_LINES = 30  # a change titled as docs, comments or type hints with fewer code lines is trivial


TINY_CODE_LINES = 4
_CRASH_TITLE = re.compile(r"\b(?:crash\w*|error|exception|hang\w*|(?:type|key|attribute|index|value|import|runtime)"
                          r"error|oom|segfault|fail(?:s|ing|ure)?)\b", re.I)
_CORRECTNESS = re.compile(r"\b(?:silent(?:ly)?|wrong(?:ly)?|incorrect(?:ly)?|corrupt\w*|mismatch\w*|leak\w*|race|"
                          r"deadlock\w*|nan|regress\w*|inconsistent|inaccurate)\b", re.I)
# what a title says about text for readers (not "docs" alone: in evaluation code a doc is a document)
_DOCS_TITLE = re.compile(r"\b(?:docstrings?|type[- ]?hints?|typos?|comments?|documentation|readme)\b", re.I)


def _area(path: str) -> str:
    """The first two folders of ``path``: the part of the repository a file belongs to."""
    return "/".join(path.split("/")[:2])


HISTORY_MIN_PRS = 10
"""Fewer earlier PRs than this say too little about what a repository usually merges: no calibration."""


def path_level(pr: PullRequest) -> PullRequest:
    """``pr`` as every source gives its history (the GitHub API included): title, files and line counts, no
    description and no patches."""
    return pr.model_copy(update={"body": "", "files": tuple(f.model_copy(update={"patch": None}) for f in pr.files)})


def history_profile(history: Sequence[PullRequest], context: AnalysisContext) -> dict[str, float] | None:
    """The mean path-level feature values (:func:`path_level`, :func:`features`) of the repository's recent PRs
    ``history`` in ``context`` — what the repository usually merges, as :attr:`AnalysisContext.profile`;
    ``None`` with fewer than :data:`HISTORY_MIN_PRS` of them."""
    if len(history) < HISTORY_MIN_PRS:
        return None
    bare = HeuristicAnalyzer(descriptions=False)
    total: Counter[str] = Counter()
    for pr in history:
        total.update(bare.features(path_level(pr), context))
    return {name: value / len(history) for name, value in sorted(total.items())}
