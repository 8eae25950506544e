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

With :class:`~bot.cards.extras.CardExtras` card 1 also shows the uploaded charts (``img``
elements with their ``image_key``, before the button) and, with a page link, the 完整报告 button
opens the page (``open_url``) and the digest is card 1 alone — the rest is on the page.

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
from bot.cards.extras import NO_EXTRAS, CardExtras, CardImage
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
    """A button's callback (``value`` comes back in the ``card.action.trigger`` event) or link
    (``open_url`` to ``default_url``)."""

    type: Literal["callback", "open_url"]
    value: NotRequired[dict[str, str]]
    default_url: NotRequired[str]


class Element(TypedDict):
    """``markdown`` (``content``), ``hr``, ``button`` (``text``, ``type``, ``behaviors``) or ``img``
    (``img_key``, ``alt``, ``title``, ``scale_type``, ``preview``)."""

    tag: Literal["markdown", "hr", "button", "img"]
    content: NotRequired[str]
    text_size: NotRequired[Literal["normal", "notation", "heading"]]
    text: NotRequired[PlainText]
    type: NotRequired[Literal["primary", "default"]]
    behaviors: NotRequired[list[Behavior]]
    img_key: NotRequired[str]
    alt: NotRequired[PlainText]
    title: NotRequired[PlainText]
    scale_type: NotRequired[Literal["fit_horizontal"]]
    preview: NotRequired[bool]


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


def render_feishu(digest: Digest, extras: CardExtras | None = None) -> list[dict[str, Any]]:
    """Render ``digest`` as Feishu JSON 2.0 cards (see the module docstring for the layout).

    Args:
        digest: the digest to render; not modified.
        extras: the page link and the uploaded charts of card 1 (default: none).

    Returns:
        One or more cards, each a JSON-ready dict under :data:`CARD_BYTES`
        bytes; send the first, then the rest in order (e.g. as replies).
        With a page link, only card 1 (more only when it overflows).
    """
    extras = extras or NO_EXTRAS
    words = phrases(digest.language)
    title = digest_title(digest)
    meta = [_markdown(_meta(digest), size="notation")]
    if not digest.prs:
        return _as_dicts([_card(title, [*meta, _markdown(feishu_text(words.empty_report))])])
    tail = [*(_image(image) for image in extras.images), _full_report_button(digest, extras.page_url)]
    card_elements = [e for s in card_outline(digest, FEISHU, chat=True) for e in _section_elements(s, digest)]
    card = _pack(card_elements, reserved=[*meta, *tail])
    card[0] = [*meta, *card[0], *tail]
    parts = card
    if extras.page_url is None:
        report = [e for s in report_outline(digest, FEISHU, chat=True) for e in _section_elements(s, digest)]
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


def _full_report_button(digest: Digest, page_url: str | None = None) -> Element:
    """完整报告: a callback (the rest of the digest into the card's thread), or a link to ``page_url``."""
    if page_url is not None:
        behavior = Behavior(type="open_url", default_url=page_url)
    else:
        value = {"action": ACTION_FULL_REPORT, "repo": digest.repo, "window": digest.window.name}
        behavior = Behavior(type="callback", value=value)
    return Element(
        tag="button",
        text=PlainText(tag="plain_text", content=phrases(digest.language).full_report_button),
        type="primary",
        behaviors=[behavior],
    )


IMAGE_TEXT = 1000
"""Characters of an image's title or alt text."""


def _image(image: CardImage) -> Element:
    """An uploaded chart by its ``image_key``, full width, with its title and alt text."""
    return Element(tag="img", img_key=image.ref,
                   alt=PlainText(tag="plain_text", content=_clip(image.alt)),
                   title=PlainText(tag="plain_text", content=_clip(image.title)),
                   scale_type="fit_horizontal", preview=True)


def _clip(text: str) -> str:
    text = text.strip() or "…"
    return text if len(text) <= IMAGE_TEXT else text[: IMAGE_TEXT - 1] + "…"


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
    return _markdowns(f"{FEISHU.bold(section.title)}\n\n{body or section.empty or words.nothing}")


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


def render_feishu_webhook(digest: Digest, extras: CardExtras | None = None) -> list[dict[str, Any]]:
    """The digest as cards for a Feishu custom group-bot webhook, which cannot call back (nor upload a
    picture): the callback buttons removed, link buttons (``open_url``) to the top key PRs added to the
    first card — after a 完整报告 link to the page when ``extras`` has one (then the first card is the
    digest: the rest is on the page) — every card within :data:`WEBHOOK_CARD_BYTES` (more cards when
    needed; nothing is dropped). ``extras.images`` are not used."""
    page_url = extras.page_url if extras is not None else None
    by_number = {pr.number: pr for pr in digest.prs}
    links: list[dict[str, Any]] = [
        {"tag": "button", "type": "default", "text": {"tag": "plain_text", "content": f"#{number}"},
         "behaviors": [{"type": "open_url", "default_url": by_number[number].url}]}
        for number in digest.key_prs[:WEBHOOK_LINK_BUTTONS] if number in by_number
    ]
    if page_url is not None and digest.prs:
        links.insert(0, dict(_full_report_button(digest, page_url)))
    out: list[dict[str, Any]] = []
    for index, card in enumerate(render_feishu(digest, CardExtras(page_url=page_url))):
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
