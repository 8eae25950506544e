"""One PR's analysis as an ordered outline of sections, for the renderers in :mod:`bot.cards.pr`.

The outline answers "PR #6046 值得读吗" in a fixed order::

    pr          linked number and title; repository, author, merge time, size
    verdict     值得精读 / 建议浏览 / 可跳过 with minutes, scores and the reason
                (a pending PR: 分析结果尚未生成 and when to ask again)
    summary     what the PR does
    risks       each risk: title, detail, evidence (files or facts)
    focus       where to start reading, in the analysis' order
    key_points  key points
    labels      the PR's labels
    analysis    who wrote the analysis (LLM / heuristic, fallback reason),
                coverage and the files left out

Like :mod:`bot.cards._outline`, titles and items are escaped and marked up for one
format (a :class:`~bot.cards._outline.Markup`). :class:`Limits` caps the
length of each free text and of each list so that one Slack message or one
Feishu card can hold the whole answer; every cut is visible (``…``, "另有 3 项")
and announced in the analysis section. The Markdown answer is never cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.cards._outline import Markup, Section, pr_number
from bot.cards.escape import split_text
from bot.cards.i18n import PRPhrases, level_name, minutes_text, phrases, pr_phrases, release_text, status_name
from bot.models import Analysis, DigestPR, Language

_PATH_LIKE = re.compile(r"^[\w.@+~-]*[/.][\w./@+~-]*$")
"""A focus or evidence item shown as code: one token with a slash or a dot (``verl/a.py``)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of the analysis one answer shows.

    ``text`` caps each free text (characters; ``None`` = no cap), ``items``
    each list (``None`` = all); ``minimal`` keeps only the PR, the verdict
    and the note that the rest is in the full answer.
    """

    text: int | None = None
    items: int | None = None
    minimal: bool = False


FULL = Limits()
STEPS: tuple[Limits, ...] = (
    FULL,
    Limits(text=1500, items=12),
    Limits(text=600, items=8),
    Limits(text=300, items=5),
    Limits(text=120, items=3),
    Limits(text=60, items=2),
    Limits(text=60, items=0, minimal=True),
)
"""Ever tighter limits; a renderer uses the first whose output fits its platform.
The last one fits any PR: it holds a clipped title and texts of our own only."""


def title(pr: DigestPR, language: Language) -> str:
    """``PR #6046 · 值得精读`` (our words and a number only: safe as plain text anywhere)."""
    verdict = (
        phrases(language).pending_placeholder
        if pr.analysis is None
        else level_name(pr.analysis.recommendation.level, language)
    )
    return pr_phrases(language).title.format(number=pr.number, verdict=verdict)


CHAT_FOCUS = 3
"""Files named under "where to start" in chat."""


