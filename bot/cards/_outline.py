"""The digest as an ordered outline of sections, in one markup (Slack, Feishu, Markdown).

Each renderer picks a :class:`Markup` (how to escape PR text, make a link,
bold text, break a line) and turns the :class:`Section` list into its own
shapes: Slack blocks, Feishu elements or Markdown headings and lists. So the
three outputs carry the same content in the same order, and PR text is escaped
in exactly one place per format.

Two outlines:

* :func:`card_outline` — what the first message/card shows: headline,
  highlights, risk observations, week over week (when the digest has it),
  the top key PRs;
* :func:`report_outline` — the full report (sections 1–6), the label view and
  the pending list.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bot.cards import _view, _weekly
from bot.cards.escape import (
    ENTITY,
    feishu_text,
    md_paragraphs,
    md_text,
    one_line,
    safe_url,
    slack_mrkdwn,
    slack_text,
)
from bot.cards.i18n import is_week, n_prs, phrases, release_note_groups
from bot.models import Digest, DigestPR

Style = Literal["bullets", "numbered", "paragraphs", "entries"]

_PARAGRAPHS = re.compile(r"\n[ \t]*\n\s*")


@dataclass(frozen=True, slots=True)
class Markup:
    """How one output format writes text.

    ``text``, ``code`` and ``paragraphs`` take raw (untrusted) text and return
    it escaped; ``bold``, ``italic`` and ``link`` take text that is already safe.
    """

    text: Callable[[str], str]
    """One line of PR text, escaped (line breaks folded)."""
    paragraphs: Callable[[str], str]
    """Multi-paragraph text, escaped, paragraphs separated by a blank line."""
    code: Callable[[str], str]
    """Inline code (file paths), escaped."""
    bold: Callable[[str], str]
    italic: Callable[[str], str]
    link: Callable[[str, str], str]
    """``(url, label)`` → link; ``url`` comes from :func:`~bot.cards.escape.safe_url`."""
    br: str
    """Line break inside one list item."""
    atomic: re.Pattern[str]
    """Spans a splitter must keep whole (links, entities, tags of ours)."""


def _folded_paragraphs(escape: Callable[[str], str]) -> Callable[[str], str]:
    def paragraphs(text: str) -> str:
        parts = (escape(one_line(p)) for p in _PARAGRAPHS.split(text.strip()))
        return "\n\n".join(p for p in parts if p)

    return paragraphs


SLACK = Markup(
    text=lambda t: slack_mrkdwn(one_line(t), headings=False),
    paragraphs=_folded_paragraphs(slack_mrkdwn),
    code=lambda t: f"`{slack_text(one_line(t))}`",
    bold=lambda t: f"*{t}*",
    italic=lambda t: f"_{t}_",
    link=lambda url, label: f"<{url}|{label}>",
    br="\n",
    atomic=re.compile(rf"<[^<>\n]*>|{ENTITY.pattern}"),
)


def _feishu_code(text: str) -> str:
    """A code span, unless the text holds characters a span would show as entities or end on."""
    text = one_line(text)
    return feishu_text(text) if any(c in text for c in "<>&`") else f"`{text}`"


FEISHU = Markup(
    text=lambda t: feishu_text(one_line(t)),
    paragraphs=_folded_paragraphs(feishu_text),
    code=_feishu_code,
    bold=lambda t: f"**{t}**",
    italic=lambda t: f"*{t}*",
    link=lambda url, label: f"[{label}]({url})",
    br="<br>",
    atomic=re.compile(rf"\[[^\[\]\n]*\]\([^()\s]*\)|<br>|{ENTITY.pattern}"),
)


def _md_code(text: str) -> str:
    """Inline code span with a fence longer than any backtick run inside."""
    text = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


MARKDOWN = Markup(
    text=lambda t: md_text(one_line(t)),
    paragraphs=md_paragraphs,
    code=_md_code,
    bold=lambda t: f"**{t}**",
    italic=lambda t: f"*{t}*",
    link=lambda url, label: f"[{label}]({url})",
    br="\n  ",
    atomic=re.compile(rf"\[[^\[\]\n]*\]\([^()\s]*\)|{ENTITY.pattern}"),
)


@dataclass(frozen=True, slots=True)
class Section:
    """One titled part of the outline.

    ``title`` and ``items`` are already escaped and marked up. ``level`` 1 is
    a part heading (完整周报, 标签视图 — no items; the pending list), 2 a
    section, 3 a label group. When the items are PRs, ``prs`` holds the PR of
    each item in item order (so a renderer can attach per-PR buttons to
    ``entries``). ``key`` names the section for renderers that draw one
    differently (the Markdown key-PR table).
    """

    key: str
    title: str
    items: tuple[str, ...]
    style: Style = "bullets"
    level: int = 2
    prs: tuple[DigestPR, ...] = ()
    empty: str = ""
    """What the section says when it has no item (else the renderer's "(none)")."""


def pr_number(pr: DigestPR, m: Markup) -> str:
    """The PR number, linked to the PR when its URL is http(s): ``<url|#6046>``."""
    url = safe_url(pr.url)
    return m.link(url, f"#{pr.number}") if url else f"#{pr.number}"


def pr_ref(pr: DigestPR, m: Markup) -> str:
    """Linked PR number and title: ``<url|#6046> title``."""
    return f"{pr_number(pr, m)} {m.text(pr.title)}"


CHAT_KEY_PRS = 5
"""Key PRs in a chat card (the full report lists them all)."""
CHAT_HIGHLIGHTS = (3, 5)
"""Highlights in a chat card: at least the first, at most the second number."""
CHAT_HIGHLIGHT_CHARS = 800
"""Highlights beyond the first :data:`CHAT_HIGHLIGHTS` stop once they hold this many characters."""


def _chat_highlights(highlights: tuple[str, ...]) -> tuple[str, ...]:
    least, most = CHAT_HIGHLIGHTS
    out: list[str] = []
    for line in highlights[:most]:
        if len(out) >= least and sum(map(len, out)) + len(line) > CHAT_HIGHLIGHT_CHARS:
            break
        out.append(line)
    return tuple(out)


CHAT_CARD_CHARS = 2150
"""Most characters of text a chat card's sections hold together (titles and items as marked up); the
2,500-character card of one screen keeps the rest for its header, context line, bullets and buttons."""


def _fit_chat_card(sections: list[Section], key_title: Callable[[int], str]) -> list[Section]:
    """``sections`` of a chat card within :data:`CHAT_CARD_CHARS`: whole items dropped from the end, highlights
    beyond three, then key PRs beyond three, then beyond one (never a line cut, and never fewer than three highlights:
    a digest whose three are longer than a screen is split, not cut, by the renderers; the key-PR
    section is retitled by ``key_title(shown)``, "shown of total", and the full report holds every one)."""
    def size() -> int:
        return sum(len(s.title) + sum(map(len, s.items)) for s in sections)

    for key, keep in (("highlights", CHAT_HIGHLIGHTS[0]), ("top_key_prs", 3), ("top_key_prs", 1)):
        while size() > CHAT_CARD_CHARS:
            at = next((i for i, s in enumerate(sections) if s.key == key), None)
            if at is None or len(sections[at].items) <= keep:
                break
            section = sections[at]
            items = section.items[:-1]
            prs = section.prs[: len(items)] if section.prs else section.prs
            title = key_title(len(items)) if key == "top_key_prs" else section.title
            sections[at] = dataclasses.replace(section, title=title, items=items, prs=prs)
    return sections


def card_outline(digest: Digest, m: Markup, *, chat: bool = False) -> list[Section]:
    """Headline, highlights, risk observations and the top key PRs (≤ ``TOP_KEY_PRS``).

    ``chat``: the card a chat reply holds, one screen — the headline, three to five highlights
    (:data:`CHAT_HIGHLIGHTS`) and the key PRs with the buttons; the risk observations and week over week stay in
    the full report."""
    words = phrases(digest.language)
    shown_highlights = _chat_highlights(_kept(digest.highlights)) if chat else _kept(digest.highlights)
    sections = [
        Section("headline", "", _kept((m.paragraphs(digest.headline),)), "paragraphs"),
        Section("highlights", words.highlights if is_week(digest.window) else words.highlights_range,
                tuple(m.text(h) for h in shown_highlights)),
    ]
    if not chat:
        sections.append(Section("risks", words.risks, risk_lines(digest, m), empty=m.text(words.risks_none)))
    if digest.week_over_week is not None and not chat:
        sections.append(Section("week_over_week", _weekly.title(digest), _weekly.weekly_lines(digest, m)))
    key = _view.key_prs(digest)
    if key:
        shown = tuple(key[: CHAT_KEY_PRS if chat else _view.TOP_KEY_PRS])
        title = words.top_key_prs.format(shown=len(shown), total=len(key))
        entries = tuple(_key_pr_chat_entry(pr, digest, m) if chat else _key_pr_entry(pr, digest, m) for pr in shown)
        sections.append(Section("top_key_prs", title, entries, "entries", prs=shown))
    if not chat:
        return sections
    return _fit_chat_card(sections, lambda shown: words.top_key_prs.format(shown=shown, total=len(key)))


def report_outline(digest: Digest, m: Markup, *, repeat_reasons: bool = False,
                   chat: bool = False) -> list[Section]:
    """The full report: sections 1–6, then the label view and the pending list.

    A PR listed under several labels shows its reason the first time only,
    unless ``repeat_reasons`` (the Markdown report, which has no size limit).
    ``chat``: the report under a chat card (:func:`card_outline` with ``chat``), which also carries week over week
    (the card leaves it out).
    """
    words = phrases(digest.language)
    key = _view.key_prs(digest)
    sections = [*release_note_sections(digest, m),
        Section("full_report", words.full_report, (), level=1),
        Section(
            "executive_summary",
            f"1. {words.executive_summary}",
            _kept((m.paragraphs(digest.executive_summary),)),
            "paragraphs",
        ),
        Section(
            "key_changes",
            f"2. {words.key_changes if is_week(digest.window) else words.key_changes_range}",
            _kept(tuple(m.paragraphs(c) for c in digest.key_changes)),
            "paragraphs",
        ),
        Section("trends", f"3. {words.trends}", trend_lines(digest, m)),
        Section("risks", f"4. {words.risks}", risk_lines(digest, m), "numbered", empty=m.text(words.risks_none)),
        Section(
            "key_pr_table",
            f"5. {words.key_pr_table}",
            tuple(_key_pr_line(pr, digest, m) for pr in key),
            prs=tuple(key),
            empty=m.text(words.no_key_prs.format(bar=digest.stats.key_pr_bar)),
        ),
        Section(
            "suggestions",
            f"6. {words.suggestions}",
            tuple(m.text(s) for s in _kept(digest.suggestions)),
            "numbered",
        ),
        Section("label_view", words.label_view, (), level=1),
    ]
    if chat and digest.week_over_week is not None:
        sections.insert(2, Section("week_over_week", _weekly.title(digest), _weekly.weekly_lines(digest, m)))
    # a PR listed under several labels is written once: its line, and that line with the reason (the first time)
    bare: dict[int, str] = {}
    reasoned: dict[int, str] = {}
    for group in _view.label_groups(digest):
        title = words.group_title.format(label=m.text(group.label), count=len(group.prs))
        items = []
        for pr in group.prs:
            first = pr.number not in bare
            if first:
                bare[pr.number] = _label_item(pr, digest, m)
            if first or repeat_reasons:
                if pr.number not in reasoned:
                    reasoned[pr.number] = _with_reason(bare[pr.number], pr, m)
                items.append(reasoned[pr.number])
            else:
                items.append(bare[pr.number])
        sections.append(Section("label", title, tuple(items), level=3, prs=group.prs))
    pending = _view.pending_prs(digest)
    if pending:
        lines = tuple(pr_ref(pr, m) for pr in pending)
        sections.append(Section("pending", words.pending_title, lines, level=1, prs=tuple(pending)))
    return sections


def release_note_sections(digest: Digest, m: Markup) -> list[Section]:
    """A release's notes, ready to paste: a part heading, then one group per change kind (新功能, 修复, …), each
    PR as ``title (#N, @author)``; ``[]`` when the digest is not a release's (``--release``)."""
    groups = release_note_groups(digest)
    if not groups:
        return []
    zh = digest.language == "zh"
    since = digest.previous_release
    title = (f"发布说明（{digest.release}" + (f"，自 {since} 以来" if since else "") + f"，{len(digest.prs)} 个 PR）"
             if zh else f"Release notes ({digest.release}" + (f", since {since}" if since else "")
             + f", {len(digest.prs)} PRs)")
    out = [Section("release_notes", m.text(title), (), level=1)]
    for name, prs in groups:
        items = tuple(f"{m.text(pr.title)} ({pr_number(pr, m)}, @{m.text(pr.author)})" if pr.author
                      else f"{m.text(pr.title)} ({pr_number(pr, m)})" for pr in prs)
        out.append(Section("release_group", m.text(f"{name}（{len(prs)}）" if zh else f"{name} ({len(prs)})"),
                           items, level=3, prs=tuple(prs)))
    return out


def _kept(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(item for item in items if item.strip())


def risk_lines(digest: Digest, m: Markup) -> tuple[str, ...]:
    """``缺少测试覆盖：9 个 PR（#6046、…） — note`` for each risk kind of the roll-up."""
    words = phrases(digest.language)
    lines = []
    for risk in digest.risk_rollup:
        text = words.risk_item.format(
            title=m.text(risk.title),
            n_prs=n_prs(risk.count, digest.language),
            prs=_view.pr_numbers(risk.pr_numbers, digest),
        )
        if risk.note.strip():
            text += f" — {m.text(risk.note)}"
        lines.append(text)
    return tuple(lines)


def trend_lines(digest: Digest, m: Markup) -> tuple[str, ...]:
    """``trainer：18 个 PR（前 4 周平均 9.5，+3.5）、热点文件 a.py（3 个 PR） — note`` for each label trend
    (the change only when the digest has week over week)."""
    words = phrases(digest.language)
    lines = []
    for trend in digest.trends:
        text = words.trend_item.format(label=m.bold(m.text(trend.label)), n_prs=n_prs(trend.count, digest.language))
        change = _weekly.label_change(digest, trend.label)
        if change:
            wp = _weekly.weekly_phrases(digest.language)
            text += f"{wp.open}{m.text(change)}{wp.close}"
        if trend.hot_files:
            files = words.list_sep.join(
                words.hot_file.format(path=m.code(f.path), n_prs=n_prs(f.pr_count, digest.language))
                for f in trend.hot_files
            )
            text += words.list_sep + words.hot_files.format(files=files)
        if trend.note.strip():
            text += f" — {m.text(trend.note)}"
        lines.append(text)
    return tuple(lines)


def _key_pr_entry(pr: DigestPR, digest: Digest, m: Markup) -> str:
    """Three lines: linked title; scores and badges; risks."""
    words = phrases(digest.language)
    badges = _view.pr_badges(pr, digest)
    status = f"{_view.pr_scores(pr, digest)} · {badges}" if pr.analysis is not None else badges
    risks = words.risks_prefix + m.text(_view.risk_titles(pr, digest))
    return f"{m.bold(pr_number(pr, m))} {m.text(pr.title)}{m.br}{m.text(status)}{m.br}{risks}"


def _key_pr_chat_entry(pr: DigestPR, digest: Digest, m: Markup) -> str:
    """Two lines: linked title; the verdict badges (the scores and risks are one press away)."""
    return f"{m.bold(pr_number(pr, m))} {m.text(pr.title)}{m.br}{m.text(_view.pr_badges(pr, digest))}"


def _key_pr_line(pr: DigestPR, digest: Digest, m: Markup) -> str:
    """Linked title, scores and risks; then the key points (the columns of the report's table)."""
    words = phrases(digest.language)
    line = (
        f"{pr_ref(pr, m)} — {m.text(_view.pr_scores(pr, digest))}"
        f" · {words.risks_prefix}{m.text(_view.risk_titles(pr, digest))}"
    )
    if pr.analysis is not None:
        line += m.br + m.text(_view.key_points(pr, digest))
    return line


def _label_item(pr: DigestPR, digest: Digest, m: Markup) -> str:
    """Linked title with level, minutes and source (:func:`_with_reason` adds the reason)."""
    return f"{pr_ref(pr, m)} — {m.italic(m.text(_view.pr_badges(pr, digest)))}"


def _with_reason(line: str, pr: DigestPR, m: Markup) -> str:
    """``line`` (a PR's label item) followed by the reason of its reading advice, when it has one."""
    if pr.analysis is not None and pr.analysis.recommendation.reason.strip():
        line += m.br + m.text(pr.analysis.recommendation.reason)
    return line
