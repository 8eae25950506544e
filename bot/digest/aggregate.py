"""From analysed PRs to the digest's computed sections: stats, trends, risk roll-up,
label view — and the heuristic narrative written from those numbers.

Everything here is a pure function of its inputs. Numbers are counted, never
written by hand; the narrative names PRs and what they change (their titles and
summaries), so that a reader learns something without an LLM.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from pathlib import PurePosixPath

from bot.digest import compose, texts
from bot.digest.dependencies import follows_release, is_dev_version
from bot.digest.description import repeats_title, shorten
from bot.digest.files import FileKind, classify
from bot.digest.labels import OTHER, subject, title_key
from bot.models import DigestPR, DigestStats, HotFile, LabelGroup, LabelTrend, RiskRollup

MAX_HIGHLIGHTS = 6
MAX_KEY_CHANGES = 6
MAX_TREND_LABELS = 8
MAX_HOT_FILES = 3
MIN_RELATED_PRS = 2
HIGHLIGHT_SUMMARY_CHARS = 140
MIN_NAMED_PRS = 2
"""Highlights name at least this many PRs: a quiet week with fewer key PRs names its most important ones."""
MIN_SERIES_PRS = 3
"""PRs of one author opening with the same words make a series from this many; a series this long
is a highlight even when none of its parts is key."""
MAX_SERIES_REFS = 4
MAX_GROUP_LINES = 2
"""Highlights keep places for this many series / fixes-of-one-problem lines before single PRs."""
_SOURCE_SUFFIXES = (".py", ".cc", ".cu", ".cpp", ".h", ".hpp", ".rs", ".go", ".ts", ".js", ".java", ".kt", ".scala")

# Order in which risk kinds are shown when their counts tie: the ones a reviewer can act on first.
RISK_ORDER = ("breaking_change", "revert", "deprecated_removal", "behavior_change", "numerics_change", "missing_tests",
              "core_path_change", "config_contract_change", "deprecation", "object_cache", "dependency_upgrade",
              "dependency_pin", "dependency_range", "large_change", "ci_action_bump", "version_bump",
              "dev_version_bump")


def _importance(pr: DigestPR) -> int:
    return pr.analysis.importance if pr.analysis else 0


def by_importance(prs: Sequence[DigestPR]) -> list[DigestPR]:
    """PRs most important first; ties by insight, then the newer merge first, then number."""
    return sorted(
        prs,
        key=lambda p: (-_importance(p), -(p.analysis.insight if p.analysis else 0),
                       -p.merged_at.timestamp(), p.number),
    )


def stats(prs: Sequence[DigestPR], bar: int) -> DigestStats:
    """Counts and averages; averages over analysed PRs only, rounded to 2 decimals."""
    done = [p.analysis for p in prs if p.analysis is not None]
    return DigestStats(
        pr_count=len(prs),
        key_pr_count=sum(a.importance >= bar for a in done),
        avg_importance=round(sum(a.importance for a in done) / len(done), 2) if done else None,
        avg_insight=round(sum(a.insight for a in done) / len(done), 2) if done else None,
        additions=sum(p.additions for p in prs),
        deletions=sum(p.deletions for p in prs),
        pending_count=len(prs) - len(done),
        key_pr_bar=bar,
    )


def label_view(prs: Sequence[DigestPR]) -> tuple[LabelGroup, ...]:
    """Every label with its PRs (most important first); labels by PR count, then name."""
    groups: dict[str, list[DigestPR]] = defaultdict(list)
    for pr in by_importance(prs):  # sorted once: each label's PRs come out in that order
        for label in pr.labels:
            groups[label].append(pr)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple(LabelGroup(label=k, pr_numbers=tuple(p.number for p in v)) for k, v in ordered)


def trends(prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]], t: texts.DigestTexts) -> tuple[LabelTrend, ...]:
    """Per label: count, PRs, hot files (touched by >= 2 of the label's PRs) and a note
    naming the dominant change type.

    Args:
        prs: the digest's PRs.
        files: changed paths per PR number.
        t: texts in the digest's language.
    """
    out = []
    with_label: dict[str, list[DigestPR]] = defaultdict(list)  # each label's PRs in the order of prs
    for pr in prs:
        for label in dict.fromkeys(pr.labels):
            with_label[label].append(pr)
    paths = {p.number: set(files.get(p.number, ())) for p in prs}
    for group in label_view(prs):
        members = with_label[group.label]
        path_counts = Counter(path for p in members for path in paths[p.number])
        shared = [(path, n) for path, n in path_counts.items() if n >= 2]
        hot = tuple(HotFile(path=path, pr_count=n) for path, n in
                    heapq.nsmallest(MAX_HOT_FILES, shared, key=lambda kv: (-kv[1], kv[0])))
        types = Counter(p.analysis.change_type for p in members if p.analysis)
        note = ""
        if types:
            (main_type, main_count), *rest = types.most_common()
            if rest and rest[0][1] == main_count:
                note = t.trend_mixed.format(count=len(members))
            else:
                note = t.trend_note.format(count=len(members), main_type=t.type_names[main_type],
                                           main_count=main_count)
        out.append(LabelTrend(label=group.label, count=len(members), pr_numbers=group.pr_numbers,
                              hot_files=hot, note=note))
    return tuple(out)


def risk_rollup(prs: Sequence[DigestPR], t: texts.DigestTexts) -> tuple[RiskRollup, ...]:
    """Each risk kind present: its title, count and PR numbers (most important first)."""
    members: dict[str, list[DigestPR]] = defaultdict(list)
    listed: dict[str, set[int]] = defaultdict(set)  # PR numbers per kind: a PR counts once per kind
    titles: dict[str, str] = {}
    for pr in by_importance(prs):
        for risk in pr.analysis.risks if pr.analysis else ():
            if pr.number not in listed[risk.kind]:
                listed[risk.kind].add(pr.number)
                members[risk.kind].append(pr)
            titles.setdefault(risk.kind, risk.title)
    rank = {kind: i for i, kind in enumerate(RISK_ORDER)}
    ordered = sorted(members.items(), key=lambda kv: (-len(kv[1]), rank.get(kv[0], len(rank)), kv[0]))
    return tuple(
        RiskRollup(kind=kind, title=titles[kind], count=len(group), pr_numbers=tuple(p.number for p in group),
                   note=_risk_note(group, t))
        for kind, group in ordered
    )


def _risk_note(group: Sequence[DigestPR], t: texts.DigestTexts) -> str:
    """Where a risk concentrates: the labels most common among its PRs."""
    labels = Counter(label for p in group for label in p.labels).most_common(3)
    return t.risk_where.format(labels=t.list_sep.join(t.label_count.format(label=k, count=n) for k, n in labels))


def _numbers(prs: Sequence[DigestPR], t: texts.DigestTexts) -> str:
    return t.list_sep.join(f"#{p.number}" for p in prs)


def _title(pr: DigestPR) -> str:
    """The title without its ``[modules] type:`` prefix, for running text."""
    return shorten(subject(pr.title), 80)


def headline(
    s: DigestStats, trend: Sequence[LabelTrend], period: str, t: texts.DigestTexts,
    prs: Sequence[DigestPR] = (), repo: str = "",
) -> str:
    """One line: counts and the busiest labels (``other`` is not an area), then the window's
    releases and the reverts whose reverted PR is in the window too."""
    named = [x for x in trend if x.label != OTHER][:3]
    labels = t.headline_labels.format(
        labels=t.list_sep.join(t.label_count.format(label=x.label, count=x.count) for x in named)) if named else ""
    template = t.headline if s.key_pr_count else t.headline_no_key
    out = template.format(prs=t.prs(s.pr_count), key=s.key_pr_count, labels=labels, period=period)
    releases = by_importance([p for p in prs if is_release(p.title, repo)])
    if releases:
        out += t.headline_release.format(prs=t.list_sep.join(
            t.pr_ref.format(number=p.number, title=_title(p)) for p in releases[:3]))
    for revert, target in revert_pairs(prs)[:2]:
        out += t.headline_revert.format(revert=f"#{revert.number}",
                                        target=t.pr_ref.format(number=target.number, title=_title(target)))
    return out


_RELEASE = (
    re.compile(r"^\s*(?:release|releasing|cut|prepare|preparing|publish)\b[^\n]{0,20}?\bv?\d+\.\d+", re.IGNORECASE),
    re.compile(r"\brelease\s*[:：]?\s*v?\d+\.\d+", re.IGNORECASE),
    re.compile(r"\bv?\d+\.\d+(?:\.\d+)?\S*\s+release\b", re.IGNORECASE),
    re.compile(r"^\s*v?\d+\.\d+(?:\.\d+)?(?:[.-]?(?:rc|post|dev|a|b)\d*)?\s*$", re.IGNORECASE),
)
_VERSION_BUMP = re.compile(
    r"\b(?:bump(?:s|ed)?|update[sd]?|set|change[sd]?)\s+(?:up\s+)?(?:the\s+)?(?:(?P<what>[\w.-]+)\s+)?version"
    r"(?:\s+(?:number|string))?\s+(?:to|as)\s+v?\d+\.\d+|\bversion\s+bump(?:ed)?\s+(?:to\s+)?v?\d+\.\d+",
    re.IGNORECASE,
)
_DOTTED = re.compile(r"\d\.\d")
_VERSION_IN_TITLE = re.compile(r"\bv?\d+\.\d+[\w.+-]*")
_OWN_VERSION_WORDS = frozenset({"package", "project", "release", "library", "lib", "our"})


def is_release(title: str, repo: str = "") -> bool:
    """The PR releases the repository: ``Release: v0.28``, ``Bump version to 0.2.0``,
    ``[release] chore: bump version to v0.4``, ``Bump torchtitan version to v0.2.1`` (with
    ``repo`` ``pytorch/torchtitan``); not ``Bump python version to 3.12`` nor ``Add a
    release workflow``, nor a bump to a development version (``Bump version to 0.19.2.dev0``) or the one
    after a release (``Update version.txt after 0.19.4 release``, ``post release v0.35.0``)."""
    text = subject(title)
    if not _DOTTED.search(text):  # every pattern needs a version number such as 0.2
        return False
    if follows_release(text) or any(is_dev_version(v) for v in _VERSION_IN_TITLE.findall(text)):
        return False  # the bump after a release, or to a development version: no release
    if any(r.search(text) for r in _RELEASE):
        return True
    bump = _VERSION_BUMP.search(text)
    if bump is None:
        return False
    what = (bump.group("what") or "").lower()
    own = {part.lower() for part in repo.split("/")[-1:] if part}
    return not what or what in _OWN_VERSION_WORDS or what in own


_REVERT_TITLE = re.compile(r'^\s*(?:\[[^\]]*\]\s*)*revert\w*\s*[:：]?\s*["“]?(?P<inner>.+?)["”]?\s*$', re.IGNORECASE)


def revert_pairs(prs: Sequence[DigestPR]) -> list[tuple[DigestPR, DigestPR]]:
    """(revert, reverted PR) for each revert whose reverted PR is among ``prs``: by the number the
    analysis found (``Analysis.reverts``), else by the quoted title (``Revert "x"`` reverts the PR titled
    ``x``). Newest revert first."""
    by_number = {p.number: p for p in prs}
    matched = [(p, _revert_title(p.title)) for p in prs]
    by_title: dict[str, DigestPR] | None = None  # built when a revert is first looked up by title
    out: list[tuple[DigestPR, DigestPR]] = []
    for pr, found in sorted(matched, key=lambda m: (-m[0].merged_at.timestamp(), m[0].number)):
        number = pr.analysis.reverts if pr.analysis is not None else None
        target = by_number.get(number) if number is not None else None
        if target is None and found is not None:
            if by_title is None:
                by_title = {title_key(p.title): p for p, is_revert in matched if is_revert is None}
            target = by_title.get(title_key(found["inner"]))
        if target is not None and target.number != pr.number:
            out.append((pr, target))
    return out


def _revert_title(title: str) -> re.Match[str] | None:
    """:data:`_REVERT_TITLE` matched on ``title``; the regex is tried only on titles holding "revert"."""
    return _REVERT_TITLE.match(title) if "revert" in title.lower() else None


def summary_of(pr: DigestPR, limit: int = HIGHLIGHT_SUMMARY_CHARS) -> str:
    """What the PR's summary adds to its title, shortened to ``limit``: a summary that opens
    by repeating the title loses that sentence, one that only repeats it gives ``""``."""
    if pr.analysis is None:
        return ""
    text = pr.analysis.summary.strip()
    head = subject(pr.title).rstrip(". ").lower()
    if head and text.lower().startswith(head):
        text = text[len(head):].lstrip(" .。:：;；,，")
    if not text or repeats_title(text, pr.title):
        return ""
    return shorten(text, limit)


def _pr_line(pr: DigestPR, t: texts.DigestTexts, files: dict[int, tuple[str, ...]] | None = None) -> str:
    """The PR told in a sentence composed from its facts (:func:`bot.digest.compose.pr_sentence`)."""
    return compose.pr_sentence(pr, t.language, (files or {}).get(pr.number, ()), release=is_release(pr.title))


def highlights(
    prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]], trend: Sequence[LabelTrend], bar: int,
    t: texts.DigestTexts,
) -> tuple[str, ...]:
    """The busiest area holding a key PR (else the busiest; never ``other``) with its top PRs; the
    most important PRs with what they add to their titles — a series (:func:`series`) or fixes of one
    problem (:func:`same_fixes`) told once, in one of up to :data:`MAX_GROUP_LINES` places kept for
    them; series of three or more PRs even when none is key; then PRs that change the same file. A
    quiet week (fewer than :data:`MIN_NAMED_PRS` key PRs) still names its most important PRs."""
    out: list[str] = []
    areas = [x for x in trend if x.label != OTHER and x.count >= 2]
    key = {p.number for p in prs if _importance(p) >= bar}
    top = next((x for x in areas if key & set(x.pr_numbers)), areas[0] if areas else None)
    ordered = by_importance(prs)
    if top is not None:
        top_numbers = set(top.pr_numbers)
        named = [p for p in ordered if p.number in top_numbers][:3]
        refs = t.list_sep.join(t.pr_ref.format(number=p.number, title=_title(p)) for p in named)
        said = t.highlight_label if top is areas[0] else t.highlight_label_key  # "busiest" only when it is
        out.append(said.format(label=top.label, prs_count=t.prs(top.count), prs=refs))
    groups: dict[int, str] = {}
    for members, line in [*_series_lines(prs, t), *_same_fix_lines(prs, files, t)]:
        for pr in members:
            groups.setdefault(pr.number, line)
    ranked = [p for p in ordered if p.analysis is not None]
    picked = [p for p in ranked if _importance(p) >= bar]
    if len(picked) < MIN_NAMED_PRS:
        picked += [p for p in ranked if _importance(p) < bar][: MIN_NAMED_PRS - len(picked)]
    picked_by_number = {p.number: p for p in picked}
    picked_numbers = picked_by_number.keys()
    related = _related(prs, files)
    room = MAX_HIGHLIGHTS - len(out) - min(1, len(related))
    # A line is a group's text, or a picked PR's number standing for its own line (:func:`_pr_line`,
    # which names the PR, so no two are alike): that line is only written when chosen.
    rank: dict[str | int, int] = {}
    for pr in [*picked, *(p for p in ranked if p.number in groups and p.number not in picked_numbers)]:
        entry = groups.get(pr.number) or pr.number
        if pr.number in picked_numbers or _importance(pr) >= bar:
            rank[entry] = max(_importance(pr), rank.get(entry, 0))
    told_by = Counter(groups.values())
    for line in told_by:  # a long series is news even when no part is key
        if line not in rank and told_by[line] >= MIN_SERIES_PRS:
            rank[line] = 0
    told_together = set(groups.values())
    # series and fixes of one problem are told before single PRs of the same rank, and get at least
    # MAX_GROUP_LINES of the places
    order = sorted(rank, key=lambda entry: (-rank[entry], entry not in told_together))
    chosen: list[str | int] = []  # group lines first
    chosen += [entry for entry in order if entry in told_together][: min(MAX_GROUP_LINES, room)]
    chosen += [entry for entry in order if entry not in chosen][: max(0, room - len(chosen))]
    position = {entry: index for index, entry in enumerate(order)}
    out += [entry if isinstance(entry, str) else _pr_line(picked_by_number[entry], t, files)
            for entry in sorted(chosen, key=position.__getitem__)]
    told = {n for n, line in groups.items() if line in out}
    fresh = [(path, group) for path, group in related if not {p.number for p in group} <= told]
    if fresh:
        path, group = fresh[0]
        out.append(t.highlight_related.format(prs=_numbers(group, t), path=path))
    return tuple(out)


_COUNTER = re.compile(r"[\[(]\s*(?:part\s*)?(\d+)\s*/\s*(?:\d+|n)\s*[\])]|\b(?:part|pt\.?)\s*(\d+)\b|"
                      r"\bPR\s*(\d+)\s*/\s*(?:\d+|n)\b|\b(\d+)\s*/\s*(?:\d+|n)\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_TITLE_WORD = re.compile(r"[\w.+-]+", re.UNICODE)
_STOP = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with", "by", "from", "into", "via", "at",
    "as", "is", "be", "when", "if", "not", "no"
))
_GENERIC = _STOP | frozenset((
    "fix", "fixes", "fixed", "bug", "bugs", "issue", "issues", "error", "errors", "problem", "add", "adds",
    "update", "support", "use", "make", "handle", "remove", "move", "refactor", "minor", "small"
))


def series(prs: Sequence[DigestPR]) -> list[tuple[str, list[DigestPR], list[int]]]:
    """PRs that are parts of one series, as (name, members oldest first, part numbers):

    - a counter in the title (``[7/N]``, ``(3/12)``, ``part 4``, ``PR2/N``): the members share
      the title's text before the counter (``Refactor CLI [7/N]: …``), or, when the counter
      opens the title, its author;
    - no counter: at least :data:`MIN_SERIES_PRS` PRs of one author whose titles open with the same
      three words (``Remove the legacy …``).
    """
    found: dict[tuple[str, str], list[tuple[DigestPR, int | None]]] = defaultdict(list)
    for pr in prs:
        member = _series_key(pr.title, pr.author)
        if member is not None:
            key, part = member
            found[key].append((pr, part))
    out: list[tuple[str, list[DigestPR], list[int]]] = []
    for (kind, _key), members in found.items():
        if len(members) < (2 if kind == "n" else MIN_SERIES_PRS):
            continue
        members.sort(key=lambda m: (m[1] if m[1] is not None else 0, m[0].merged_at, m[0].number))
        parts = sorted({m[1] for m in members if m[1] is not None})
        out.append((_series_name([m[0] for m in members], kind), [m[0] for m in members], parts))
    return out


@lru_cache(maxsize=8192)
def _series_key(title: str, author: str) -> tuple[tuple[str, str], int | None] | None:
    """The series a PR of this title and author would belong to (:func:`series`) and its part number;
    ``None`` for a title without a counter and of fewer than four words. (Cached: each digest asks twice, and the
    digests of the weeks before ask again.)"""
    counter = _COUNTER.search(title) if _DIGIT.search(title) else None  # every counter has a digit
    if counter is not None:
        part = int(next(g for g in counter.groups() if g))
        before = title[: counter.start()]
        return ("n", _words_key(subject(before).strip(" -–—:[]()")) or f"@{author}"), part
    words = [w.lower() for w in _TITLE_WORD.findall(subject(title))]
    if len(words) >= 4:
        return ("p", f"{author} " + " ".join(words[:3])), None
    return None


def _words_key(text: str) -> str:
    return " ".join(w.lower() for w in _TITLE_WORD.findall(text))


def _series_name(members: list[DigestPR], kind: str) -> str:
    """The words the members' titles share at their start (``Refactor CLI``), else the first
    member's module or subject."""
    titles = [subject(_COUNTER.sub(" ", m.title)) for m in members]
    split = [_TITLE_WORD.findall(x) for x in titles]
    common: list[str] = []
    for column in zip(*split, strict=False):
        if len({w.lower() for w in column}) != 1:
            break
        common.append(column[0])
    if kind == "n":
        before = members[0].title[: _COUNTER.search(members[0].title).start()]  # type: ignore[union-attr]
        name = before.strip(" -–—:[]()")
        if name and not name.startswith("["):
            return name
    return " ".join(common).strip(" -–—:") or shorten(titles[0], 40)


def _series_lines(prs: Sequence[DigestPR], t: texts.DigestTexts) -> list[tuple[list[DigestPR], str]]:
    out = []
    for name, members, parts in series(prs):
        count = t.prs(len(members))
        span = (t.series_parts.format(first=parts[0], last=parts[-1], count=count) if len(parts) >= 2
                else t.series_no_parts.format(count=count))
        shown = by_importance(members)[:MAX_SERIES_REFS]
        refs = [t.pr_ref.format(number=p.number, title=_rest(p, name)) for p in sorted(shown, key=members.index)]
        if len(members) > len(shown):
            refs.append(t.more.format(n=len(members) - len(shown)))
        out.append((members, t.highlight_series.format(name=name, span=span, prs=t.list_sep.join(refs))))
    return out


def _rest(pr: DigestPR, name: str) -> str:
    """The member's title without the series name and counter, for listing it under the name."""
    text = _COUNTER.sub(" ", pr.title)
    text = subject(text)
    if name and text.lower().startswith(name.lower()):
        text = text[len(name):]
    return shorten(" ".join(text.strip(" -–—:").split()) or _title(pr), 60)


def same_fixes(prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]]) -> list[tuple[str, str, list[DigestPR]]]:
    """Fixes of one problem, as (source file, topic, PRs oldest first): fix PRs that change the same
    source file and whose titles share a run of two or more words that say what is fixed
    (``… routed_experts on partial rollout resume``), or three such words anywhere."""
    fixes = [p for p in prs if p.analysis is not None and p.analysis.change_type == "fix"]
    sources = [{f for f in files.get(p.number, ()) if _is_source(f)} for p in fixes]
    words = [_TopicWords.of(subject(p.title)) for p in fixes]
    by_file: dict[str, list[int]] = defaultdict(list)  # only fixes that share a source file are compared
    for index, paths in enumerate(sources):
        for path in paths:
            by_file[path].append(index)
    out: list[tuple[str, str, list[DigestPR]]] = []
    used: set[int] = set()
    for i, a in enumerate(fixes):
        if a.number in used:
            continue
        group, topic, where = [a], "", ""
        later = sorted({j for path in sources[i] for j in by_file[path] if j > i})
        for j in later:
            b = fixes[j]
            if b.number in used:
                continue
            # b changes a source file of a (by_file), so only the topic decides
            found = _shared_topic(words[i], words[j])
            if found:
                group.append(b)
                topic = topic or found
                where = where or next(f for f in files.get(a.number, ()) if f in sources[j])
        if len(group) >= 2:
            used |= {p.number for p in group}
            out.append((where, topic, sorted(group, key=lambda p: (p.merged_at, p.number))))
    return out


