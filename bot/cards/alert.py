"""Alerts: one message per batch of merged PRs that matched a subscriber's filters, on Slack and on Feishu.

A batch of one PR is the detailed card::

    🔔 npu 或 rollout，排除 ci · verl-project/verl     (header: the subscription said back; Feishu: the title)
    #6046 [npu] fix: hccl timeout   (linked)         the PR
    值得精读 · 约 15 分钟 · 重要性 8/10               the verdict (level, minutes, importance)
    理由 …                                           the recommendation's reason, one line
    风险：缺少测试；核心路径变更；另有 2 项             at most :data:`MAX_RISKS` risk titles
    @author · 合并于 04-15 10:03 · 匹配：标签 npu      context: author, merge time, why it matched

A batch of several (everything that arrived within the batch window, or was held through the
quiet hours) is one list, what to read first at the top (close reads, then skims, then skips,
then pending; more important first)::

    🔔 30 个 PR 合并 · verl-project/verl               (several repositories: "… · 2 个仓库")
    04-15 10:03 – 10:41 合并 · 精读 3 个，约 45 分钟；浏览 5 个，约 20 分钟
    *#6046 fix: hccl timeout*  (linked)
    值得精读 · 约 15 分钟 · 重要性 8/10 · 理由：one line of why
    匹配：标签 npu
    …

Both are built from the same parts (:func:`_parts`: header, verdict, risks, context). A PR whose
analysis is pending says 分析结果尚未生成 instead of the verdict. PR text is escaped for each
platform; links are only ``http(s)``. Slack messages stay within :mod:`bot.cards.slack`'s limits
(50 blocks, 3,000-character sections, the per-message text budget) and Feishu cards within
:data:`bot.cards.feishu.PACK_BYTES`: a list too long for one goes on in more messages, which the
deliverer posts in the first one's thread — one message in the conversation per batch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from bot.cards import feishu, slack
from bot.cards.escape import feishu_text, one_line, safe_url, slack_text, split_text, utf16_len
from bot.cards.i18n import chat_phrases, level_name, minutes_text, phrases, status_name
from bot.digest.personal import Budget, reading_order
from bot.digest.window import zone
from bot.models import DigestPR, Language

__all__ = ["MAX_RISKS", "Alert", "AlertBatch", "render_alert_feishu", "render_alert_slack", "render_batch_feishu",
           "render_batch_slack"]

MAX_RISKS = 3
"""Risk titles shown on a one-PR alert; the rest are counted."""
REASON_CHARS = 200
TITLE_CHARS = 150
LIST_TITLE_CHARS = 64
"""A PR's title in a batch list (the link carries the rest)."""
LIST_REASON_CHARS = 80
"""The one line of why in a batch list."""

_WORDS: dict[Language, dict[str, str]] = {
    "zh": {"many": "🔔 {n} 个 PR 合并 · {repo}", "repos": "{n} 个仓库", "span": "{first} – {last} 合并",
           "matched": "匹配：", "budget_close": "精读 {n} 个，约 {m} 分钟", "budget_skim": "浏览 {n} 个，约 {m} 分钟",
           "sep": "；", "continued": "（续 {part}/{total}）"},
    "en": {"many": "🔔 {n} merged PRs · {repo}", "repos": "{n} repositories", "span": "merged {first} – {last}",
           "matched": "Matched: ", "budget_close": "close reads {n}, ~{m} min", "budget_skim": "skims {n}, ~{m} min",
           "sep": "; ", "continued": " (continued {part}/{total})"},
}


@dataclass(frozen=True, slots=True)
class Alert:
    """One PR of an alert: ``pr`` (with its analysis, ``None`` while pending) of ``repo`` matched the
    subscription said back as ``subscription`` (:func:`bot.filters.describe`) because of ``why``
    (:func:`bot.filters.reasons_text`); texts in ``language``, times in ``timezone``."""

    pr: DigestPR
    repo: str
    subscription: str
    why: str
    language: Language
    timezone: str


