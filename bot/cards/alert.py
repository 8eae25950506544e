"""A label alert: one short card for one merged PR, as a Slack message and as a Feishu card.

What a subscriber sees when a PR carrying a label they follow is merged::

    🔔 npu · verl-project/verl                       (header; Feishu: the card title)
    #6046 [npu] fix: hccl timeout   (linked)         the PR
    值得精读 · 约 15 分钟 · 重要性 8/10               the verdict (level, minutes, importance)
    理由 …                                           the recommendation's reason, one line
    风险：缺少测试；核心路径变更；另有 2 项             at most :data:`MAX_RISKS` risk titles
    @author · 合并于 04-15 10:03 · 启发式分析           context

A PR whose analysis is pending says 分析结果尚未生成 instead of the verdict. Text from
the PR (title, reason, risk titles) is escaped for each platform; links are only
``http(s)``. The Slack message has a non-empty fallback ``text`` and a handful of blocks;
the Feishu card is card JSON 2.0 with one ``open_url`` button (webhooks cannot call back).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.cards.escape import feishu_text, one_line, safe_url, slack_text
from bot.cards.i18n import chat_phrases, level_name, minutes_text, phrases, status_name
from bot.digest.window import zone
from bot.models import DigestPR, Language

__all__ = ["MAX_RISKS", "Alert", "render_alert_feishu", "render_alert_slack"]

MAX_RISKS = 3
"""Risk titles shown on an alert; the rest are counted."""
REASON_CHARS = 200
TITLE_CHARS = 150


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert: ``pr`` (with its analysis, ``None`` while pending) of ``repo`` matched the
    subscribed ``labels`` (canonical, lower case); texts in ``language``, times in ``timezone``."""

    pr: DigestPR
    repo: str
    labels: tuple[str, ...]
    language: Language
    timezone: str


def _clip(text: str, limit: int) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _parts(alert: Alert) -> tuple[str, str, list[str], str]:
    """``(header, verdict, risk titles (unescaped), context)`` in the alert's language."""
    words = chat_phrases(alert.language)
    pr = alert.pr
    header = f"🔔 {', '.join(alert.labels)} · {alert.repo}"
    when = pr.merged_at.astimezone(zone(alert.timezone)).strftime("%m-%d %H:%M")
    analysis = pr.analysis
    if analysis is None:
        verdict = phrases(alert.language).pending_placeholder
        context = f"@{pr.author} · {words.alert_merged.format(when=when)} · {status_name('pending', alert.language)}"
        return header, verdict, [], context
    rec = analysis.recommendation
    verdict = " · ".join((level_name(rec.level, alert.language), minutes_text(rec.minutes, alert.language),
                          words.alert_importance.format(n=analysis.importance)))
    context = f"@{pr.author} · {words.alert_merged.format(when=when)} · {status_name(analysis.status, alert.language)}"
    return header, verdict, [r.title for r in analysis.risks], context


def _risk_line(titles: list[str], language: Language, escape: Any) -> str:
    words = phrases(language)
    if not titles:
        return words.risks_prefix + words.no_risks
    shown = [escape(_clip(t, 80)) for t in titles[:MAX_RISKS]]
    if len(titles) > MAX_RISKS:
        shown.append(chat_phrases(language).alert_more.format(n=len(titles) - MAX_RISKS))
    return words.risks_prefix + words.clause_sep.join(shown)


def _reason(alert: Alert) -> str:
    analysis = alert.pr.analysis
    return "" if analysis is None else _clip(analysis.recommendation.reason, REASON_CHARS)


def render_alert_slack(alert: Alert) -> dict[str, Any]:
    """The alert as one Block Kit message ``{"text": fallback, "blocks": [...]}`` (5 blocks at most)."""
    header, verdict, risks, context = _parts(alert)
    pr = alert.pr
    title = slack_text(_clip(pr.title, TITLE_CHARS))
    url = safe_url(pr.url)
    link = f"<{url}|#{pr.number} {title}>" if url else f"#{pr.number} {title}"
    lines = [f"*{link}*", slack_text(verdict)]
    reason = _reason(alert)
    if reason:
        lines.append(chat_phrases(alert.language).alert_reason + slack_text(reason))
    lines.append(_risk_line(risks, alert.language, slack_text))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _clip(header, 150), "emoji": True}},
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)[:3000]}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": slack_text(_clip(context, 300))}]},
    ]
    fallback = f"{header}: #{pr.number} {_clip(pr.title, TITLE_CHARS)} — {verdict}"
    return {"text": slack_text(fallback), "blocks": blocks}


def render_alert_feishu(alert: Alert) -> dict[str, Any]:
    """The alert as one Feishu card (JSON 2.0): markdown elements and a link button to the PR."""
    header, verdict, risks, context = _parts(alert)
    pr = alert.pr
    title = feishu_text(_clip(pr.title, TITLE_CHARS))
    url = safe_url(pr.url)
    lines = [f"**[#{pr.number} {title}]({url})**" if url else f"**#{pr.number} {title}**", feishu_text(verdict)]
    reason = _reason(alert)
    if reason:
        lines.append(chat_phrases(alert.language).alert_reason + feishu_text(reason))
    lines.append(_risk_line(risks, alert.language, feishu_text))
    elements: list[dict[str, Any]] = [
        {"tag": "markdown", "content": "\n".join(lines)},
        {"tag": "markdown", "content": feishu_text(context), "text_size": "notation"},
    ]
    if url:
        elements.append({"tag": "button", "type": "default",
                         "text": {"tag": "plain_text", "content": chat_phrases(alert.language).alert_open},
                         "behaviors": [{"type": "open_url", "default_url": url}]})
    template = "grey" if pr.analysis is None else {"close_read": "green", "skim": "blue", "skip": "grey"}[
        pr.analysis.recommendation.level]
    return {"schema": "2.0", "config": {"summary": {"content": _clip(header, 100)}},
            "header": {"title": {"tag": "plain_text", "content": _clip(header, 100)}, "template": template},
            "body": {"elements": elements}}