@dataclass(frozen=True, slots=True)
class _TopicWords:
    """A title's words as :func:`_shared_topic` compares them, worked out once per title."""

    words: list[str]
    lower: list[str]
    meaningful: frozenset[str]
    """The lower-cased words that are not :data:`_GENERIC`."""
    at: dict[str, list[int]]
    """Where each lower-cased word stands."""
    meaning_before: list[int]
    """How many of the first ``k`` words are meaningful, for each ``k``."""

    @classmethod
    def of(cls, text: str) -> _TopicWords:
        words = _TITLE_WORD.findall(text)
        lower = [w.lower() for w in words]
        at: dict[str, list[int]] = {}
        for index, word in enumerate(lower):
            at.setdefault(word, []).append(index)
        before = list(accumulate((word not in _GENERIC for word in lower), initial=0))
        return cls(words, lower, frozenset(lower).difference(_GENERIC), at, before)


def _shared_topic(a: _TopicWords, b: _TopicWords) -> str:
    """The words that say what both titles fix: the run of words they share holding the most meaningful
    (not :data:`_GENERIC`) words (the longest such run, the first in ``a``), when it holds two; else the
    meaningful words both hold, in the order of ``a``, when there are three or more; else ``""``."""
    if len(a.meaningful & b.meaningful) < 2:
        return ""  # a run needs two meaningful words in common, and the fallback three
    la, lb = a.lower, b.lower
    best = (0, 0, 0)  # length, start in a, meaningful words
    for i, word in enumerate(la):
        for j in b.at.get(word, ()):  # a run starts where the words agree; elsewhere it is empty
            n = 1
            while i + n < len(la) and j + n < len(lb) and la[i + n] == lb[j + n]:
                n += 1
            meaning = a.meaning_before[i + n] - a.meaning_before[i]
            if meaning > best[2] or (meaning == best[2] and n > best[0]):
                best = (n, i, meaning)
    n, i, meaning = best
    if meaning >= 2:
        return " ".join(a.words[i:i + n]).strip()
    shared = [w for w in dict.fromkeys(la) if w in b.at and w not in _GENERIC]
    return " ".join(shared) if len(shared) >= 3 else ""


