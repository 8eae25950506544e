"""The shared core's replies as Feishu cards (card JSON 2.0).

:class:`~bot.handlers.core.Core` answers an intent with a platform-neutral
reply; :func:`feishu_cards` draws it:

- ``DigestReply`` — the digest's first card (:func:`bot.cards.feishu.render_feishu`);
  its "完整报告" button brings the rest (:func:`full_report_cards`);
- ``PRReply`` — one card (:func:`bot.cards.pr.render_pr_feishu`);
- ``LabelReply`` — :func:`label_cards`: the PRs of the label with their reading
  advice, "分析此 PR" buttons and a closing "订阅此标签";
- subscriptions, help and errors — one short card in the words of
  :mod:`bot.cards.chat` (the Slack bot says the same).

Buttons carry a callback ``value`` that :mod:`.actions` reads back::

    {"action": "prhub_full_report",     "repo": "owner/name", "window": "2026-W16"}
    {"action": "prhub_subscribe_label", "repo": "owner/name", "label": "npu", "lang": "zh"}
    {"action": "prhub_analyze_pr",      "repo": "owner/name", "number": "6046", "lang": "zh"}

Every card stays within :data:`bot.cards.feishu.PACK_BYTES` bytes and
:data:`bot.cards.feishu.MAX_ELEMENTS` elements (a long label view continues in
more cards); PR text is escaped with :func:`~bot.cards.escape.feishu_text`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from bot.cards.chat import chat_phrases
from bot.cards.escape import feishu_text
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
from bot.cards.i18n import digest_title, level_name, n_prs, phrases, status_name
from bot.cards.pr import render_pr_feishu
from bot.handlers.core import (
    DigestReply,
    ErrorReply,
    HelpReply,
    LabelReply,
    PRReply,
    Reply,
    SubscriptionReply,
    SubscriptionsReply,
)
from bot.models import Digest, DigestPR

__all__ = ["ACTION_ANALYZE_PR", "ACTION_SUBSCRIBE_LABEL", "feishu_cards", "full_report_cards", "label_cards"]

ACTION_SUBSCRIBE_LABEL = "prhub_subscribe_label"
ACTION_ANALYZE_PR = "prhub_analyze_pr"
LABEL_BUTTONS = 10
""""分析此 PR" buttons on a label view (the PRs after these are listed without one)."""

Template = Literal["blue", "wathet", "red", "grey"]


def feishu_cards(reply: Reply) -> list[dict[str, Any]]:
    """The cards answering ``reply``: send the first as the reply, the rest in the same thread."""
    match reply:
        case DigestReply(digest=digest):
            return render_feishu(digest)  # the first card, then the rest continue in the thread
        case PRReply(pr=pr, repo=repo, language=lang, timezone=tz):
            return [render_pr_feishu(pr, repo=repo, language=lang, timezone=tz)]
        case LabelReply(digest=digest, label=label, prs=prs):
            return label_cards(digest, label, prs)
        case SubscriptionReply(change=change, subscription=sub, language=lang):
            text = getattr(chat_phrases(lang), change).format(label=sub.label, repo=sub.repo)
            if (note := reply.unknown_label_note()) is not None:
                text = f"{text}\n{note}"
            return [note_card(chat_phrases(lang).subscriptions_title, feishu_text(text))]
        case SubscriptionsReply(subscriptions=subs, language=lang):
            words = chat_phrases(lang)
            lines = [f"- {feishu_text(words.subscription_item.format(label=s.label, repo=s.repo))}" for s in subs]
            return [note_card(words.subscriptions_title, "\n".join(lines) or feishu_text(words.no_subscriptions))]
        case HelpReply(language=lang, repo=repo):
            words = chat_phrases(lang)
            body = "\n".join(f"- {feishu_text(item)}" for item in words.help_items)
            if repo:
                body += "\n\n" + feishu_text(words.help_repo.format(repo=repo))
            return [note_card(words.help_title, body)]
        case ErrorReply(message=message, language=lang):
            words = chat_phrases(lang)
            return [note_card("prhub", feishu_text(words.error.format(message=message)), template="red")]
    raise TypeError(f"unknown reply {reply!r}")  # pragma: no cover - the match is exhaustive


def full_report_cards(digest: Digest) -> list[dict[str, Any]]:
    """What "完整报告" posts under the first card: the digest's remaining cards (or the only one)."""
    cards = render_feishu(digest)
    return cards[1:] or cards


def label_cards(digest: Digest, label: str, prs: tuple[DigestPR, ...]) -> list[dict[str, Any]]:
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


def note_card(title: str, markdown: str, *, template: Template = "blue") -> dict[str, Any]:
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
