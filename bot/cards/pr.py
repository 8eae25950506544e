"""One PR's analysis — the answer to "PR #6046 值得读吗" — as Markdown, one Slack message and one Feishu card.

All three draw the outline of :mod:`bot.cards._pr_outline` in the same order:
the verdict first (值得精读 / 建议浏览 / 可跳过, minutes, scores and the
reason), then what the PR does, its risks with evidence, where to start
reading, key points, labels, and who wrote the analysis with its coverage
(LLM or heuristic, the fallback reason if the model failed). A PR whose
analysis is pending (``DigestPR.analysis is None``) says 分析结果尚未生成.

* :func:`render_pr_markdown` — the whole answer, never shortened.
* :func:`render_pr_slack` — ``{"text": fallback, "blocks": [...]}``: a header,
  then sections (each ≤ 3000 UTF-16 units; a long part is split into several
  sections). The message stays within :data:`bot.cards.slack.MAX_BLOCKS`
  blocks and :data:`bot.cards.slack.MESSAGE_TEXT_BUDGET` characters of text.
* :func:`render_pr_feishu` — one card JSON 2.0 with markdown elements (each ≤
  :data:`bot.cards.feishu.ELEMENT_TEXT` characters), under
  :data:`bot.cards.feishu.PACK_BYTES` UTF-8 bytes and
  :data:`bot.cards.feishu.MAX_ELEMENTS` elements.

In chat (Slack and Feishu) the answer is read in one screen: what the PR does, the verdict and why, its risks by
title, where to start as file paths (at most three), its labels — at most :data:`CHAT_TEXT` characters of text; the
key points and the analysis notes (who wrote it, coverage) stay in the Markdown answer.

When the whole analysis does not fit one message or card (very long LLM texts,
hundreds of evidence files), the chat renderers show it with ever tighter
:data:`~bot.cards._pr_outline.STEPS` — texts end in ``…``, lists in "另有 N 项",
and a note says the answer was shortened and where the full one is. Nothing
is cut silently. PR text is escaped as in the digest cards
(:mod:`bot.cards.escape`): no live ``<!channel>``, ``<@U…>``, ``<at>`` or tag.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, TypeVar

from bot.cards import feishu, slack
from bot.cards._outline import FEISHU, MARKDOWN, SLACK, Markup, Section
from bot.cards._pr_outline import FULL, STEPS, Limits, pr_outline, title
from bot.cards.escape import md_line, one_line, slack_text, split_text, utf16_len
from bot.models import DigestPR, Language

FALLBACK_TITLE = 200
CHAT_TEXT = 1200
"""Characters of text a PR answer in chat holds at most: one screen (the limits tighten until it fits)."""
"""The Slack fallback ``text`` quotes at most this many characters of the PR title."""

_MD = replace(MARKDOWN, text=md_line)
"""Markdown markup whose one-line texts also cannot open a heading, quote or code block."""

_TEMPLATES: dict[str, Literal["green", "blue", "grey"]] = {"close_read": "green", "skim": "blue", "skip": "grey"}
"""Feishu header colour by recommendation level (grey also for a pending PR)."""

_Out = TypeVar("_Out")


def render_pr_markdown(pr: DigestPR, *, repo: str, language: Language, timezone: str = "UTC") -> str:
    """Render the analysis of ``pr`` as a Markdown answer.

    Args:
        pr: the PR with its labels and analysis (``None`` while pending).
        repo: ``owner/name`` of the PR's repository.
        language: ``zh`` or ``en`` for our words; the analysis texts appear as written.
        timezone: IANA zone the merge time is printed in.

    Returns:
        ``# PR #6046 · 值得精读`` followed by ``##`` sections in the module's
        order, ending with one newline; nothing is shortened.
    """
    parts = [f"# {title(pr, language)}"]
    for section in pr_outline(pr, repo=repo, language=language, timezone=timezone, m=_MD):
        if section.title:
            parts.append(f"## {section.title}")
        parts.append(_body(section, bullet="-"))
    return "\n\n".join(parts) + "\n"


def render_pr_slack(pr: DigestPR, *, repo: str, language: Language, timezone: str = "UTC") -> dict[str, Any]:
    """Render the analysis of ``pr`` as one Slack Block Kit message.

    Args: as :func:`render_pr_markdown`.

    Returns:
        ``{"text": fallback, "blocks": [...]}`` for ``chat.postMessage``: a
        header (``PR #6046 · 值得精读``) and section blocks. ``text`` is
        ``PR #6046 · 值得精读 — <title>`` (escaped, never empty). Within every
        limit listed in the module docstring; shortened visibly if needed.
    """

    def build(limits: Limits) -> dict[str, Any]:
        blocks: list[slack.Block] = [_slack_header(title(pr, language))]
        for section in pr_outline(pr, repo=repo, language=language, timezone=timezone, m=SLACK, limits=limits,
                                  chat=True):
            blocks += _slack_sections(_heading_and_body(section, SLACK, bullet="•"))
        return {"text": _fallback(pr, language), "blocks": blocks}

    def fits(message: dict[str, Any]) -> bool:
        blocks = message["blocks"]
        return (len(blocks) <= slack.MAX_BLOCKS and _slack_chars(blocks) <= slack.MESSAGE_TEXT_BUDGET
                and _slack_chars(blocks) <= CHAT_TEXT)

    return _first_fit(build, fits)


def render_pr_feishu(pr: DigestPR, *, repo: str, language: Language, timezone: str = "UTC") -> dict[str, Any]:
    """Render the analysis of ``pr`` as one Feishu card (JSON 2.0).

    Args: as :func:`render_pr_markdown`.

    Returns:
        ``{"schema": "2.0", "config": …, "header": {"title": …, "template": …},
        "body": {"elements": [markdown, hr, …]}}``; the header colour is green
        for 值得精读, blue for 建议浏览, grey for 可跳过 and pending. Within
        every limit listed in the module docstring; shortened visibly if needed.
    """
    head = title(pr, language)
    level = pr.analysis.recommendation.level if pr.analysis is not None else "skip"

    def build(limits: Limits) -> dict[str, Any]:
        elements: list[feishu.Element] = []
        for section in pr_outline(pr, repo=repo, language=language, timezone=timezone, m=FEISHU, limits=limits,
                                  chat=True):
            if section.key in ("verdict", "analysis"):
                elements.append(feishu.Element(tag="hr"))
            text = _heading_and_body(section, FEISHU, bullet="-", gap="\n\n")
            elements += [feishu.Element(tag="markdown", content=chunk)
                         for chunk in split_text(text, feishu.ELEMENT_TEXT, atomic=FEISHU.atomic)]
        return {
            "schema": "2.0",
            "config": {"update_multi": True, "width_mode": "fill", "summary": {"content": head}},
            "header": {"title": {"tag": "plain_text", "content": head}, "template": _TEMPLATES[level]},
            "body": {"elements": elements},
        }

    def fits(card: dict[str, Any]) -> bool:
        return (len(card["body"]["elements"]) <= feishu.MAX_ELEMENTS
                and feishu.card_bytes(card) <= feishu.PACK_BYTES
                and sum(len(e.get("content", "")) for e in card["body"]["elements"]) <= CHAT_TEXT)

    return _first_fit(build, fits)


def _first_fit(build: Callable[[Limits], _Out], fits: Callable[[_Out], bool]) -> _Out:
    """``build(limits)`` for the first of :data:`STEPS` whose output ``fits`` (else the tightest)."""
    out = build(FULL)
    for limits in STEPS[1:]:
        if fits(out):
            return out
        out = build(limits)
    return out


def _body(section: Section, *, bullet: str) -> str:
    """The items of ``section`` in its style (paragraphs, bullets or a numbered list)."""
    if section.style == "paragraphs":
        return "\n\n".join(section.items)
    if section.style == "numbered":
        return "\n".join(f"{i}. {item}" for i, item in enumerate(section.items, 1))
    return "\n".join(f"{bullet} {item}" for item in section.items)


def _heading_and_body(section: Section, m: Markup, *, bullet: str, gap: str = "\n") -> str:
    """Bold title above the body; the body alone for an untitled section."""
    body = _body(section, bullet=bullet)
    return f"{m.bold(section.title)}{gap}{body}" if section.title else body


def _slack_header(text: str) -> slack.Block:
    return slack.Block(type="header", text=slack.TextObject(type="plain_text", text=text[: slack.HEADER_TEXT]))


def _slack_sections(text: str) -> list[slack.Block]:
    """``text`` (mrkdwn) as section blocks of at most ``SECTION_TEXT`` UTF-16 units each."""
    chunks = split_text(text, slack.SECTION_TEXT, measure=utf16_len, atomic=SLACK.atomic)
    return [slack.Block(type="section", text=slack.TextObject(type="mrkdwn", text=chunk)) for chunk in chunks]


def _slack_chars(node: object) -> int:
    """UTF-16 length of every ``text`` string inside ``node`` (what Slack's total-size check counts)."""
    if isinstance(node, dict):
        return sum(utf16_len(v) if k == "text" and isinstance(v, str) else _slack_chars(v) for k, v in node.items())
    if isinstance(node, list):
        return sum(_slack_chars(item) for item in node)
    return 0


def _fallback(pr: DigestPR, language: Language) -> str:
    """Notification text: ``PR #6046 · 值得精读 — <title>`` (title one line, escaped, clipped)."""
    name = one_line(pr.title)
    if len(name) > FALLBACK_TITLE:
        name = split_text(name, FALLBACK_TITLE)[0] + "…"
    head = title(pr, language)
    return f"{head} — {slack_text(name)}" if name else head