def _same_fix_lines(prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]],
                    t: texts.DigestTexts) -> list[tuple[list[DigestPR], str]]:
    return [(group, t.highlight_same_fix.format(prs=t.join([f"#{p.number}" for p in group]), path=path, topic=topic,
                                                n=len(group)))
            for path, topic, group in same_fixes(prs, files)]


def _is_source(path: str) -> bool:
    return path.endswith(_SOURCE_SUFFIXES)


_REGISTRY_FILE = re.compile(r"^(?:__init__\.py|dummy_.*objects\.py|.*_pb2(?:_grpc)?\.py|.*generated.*)$")
"""Files unrelated PRs all touch — a package's exports, objects generated from the code (``make
fix-copies``'s dummies, protobuf stubs): two PRs sharing one say nothing about each other."""


SWEEP_LINES_PER_FILE = 4


def _sweep(pr: DigestPR) -> bool:
    """More than :data:`MAX_THEME_FILES` files with at most :data:`SWEEP_LINES_PER_FILE` changed lines each on
    average: the same small edit everywhere (a licence header, a rename), not a large feature."""
    return pr.changed_files > MAX_THEME_FILES and pr.additions + pr.deletions <= SWEEP_LINES_PER_FILE * pr.changed_files


def _related(prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]]) -> list[tuple[str, list[DigestPR]]]:
    """Product source files (not :data:`_REGISTRY_FILE`, not tests by :func:`~bot.digest.files.classify`) changed
    by several analysed key-ish PRs, most PRs first; a sweep (:func:`_sweep`: a licence header, a rename) shares
    files with everything and is no one's pair."""
    touching: dict[str, list[DigestPR]] = defaultdict(list)
    for pr in by_importance([p for p in prs if p.analysis is not None and p.analysis.importance >= 5
                             and not _sweep(p)]):
        for path in files.get(pr.number, ()):
            if _is_source(path) and not _REGISTRY_FILE.match(PurePosixPath(path).name) \
                    and classify(path) is not FileKind.TEST:
                touching[path].append(pr)
    pairs = [(path, group) for path, group in touching.items() if len(group) >= MIN_RELATED_PRS]
    return sorted(pairs, key=lambda kv: (-len(kv[1]), -sum(_importance(p) for p in kv[1]), kv[0]))