def pr_outline(
    pr: DigestPR, *, repo: str, language: Language, timezone: str, m: Markup, limits: Limits = FULL,
    chat: bool = False,
) -> list[Section]:
    """The sections of the answer about ``pr`` (see the module docstring), escaped for ``m``.

    Args:
        pr: the PR and its analysis (``None`` while pending).
        repo: ``owner/name`` shown in the facts line.
        language: language of our words (the analysis texts stay as written).
        timezone: IANA zone the merge time is shown in.
        m: the output format's markup.
        limits: caps on texts and lists (:data:`FULL` shows everything).
        chat: the answer in chat, read in one screen: risks by their titles, where to start as file paths only
            (at most :data:`CHAT_FOCUS`), no key points, and no analysis notes (analyzer, coverage) — those stay
            in the full answer.

    Returns:
        Sections in the fixed order; the pending PR has no summary, risks,
        focus or key points, but its labels and a note.
    """
    words, our = phrases(language), pr_phrases(language)
    clip = _Clipper(limits, our, m)
    count = pr.changed_files
    facts = our.facts.format(
        repo=clip.raw(repo), author=clip.raw(pr.author or "-"), merged=_when(pr.merged_at, timezone),
        files=our.files[0 if count == 1 else 1].format(count=count), additions=pr.additions, deletions=pr.deletions,
    )
    if release := release_text(pr.released_in, pr.release_known, language):
        facts += f" · {release}"
    head = (f"{m.bold(pr_number(pr, m))} {clip.text(pr.title)}", m.text(facts))
    sections = [Section("pr", "", head, "paragraphs")]
    analysis = pr.analysis
    if analysis is None:
        pending = (m.text(our.pending_body),)
        sections.append(Section("verdict", m.text(words.pending_placeholder), pending, "paragraphs"))
    else:
        sections.append(_verdict(analysis, language, clip))
    if analysis is not None and not limits.minimal:
        sections += _chat_body(analysis, language, clip) if chat else _body(analysis, language, clip)
    if not limits.minimal:
        labels = words.list_sep.join(clip.items([m.text(label) for label in pr.labels]))
        sections.append(Section("labels", m.text(our.labels), (labels or words.nothing,), "paragraphs"))
    notes = _fallback_note(analysis, language, clip) if chat else _analysis_notes(analysis, language, clip)
    if clip.cut or limits.minimal:
        notes.append(m.text(our.shortened.format(number=pr.number)))
    if notes:
        sections.append(Section("analysis", m.text(our.analysis), tuple(notes)))
    return sections


def _verdict(analysis: Analysis, language: Language, clip: _Clipper) -> Section:
    words, our, m = phrases(language), pr_phrases(language), clip.m
    rec = analysis.recommendation
    heading = our.verdict.format(level=level_name(rec.level, language), minutes=minutes_text(rec.minutes, language))
    lines = [m.text(words.pr_scores.format(importance=analysis.importance, insight=analysis.insight))]
    if rec.reason.strip():
        lines.append(m.text(our.reason.format(reason=clip.raw(rec.reason))))
    return Section("verdict", m.text(heading), tuple(lines), "paragraphs")


def _body(analysis: Analysis, language: Language, clip: _Clipper) -> list[Section]:
    """Summary, risks, focus and key points."""
    words, our, m = phrases(language), pr_phrases(language), clip.m
    summary = m.paragraphs(clip.raw(analysis.summary)) if analysis.summary.strip() else words.nothing
    risks = []
    for risk in analysis.risks:
        line = m.bold(clip.text(risk.title))
        if risk.detail.strip():
            line += f" — {clip.text(risk.detail)}"
        evidence = clip.items([_item(e, clip) for e in risk.evidence])
        if evidence:
            line += m.br + our.evidence.format(items=words.list_sep.join(evidence))
        risks.append(line)
    focus = clip.items([_item(f, clip) for f in analysis.recommendation.focus if f.strip()])
    points = clip.items([clip.text(p) for p in analysis.key_points if p.strip()])
    return [
        Section("summary", m.text(our.summary), (summary,), "paragraphs"),
        Section("risks", m.text(our.risks), tuple(clip.items(risks)) or (m.text(words.no_risks),)),
        Section("focus", m.text(our.focus), tuple(focus) or (words.nothing,), "numbered" if focus else "paragraphs"),
        Section("key_points", m.text(our.key_points), tuple(points) or (words.nothing,),
                "bullets" if points else "paragraphs"),
    ]


def _chat_body(analysis: Analysis, language: Language, clip: _Clipper) -> list[Section]:
    """What it does, its risks by title and the files to start at: the answer in chat (see :func:`pr_outline`)."""
    words, our, m = phrases(language), pr_phrases(language), clip.m
    summary = m.paragraphs(clip.raw(analysis.summary)) if analysis.summary.strip() else words.nothing
    risks = words.list_sep.join(clip.items([m.text(r.title) for r in analysis.risks]))
    focus = [_item(f, clip) for f in analysis.recommendation.focus if _PATH_LIKE.match(f.strip())][:CHAT_FOCUS]
    return [
        Section("summary", m.text(our.summary), (summary,), "paragraphs"),
        Section("risks", m.text(our.risks), (risks or m.text(words.no_risks),), "paragraphs"),
        Section("focus", m.text(our.focus), tuple(focus) or (words.nothing,), "numbered" if focus else "paragraphs"),
    ]


