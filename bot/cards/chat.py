"""The chat bot's replies as Slack Block Kit messages and as Feishu cards (JSON 2.0).

The digest and the PR answer have their own renderers (:mod:`bot.cards.slack`,
:mod:`bot.cards.feishu`, :mod:`bot.cards.pr`); this module draws the rest of a conversation and
picks the renderer of each :mod:`bot.replies` reply:

* :func:`render_reply_slack` / :func:`render_reply_feishu` — any reply: the messages (cards) to
  post, the first as the answer and the rest in its thread;
* :func:`render_label_slack` / :func:`render_label_feishu` — the label view of one label ("npu 标签"):
  a header ``npu · 2026 第 16 周 · 04-13 至 04-19``, the repository and PR count, then one entry
  per PR (linked title, advice) with an "analyze" button; more than fit one message continue in
  further messages; the Feishu view ends with "订阅此标签";
* :func:`render_note_slack` / :func:`render_note_feishu` — one short text: "生成中…",
  subscription changes, errors;
* :func:`render_subscriptions_slack`, :func:`render_help_slack` — the list of subscriptions, the help;
* :func:`render_full_report_feishu` — what 完整报告 posts under a Feishu digest card.

The words are :func:`bot.cards.i18n.chat_phrases`, so both platforms say the same. Every Slack
message has a non-empty fallback ``text``, at most :data:`bot.cards.slack.MAX_BLOCKS` blocks and
sections of at most 3000 characters; every Feishu card stays within
:data:`bot.cards.feishu.PACK_BYTES` bytes and :data:`bot.cards.feishu.MAX_ELEMENTS` elements. PR
text is escaped for each platform. Buttons carry the action ids of :mod:`bot.cards.actions`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from bot.cards import slack
from bot.cards._outline import SLACK, pr_ref
from bot.cards._view import pr_badges
from bot.cards.actions import ACTION_ANALYZE_PR, ACTION_SUBSCRIBE_LABEL
from bot.cards.escape import feishu_text, one_line, slack_text
from bot.cards.extras import CardExtras
from bot.cards.feishu import (
    MAX_ELEMENTS,
    PACK_BYTES,
    Behavior,
    Body,
    Card,
    Element,
    Header,
    PlainText,
    render_feishu,
)
from bot.cards.i18n import chat_phrases, digest_title, level_name, n_prs, phrases, status_name
from bot.cards.pr import render_pr_feishu, render_pr_slack
from bot.cards.slack import render_slack
from bot.models import Digest, DigestPR, Language
from bot.replies import (
    DigestReply,
    ErrorReply,
    HelpReply,
    LabelReply,
    PRReply,
    Reply,
    SubscriptionReply,
    SubscriptionsReply,
)

__all__ = ["LABEL_BUTTONS", "render_full_report_feishu", "render_help_slack", "render_label_feishu",
           "render_label_slack", "render_note_feishu", "render_note_slack", "render_reply_feishu",
           "render_reply_slack", "render_subscriptions_slack", "unknown_label_note"]

LABEL_BUTTONS = 10
""""分析此 PR" buttons on a Feishu label view (the PRs after these are listed without one)."""

Template = Literal["blue", "wathet", "red", "grey"]


def unknown_label_note(reply: SubscriptionReply) -> str | None:
    """The warning shown with a subscription to a label the repository has not used lately, or ``None``."""
    if reply.known_labels is None:
        return None
    words = chat_phrases(reply.language)
    sep = "、" if reply.language == "zh" else ", "
    return words.unknown_label.format(repo=reply.subscription.repo, label=reply.subscription.label,
                                      weeks=reply.known_weeks, known=sep.join(reply.known_labels) or "-")


def subscription_text(reply: SubscriptionReply) -> str:
    """The one line of a subscription change (unescaped: the caller escapes for its platform)."""
    template: str = getattr(chat_phrases(reply.language), reply.change)
    return template.format(label=reply.subscription.label, repo=reply.subscription.repo)


# -- Slack ---------------------------------------------------------------------------------------


def render_reply_slack(reply: Reply, extras: CardExtras | None = None) -> list[dict[str, Any]]:
    """The Block Kit messages of ``reply`` (first = the answer, rest = its thread); a digest's card
    carries ``extras`` (its page link and charts, :mod:`bot.cards.extras`)."""
    match reply:
        case DigestReply(digest):
            return render_slack(digest, extras)
        case PRReply(pr, repo, language, timezone):
            return [render_pr_slack(pr, repo=repo, language=language, timezone=timezone)]
        case LabelReply(digest, label, prs):
            return render_label_slack(digest, label, prs)
        case SubscriptionReply():
            text = slack_text(subscription_text(reply))
            if (note := unknown_label_note(reply)) is not None:
                text = f"{text}\n{slack_text(note)}"
            return [render_note_slack(text)]
        case SubscriptionsReply(subs, language):
            return [render_subscriptions_slack([(s.repo, s.label) for s in subs], language)]
        case HelpReply(language, repo):
            return [render_help_slack(language, repo)]
        case ErrorReply(message, language):
            return [render_note_slack(chat_phrases(language).error.format(message=slack_text(message)))]
    raise TypeError(f"unknown reply {reply!r}")  # pragma: no cover - the match is exhaustive


def render_note_slack(text: str) -> dict[str, Any]:
    """One short message ``{"text", "blocks"}``; ``text`` is ours or already escaped mrkdwn."""
    line = text.strip() or "…"
    return {"text": one_line(line)[:300], "blocks": slack._sections(line)}


def render_label_slack(digest: Digest, label: str, prs: tuple[DigestPR, ...]) -> list[dict[str, Any]]:
    """The label view of ``label`` in ``digest`` (see the module docstring).

    Args:
        digest: the digest the view comes from (its window, language, repository).
        label: the label, as the digest spells it.
        prs: the PRs of the label, in the order to show (most important first).

    Returns:
        One or more messages ``{"text", "blocks"}``: post the first, the rest in its thread.
    """
    words = chat_phrases(digest.language)
    title = words.label_title.format(label=label, title=digest_title(digest))
    head: list[slack.Block] = [
        slack._header(_short(title, slack.HEADER_TEXT)),
        slack._context([slack_text(words.label_meta.format(repo=digest.repo, n_prs=n_prs(len(prs),
                                                                                              digest.language)))]),
    ]
    if not prs:
        empty = words.label_empty.format(label=label, title=digest_title(digest))
        return [{"text": slack_text(empty), "blocks": [*head, *slack._sections(slack_text(empty))]}]
    analyze = phrases(digest.language).analyze_button
    blocks: list[slack.Block] = []
    for pr in prs:
        line = f"{pr_ref(pr, SLACK)} — {SLACK.italic(slack_text(pr_badges(pr, digest)))}"
        if pr.analysis is not None and pr.analysis.recommendation.reason.strip():
            line += "\n" + slack_text(pr.analysis.recommendation.reason)
        button = slack._button(analyze, ACTION_ANALYZE_PR, f"{digest.repo}#{pr.number}")
        blocks += slack._sections(line, accessory=button)
    parts = slack._pack(blocks, reserved=head)
    fallback = slack_text(title)
    return [{"text": fallback, "blocks": [*head, *part]} for part in parts]


def render_subscriptions_slack(items: list[tuple[str, str]], language: Language) -> dict[str, Any]:
    """The subscriptions ``(repo, label)`` of a conversation as one message."""
    words = chat_phrases(language)
    if not items:
        return render_note_slack(words.no_subscriptions)
    lines = "\n".join(
        "• " + slack_text(words.subscription_item.format(label=label, repo=repo)) for repo, label in items
    )
    return {
        "text": words.subscriptions_title,
        "blocks": slack._sections(f"{SLACK.bold(words.subscriptions_title)}\n{lines}"),
    }


def render_help_slack(language: Language, repo: str | None) -> dict[str, Any]:
    """The help card: what the bot understands, the slash commands and the channel's repository."""
    words = chat_phrases(language)
    body = "\n".join(f"• {item}" for item in words.help_items)
    text = f"{SLACK.bold(words.help_title)}\n{body}\n\n{words.help_commands}"
    if repo:
        text += "\n" + words.help_repo.format(repo=slack_text(repo))
    return {"text": words.help_title, "blocks": slack._sections(text)}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- Feishu --------------------------------------------------------------------------------------


