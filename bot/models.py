"""The value models every part of prhub shares.

Shapes only, no behaviour beyond small derived properties. All models are
pydantic v2 and frozen, so they can be cached, hashed into keys and passed
between the core, the renderers and the platforms without defensive copies.
``Model.model_validate_json(m.model_dump_json())`` gives back an equal model
(datetimes keep their UTC offsets).

Model tree::

    PullRequest ─ files: FileChange*          (from a source: snapshot, GitHub, git)
    Analysis ─ risks: Risk*, recommendation: Recommendation, coverage: Coverage
    Digest ─ window: Window, stats: DigestStats, prs: DigestPR* (each with Analysis | None),
             trends: LabelTrend*, risk_rollup: RiskRollup*, label_view: LabelGroup*, usage: LLMUsage,
             week_over_week: WeekOverWeek | None (─ history: WindowCount*, prs/labels/risks: CountChange*)
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, computed_field, field_validator

Language = Literal["zh", "en"]
"""Language of every human-readable text the bot writes."""

FileStatus = Literal["added", "modified", "removed", "renamed", "copied"]
ChangeType = Literal["feat", "fix", "refactor", "perf", "doc", "ci", "chore", "test", "revert"]
RecommendationLevel = Literal["close_read", "skim", "skip"]
AnalysisStatus = Literal["llm", "heuristic", "pending"]


class _Value(BaseModel):
    """Base of all value models: frozen, unknown fields ignored on input."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class FileChange(_Value):
    """One file of a pull request, as git or the GitHub API reports it.

    ``additions``/``deletions`` are ``None`` for binary files. ``patch`` is the
    unified diff of this file when the source had it (the snapshot data has none).
    """

    path: str
    status: FileStatus
    additions: int | None = Field(default=None, ge=0)
    deletions: int | None = Field(default=None, ge=0)
    previous_path: str | None = None
    patch: str | None = None

    @field_validator("patch")
    @classmethod
    def _no_lone_surrogates(cls, value: str | None) -> str | None:
        """A lone surrogate in a patch (see :class:`PullRequest`) becomes U+FFFD."""
        return _SURROGATE.sub("\ufffd", value) if value else value

    @property
    def changed_lines(self) -> int:
        """Added plus deleted lines; 0 for binary files."""
        return (self.additions or 0) + (self.deletions or 0)


