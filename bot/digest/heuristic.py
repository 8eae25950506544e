"""The heuristic analyzer: a deterministic, offline analysis of one PR.

It reads the PR's title, description and file statistics (never the network,
never an LLM) and writes an :class:`~bot.models.Analysis` with ``status =
"heuristic"``. Every rule below is a product decision, kept as named constants
and small functions so it is easy to read, to test and to change.

Change type
    The title's conventional type (``[mod] fix: …``, ``feat(x): …``); a
    ``Revert "…"`` title is ``revert``; otherwise the files decide (only docs ->
    ``doc``, only CI -> ``ci``, only tests -> ``test``) and then the title's verb.

Risks (each with the files or facts behind it)
    ``missing_tests``          >= MISSING_TESTS_MIN_LINES source lines changed by a
                               feat/fix/refactor/perf and no test file touched.
    ``core_path_change``       a non-test file under the repository's ``core_paths``
                               or a hot file (source touched by >= HOT_FILE_MIN_PRS
                               PRs of the window; the HOT_FILE_MAX most touched).
    ``config_contract_change`` lines removed from, or removal/rename of, a config file
                               users write (YAML/TOML/… outside CI, or a ``config``
                               module): existing configs may stop working.
    ``dependency_upgrade``     a dependency manifest changed, or the title bumps/upgrades.
    ``large_change``           >= LARGE_CHANGE_LINES reviewable lines or >= LARGE_CHANGE_FILES files.
    ``revert``                 the PR reverts another (the number when the title names it).
    ``breaking_change``        ``[BREAKING]`` / ``type!:`` in the title or a
                               ``BREAKING CHANGE:`` line in the description.

Importance (1–10) = base of the change type (TYPE_BASE; at most NON_CODE_BASE when
    no source/config/dependency file changed) + size bucket of source lines
    (SIZE_BUCKETS) + CORE_BONUS + BREAKING_BONUS + 1 per contract/dependency risk.
    A mechanical sweep (>= MECHANICAL_MIN_FILES files, >= MECHANICAL_SHARE of them
    replacing as many lines as they remove, e.g. a project rename) gets no size or
    core bonus and is at most ``skim``: its risks stay listed, but there is little to read.
Insight (1–10) = 1 + how much the description explains (PROSE_BUCKETS) + 1 for
    design points, + 1 for test notes + source size (INSIGHT_SIZE_BUCKETS)
    + 1 for a new source module + 1 for a core path.
Recommendation: ``close_read`` when importance >= CLOSE_READ_IMPORTANCE, or at the
    key-PR bar with insight >= CLOSE_READ_INSIGHT; ``skim`` when importance >=
    SKIM_IMPORTANCE or insight >= SKIM_INSIGHT; else ``skip``. Minutes =
    reviewable lines / LINES_PER_MINUTE + description words / WORDS_PER_MINUTE,
    at least 1.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from bot.config import RepoConfig
from bot.digest import texts
from bot.digest.description import Description, parse_description, shorten
from bot.digest.files import FileKind, classify, is_config_schema, matches_any
from bot.digest.labels import subject
from bot.models import (
    Analysis,
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

ANALYZER_NAME = "heuristic-v1"

HOT_FILE_MIN_PRS = 3
HOT_FILE_MAX = 10  # at most this many hot files, however long the window
MISSING_TESTS_MIN_LINES = 10
LARGE_CHANGE_LINES = 1000
LARGE_CHANGE_FILES = 40
MECHANICAL_MIN_FILES = 20
MECHANICAL_SHARE = 0.8  # of files with as many lines added as deleted: a find-and-replace sweep

TYPE_BASE: dict[ChangeType, int] = {
    "feat": 4, "fix": 4, "perf": 4, "revert": 4, "refactor": 3,
    "test": 2, "ci": 2, "chore": 2, "doc": 1,
}
NON_CODE_BASE = 2
SIZE_BUCKETS = ((500, 3), (100, 2), (20, 1))  # (source lines at least, points)
CORE_BONUS = 2
BREAKING_BONUS = 2

PROSE_BUCKETS = ((1200, 3), (500, 2), (150, 1))  # (letters of prose at least, points)
INSIGHT_SIZE_BUCKETS = ((300, 2), (50, 1))

CLOSE_READ_IMPORTANCE = 7
CLOSE_READ_INSIGHT = 5
SKIM_IMPORTANCE = 4
SKIM_INSIGHT = 5
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
    (re.compile(r"\b(?:fix|fixes|fixed|bug|crash|error|wrong|incorrect)\b", re.I), "fix"),
    (re.compile(r"\b(?:speed|faster|optimi[sz]e|perf|performance|accelerate)\b", re.I), "perf"),
    (re.compile(r"\b(?:refactor|remove|clean|rename|move|simplify|deprecate)\b", re.I), "refactor"),
    (re.compile(r"\b(?:add|support|introduce|enable|new|implement)\b", re.I), "feat"),
)
_REVERT_TITLE = re.compile(r"^\s*revert\b", re.I)
_REVERTED_NUMBER = re.compile(r"#(\d+)")
_REVERT_BODY = re.compile(r"\breverts?\s+(?:[\w.-]+/[\w.-]+)?#(\d+)", re.I)
_BREAKING_BODY = re.compile(r"^\s*BREAKING[ -]CHANGE\s*:", re.M)
_UPGRADE_TITLE = re.compile(r"\b(?:bump|upgrade)\b|\bupdate\s+\S+(?:\s+\S+)?\s+to\s+v?\d|\bto\s+v\d+(?:\.\d+)+", re.I)
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
        hot_files: source files touched by several PRs of the window being digested.
    """

    repo: RepoConfig
    language: Language = "zh"
    hot_files: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class _Facts:
    pr: PullRequest
    kinds: dict[str, FileKind]
    description: Description
    change_type: ChangeType
    breaking: bool
    reverts: int | None

    def files(self, *kinds: FileKind) -> list[FileChange]:
        return [f for f in self.pr.files if self.kinds[f.path] in kinds]

    def lines(self, *kinds: FileKind) -> int:
        return sum(f.changed_lines for f in self.files(*kinds))

    @property
    def reviewable_lines(self) -> int:
        return sum(f.changed_lines for f in self.pr.files if self.kinds[f.path] is not FileKind.GENERATED)

    @property
    def mechanical(self) -> bool:
        counted = [f for f in self.pr.files if f.additions is not None]
        balanced = sum(1 for f in counted if f.additions == f.deletions and f.changed_lines > 0)
        return len(counted) >= MECHANICAL_MIN_FILES and balanced >= MECHANICAL_SHARE * len(counted)

    @property
    def touches_code(self) -> bool:
        return any(k in _CODE_KINDS for k in self.kinds.values())


