"""The digest as Feishu (Lark) interactive cards in card JSON 2.0.

:func:`render_feishu` returns a list of cards::

    {"schema": "2.0",
     "config": {"update_multi": true, "width_mode": "fill", "summary": {"content": <title>}},
     "header": {"title": {"tag": "plain_text", "content": <title>}, "template": "blue"},
     "body": {"elements": [{"tag": "markdown", "content": …}, {"tag": "hr"}, {"tag": "button", …}]}}

* card 1 — meta line and analysis sources, headline, highlights, risk
  observations, the top ten key PRs and a "完整报告" button (callback value
  ``{"action": "prhub_full_report", "repo": …, "window": …}``);
* cards 2… — the full report (sections 1–6 with all key PRs), the label view
  and the pending list, with a "（续 n/N）" title.

Shapes follow the JSON 2.0 documentation: ``markdown`` elements (CommonMark
plus a few tags; a single newline is a soft break, so line breaks inside one
item are ``<br>``), ``hr`` dividers and ``button`` with ``behaviors``
(JSON 2.0 has no ``action`` container); 2.0 cards are shared cards, so
``update_multi`` is true. Each card's ``json.dumps(card, ensure_ascii=False)``
stays under :data:`CARD_BYTES` UTF-8 bytes (Feishu rejects cards near 30 KB)
and under :data:`MAX_ELEMENTS` elements; a markdown element holds at most
:data:`ELEMENT_TEXT` characters. Long content goes to more elements and more
cards, never dropped nor cut silently. PR text is escaped with
:func:`~bot.cards.escape.feishu_text` (no live ``<at>``, ``<font>``, links
made of tags).
"""

from __future__ import annotations

import json
from typing import Any, Literal, NotRequired, TypedDict, cast

from bot.cards._outline import FEISHU, Section, card_outline, report_outline
from bot.cards.actions import ACTION_FULL_REPORT
from bot.cards.escape import feishu_text, split_text
from bot.cards.i18n import analysis_line, digest_title, meta_line, n_prs, phrases
from bot.models import Digest

CARD_BYTES = 28_000
"""Upper bound of one card's UTF-8 JSON size."""
PACK_BYTES = 26_000
"""What the packer fills a card up to, leaving room for the header and config."""
MAX_ELEMENTS = 50
"""Elements per card (JSON 2.0 allows 200 components; we stay far below)."""
ELEMENT_TEXT = 3000
"""Characters of one markdown element."""

class PlainText(TypedDict):
    tag: Literal["plain_text"]
    content: str


class Behavior(TypedDict):
    """A button's callback: ``value`` comes back in the ``card.action.trigger`` event."""

    type: Literal["callback"]
    value: dict[str, str]


class Element(TypedDict):
    """``markdown`` (``content``), ``hr`` or ``button`` (``text``, ``type``, ``behaviors``)."""

    tag: Literal["markdown", "hr", "button"]
    content: NotRequired[str]
    text_size: NotRequired[Literal["normal", "notation", "heading"]]
    text: NotRequired[PlainText]
    type: NotRequired[Literal["primary", "default"]]
    behaviors: NotRequired[list[Behavior]]


class Header(TypedDict):
    title: PlainText
    template: Literal["blue", "wathet"]


class Body(TypedDict):
    elements: list[Element]


class Card(TypedDict):
    """One card in JSON 2.0."""

    schema: Literal["2.0"]
    config: dict[str, Any]
    header: Header
    body: Body


def render_feishu(digest: Digest) -> list[dict[str, Any]]:
    """Render ``digest`` as Feishu JSON 2.0 cards (see the module docstring for the layout).

    Args:
        digest: the digest to render; not modified.

    Returns:
        One or more cards, each a JSON-ready dict under :data:`CARD_BYTES`
        bytes; send the first, then the rest in order (e.g. as replies).
    """
    words = phrases(digest.language)
    title = digest_title(digest)
    meta = [_markdown(_meta(digest), size="notation")]
    if not digest.prs:
        return _as_dicts([_card(title, [*meta, _markdown(feishu_text(words.empty_report))])])
    button = _full_report_button(digest)
    card_elements = [e for s in card_outline(digest, FEISHU) for e in _section_elements(s, digest)]
    card = _pack(card_elements, reserved=[*meta, button])
    card[0] = [*meta, *card[0], button]
    report = [e for s in report_outline(digest, FEISHU) for e in _section_elements(s, digest)]
    parts = card + _pack(report, reserved=[])
    parts = [e[1:] if len(e) > 1 and e[0]["tag"] == "hr" else e for e in parts]  # no card opens on a rule
    cards = [_card(title, parts[0])]
    for index, elements in enumerate(parts[1:], 2):
        label = title + words.continued.format(part=index, total=len(parts))
        cards.append(_card(label, elements, template="wathet"))
    return _as_dicts(cards)


def card_bytes(card: dict[str, Any]) -> int:
    """Size of ``card`` as Feishu receives it: UTF-8 bytes of ``json.dumps(card, ensure_ascii=False)``."""
    return len(json.dumps(card, ensure_ascii=False).encode())


def _as_dicts(cards: list[Card]) -> list[dict[str, Any]]:
    """The public, client-friendly type of the cards (the same objects)."""
    return cast("list[dict[str, Any]]", cards)