MAX_THEMES = 6
MAX_THEME_FILES = 20
"""A PR changing more files than this (a sweep, a rename) is no part of a thread about one file."""
MIN_LABEL_THEME = 3
MAX_SINGLE_THEMES = 3
"""Key PRs told as threads of their own (not part of another), at most."""
"""A label (component) is a thread of the week from this many PRs not told in another thread."""


@dataclass(frozen=True)
class Theme:
    """One thread of the window: ``short`` names it in the opening sentence, ``line`` tells it with its PRs."""

    short: str
    line: str
    prs: tuple[int, ...]
    weight: int


def _refs(group: Sequence[DigestPR], t: texts.DigestTexts, limit: int = 4) -> str:
    shown = [f"#{p.number}" for p in by_importance(group)[:limit]]
    if len(group) > limit:
        return t.list_sep.join(shown) + compose.TEXTS[t.language].more.format(n=len(group), rest=len(group) - limit)
    return t.join(shown)


def _mix(group: Sequence[DigestPR], t: texts.DigestTexts) -> str:
    types = Counter(p.analysis.change_type for p in group if p.analysis)
    return t.list_sep.join(t.change_types.format(name=t.type_names[k], count=n) for k, n in types.most_common(2))


def _capital(text: str, t: texts.DigestTexts) -> str:
    return text[:1].upper() + text[1:] if t.language == "en" else text