def hot_files(prs: list[PullRequest], repo: RepoConfig, min_prs: int = HOT_FILE_MIN_PRS) -> frozenset[str]:
    """Source files touched by at least ``min_prs`` of ``prs`` (the window's most-churned code),
    at most ``HOT_FILE_MAX`` of them (most PRs first), so a long window does not make every
    busy file "core"."""
    counts = Counter(
        f.path for pr in prs for f in pr.files if classify(f.path, repo.generated_paths) is FileKind.SOURCE
    )
    ranked = sorted(((n, path) for path, n in counts.items() if n >= min_prs), key=lambda x: (-x[0], x[1]))
    return frozenset(path for _, path in ranked[:HOT_FILE_MAX])


class HeuristicAnalyzer:
    """The embedded, deterministic analyzer (no network, no model).

    Args:
        descriptions: read each PR's description (its summary, design points, test notes); ``False``
            leaves it unread — for digests that are only counted (week over week's earlier windows:
            labels, hot files and risks, none of which comes from the description).
    """

    name = ANALYZER_NAME

    def __init__(self, *, descriptions: bool = True) -> None:
        self.descriptions = descriptions

    def analyze(self, pr: PullRequest, context: AnalysisContext) -> Analysis:
        """Analyse one PR from its title, description and file statistics.

        Args:
            pr: the merged PR (any source).
            context: repository config, output language and the window's hot files.

        Returns:
            An :class:`Analysis` with ``status="heuristic"``; never raises on odd input
            (empty body, no files, binary files).
        """
        facts = _facts(pr, context.repo, descriptions=self.descriptions)
        t = texts.ANALYSIS[context.language]
        risks = _risks(facts, context, t)
        kinds = {r.kind for r in risks}
        importance = _importance(facts, kinds)
        insight = _insight(facts, "core_path_change" in kinds)
        return Analysis(
            summary=_summary(facts, t),
            change_type=facts.change_type,
            breaking=facts.breaking,
            importance=importance,
            insight=insight,
            risks=tuple(risks),
            recommendation=_recommendation(facts, importance, insight, risks, context, t),
            key_points=_key_points(facts, t),
            coverage=_coverage(facts),
            status="heuristic",
            reverts=facts.reverts,
            analyzer=ANALYZER_NAME,
            language=context.language,
        )