def _card(title: str, elements: list[Element], *, template: Literal["blue", "wathet"] = "blue") -> Card:
    return Card(
        schema="2.0",
        config={"update_multi": True, "width_mode": "fill", "summary": {"content": title}},
        header=Header(title=PlainText(tag="plain_text", content=title), template=template),
        body=Body(elements=elements),
    )


def _markdown(content: str, *, size: Literal["normal", "notation", "heading"] | None = None) -> Element:
    element = Element(tag="markdown", content=content)
    if size is not None:
        element["text_size"] = size
    return element


def _markdowns(content: str) -> list[Element]:
    """``content`` as as many markdown elements as it needs (≤ ``ELEMENT_TEXT`` characters each)."""
    return [_markdown(chunk) for chunk in split_text(content, ELEMENT_TEXT, atomic=FEISHU.atomic)]


def _meta(digest: Digest) -> str:
    lines = [meta_line(digest)]
    if digest.prs:
        lines.append(analysis_line(digest))
    if digest.pending:
        note = phrases(digest.language).pending_note
        lines.append(note.format(n_prs=n_prs(len(digest.pending), digest.language)))
    return "<br>".join(feishu_text(line) for line in lines)


def _full_report_button(digest: Digest) -> Element:
    value = {"action": ACTION_FULL_REPORT, "repo": digest.repo, "window": digest.window.name}
    return Element(
        tag="button",
        text=PlainText(tag="plain_text", content=phrases(digest.language).full_report_button),
        type="primary",
        behaviors=[Behavior(type="callback", value=value)],
    )


def _section_elements(section: Section, digest: Digest) -> list[Element]:
    """One outline section as elements: a divider and bold title for a part, markdown otherwise."""
    words = phrases(digest.language)
    if section.level == 1 and not section.items:
        return [Element(tag="hr"), _markdown(FEISHU.bold(section.title), size="heading")]
    if section.style == "paragraphs":
        body = "\n\n".join(section.items)
    elif section.style == "numbered":
        body = "\n".join(f"{i}. {item}" for i, item in enumerate(section.items, 1))
    else:
        body = "\n".join(f"- {item}" for item in section.items)
    if not section.title:
        return _markdowns(body)
    return _markdowns(f"{FEISHU.bold(section.title)}\n\n{body or words.nothing}")


def _pack(elements: list[Element], *, reserved: list[Element]) -> list[list[Element]]:
    """Group ``elements`` in order into cards within :data:`PACK_BYTES` and :data:`MAX_ELEMENTS`.

    ``reserved`` elements (added by the caller to the first card) count
    against every card's budget.
    """
    budget = PACK_BYTES - sum(_size(e) for e in reserved)
    max_elements = MAX_ELEMENTS - len(reserved)
    cards: list[list[Element]] = [[]]
    used = 0
    for element in elements:
        size = _size(element)
        if cards[-1] and (len(cards[-1]) >= max_elements or used + size > budget):
            cards.append([])
            used = 0
        cards[-1].append(element)
        used += size
    return cards


def _size(element: Element) -> int:
    """UTF-8 bytes ``element`` adds to a card's JSON (with its ``, `` separator)."""
    return len(json.dumps(element, ensure_ascii=False).encode()) + 2


WEBHOOK_CARD_BYTES = 18_000
"""Upper bound of one webhook card's UTF-8 JSON (a custom group-bot webhook's body limit is about 20 KB)."""
WEBHOOK_LINK_BUTTONS = 3
"""Link buttons (the top key PRs) on the first webhook card."""


def render_feishu_webhook(digest: Digest) -> list[dict[str, Any]]:
    """The digest as cards for a Feishu custom group-bot webhook, which cannot call back: the callback
    buttons removed, link buttons (``open_url``) to the top key PRs added to the first card, every card
    within :data:`WEBHOOK_CARD_BYTES` (more cards when needed; nothing is dropped)."""
    by_number = {pr.number: pr for pr in digest.prs}
    links = [
        {"tag": "button", "type": "default", "text": {"tag": "plain_text", "content": f"#{number}"},
         "behaviors": [{"type": "open_url", "default_url": by_number[number].url}]}
        for number in digest.key_prs[:WEBHOOK_LINK_BUTTONS] if number in by_number
    ]
    out: list[dict[str, Any]] = []
    for index, card in enumerate(render_feishu(digest)):
        elements = [e for e in card["body"]["elements"] if e.get("tag") != "button"]
        if index == 0:
            elements += links
        out += _fit_webhook({**card, "body": {**card["body"], "elements": elements}})
    return out


def _fit_webhook(card: dict[str, Any]) -> list[dict[str, Any]]:
    """``card`` split by elements until every part is within :data:`WEBHOOK_CARD_BYTES`."""
    elements = card["body"]["elements"]
    if card_bytes(card) <= WEBHOOK_CARD_BYTES or len(elements) < 2:
        return [card]
    half = len(elements) // 2
    return [*_fit_webhook({**card, "body": {**card["body"], "elements": elements[:half]}}),
            *_fit_webhook({**card, "body": {**card["body"], "elements": elements[half:]}})]