_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone UTF-16 surrogate (JSON allows the escape ``\\ud83d`` alone; no UTF-8 text can hold it)."""


class PullRequest(_Value):
    """A merged pull request, the input of the analysis.

    Source: a snapshot line (``../shared/data/README.md`` format), the GitHub
    API or a git clone. ``merged_at`` is always timezone-aware. ``labels`` are
    the labels the *source* gave (GitHub labels); the digest's labels add title
    modules and path rules on top. ``reverts`` is the number of the PR this one
    reverts, when the source could link it (git: ``This reverts commit SHA``;
    any source: a ``Revert "… (#N)"`` title). ``files_partial`` is true when the
    source could not list every file (the GitHub API stops at 3,000): then
    ``files`` is a prefix and ``additions``/``deletions``/``changed_files`` are
    the source's totals, not sums over ``files``.
    """

    repo: str = Field(pattern=r"^[^/\s]+/[^/\s]+$")
    number: int = Field(ge=1)
    title: str
    body: str = ""
    author: str = ""
    merged_at: AwareDatetime
    authored_at: AwareDatetime | None = None
    merge_commit_sha: str | None = None
    additions: int = Field(default=0, ge=0)
    deletions: int = Field(default=0, ge=0)
    changed_files: int = Field(default=0, ge=0)
    files: tuple[FileChange, ...] = ()
    url: str | None = None
    labels: tuple[str, ...] = ()
    reviews: int | None = None
    comments: int | None = None
    reverts: int | None = Field(default=None, ge=1)
    files_partial: bool = False
    released_in: str | None = None
    """The first release (tag) that contains the merge commit, when the source knows the repository's
    releases (``release_known``); ``None`` with ``release_known``: merged, not released yet."""
    release_known: bool = False
    """Whether the source could tell the PR's release (git tags, the GitHub releases API, a snapshot's
    ``released_in``); ``False``: ``released_in`` means nothing."""

    @field_validator("title", "body", "author")
    @classmethod
    def _no_bidi_controls(cls, value: str) -> str:
        """Bidirectional-control characters (U+202A–U+202E, U+2066–U+2069) are dropped: a title
        holding a right-to-left override would reverse what follows it wherever it is shown. A lone
        surrogate (a broken emoji escape in an API's JSON) becomes U+FFFD, so the text can be encoded."""
        return _SURROGATE.sub("\ufffd", _BIDI.sub("", value))


class Risk(_Value):
    """One risk of a PR.

    ``kind`` is a stable id (``missing_tests``, ``core_path_change``,
    ``config_contract_change``, ``dependency_upgrade``, ``dependency_range``,
    ``dependency_pin``, ``ci_action_bump``, ``version_bump``, ``dev_version_bump``,
    ``large_change``, ``revert``, ``breaking_change``, ``deprecation``,
    ``deprecated_removal``, ``behavior_change``, ``numerics_change``,
    ``object_cache``); ``title`` is shown to people in the
    analysis language; ``evidence`` lists the files or facts behind it.
    """

    kind: str
    title: str
    detail: str = ""
    evidence: tuple[str, ...] = ()


class Recommendation(_Value):
    """Whether to read a PR closely, skim it or skip it, and where to start.

    ``minutes`` is the estimated reading time; ``focus`` is ordered, most
    important first (file paths and design points of the description).
    """

    level: RecommendationLevel
    minutes: int = Field(ge=0)
    reason: str
    focus: tuple[str, ...] = ()


class LeftOutFile(_Value):
    """A file the analysis did not read, and why (``generated``, ``binary``,
    ``lock_file``, ``too_large``, ``token_budget``, ``no_patch``)."""

    path: str
    reason: str


class Coverage(_Value):
    """What the analysis actually saw versus the PR's totals (files and changed lines)."""

    files_seen: int = Field(ge=0)
    files_total: int = Field(ge=0)
    lines_seen: int = Field(ge=0)
    lines_total: int = Field(ge=0)
    left_out: tuple[LeftOutFile, ...] = ()


class ScoreEvidence(_Value):
    """A place in the diff the model cited, checked against the diff, for a score or verdict
    beyond the band around the heuristic's.

    ``change`` is ``removed`` (a public name, field or file the diff removes or renames),
    ``default`` (a default it changes), ``added`` or ``changed`` (other changed code);
    ``name`` the identifier or quoted line as verified (empty: the file itself, when the
    source had no patch for it); ``note`` the model's reason.
    """

    path: str
    change: str
    name: str = ""
    note: str = ""


class ChangeFact(_Value):
    """One thing the diff of a PR shows, for the words written about it (:mod:`bot.digest.compose`).

    ``kind`` is ``removed`` (a public name, field, parameter or flag the PR removes or renames; a source file
    when ``name`` is empty), ``added`` (a new source file, ``path``), ``renamed`` (a moved source file: ``path``
    the new path, ``name`` the old one), ``default`` (a default the PR changes), ``required`` (a required
    parameter added to a public function: ``name`` is ``function(+param)``), ``deprecated`` (what it
    deprecates), ``deprecated_removal`` (deprecated code it removes), ``raises`` (a ``raise`` where the code fell
    back: ``name`` the exception), ``numerics`` (``name`` the computed quantity whose lines change), ``cache``
    (a cache keyed on live objects) or ``tests`` (test files changed: ``name`` their count). ``path`` is the
    repository path of the file it was read in.
    """

    kind: str
    path: str = ""
    name: str = ""


class Analysis(_Value):
    """The per-PR result of an analyzer.

    ``importance`` and ``insight`` are 1–10. ``status`` says who wrote it:
    ``llm`` (the model), ``heuristic`` (the embedded analyzer, or the fallback
    after a model failure — then ``fallback_reason`` is set). A PR whose
    analysis is not available yet has no ``Analysis`` at all in a digest
    (``DigestPR.analysis is None``), and is listed in ``Digest.pending``.
    ``score_evidence`` is set on a model's analysis whose scores or verdict moved
    beyond the band around the heuristic's: the diff evidence that move rests on.
    ``facts`` are what the diff shows (removed names, changed defaults, new files, …), read by the
    heuristic for either analyzer; the digest's words are composed from them.
    """

    summary: str
    change_type: ChangeType
    breaking: bool = False
    importance: int = Field(ge=1, le=10)
    insight: int = Field(ge=1, le=10)
    risks: tuple[Risk, ...] = ()
    recommendation: Recommendation
    key_points: tuple[str, ...] = ()
    coverage: Coverage
    status: AnalysisStatus
    fallback_reason: str | None = None
    reverts: int | None = None
    analyzer: str = ""
    language: Language = "zh"
    score_evidence: tuple[ScoreEvidence, ...] = ()
    facts: tuple[ChangeFact, ...] = ()


class Release(_Value):
    """One release of a repository: its ``tag`` (``v0.7.1``), the commit it points at (``sha``) and when
    that commit was made (git) or the release was published (the GitHub API) — ``at``, aware."""

    tag: str
    sha: str
    at: AwareDatetime


class Window(_Value):
    """A half-open time window ``[start, end)``.

    ``start`` and ``end`` are aware datetimes in ``timezone`` (an IANA name
    such as ``Asia/Shanghai``); ``name`` is ``2026-W16`` for an ISO week or
    ``2026-04-13..2026-04-19`` (inclusive calendar dates) otherwise.
    """

    start: AwareDatetime
    end: AwareDatetime
    timezone: str
    name: str


class DigestStats(_Value):
    """Computed counts of a digest; averages are over analysed PRs (``None`` when none)."""

    pr_count: int
    key_pr_count: int
    avg_importance: float | None
    avg_insight: float | None
    additions: int = 0
    deletions: int = 0
    pending_count: int = 0
    key_pr_bar: int = 6


class DigestPR(_Value):
    """One PR as the digest shows it: the record's facts, its labels and its analysis
    (``None`` while pending)."""

    number: int
    title: str
    url: str
    author: str
    labels: tuple[str, ...]
    merged_at: AwareDatetime
    additions: int
    deletions: int
    changed_files: int
    analysis: Analysis | None
    released_in: str | None = None
    """The first release containing the PR (:attr:`PullRequest.released_in`), when ``release_known``."""
    release_known: bool = False


class HotFile(_Value):
    """A file touched by several PRs of one label (``pr_count`` PRs)."""

    path: str
    pr_count: int


class LabelTrend(_Value):
    """Activity of one label in the window: how many PRs, which, the hot files and a note."""

    label: str
    count: int
    pr_numbers: tuple[int, ...]
    hot_files: tuple[HotFile, ...] = ()
    note: str = ""


class RiskRollup(_Value):
    """One risk kind over the window: its title, how many PRs carry it and which."""

    kind: str
    title: str
    count: int
    pr_numbers: tuple[int, ...]
    note: str = ""


class LabelGroup(_Value):
    """The per-label view: the PRs of one label, most important first."""

    label: str
    pr_numbers: tuple[int, ...]


class LLMUsage(_Value):
    """What the language model cost for one digest or answer.

    ``llm_calls`` counts chat-completion requests sent (retries and re-asks
    included); ``cache_hits`` the analyses and narratives read from the cache;
    tokens as the provider reported them; ``cost_usd`` as litellm prices them
    (``None`` when no call had a known price, e.g. local models); ``fallbacks``
    the PRs or narratives that fell back to the heuristic text.
    """

    llm_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    fallbacks: int = 0


class CountChange(_Value):
    """One count of this window against earlier windows (week over week).

    ``name`` is a label, a risk kind, or ``""`` for the PR count; ``title`` is what people read
    (the risk title in the digest language; the label itself otherwise). ``last`` is the count of
    the previous window and ``average`` the mean over the earlier windows that were available
    (``WeekOverWeek.average_windows`` of them); both ``None`` when not available.
    """

    name: str
    title: str = ""
    count: int
    last: int | None = None
    average: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def delta(self) -> float | None:
        """``count - average`` (``None`` without an average)."""
        return None if self.average is None else round(self.count - self.average, 2)


class WindowCount(_Value):
    """Merged PRs of one window (``name`` as :class:`Window`); ``pr_count`` is ``None`` when the
    source could not say (a snapshot that starts later, a GitHub API without a token)."""

    name: str
    start: AwareDatetime
    pr_count: int | None


class NewHotFile(_Value):
    """A hot file of this window (changed by ``pr_count`` PRs of ``label``) that no earlier
    window of the comparison had as a hot file."""

    path: str
    pr_count: int
    label: str


WeekOverWeekPart = Literal["counts", "labels", "hot_files", "risks"]
LookbackGap = Literal["github_no_token", "github_counts_only", "not_covered", "source_error", "no_source"]


class WeekOverWeek(_Value):
    """This window against the windows before it; computed, never written by a model.

    Earlier windows are read from the digest's source (a snapshot or a git clone: their records,
    analysed by the heuristic; the GitHub API: only counted, within a request budget) or taken
    from digests already built. ``history`` holds the earlier windows (oldest first) and this one
    last, for the PRs-per-window chart. ``prs`` compares the PR count; ``labels`` every label of
    this window or of the earlier ones, largest change first; ``new_hot_files`` and
    ``risks_grew`` (risk kinds above their average) what is new or growing. ``unavailable`` names
    the parts that could not be computed and ``gap`` says why (a code the renderers translate).
    """

    average_windows: int = Field(ge=0)
    history: tuple[WindowCount, ...]
    prs: CountChange
    labels: tuple[CountChange, ...] = ()
    new_hot_files: tuple[NewHotFile, ...] = ()
    risks_grew: tuple[CountChange, ...] = ()
    unavailable: tuple[WeekOverWeekPart, ...] = ()
    gap: LookbackGap | None = None


class Digest(_Value):
    """The report for one repository and one window; what every renderer draws.

    Numbers come from code; the narrative fields (``headline``,
    ``executive_summary``, ``highlights``, ``key_changes``, ``suggestions`` and
    the notes) are written by the heuristic or by the LLM (``narrative_source``).
    ``prs`` is in merge order; ``key_prs`` lists the key PR numbers by importance
    (highest first); ``pending`` the PRs without an analysis yet.
    """

    repo: str
    window: Window
    language: Language
    generated_at: AwareDatetime
    analyzer: str
    narrative_source: Literal["heuristic", "llm"] = "heuristic"
    stats: DigestStats
    prs: tuple[DigestPR, ...]
    key_prs: tuple[int, ...]
    headline: str
    executive_summary: str
    highlights: tuple[str, ...]
    key_changes: tuple[str, ...]
    trends: tuple[LabelTrend, ...]
    risk_rollup: tuple[RiskRollup, ...]
    suggestions: tuple[str, ...]
    label_view: tuple[LabelGroup, ...]
    pending: tuple[int, ...]
    usage: LLMUsage = Field(default_factory=LLMUsage)
    week_over_week: WeekOverWeek | None = None
    """This window against earlier ones; ``None`` when the digest was built without a look back."""
    release: str | None = None
    """The release this digest covers (``--release v0.7.1``: the PRs first released in it), else ``None``."""
    previous_release: str | None = None
    """The release before :attr:`release` (the window starts after it); ``None``: the first release."""
    config_file: str | None = None
    """The name of the config file the digest was built with (``prhub.toml``, no folder); ``None``: no file
    (built-in defaults), said in the metadata line as "no config"."""

    def pr(self, number: int) -> DigestPR:
        """The digest's entry for PR ``number``.

        Raises:
            KeyError: the PR is not in this digest.
        """
        for item in self.prs:
            if item.number == number:
                return item
        raise KeyError(number)

    def by_number(self) -> dict[int, DigestPR]:
        """The digest's entries by PR number (a new dict, built in one pass): for looking up many
        numbers, where :meth:`pr` would scan the list once per number."""
        return {item.number: item for item in self.prs}