def _facts(pr: PullRequest, repo: RepoConfig, *, descriptions: bool = True) -> _Facts:
    kinds = {f.path: classify(f.path, repo.generated_paths) for f in pr.files}
    description = parse_description(pr.body) if descriptions else Description()
    change_type, bang = _change_type(pr, kinds)
    breaking = (
        bang
        or "breaking" in (m.lower() for m in title_modules_raw(pr.title))
        or bool(_BREAKING_BODY.search(pr.body))
    )
    reverts = pr.reverts  # the source may know it (git: "This reverts commit <sha>")
    if change_type == "revert" and reverts is None:
        found = _REVERTED_NUMBER.findall(pr.title) or _REVERT_BODY.findall(pr.body)
        reverts = int(found[-1]) if found else None
    return _Facts(pr, kinds, description, change_type, breaking, reverts)


def title_modules_raw(title: str) -> list[str]:
    """Bracket words of a title including markers such as ``BREAKING`` (which
    :func:`bot.digest.labels.title_modules` leaves out)."""
    head = re.match(r"^\s*((?:\[[^\]]*\]\s*)+)", title)
    if not head:
        return []
    return [p.strip() for g in re.findall(r"\[([^\]]*)\]", head.group(1)) for p in g.split(",")]


def _change_type(pr: PullRequest, kinds: dict[str, FileKind]) -> tuple[ChangeType, bool]:
    if _REVERT_TITLE.match(pr.title):
        return "revert", False
    match = _TYPE_IN_TITLE.match(pr.title)
    if match and match.group(1).lower() in _CONVENTIONAL_TYPES:
        return _CONVENTIONAL_TYPES[match.group(1).lower()], bool(match.group(2))
    present = set(kinds.values()) - {FileKind.GENERATED}
    for only, change_type in ((FileKind.DOC, "doc"), (FileKind.CI, "ci"), (FileKind.TEST, "test")):
        if present == {only}:
            return change_type, False  # type: ignore[return-value]
    for pattern, verb_type in _VERBS:
        if pattern.search(pr.title):
            return verb_type, False
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
    if facts.change_type == "revert":
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
                          detail=t.core_detail.format(n=len(core)), evidence=tuple(core[:5])))
    if (
        source_lines >= MISSING_TESTS_MIN_LINES
        and facts.change_type in ("feat", "fix", "refactor", "perf")
        and not facts.files(FileKind.TEST)
    ):
        risks.append(Risk(kind="missing_tests", title=t.tests_title,
                          detail=t.tests_detail.format(lines=source_lines), evidence=tuple(_top(source, 3))))
    contract = [
        f.path for f in pr.files
        if (facts.kinds[f.path] is FileKind.CONFIG or (facts.kinds[f.path] is FileKind.SOURCE
                                                      and is_config_schema(f.path)))
        and (f.status in ("removed", "renamed") or (f.deletions or 0) > 0)
    ]
    if contract:
        risks.append(Risk(kind="config_contract_change", title=t.contract_title,
                          detail=t.contract_detail.format(n=len(contract)), evidence=tuple(contract[:5])))
    manifests = [f.path for f in facts.files(FileKind.DEPENDENCY)]
    if manifests or _UPGRADE_TITLE.search(pr.title):
        risks.append(Risk(kind="dependency_upgrade", title=t.dependency_title, detail=t.dependency_detail,
                          evidence=tuple(manifests[:5]) or (pr.title,)))
    if facts.reviewable_lines >= LARGE_CHANGE_LINES or len(pr.files) >= LARGE_CHANGE_FILES:
        risks.append(Risk(kind="large_change", title=t.large_title,
                          detail=t.large_detail.format(files=len(pr.files), lines=facts.reviewable_lines),
                          evidence=(f"{len(pr.files)} files", f"+{pr.additions}/-{pr.deletions}")))
    return risks