@dataclass(frozen=True, slots=True)
class AlertBatch:
    """One message to one subscriber: ``alerts`` (at least one) in ``language``, times in ``timezone``."""

    alerts: tuple[Alert, ...]
    language: Language
    timezone: str

    def ordered(self) -> list[Alert]:
        """What to read first: close reads, skims, skips, pending; more important first."""
        return sorted(self.alerts, key=lambda a: reading_order(a.pr))


def _clip(text: str, limit: int) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _verdict(pr: DigestPR, language: Language) -> str:
    analysis = pr.analysis
    if analysis is None:
        return phrases(language).pending_placeholder
    rec = analysis.recommendation
    return " · ".join((level_name(rec.level, language), minutes_text(rec.minutes, language),
                       chat_phrases(language).alert_importance.format(n=analysis.importance)))


def _when(pr: DigestPR, tz: str) -> str:
    return pr.merged_at.astimezone(zone(tz)).strftime("%m-%d %H:%M")


def _parts(alert: Alert) -> tuple[str, str, list[str], str]:
    """``(header, verdict, risk titles (unescaped), context)`` of a one-PR alert, in its language."""
    words = chat_phrases(alert.language)
    pr = alert.pr
    header = f"🔔 {alert.subscription} · {alert.repo}"
    status = status_name(pr.analysis.status if pr.analysis is not None else "pending", alert.language)
    context = f"@{pr.author} · {words.alert_merged.format(when=_when(pr, alert.timezone))} · {status}"
    if alert.why:
        context += f" · {_WORDS[alert.language]['matched']}{alert.why}"
    risks = [r.title for r in pr.analysis.risks] if pr.analysis is not None else []
    return header, _verdict(pr, alert.language), risks, context


def _risk_line(titles: list[str], language: Language, escape: Callable[[str], str]) -> str:
    words = phrases(language)
    if not titles:
        return words.risks_prefix + words.no_risks
    shown = [escape(_clip(t, 80)) for t in titles[:MAX_RISKS]]
    if len(titles) > MAX_RISKS:
        shown.append(chat_phrases(language).alert_more.format(n=len(titles) - MAX_RISKS))
    return words.risks_prefix + words.clause_sep.join(shown)


def _reason(pr: DigestPR, limit: int = REASON_CHARS) -> str:
    analysis = pr.analysis
    return "" if analysis is None else _clip(analysis.recommendation.reason, limit)


def render_alert_slack(alert: Alert) -> dict[str, Any]:
    """One PR's alert as one Block Kit message ``{"text": fallback, "blocks": [...]}`` (3 blocks)."""
    header, verdict, risks, context = _parts(alert)
    pr = alert.pr
    title = slack_text(_clip(pr.title, TITLE_CHARS))
    url = safe_url(pr.url)
    link = f"<{url}|#{pr.number} {title}>" if url else f"#{pr.number} {title}"
    lines = [f"*{link}*", slack_text(verdict)]
    if reason := _reason(pr):
        lines.append(chat_phrases(alert.language).alert_reason + slack_text(reason))
    lines.append(_risk_line(risks, alert.language, slack_text))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _clip(header, slack.HEADER_TEXT), "emoji": True}},
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)[: slack.SECTION_TEXT]}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": slack_text(_clip(context, 300))}]},
    ]
    fallback = f"{header}: #{pr.number} {_clip(pr.title, TITLE_CHARS)} — {verdict}"
    return {"text": slack_text(fallback), "blocks": blocks}