def render_reply_feishu(reply: Reply, extras: CardExtras | None = None) -> list[dict[str, Any]]:
    """The cards answering ``reply``: send the first as the reply, the rest in the same thread; a digest's
    first card carries ``extras`` (its page link and charts, :mod:`bot.cards.extras`)."""
    match reply:
        case DigestReply(digest=digest):
            return render_feishu(digest, extras)  # the first card, then the rest continue in the thread
        case PRReply(pr=pr, repo=repo, language=lang, timezone=tz):
            return [render_pr_feishu(pr, repo=repo, language=lang, timezone=tz)]
        case LabelReply(digest=digest, label=label, prs=prs):
            return render_label_feishu(digest, label, prs)
        case SubscriptionReply(language=lang):
            text = subscription_text(reply)
            if (note := unknown_label_note(reply)) is not None:
                text = f"{text}\n{note}"
            return [render_note_feishu(chat_phrases(lang).subscriptions_title, feishu_text(text))]
        case SubscriptionsReply(subscriptions=subs, language=lang):
            words = chat_phrases(lang)
            lines = [f"- {feishu_text(words.subscription_item.format(label=s.label, repo=s.repo))}" for s in subs]
            return [render_note_feishu(words.subscriptions_title,
                                       "\n".join(lines) or feishu_text(words.no_subscriptions))]
        case HelpReply(language=lang, repo=repo):
            words = chat_phrases(lang)
            body = "\n".join(f"- {feishu_text(item)}" for item in words.help_items)
            if repo:
                body += "\n\n" + feishu_text(words.help_repo.format(repo=repo))
            return [render_note_feishu(words.help_title, body)]
        case ErrorReply(message=message, language=lang):
            words = chat_phrases(lang)
            return [render_note_feishu("prhub", feishu_text(words.error.format(message=message)), template="red")]
    raise TypeError(f"unknown reply {reply!r}")  # pragma: no cover - the match is exhaustive


