"""The personal weekly digest ("my area this week") as Markdown, Slack Block Kit and Feishu cards.

Layout, the same on every platform::

    我的周报 · 2026 第 16 周 · 04-13 至 04-19              title (Slack header, Feishu card title)
    verl-project/verl · 订阅：路径 verl/trainer/**，排除 ci  repository and the filter, said back
    本周阅读预算：精读 3 个，约 45 分钟；浏览 5 个，约 20 分钟   the budget (skips and pending when any)
    1. #5951 flowgrpo trainer (linked)                      each matching PR, in reading order:
       值得精读 · 约 47 分钟 · 重要性 10/10                   verdict, minutes, importance
       理由：…                                              the recommendation's reason, one line
       匹配：路径 verl/trainer/**（verl/trainer/…）            why it matched
    本周另有 30 个 PR 合并（npu 12、rollout 10、ci 8）。     one line for everything else

PR text is escaped per platform (:mod:`bot.cards.escape`). Slack: messages within the limits of
:mod:`bot.cards.slack` (50 blocks, section text, the per-message text budget), each PR its own
section with an "analyze this PR" button; Feishu: JSON 2.0 cards under
:data:`bot.cards.feishu.CARD_BYTES`. Long lists go on in more messages / cards titled
"（续 2/3）"; nothing is dropped.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from bot.cards import feishu, slack
from bot.cards._outline import FEISHU, MARKDOWN, SLACK, Markup
from bot.cards.actions import ACTION_ANALYZE_PR
from bot.cards.escape import md_line, one_line, safe_url, slack_text, split_text, utf16_len
from bot.cards.i18n import level_name, minutes_text, n_prs, phrases, window_days
from bot.digest.personal import Budget, PersonalDigest, PersonalPR
from bot.filters import Filter, describe, reasons_text
from bot.models import Language

__all__ = ["budget_line", "personal_title", "render_personal_feishu", "render_personal_markdown",
           "render_personal_slack"]

REASON_CHARS = 200
_MARKDOWN = dataclasses.replace(MARKDOWN, br="  \n   ")
"""Markdown with hard line breaks inside a numbered entry (the lines stay in the list item)."""
_WEEK = re.compile(r"^(?P<year>\d{4})-W(?P<week>\d{2})$")

_WORDS: dict[Language, dict[str, str]] = {
    "zh": {"week": "我的周报 · {year} 第 {week} 周 · {first} 至 {last}", "range": "我的周报 · {first} 至 {last}",
           "filter": "订阅：{filter}", "budget": "本周阅读预算：{parts}", "close": "精读 {n} 个，约 {m} 分钟",
           "skim": "浏览 {n} 个，约 {m} 分钟", "skip": "可跳过 {n} 个", "pending": "分析尚未完成 {n} 个",
           "parts_sep": "；", "filters_sep": "；", "none": "本周没有符合你订阅的 PR。", "why": "匹配：",
           "reason": "理由：",
           "importance": "重要性 {n}/10", "others": "本周另有 {n_prs}合并（{labels}）。",
           "others_plain": "本周另有 {n_prs}合并。", "label": "{label} {count}",
           "continued": "（续 {part}/{total}）"},
    "en": {"week": "My digest · {year} week {week} · {first} – {last}", "range": "My digest · {first} – {last}",
           "filter": "Subscribed: {filter}", "budget": "Reading budget this week: {parts}",
           "close": "close reads {n}, ~{m} minutes", "skim": "skims {n}, ~{m} minutes", "skip": "skips {n}",
           "pending": "pending {n}", "parts_sep": "; ", "filters_sep": "; ",
           "none": "No PR this week matches your subscription.",
           "why": "Matched: ", "reason": "Why: ", "importance": "importance {n}/10",
           "others": "Also merged this week: {n_prs} ({labels}).", "others_plain": "Also merged this week: {n_prs}.",
           "label": "{label} {count}", "continued": " (continued {part}/{total})"},
}


def personal_title(pd: PersonalDigest) -> str:
    """``我的周报 · 2026 第 16 周 · 04-13 至 04-19`` / ``My digest · 2026 week 16 · Apr 13 – Apr 19``."""
    w = _WORDS[pd.language]
    first, last = window_days(pd.window)
    pattern = phrases(pd.language).short_date if first.year == last.year else "%Y-%m-%d"
    first_text, last_text = first.strftime(pattern), last.strftime(pattern)
    week = _WEEK.match(pd.window.name)
    if week:
        return w["week"].format(year=week["year"], week=int(week["week"]), first=first_text, last=last_text)
    return w["range"].format(first=first_text, last=last_text)


def budget_line(budget: Budget, language: Language) -> str:
    """``本周阅读预算：精读 3 个，约 45 分钟；浏览 5 个，约 20 分钟`` (skips and pending added when any)."""
    w = _WORDS[language]
    parts = [w["close"].format(n=budget.close_reads, m=budget.close_read_minutes),
             w["skim"].format(n=budget.skims, m=budget.skim_minutes)]
    if budget.skips:
        parts.append(w["skip"].format(n=budget.skips))
    if budget.pending:
        parts.append(w["pending"].format(n=budget.pending))
    return w["budget"].format(parts=w["parts_sep"].join(parts))


def _others_line(pd: PersonalDigest) -> str:
    w = _WORDS[pd.language]
    if not pd.others:
        return ""
    count = n_prs(pd.others, pd.language) + (" " if pd.language == "zh" else "")
    labels = phrases(pd.language).list_sep.join(w["label"].format(label=x.label, count=x.count)
                                               for x in pd.other_labels)
    return (w["others"] if labels else w["others_plain"]).format(n_prs=count, labels=labels)


def _head_lines(pd: PersonalDigest) -> list[str]:
    """Unescaped: the repository and filter line, the budget line."""
    w = _WORDS[pd.language]
    said = w["filters_sep"].join(describe(f, pd.language) for f in pd.filters) or describe(Filter(), pd.language)
    return [f"{pd.repo} · " + w["filter"].format(filter=said),
            budget_line(pd.budget, pd.language) if pd.prs else w["none"]]


def _clip(text: str, limit: int) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _entry(item: PersonalPR, index: int, language: Language, markup: Markup) -> str:
    """One PR as a list entry in ``markup`` (escaped)."""
    w = _WORDS[language]
    pr = item.pr
    label = markup.text(f"#{pr.number} {pr.title}")
    url = safe_url(pr.url)
    head = markup.bold(markup.link(url, label) if url else label)
    lines = [f"{index}. {head}"]
    analysis = pr.analysis
    if analysis is None:
        lines.append(markup.text(phrases(language).pending_placeholder))
    else:
        rec = analysis.recommendation
        lines.append(markup.text(" · ".join((level_name(rec.level, language), minutes_text(rec.minutes, language),
                                             w["importance"].format(n=analysis.importance)))))
        if rec.reason.strip():
            lines.append(markup.text(w["reason"] + _clip(rec.reason, REASON_CHARS)))
    lines.append(markup.text(w["why"] + reasons_text(item.reasons, language)))
    return markup.br.join(lines)


def render_personal_markdown(pd: PersonalDigest) -> str:
    """The personal digest as one Markdown document (never cut), ending with a newline."""
    parts = [f"# {md_line(personal_title(pd))}", *(md_line(line) for line in _head_lines(pd))]
    parts += [_entry(item, i, pd.language, _MARKDOWN) for i, item in enumerate(pd.prs, 1)]
    if others := _others_line(pd):
        parts.append(md_line(others))
    return "\n\n".join(parts) + "\n"


def _continued(title: str, language: Language, part: int, total: int) -> str:
    return title + _WORDS[language]["continued"].format(part=part, total=total)


def render_personal_slack(pd: PersonalDigest) -> list[dict[str, Any]]:
    """The personal digest as Slack messages ``{"text", "blocks"}``: send the first, the rest in its thread."""
    title = personal_title(pd)
    head: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": title[: slack.HEADER_TEXT], "emoji": True}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": slack_text(_head_lines(pd)[0])}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": slack_text(_head_lines(pd)[1])}},
    ]
    body: list[dict[str, Any]] = []
    words = phrases(pd.language)
    for i, item in enumerate(pd.prs, 1):
        chunks = split_text(_entry(item, i, pd.language, SLACK), slack.SECTION_TEXT, measure=utf16_len,
                            atomic=SLACK.atomic)
        for n, chunk in enumerate(chunks):
            block: dict[str, Any] = {"type": "section", "text": {"type": "mrkdwn", "text": chunk}}
            if n == 0:
                block["accessory"] = {"type": "button", "action_id": ACTION_ANALYZE_PR,
                                      "text": {"type": "plain_text", "text": words.analyze_button},
                                      "value": f"{pd.repo}#{item.pr.number}"}
            body.append(block)
    if others := _others_line(pd):
        body.append({"type": "context", "elements": [{"type": "mrkdwn", "text": slack_text(others)}]})
    label_room = _continued(title, pd.language, 99, 99)
    messages = _pack_slack(body, first=head, reserved_later=1 + len(label_room))
    total = len(messages)
    out = [{"text": slack_text(f"{title} — {_head_lines(pd)[1]}"), "blocks": messages[0]}]
    for part, blocks in enumerate(messages[1:], 2):
        label = slack_text(_continued(title, pd.language, part, total))
        out.append({"text": label, "blocks": [{"type": "context", "elements": [{"type": "mrkdwn", "text": label}]},
                                              *blocks]})
    return out


def _slack_chars(block: dict[str, Any]) -> int:
    total = 0
    stack: list[Any] = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    total += utf16_len(value)
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return total


def _pack_slack(blocks: list[dict[str, Any]], *, first: list[dict[str, Any]],
                reserved_later: int) -> list[list[dict[str, Any]]]:
    """``first`` then ``blocks`` in messages of at most ``MAX_BLOCKS`` blocks and ``MESSAGE_TEXT_BUDGET``
    characters; later messages keep one block and ``reserved_later`` characters for their label."""
    messages: list[list[dict[str, Any]]] = [list(first)]
    used = sum(_slack_chars(b) for b in first)
    room_blocks, room_chars = slack.MAX_BLOCKS, slack.MESSAGE_TEXT_BUDGET
    for block in blocks:
        size = _slack_chars(block)
        if len(messages[-1]) >= room_blocks or used + size > room_chars:
            messages.append([])
            used = 0
            room_blocks, room_chars = slack.MAX_BLOCKS - 1, slack.MESSAGE_TEXT_BUDGET - reserved_later
        messages[-1].append(block)
        used += size
    return messages


def render_personal_feishu(pd: PersonalDigest) -> list[dict[str, Any]]:
    """The personal digest as Feishu JSON 2.0 cards (each under ``CARD_BYTES``); send them in order."""
    title = personal_title(pd)
    meta, budget = (FEISHU.text(line) for line in _head_lines(pd))
    elements: list[dict[str, Any]] = [{"tag": "markdown", "content": meta, "text_size": "notation"},
                                      {"tag": "markdown", "content": FEISHU.bold(budget)}]
    for i, item in enumerate(pd.prs, 1):
        if i == 1:
            elements.append({"tag": "hr"})
        for chunk in split_text(_entry(item, i, pd.language, FEISHU), feishu.ELEMENT_TEXT, atomic=FEISHU.atomic):
            elements.append({"tag": "markdown", "content": chunk})
    if others := _others_line(pd):
        elements += [{"tag": "hr"}, {"tag": "markdown", "content": FEISHU.text(others), "text_size": "notation"}]
    groups = _pack_feishu(elements)
    total = len(groups)
    cards = []
    for part, group in enumerate(groups, 1):
        label = title if part == 1 else _continued(title, pd.language, part, total)
        while group and group[0]["tag"] == "hr":
            group = group[1:]
        cards.append({"schema": "2.0",
                      "config": {"update_multi": True, "width_mode": "fill", "summary": {"content": label}},
                      "header": {"title": {"tag": "plain_text", "content": label},
                                 "template": "blue" if part == 1 else "wathet"},
                      "body": {"elements": group}})
    return cards


def _pack_feishu(elements: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    cards: list[list[dict[str, Any]]] = [[]]
    used = 0
    for element in elements:
        size = len(json.dumps(element, ensure_ascii=False).encode()) + 2
        if cards[-1] and (len(cards[-1]) >= feishu.MAX_ELEMENTS or used + size > feishu.PACK_BYTES):
            cards.append([])
            used = 0
        cards[-1].append(element)
        used += size
    return cards