def _bucket(value: int, buckets: tuple[tuple[int, int], ...]) -> int:
    return next((points for at_least, points in buckets if value >= at_least), 0)


def _importance(facts: _Facts, risk_kinds: set[str]) -> int:
    base = TYPE_BASE[facts.change_type]
    if not facts.touches_code:
        base = min(base, NON_CODE_BASE)
    sweep = facts.mechanical
    score = base + (0 if sweep else _bucket(facts.lines(FileKind.SOURCE), SIZE_BUCKETS))
    score += CORE_BONUS if "core_path_change" in risk_kinds and not sweep else 0
    score += BREAKING_BONUS if facts.breaking else 0
    score += len(risk_kinds & {"config_contract_change", "dependency_upgrade"})
    return max(1, min(10, score))


def _insight(facts: _Facts, core: bool) -> int:
    d = facts.description
    score = 1 + _bucket(d.prose_chars, PROSE_BUCKETS)
    score += 1 if len(d.design_points) >= 2 else 0
    score += 1 if d.has_test_notes else 0
    score += _bucket(facts.lines(FileKind.SOURCE), INSIGHT_SIZE_BUCKETS)
    score += 1 if any(f.status == "added" for f in facts.files(FileKind.SOURCE)) else 0
    score += 1 if core else 0
    return max(1, min(10, score))


def _level(importance: int, insight: int, bar: int) -> RecommendationLevel:
    if importance >= CLOSE_READ_IMPORTANCE or (importance >= bar and insight >= CLOSE_READ_INSIGHT):
        return "close_read"
    if importance >= SKIM_IMPORTANCE or insight >= SKIM_INSIGHT:
        return "skim"
    return "skip"


def _recommendation(
    facts: _Facts, importance: int, insight: int, risks: list[Risk], context: AnalysisContext,
    t: texts.AnalysisTexts,
) -> Recommendation:
    level = _level(importance, insight, context.repo.key_pr_bar)
    if facts.mechanical and level == "close_read":
        level = "skim"
    words = len(" ".join(facts.description.paragraphs).split())
    minutes = max(1, math.ceil(facts.reviewable_lines / LINES_PER_MINUTE + words / WORDS_PER_MINUTE))
    core = {p for r in risks if r.kind == "core_path_change" for p in r.evidence}
    readable = [f for f in facts.pr.files if facts.kinds[f.path] is not FileKind.GENERATED]
    ordered = sorted(
        readable, key=lambda f: (f.path not in core, _FOCUS_ORDER.get(facts.kinds[f.path], 4), -f.changed_lines, f.path)
    )
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
        parent = str(PurePosixPath(f.path).parent)
        weights[parent if parent != "." else "/"] += max(1, f.changed_lines)
    return weights.most_common(1)[0][0] if weights else ""


def _summary(facts: _Facts, t: texts.AnalysisTexts) -> str:
    first = facts.description.first_paragraph
    if first:
        return shorten(first)
    pr = facts.pr
    return t.summary_from_title.format(
        subject=subject(pr.title).rstrip("."), files=len(pr.files), additions=pr.additions,
        deletions=pr.deletions, where=_main_dir(list(pr.files)) or "-",
    )


def _key_points(facts: _Facts, t: texts.AnalysisTexts) -> tuple[str, ...]:
    pr = facts.pr
    points = [t.point_scope.format(files=len(pr.files), additions=pr.additions, deletions=pr.deletions,
                                   where=_main_dir(list(pr.files)) or "-")]
    added = _top([f for f in facts.files(FileKind.SOURCE) if f.status == "added"], len(pr.files))
    removed = [f.path for f in facts.pr.files if f.status == "removed"]
    if added:
        points.append(t.point_added.format(first=PurePosixPath(added[0]).name, n=len(added)))
    if removed:
        points.append(t.point_removed.format(first=PurePosixPath(removed[0]).name, n=len(removed)))
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