def render_full_report_feishu(digest: Digest) -> list[dict[str, Any]]:
    """What "完整报告" posts under the first card: the digest's remaining cards (or the only one)."""
    cards = render_feishu(digest)
    return cards[1:] or cards


def render_label_feishu(digest: Digest, label: str, prs: tuple[DigestPR, ...]) -> list[dict[str, Any]]:
    """The label view: one line per PR (linked number, title, advice), most important first.

    The first :data:`LABEL_BUTTONS` PRs get an "分析此 PR" button; the last card
    ends with "订阅此标签". More PRs than one card holds continue in more cards.
    """
    lang = digest.language
    words = chat_phrases(lang)
    title = words.label_title.format(label=label, title=digest_title(digest))
    meta = _md(feishu_text(words.label_meta.format(repo=digest.repo, n_prs=n_prs(len(prs), lang))))
    subscribe = _button(phrases(lang).subscribe_placeholder,
                        {"action": ACTION_SUBSCRIBE_LABEL, "repo": digest.repo, "label": label, "lang": lang},
                        primary=True)
    if not prs:
        empty = words.label_empty.format(label=label, title=digest_title(digest))
        return [_card(title, [meta, _md(feishu_text(empty)), subscribe])]
    elements: list[Element] = []
    for index, pr in enumerate(prs):
        advice = level_name(pr.analysis.recommendation.level, lang) if pr.analysis else status_name("pending", lang)
        elements.append(_md(f"**[#{pr.number}]({pr.url})** {feishu_text(pr.title)} · {advice}"))
        if index < LABEL_BUTTONS:
            value = {"action": ACTION_ANALYZE_PR, "repo": digest.repo, "number": str(pr.number), "lang": lang}
            elements.append(_button(phrases(lang).analyze_button, value))
    parts = _pack([meta, *elements], reserve=subscribe)
    parts[-1].append(subscribe)
    cards = [_card(title, parts[0])]
    for number, part in enumerate(parts[1:], 2):
        cards.append(_card(title + phrases(lang).continued.format(part=number, total=len(parts)), part,
                           template="wathet"))
    return cards


def render_note_feishu(title: str, markdown: str, *, template: Template = "blue") -> dict[str, Any]:
    """A one-element card: ``title`` (plain text) over ``markdown`` (already escaped)."""
    return _card(title, [_md(markdown or "…")], template=template)


def _pack(elements: list[Element], *, reserve: Element) -> list[list[Element]]:
    """``elements`` in order, in groups within the card budgets (``reserve`` fits in the last)."""
    limit = PACK_BYTES - _size(reserve)
    parts: list[list[Element]] = [[]]
    used = 0
    for element in elements:
        size = _size(element)
        if parts[-1] and (used + size > limit or len(parts[-1]) >= MAX_ELEMENTS - 1):
            parts.append([])
            used = 0
        parts[-1].append(element)
        used += size
    return parts


def _size(element: Element) -> int:
    return len(json.dumps(element, ensure_ascii=False).encode()) + 2


def _md(content: str) -> Element:
    return Element(tag="markdown", content=content)


def _button(text: str, value: dict[str, str], *, primary: bool = False) -> Element:
    return Element(tag="button", text=PlainText(tag="plain_text", content=text),
                   type="primary" if primary else "default",
                   behaviors=[Behavior(type="callback", value=value)])


def _card(title: str, elements: list[Element], *, template: Template = "blue") -> dict[str, Any]:
    card = Card(
        schema="2.0",
        config={"update_multi": True, "width_mode": "fill", "summary": {"content": title}},
        header=Header(title=PlainText(tag="plain_text", content=title), template="blue"),
        body=Body(elements=elements),
    )
    result: dict[str, Any] = dict(card)
    result["header"] = {**card["header"], "template": template}
    return result