def render_alert_feishu(alert: Alert) -> dict[str, Any]:
    """One PR's alert as one Feishu card (JSON 2.0): markdown elements and a link button to the PR."""
    header, verdict, risks, context = _parts(alert)
    pr = alert.pr
    title = feishu_text(_clip(pr.title, TITLE_CHARS))
    url = safe_url(pr.url)
    lines = [f"**[#{pr.number} {title}]({url})**" if url else f"**#{pr.number} {title}**", feishu_text(verdict)]
    if reason := _reason(pr):
        lines.append(chat_phrases(alert.language).alert_reason + feishu_text(reason))
    lines.append(_risk_line(risks, alert.language, feishu_text))
    elements: list[dict[str, Any]] = [
        {"tag": "markdown", "content": "\n".join(lines)},
        {"tag": "markdown", "content": feishu_text(_clip(context, 400)), "text_size": "notation"},
    ]
    if url:
        elements.append({"tag": "button", "type": "default",
                         "text": {"tag": "plain_text", "content": chat_phrases(alert.language).alert_open},
                         "behaviors": [{"type": "open_url", "default_url": url}]})
    template = "grey" if pr.analysis is None else {"close_read": "green", "skim": "blue", "skip": "grey"}[
        pr.analysis.recommendation.level]
    return {"schema": "2.0", "config": {"update_multi": True, "width_mode": "fill",
                                        "summary": {"content": _clip(header, 100)}},
            "header": {"title": {"tag": "plain_text", "content": _clip(header, 100)}, "template": template},
            "body": {"elements": elements}}


# -- a batch of several PRs --------------------------------------------------------------------------------


def _title(batch: AlertBatch) -> str:
    words = _WORDS[batch.language]
    repos = list(dict.fromkeys(a.repo for a in batch.alerts))
    where = repos[0] if len(repos) == 1 else words["repos"].format(n=len(repos))
    return words["many"].format(n=len(batch.alerts), repo=where)


def _summary(batch: AlertBatch) -> str:
    """``04-15 10:03 – 10:41 合并 · 精读 3 个，约 45 分钟；浏览 5 个，约 20 分钟`` (unescaped)."""
    words = _WORDS[batch.language]
    times = sorted(a.pr.merged_at for a in batch.alerts)
    tz = zone(batch.timezone)
    first, last = times[0].astimezone(tz), times[-1].astimezone(tz)
    span = words["span"].format(first=first.strftime("%m-%d %H:%M"),
                                last=last.strftime("%H:%M" if first.date() == last.date() else "%m-%d %H:%M"))
    budget = Budget()
    for alert in batch.alerts:
        analysis = alert.pr.analysis
        if analysis is not None and analysis.recommendation.level == "close_read":
            budget = budget.model_copy(update={"close_reads": budget.close_reads + 1, "close_read_minutes":
                                               budget.close_read_minutes + analysis.recommendation.minutes})
        elif analysis is not None and analysis.recommendation.level == "skim":
            budget = budget.model_copy(update={"skims": budget.skims + 1,
                                               "skim_minutes": budget.skim_minutes + analysis.recommendation.minutes})
    parts = [words["budget_close"].format(n=budget.close_reads, m=budget.close_read_minutes)] if budget.close_reads \
        else []
    if budget.skims:
        parts.append(words["budget_skim"].format(n=budget.skims, m=budget.skim_minutes))
    return " · ".join([span, words["sep"].join(parts)] if parts else [span])


def _entry(alert: Alert, *, link: Callable[[str, str], str], escape: Callable[[str], str], several_repos: bool) -> str:
    """One PR of a batch list: the linked title, the verdict with one line of why, what it matched."""
    pr = alert.pr
    words = _WORDS[alert.language]
    name = f"{alert.repo}#{pr.number}" if several_repos else f"#{pr.number}"
    label = escape(f"{name} {_clip(pr.title, LIST_TITLE_CHARS)}")
    url = safe_url(pr.url)
    head = link(url, label) if url else label
    verdict = escape(_verdict(pr, alert.language))
    if reason := _reason(pr, LIST_REASON_CHARS):
        verdict += " · " + chat_phrases(alert.language).alert_reason + escape(reason)
    lines = [head, verdict]
    if alert.why:
        lines.append(escape(words["matched"] + _clip(alert.why, 120)))
    return "\n".join(lines)


def _several_repos(batch: AlertBatch) -> bool:
    return len({a.repo.lower() for a in batch.alerts}) > 1


