"""The full digest as one Markdown document (the report behind "完整报告").

Layout, after the reference weekly report::

    # <title>
    <headline>
    <meta line>
    <analysis sources: how many PRs the LLM / the heuristic analysed, pending>
    ## 本周亮点            highlights
    ## 风险观察            risk roll-up: title, count, every PR number, note
    ## 周环比              week over week (only when the digest compares earlier windows)
    ## 完整周报
    ### 1. 执行摘要 … ### 6. 后续建议   (5. is a table of ALL key PRs by importance)
    ## 标签视图            per label: each PR with level, minutes, source and reason
    ### <label>（n）
    ## 分析尚未完成的 PR    only when some analysis is pending

Text from PRs cannot open raw HTML, a code block, a heading or a quote, and
table cells are single lines with ``|`` escaped (:mod:`bot.cards.escape`). An
empty digest renders a short report saying nothing was merged.
"""

from __future__ import annotations

from bot.cards import _view
from bot.cards._outline import MARKDOWN, Section, card_outline, pr_number, report_outline
from bot.cards.escape import md_cell, md_line
from bot.cards.i18n import analysis_line, digest_title, meta_line, phrases
from bot.models import Digest

_HEADING = {1: "##", 2: "###", 3: "###"}


def render_markdown(digest: Digest) -> str:
    """Render ``digest`` as a Markdown report in ``digest.language``.

    Args:
        digest: the digest to render; not modified.

    Returns:
        The report, ending with one newline. Sections appear in the fixed order
        of the module docstring; a section without items says so.
    """
    words = phrases(digest.language)
    card = {section.key: section for section in card_outline(digest, MARKDOWN)}
    if not digest.prs:  # the headline would say the same again
        return "\n\n".join([f"# {digest_title(digest)}", md_line(meta_line(digest)), words.empty_report]) + "\n"
    parts = [f"# {digest_title(digest)}", *card["headline"].items, md_line(meta_line(digest))]
    parts.append(md_line(analysis_line(digest)))
    top = [card["highlights"], card["risks"]]
    if "week_over_week" in card:
        top.append(card["week_over_week"])
    sections = [*top, *report_outline(digest, MARKDOWN, repeat_reasons=True)]
    for section in sections:
        level = 1 if section in top else section.level
        parts.append(f"{_HEADING[level]} {section.title}")
        if section.key == "key_pr_table":
            parts.append(_key_pr_table(digest) or section.empty)
        elif section.items or section.level > 1:
            parts.append(_body(section) or section.empty or words.nothing)
    return "\n\n".join(parts) + "\n"


def _body(section: Section) -> str:
    if section.style == "paragraphs":
        return "\n\n".join(section.items)
    if section.style == "numbered":
        return "\n".join(f"{i}. {item}" for i, item in enumerate(section.items, 1))
    return "\n".join(f"- {item}" for item in section.items)


def _key_pr_table(digest: Digest) -> str:
    """All key PRs by importance: PR (linked) | title | key points | risks; ``""`` when there is none."""
    words = phrases(digest.language)
    prs = _view.key_prs(digest)
    if not prs:
        return ""
    rows = ["| " + " | ".join(words.table_header) + " |", "|---|---|---|---|"]
    for pr in prs:
        cells = (
            pr_number(pr, MARKDOWN),
            md_cell(pr.title),
            md_cell(_view.key_points(pr, digest)),
            md_cell(_view.risk_titles(pr, digest)),
        )
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