def _fallback_note(analysis: Analysis | None, language: Language, clip: _Clipper) -> list[str]:
    """In chat, only why the model's analysis is missing (the rest of the notes stay in the full answer)."""
    if analysis is None or not analysis.fallback_reason:
        return []
    return [clip.m.text(pr_phrases(language).fallback.format(reason=clip.raw(analysis.fallback_reason)))]


def _analysis_notes(analysis: Analysis | None, language: Language, clip: _Clipper) -> list[str]:
    """Who wrote the analysis, its fallback reason, coverage and the files left out."""
    if analysis is None:
        return []
    our, m = pr_phrases(language), clip.m
    status = our.analyzer.format(status=status_name(analysis.status, language), analyzer=analysis.analyzer or "-")
    notes = [m.text(status)]
    if analysis.fallback_reason:
        notes.append(m.text(our.fallback.format(reason=clip.raw(analysis.fallback_reason))))
    c = analysis.coverage
    notes.append(m.text(our.coverage.format(
        files_seen=c.files_seen, files_total=c.files_total, lines_seen=c.lines_seen, lines_total=c.lines_total,
    )))
    left = clip.items([
        our.left_out_item.format(path=clip.code(f.path), reason=m.text(our.left_out_reasons.get(f.reason, f.reason)))
        for f in c.left_out
    ])
    if left:
        notes.append(our.left_out.format(files=phrases(language).list_sep.join(left)))
    return notes


class _Clipper:
    """Applies :class:`Limits` to texts and lists and remembers whether it cut anything."""

    def __init__(self, limits: Limits, our: PRPhrases, m: Markup) -> None:
        self.limits, self.our, self.m = limits, our, m
        self.cut = False

    def raw(self, text: str) -> str:
        """``text`` (unescaped) clipped to ``limits.text`` characters with a visible ``…``."""
        cap = self.limits.text
        if cap is None or len(text) <= cap:
            return text
        self.cut = True
        return _prefix(text, max(cap - 1, 8)) + "…"

    def text(self, text: str) -> str:
        """One line of PR text, clipped and escaped."""
        return self.m.text(self.raw(text))

    def code(self, text: str) -> str:
        """A path as inline code, clipped and escaped."""
        return self.m.code(self.raw(text))

    def items(self, items: Sequence[str]) -> list[str]:
        """The first ``limits.items`` of ``items`` and a "… and N more" marker for the rest."""
        cap = self.limits.items
        if cap is None or len(items) <= cap:
            return list(items)
        self.cut = True
        return [*items[:cap], self.m.text(self.our.more.format(count=len(items) - cap))]


def _prefix(text: str, limit: int) -> str:
    """The longest start of ``text`` of at most ``limit`` characters that ends at a break
    :func:`~bot.cards.escape.split_text` allows (paragraph, line, word, whole character)."""
    kept, end = "", 0
    for chunk in split_text(text, limit):
        pos = text.find(chunk, end)
        if pos < 0 or pos + len(chunk) > limit:
            break
        end = pos + len(chunk)
        kept = text[:end]
    return kept.rstrip()


def _item(text: str, clip: _Clipper) -> str:
    """A focus or evidence item: a path as code, anything else as text."""
    return clip.code(text) if _PATH_LIKE.match(text.strip()) else clip.text(text)


def _when(moment: datetime, timezone: str) -> str:
    """``2026-04-17 16:31 +08:00``: the merge time in ``timezone`` with its UTC offset."""
    local = moment.astimezone(ZoneInfo(timezone))
    offset = local.strftime("%z")
    return f"{local:%Y-%m-%d %H:%M} {offset[:3]}:{offset[3:]}"
