"""The digest as Slack Block Kit messages.

:func:`render_slack` returns a list of messages ``{"text": fallback, "blocks": [...]}``:

* message 1 — the card: header, context (meta line, analysis sources,
  pending note), headline, highlights, risk observations, the top ten key PRs
  (link, importance, level, risks and an "analyze" button each) and an
  actions block (full-report button, subscribe-to-label menu);
* messages 2… — meant for the card's thread: the full report (sections 1–6,
  all key PRs), the label view and the pending list.

With :class:`~bot.cards.extras.CardExtras` the card also shows the uploaded charts (an
``image`` block with ``slack_file`` each, before the actions) and, with a page link, its
full-report button opens the page (a URL button, action id ``prhub_open_page``) and the
digest is the card alone: the thread messages are on the page.

Limits (Slack documents the first ones; slack_sdk validates them): at most 50
blocks a message, section text ≤ 3000, header text ≤ 150, context ≤ 10
elements, button text ≤ 75, action value ≤ 2000, select option text ≤ 75 and
value ≤ 150, no empty text object, a non-empty fallback ``text``. Slack also
rejects a message whose blocks carry much more than ~12,000 characters in
total (``msg_blocks_too_long``, undocumented); messages here carry at most
:data:`MESSAGE_TEXT_BUDGET`. Lengths are counted in UTF-16 code units, which is
never less than Python's count.

Long content is split at paragraph/line/word boundaries into more sections and
more messages — never dropped, never cut silently. PR text is escaped
(:func:`~bot.cards.escape.slack_text`) so it cannot mention or link anyone.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, cast

from bot.cards._outline import SLACK, Section, card_outline, report_outline
from bot.cards.actions import ACTION_ANALYZE_PR, ACTION_FULL_REPORT, ACTION_OPEN_PAGE, ACTION_SUBSCRIBE_LABEL
from bot.cards.escape import one_line, slack_text, split_text, utf16_len
from bot.cards.extras import NO_EXTRAS, CardExtras, CardImage
from bot.cards.i18n import analysis_line, digest_title, meta_line, n_prs, phrases
from bot.models import Digest

MAX_BLOCKS = 50
SECTION_TEXT = 3000
HEADER_TEXT = 150
CONTEXT_ELEMENTS = 10
BUTTON_TEXT = 75
ACTION_VALUE = 2000
OPTION_TEXT = 75
MAX_OPTIONS = 100
BUTTON_URL = 3000
IMAGE_ALT = 2000
IMAGE_TITLE = 2000
MESSAGE_TEXT_BUDGET = 9000
"""Most text (UTF-16 units, all text objects together) one message carries."""
FALLBACK_HEADLINE = 300
"""The fallback ``text`` (notifications) quotes at most this much of the headline."""

_MARKUP_CHARS = set("<>&")
"""Labels holding these are left out of the subscribe menu (its option value must be the raw label)."""


class TextObject(TypedDict):
    """``plain_text`` or ``mrkdwn`` text object; ``text`` is never empty."""

    type: Literal["plain_text", "mrkdwn"]
    text: str


class Option(TypedDict):
    """A select option: ``text`` ≤ 75, ``value`` ≤ 150 (here the label itself)."""

    text: TextObject
    value: str


class Element(TypedDict):
    """An interactive element: ``button`` (text ≤ 75, value ≤ 2000) or ``static_select``."""

    type: Literal["button", "static_select"]
    action_id: str
    text: NotRequired[TextObject]
    value: NotRequired[str]
    url: NotRequired[str]
    style: NotRequired[Literal["primary"]]
    placeholder: NotRequired[TextObject]
    options: NotRequired[list[Option]]


class Block(TypedDict):
    """One block: ``header`` / ``section`` (``text``), ``context`` (``elements`` of text),
    ``actions`` (``elements``), ``divider`` or ``image`` (``slack_file``, ``alt_text``, ``title``)."""

    type: Literal["header", "section", "context", "actions", "divider", "image"]
    text: NotRequired[TextObject]
    accessory: NotRequired[Element]
    elements: NotRequired[list[Any]]
    slack_file: NotRequired[dict[str, str]]
    alt_text: NotRequired[str]
    title: NotRequired[TextObject]


class Message(TypedDict):
    """One message: ``text`` is the notification fallback, ``blocks`` ≤ 50."""

    text: str
    blocks: list[Block]


def render_slack(digest: Digest, extras: CardExtras | None = None) -> list[dict[str, Any]]:
    """Render ``digest`` as Slack messages (see the module docstring for the layout).

    Args:
        digest: the digest to render; not modified.
        extras: the page link and the uploaded charts of the card (default: none).

    Returns:
        One or more :class:`Message` dicts, ready for ``chat.postMessage``
        (``text`` and ``blocks``); post the first to the channel and the rest
        in its thread. An empty digest gives one short message; with a page
        link, only the card's message(s).
    """
    extras = extras or NO_EXTRAS
    words = phrases(digest.language)
    title = digest_title(digest)
    head: list[Block] = [_header(title), _context(_card_context(digest))]
    if not digest.prs:
        body = _sections(slack_text(words.empty_report))
        return _as_dicts([Message(text=title, blocks=head + body)])
    label_room = _context([title + words.continued.format(part=999, total=999)])
    card_blocks = [b for section in card_outline(digest, SLACK, chat=True) for b in _section_blocks(section, digest)]
    tail = [*(_image(image) for image in extras.images), _actions(digest, extras.page_url)]
    card = _pack(card_blocks, reserved=[*head, *tail])
    card[0] = [*head, *card[0], *tail]
    parts = card
    if extras.page_url is None:
        report_blocks = [b for section in report_outline(digest, SLACK, chat=True)
                         for b in _section_blocks(section, digest)]
        parts = card + _pack(report_blocks, reserved=[label_room])
    messages = [Message(text=_fallback(title, digest), blocks=parts[0])]
    for index, blocks in enumerate(parts[1:], 2):
        label = title + words.continued.format(part=index, total=len(parts))
        messages.append(Message(text=label, blocks=[_context([label]), *blocks]))
    return _as_dicts(messages)


def _as_dicts(messages: list[Message]) -> list[dict[str, Any]]:
    """The public, client-friendly type of the messages (the same objects)."""
    return cast("list[dict[str, Any]]", messages)


def _fallback(title: str, digest: Digest) -> str:
    """Notification text: the title and the start of the headline (the blocks hold it all)."""
    headline = one_line(digest.headline)
    if len(headline) > FALLBACK_HEADLINE:
        headline = headline[:FALLBACK_HEADLINE] + "…"
    return f"{title} — {slack_text(headline)}" if headline else title


# -- blocks -------------------------------------------------------------------------------------


def _text(kind: Literal["plain_text", "mrkdwn"], text: str) -> TextObject:
    return TextObject(type=kind, text=text)


def _header(text: str) -> Block:
    """A header block; our titles are short (tests assert ≤ 150)."""
    return Block(type="header", text=_text("plain_text", text))


def _context(texts: list[str]) -> Block:
    """A context block of mrkdwn elements (≤ 10; ours are short one-liners)."""
    elements = [_text("mrkdwn", t) for t in texts if t.strip()][:CONTEXT_ELEMENTS]
    return Block(type="context", elements=elements)


def _sections(text: str, accessory: Element | None = None) -> list[Block]:
    """``text`` (already mrkdwn) as as many section blocks as it needs (≤ 3000 each)."""
    chunks = split_text(text, SECTION_TEXT, measure=utf16_len, atomic=SLACK.atomic)
    blocks = [Block(type="section", text=_text("mrkdwn", chunk)) for chunk in chunks]
    if blocks and accessory is not None:
        blocks[0]["accessory"] = accessory
    return blocks


def _section_blocks(section: Section, digest: Digest) -> list[Block]:
    """One outline section as blocks: a header for a part, titled sections otherwise."""
    words = phrases(digest.language)
    if section.level == 1 and not section.items:
        return [_header(section.title)]
    if section.style == "entries":
        blocks = _sections(SLACK.bold(section.title))
        for pr, item in zip(section.prs, section.items, strict=True):
            button = _button(words.analyze_button, ACTION_ANALYZE_PR, f"{digest.repo}#{pr.number}")
            blocks += _sections(item, accessory=button)
        return blocks
    if section.style == "paragraphs":
        body = "\n\n".join(section.items)
    elif section.style == "numbered":
        body = "\n".join(f"{i}. {item}" for i, item in enumerate(section.items, 1))
    else:
        body = "\n".join(f"• {item}" for item in section.items)
    if not section.title:
        return _sections(body)
    return _sections(f"{SLACK.bold(section.title)}\n{body or section.empty or words.nothing}")


def _button(text: str, action_id: str, value: str, *, primary: bool = False) -> Element:
    element = Element(type="button", action_id=action_id, text=_text("plain_text", text), value=value)
    if primary:
        element["style"] = "primary"
    return element


def _image(image: CardImage) -> Block:
    """An uploaded chart (``slack_file`` by id), with its title and alt text."""
    return Block(type="image", slack_file={"id": image.ref}, alt_text=_clip(image.alt, IMAGE_ALT),
                 title=_text("plain_text", _clip(image.title, IMAGE_TITLE)))


def _clip(text: str, limit: int) -> str:
    text = text.strip() or "…"
    return text if utf16_len(text) <= limit else text[: limit // 2 - 1] + "…"


def _actions(digest: Digest, page_url: str | None = None) -> Block:
    """Full-report button and, when labels exist, a subscribe-to-label menu.

    With ``page_url`` the full-report button opens the page (a URL button; Slack still reports the
    press as ``prhub_open_page``, which is only acknowledged). The menu offers the labels of the
    trends (most active first, ≤ 100) whose name fits an option (≤ 75) and holds no ``<``, ``>``
    or ``&`` (an option's value is the raw label; such labels stay reachable by command).
    """
    words = phrases(digest.language)
    value = f"{digest.repo}|{digest.window.name}"
    if page_url is not None and len(page_url) <= BUTTON_URL:
        page = _button(words.full_report_button, ACTION_OPEN_PAGE, value, primary=True)
        page["url"] = page_url
        elements: list[Element] = [page]
    else:
        elements = [_button(words.full_report_button, ACTION_FULL_REPORT, value, primary=True)]
    options = [
        Option(text=_text("plain_text", trend.label), value=trend.label)
        for trend in sorted(digest.trends, key=lambda t: -t.count)
        if trend.label.strip() and utf16_len(trend.label) <= OPTION_TEXT and not _MARKUP_CHARS & set(trend.label)
    ][:MAX_OPTIONS]
    if options:
        elements.append(
            Element(
                type="static_select",
                action_id=ACTION_SUBSCRIBE_LABEL,
                placeholder=_text("plain_text", words.subscribe_placeholder),
                options=options,
            )
        )
    return Block(type="actions", elements=list(elements))


def _card_context(digest: Digest) -> list[str]:
    """Meta line, analysis sources and the pending note, as context texts."""
    texts = [slack_text(meta_line(digest))]
    if digest.prs:
        texts.append(slack_text(analysis_line(digest)))
    if digest.pending:
        note = phrases(digest.language).pending_note
        texts.append(slack_text(note.format(n_prs=n_prs(len(digest.pending), digest.language))))
    return texts


# -- packing ------------------------------------------------------------------------------------


def _chars(node: object) -> int:
    """Total UTF-16 length of every ``text`` string inside a block (recursively)."""
    if isinstance(node, dict):
        return sum(
            utf16_len(value) if key == "text" and isinstance(value, str) else _chars(value)
            for key, value in node.items()
        )
    if isinstance(node, list):
        return sum(_chars(item) for item in node)
    return 0


def _pack(blocks: list[Block], *, reserved: list[Block]) -> list[list[Block]]:
    """Group ``blocks`` in order into messages that stay within the block and text budgets.

    ``reserved`` blocks (added later by the caller to each message) count
    against every message's budget.
    """
    max_blocks = MAX_BLOCKS - len(reserved)
    max_chars = MESSAGE_TEXT_BUDGET - _chars(reserved)
    messages: list[list[Block]] = [[]]
    used = 0
    for block in blocks:
        size = _chars(block)
        if messages[-1] and (len(messages[-1]) >= max_blocks or used + size > max_chars):
            messages.append([])
            used = 0
        messages[-1].append(block)
        used += size
    return messages