def render_batch_slack(batch: AlertBatch) -> list[dict[str, Any]]:
    """The batch as Block Kit messages: one for a single PR (:func:`render_alert_slack`), else the list —
    in one message when it fits, the rest continued in messages meant for its thread."""
    if len(batch.alerts) == 1:
        return [render_alert_slack(batch.alerts[0])]
    title = _title(batch)
    several = _several_repos(batch)
    entries = [_entry(a, link=lambda url, label: f"*<{url}|{label}>*", escape=slack_text, several_repos=several)
               for a in batch.ordered()]
    head: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _clip(title, slack.HEADER_TEXT), "emoji": True}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": slack_text(_clip(_summary(batch), 300))}]},
    ]
    sections: list[dict[str, Any]] = []
    for text in _grouped(entries, slack.SECTION_TEXT, utf16_len):
        sections.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    label = _WORDS[batch.language]["continued"]
    messages = slack._pack(cast("list[slack.Block]", sections),  # the same budgets as the digest's messages
                           reserved=cast("list[slack.Block]", head))
    out = []
    for part, blocks in enumerate(messages, 1):
        top = head if part == 1 else [{"type": "context", "elements": [
            {"type": "mrkdwn", "text": slack_text(title + label.format(part=part, total=len(messages)))}]}]
        out.append({"text": slack_text(_clip(f"{title} — {one_line(_summary(batch))}", 300)),
                    "blocks": [*top, *cast("list[dict[str, Any]]", blocks)]})
    return out


def render_batch_feishu(batch: AlertBatch, *, card_bytes: int = feishu.PACK_BYTES) -> list[dict[str, Any]]:
    """The batch as Feishu cards: one for a single PR (:func:`render_alert_feishu`), else the list — in one
    card when it fits (``card_bytes`` of elements: a webhook takes smaller cards), the rest continued in
    cards meant for its thread."""
    if len(batch.alerts) == 1:
        return [render_alert_feishu(batch.alerts[0])]
    title = _title(batch)
    several = _several_repos(batch)
    entries = [_entry(a, link=lambda url, label: f"**[{label}]({url})**", escape=feishu_text, several_repos=several)
               for a in batch.ordered()]
    elements: list[dict[str, Any]] = [
        {"tag": "markdown", "content": feishu_text(_summary(batch)), "text_size": "notation"}]
    elements += [{"tag": "markdown", "content": text} for text in _grouped(entries, feishu.ELEMENT_TEXT, len)]
    groups: list[list[dict[str, Any]]] = [[]]
    used = 0
    for element in elements:
        size = len(json.dumps(element, ensure_ascii=False).encode()) + 2
        if groups[-1] and (len(groups[-1]) >= feishu.MAX_ELEMENTS or used + size > card_bytes):
            groups.append([])
            used = 0
        groups[-1].append(element)
        used += size
    label = _WORDS[batch.language]["continued"]
    cards = []
    for part, group in enumerate(groups, 1):
        name = title if part == 1 else title + label.format(part=part, total=len(groups))
        cards.append({"schema": "2.0", "config": {"update_multi": True, "width_mode": "fill",
                                                  "summary": {"content": _clip(name, 100)}},
                      "header": {"title": {"tag": "plain_text", "content": _clip(name, 100)},
                                 "template": "blue" if part == 1 else "wathet"},
                      "body": {"elements": group}})
    return cards


def _grouped(entries: list[str], limit: int, measure: Callable[[str], int]) -> list[str]:
    """``entries`` joined by blank lines into texts of at most ``limit`` (an entry longer than that is split)."""
    out: list[str] = []
    current = ""
    for entry in entries:
        for piece in split_text(entry, limit, measure=measure) if measure(entry) > limit else [entry]:
            joined = f"{current}\n\n{piece}" if current else piece
            if current and measure(joined) > limit:
                out.append(current)
                current = piece
            else:
                current = joined
    if current:
        out.append(current)
    return out