def _weight(group: Sequence[DigestPR]) -> int:
    """A thread's weight: its most important PR first, then its size."""
    return 10 * max((_importance(p) for p in group), default=0) + len(group)


def themes(prs: Sequence[DigestPR], files: dict[int, tuple[str, ...]], bar: int,
           t: texts.DigestTexts) -> list[Theme]:
    """The window's threads, at most :data:`MAX_THEMES`, heaviest (summed importance) first; each PR in one:
    fixes of one problem (:func:`same_fixes`), a series (:func:`series`), PRs of weight that change one source file,
    a key PR of its own, then a component (label) with :data:`MIN_LABEL_THEME` PRs or more."""
    used: set[int] = set()
    found: list[Theme] = []

    def take(group: Sequence[DigestPR], least: int = 2) -> list[DigestPR]:
        fresh = [p for p in group if p.number not in used and p.analysis is not None]
        return fresh if len(fresh) >= least else []

    for path, topic, group in same_fixes(prs, files):
        members = take(group)
        if members:
            used.update(p.number for p in members)
            name = t.theme_fix_short.format(topic=topic)
            found.append(Theme(name, t.theme_fix.format(Name=_capital(name, t), prs=_refs(members, t), path=path,
                                                        n=len(members)),
                               tuple(p.number for p in members), _weight(members) + 10))
    for name, group, _parts in series(prs):
        members = take(group)
        if members:
            used.update(p.number for p in members)
            short = t.theme_series_short.format(name=name)
            found.append(Theme(short, t.theme_series.format(Name=_capital(short, t), prs=_refs(members, t),
                                                            mix=_mix(members, t)),
                               tuple(p.number for p in members), _weight(members)))
    for path, group in _related([p for p in prs if p.changed_files <= MAX_THEME_FILES], files):
        members = take(group)
        if members:
            used.update(p.number for p in members)
            parts = Counter(compose.component(p.labels, files.get(p.number, ())) for p in members)
            where = parts.most_common(1)[0][0]
            short = t.theme_file_short.format(file=PurePosixPath(path).name, component=where)
            found.append(Theme(short, t.theme_file.format(Name=_capital(short, t), prs=_refs(members, t),
                                                          mix=_mix(members, t), path=path),
                               tuple(p.number for p in members), _weight(members)))
    singles = [p for p in by_importance(prs) if _importance(p) >= bar and p.number not in used]
    # a sweep over many files (a migration, a rename) is a thread of its own before other key PRs
    singles.sort(key=lambda p: p.changed_files <= MAX_THEME_FILES)
    for pr in singles[:MAX_SINGLE_THEMES]:
        used.add(pr.number)
        short = t.theme_single_short.format(subject=_title(pr))
        assert pr.analysis is not None
        told = compose.compose(pr.title, pr.analysis, t.language, labels=pr.labels, files=files.get(pr.number, ()))
        sentence = t.theme_single.format(Name=_capital(short, t), number=pr.number, detail=told.detail or told.why)
        found.append(Theme(short, sentence, (pr.number,), _weight([pr]) + 5 * (pr.changed_files > MAX_THEME_FILES)))
    by_label: dict[str, list[DigestPR]] = defaultdict(list)
    for pr in prs:
        for label in pr.labels:
            if label not in compose.NOT_COMPONENTS and pr.analysis is not None:
                by_label[label].append(pr)
    labelled: list[Theme] = []
    for label, _ in sorted(by_label.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        group = [p for p in by_label[label] if p.number not in used]
        if len(group) >= MIN_LABEL_THEME:
            used.update(p.number for p in group)
            others = Counter(x for p in group for x in p.labels if x != label and x not in compose.NOT_COMPONENTS)
            also = [x for x, n in others.most_common(1) if 3 * n >= len(group)]
            short = t.theme_label_short.format(label="/".join([label, *also]))  # one area named twice: npu/ci
            labelled.append(Theme(short, t.theme_label.format(Name=_capital(short, t), count=t.prs(len(group)),
                                                              prs=_refs(group, t, 3), mix=_mix(group, t)),
                                  tuple(p.number for p in group), _weight(group) - 10))  # broad: a step down
    found += labelled
    found.sort(key=lambda theme: -theme.weight)
    chosen = found[:MAX_THEMES]
    widest = max(labelled, key=lambda theme: len(theme.prs), default=None)
    if widest is not None and widest not in chosen:  # the busiest component is always one of the threads
        chosen[-1] = widest
    return chosen


def executive_summary(
    prs: Sequence[DigestPR], s: DigestStats, trend: Sequence[LabelTrend],
    risks: Sequence[RiskRollup], period: str, t: texts.DigestTexts,
    files: dict[int, tuple[str, ...]] | None = None,
) -> str:
    """What the window was about, then its counts, then its threads: an opening sentence naming the threads
    (:func:`themes`), the counts (PRs, key PRs, averages, change types, main risks), and one sentence per thread
    with its PRs."""
    types = Counter(p.analysis.change_type for p in prs if p.analysis)
    type_text = t.list_sep.join(t.change_types.format(name=t.type_names[k], count=n) for k, n in types.most_common())
    risk_text = t.risk_note.format(risks=t.list_sep.join(
        t.label_count.format(label=r.title, count=r.count) for r in risks[:3])) if risks else ""
    counts = t.summary.format(
        count=s.pr_count, prs=t.prs(s.pr_count), key=s.key_pr_count, bar=s.key_pr_bar, period=period,
        avg_importance=f"{s.avg_importance:.2f}" if s.avg_importance is not None else "-",
        avg_insight=f"{s.avg_insight:.2f}" if s.avg_insight is not None else "-",
        types=type_text or "-", risks=risk_text,
    ).strip()
    found = themes(prs, files or {}, s.key_pr_bar, t)
    if not found:
        return counts
    opening = _capital(t.summary_opening.format(period=period, themes=t.join([theme.short for theme in found])), t)
    return t.summary_sep.join([opening, counts, *(theme.line for theme in found)])


def key_changes(prs: Sequence[DigestPR], bar: int, t: texts.DigestTexts, period: str = "",
                files: dict[int, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The most important PRs, each with its labels, importance and what its summary adds to the
    title, a series (:func:`series`) once in the place of its most important part; when none
    reaches ``bar``, a line saying so and the :data:`MIN_NAMED_PRS` + 1 most important ones."""
    ranked = [p for p in by_importance(prs) if p.analysis is not None]
    in_series = {pr.number: line for members, line in _series_lines(prs, t) for pr in members}
    key = [p for p in ranked if _importance(p) >= bar]
    out = [] if key else [t.key_change_quiet.format(bar=bar, period=period or t.period_other).strip()]
    shown = MAX_KEY_CHANGES + (0 if key else 1)
    for pr in key or ranked[: MIN_NAMED_PRS + 1]:
        if len(out) >= shown:
            break
        assert pr.analysis is not None
        line = in_series.get(pr.number) or t.key_change.format(
            sentence=compose.pr_sentence(pr, t.language, (files or {}).get(pr.number, ()),
                                         release=is_release(pr.title)).rstrip("。."),
            importance=pr.analysis.importance)
        if line not in out:
            out.append(line)
    return tuple(out) if ranked else ()


ADVICE_ORDER = ("breaking_change", "deprecated_removal", "removed", "removed_file", "required", "default", "raises",
                "deprecated", "numerics", "cache", "dependency_pin", "dependency_range", "revert", "missing_tests")
"""The facts advice is given for, in the order it is told: what breaks callers first."""
MAX_ADVICE = 6
MAX_ADVICE_PER_KIND = 2


def suggestions(
    risks: Sequence[RiskRollup], pending: Sequence[int], t: texts.DigestTexts, prs: Sequence[DigestPR] = (),
) -> tuple[str, ...]:
    """Follow-up advice, each tied to a fact of one PR (:func:`bot.digest.compose.advice`: the PR, the fact and
    the action) — at most :data:`MAX_ADVICE_PER_KIND` PRs of one kind and one line per PR, most important PRs
    first; a revert whose reverted PR is in the window too is told as that pair; then the pending PRs. No fact, no
    advice: a week without any says there is nothing to follow up. (``risks`` is the window's roll-up: only the
    kinds present are looked for.)"""
    pairs = revert_pairs(prs)
    paired = {revert.number for revert, _ in pairs}
    present = {r.kind for r in risks}
    out = [t.suggestion_revert_pair.format(revert=f"#{a.number}", target=f"#{b.number}") for a, b in pairs][:2]
    told = set(paired)
    ranked = by_importance([p for p in prs if p.analysis is not None])
    for kind in ADVICE_ORDER:
        if kind in RISK_ORDER and kind not in present and kind != "missing_tests":
            continue
        given = 0
        for pr in ranked:
            if len(out) >= MAX_ADVICE or given >= MAX_ADVICE_PER_KIND:
                break
            if pr.number in told:
                continue
            line = compose.advice(pr, kind, t.language)
            if line:
                out.append(line)
                told.add(pr.number)
                given += 1
    if pending:
        out.append(t.pending_note.format(count=len(pending), prs=t.list_sep.join(f"#{n}" for n in pending)))
    return tuple(out) or (t.suggestion_default,)
