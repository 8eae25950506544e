"""Where messages go: one :class:`Deliverer` protocol, one implementation per platform, used by the chat
replies and by the scheduler alike.

==========================  =======================================================================
:mod:`.slack`               :class:`~.slack.SlackDeliverer`: slack_sdk's ``AsyncWebClient``
                            (``chat.postMessage``; waits out HTTP 429 ``Retry-After``); also the
                            slash commands' ``response_url`` posts and ephemeral notes
:mod:`.feishu`              :class:`~.feishu.FeishuDeliverer` on :class:`~.feishu.FeishuClient`
                            (lark-oapi: replies in threads, rate limits, rejected cards split)
:mod:`.webhook`             :class:`~.webhook.WebhookDeliverer`: a Feishu custom group-bot webhook
                            (signed; link buttons only, no threads, no direct messages)
:mod:`.pacing`              :class:`~.pacing.Pacer`: the platforms' per-chat rate limits (aiolimiter)
:mod:`.media`               :class:`~.media.CardMedia`: a digest card's page link and charts
==========================  =======================================================================

A deliverer knows its platform's renderers (``digest_messages``, ``alert_messages``,
``reply_messages``, from :mod:`bot.cards`) and, where the platform tells, a person's time zone
(``person_timezone``: Slack ``users.info``) and posts a list of messages to a :class:`Place`: a
conversation, or under a message there (its thread); :meth:`Deliverer.edit` replaces what a post put
there (a digest whose pending analyses landed). The first message goes where the place says,
the rest continue in the first one's thread; :class:`Posted` tells the ids and the *anchor*, the
message id that a button press on the first message reports as its thread (Slack: the thread's
root ts; Feishu: the first card's message id). :func:`post_digest` and :func:`post_reply` post and,
when a digest went out whole in one thread, mark that thread complete so 完整报告 posts nothing
more (:func:`bot.claims.full_report_key`).

Before a digest is drawn, :meth:`Deliverer.card_extras` makes what its card carries besides the
digest (:class:`~bot.cards.extras.CardExtras`, by the deliverer's :class:`~.media.CardMedia`): the
link to its page when ``PRHUB_PUBLIC_URL`` is set (then 完整报告 opens the page and the digest is
the card alone) and its charts, uploaded to the platform where it can take pictures.

Channel keys name the platform and the conversation: ``slack:C123``, ``feishu:oc_xxx`` or
``feishu-webhook:NAME`` (a ``[feishu_webhooks.NAME]`` section). :class:`Deliverers` (built by
:mod:`bot.app`) turns one into ``(deliverer, conversation)``.

Errors: every failure to deliver is a :class:`~bot.errors.DeliveryError`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from bot.cards.extras import CardExtras
from bot.claims import Claims, full_report_key
from bot.errors import ConfigError, DeliveryError
from bot.models import Digest
from bot.replies import DigestReply, Reply

if TYPE_CHECKING:
    from bot.cards.alert import AlertBatch

__all__ = ["PLATFORMS", "Deliverer", "Deliverers", "DeliveryError", "Message", "Place", "Posted",
           "mark_full_report", "post_digest", "post_reply", "reply_extras", "split_channel"]

PLATFORMS = ("slack", "feishu", "feishu-webhook")

Message = dict[str, Any]
"""One platform message: a Slack ``{"text", "blocks"}`` or a Feishu card (JSON 2.0)."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where to post: the ``conversation`` (Slack channel, DM or user id; Feishu chat id; webhook name)
    and, to answer in a thread, the ``thread`` message (Slack: the thread's ts; Feishu: the message
    replied to)."""

    conversation: str
    thread: str | None = None


@dataclass(frozen=True, slots=True)
class Posted:
    """What a post did: the platform ids of the messages, in order (none for webhooks), and the anchor
    of the thread they form (``None`` when there is no thread to point at)."""

    ids: tuple[str, ...] = ()
    anchor: str | None = None


class Deliverer(Protocol):
    """Posts messages on one platform (see the module docstring)."""

    @property
    def platform(self) -> str:
        """``slack``, ``feishu`` or ``feishu-webhook``."""
        ...

    def digest_messages(self, digest: Digest, extras: CardExtras | None = None) -> list[Message]:
        """The digest in this platform's format: the card first (with ``extras``), then what continues
        in its thread (nothing when the card links to the page)."""
        ...

    def alert_messages(self, batch: AlertBatch) -> list[Message]:
        """One batch of alerts: the message to post, then (a list too long for one) what continues in its thread."""
        ...

    async def person_timezone(self, user: str) -> str | None:
        """The IANA time zone the platform gives person ``user`` (Slack ``users.info``), or ``None`` when it
        gives none (Feishu, webhooks) or cannot be asked (the error is logged, not raised)."""
        ...

    def reply_messages(self, reply: Reply, extras: CardExtras | None = None) -> list[Message]:
        """A chat reply in this platform's format (a digest's card with ``extras``).

        Raises:
            DeliveryError: the platform does not converse (a webhook).
        """
        ...

    async def card_extras(self, place: Place, digest: Digest) -> CardExtras:
        """What the card of ``digest`` posted at ``place`` carries besides it: the page link and the
        charts, uploaded to this platform where it takes pictures (:class:`~.media.CardMedia`). Never
        raises: what could not be made is logged and left out."""
        ...

    async def post(self, place: Place, messages: Sequence[Message], *, key: str = "") -> Posted:
        """Post ``messages`` at ``place``, paced within the platform's limits.

        Args:
            key: a stable id of this post (a push marker, a message id); platforms with idempotent
                sends (Feishu's ``uuid``) use it so a retried post is not doubled.

        Raises:
            DeliveryError: the platform refused a message or could not be reached (after the
                rate-limit waits); ``ValueError``: ``messages`` is empty.
        """
        ...

    async def edit(self, place: Place, posted: Posted, messages: Sequence[Message], *,
                   unchanged: Collection[int] = ()) -> Posted:
        """Replace the messages of an earlier post at ``place`` in place (Slack ``chat.update``; Feishu's
        message patch, for cards sent with ``update_multi`` within 14 days): ``messages[i]`` replaces
        ``posted.ids[i]`` unless ``i`` is in ``unchanged``; messages beyond the old ones are appended in
        the thread of ``posted.anchor``.

        Returns:
            The ids now holding the post, and its anchor.

        Raises:
            DeliveryError: the platform refused an edit, or cannot edit at all (a webhook:
                ``code="not_editable"``).
        """
        ...


def split_channel(key: str) -> tuple[str, str]:
    """``"slack:C123"`` -> ``("slack", "C123")``.

    Raises:
        ConfigError: no ``platform:`` prefix, or an unknown platform.
    """
    platform, sep, ident = key.partition(":")
    if not sep or not ident or platform not in PLATFORMS:
        raise ConfigError(f"channel {key!r}: expected slack:C…, feishu:oc_… or feishu-webhook:NAME")
    return platform, ident


class Deliverers:
    """The deliverers of the process, by platform (built once, by :mod:`bot.app`).

    Args:
        slack: the Slack deliverer, or ``None`` without ``SLACK_BOT_TOKEN``.
        feishu: the Feishu app's deliverer, or ``None`` without ``FEISHU_APP_ID`` / ``FEISHU_APP_SECRET``.
        webhooks: the deliverer of each ``[feishu_webhooks.NAME]``.
    """

    def __init__(self, *, slack: Deliverer | None = None, feishu: Deliverer | None = None,
                 webhooks: Mapping[str, Deliverer] | None = None) -> None:
        self.slack = slack
        self.feishu = feishu
        self.webhooks = dict(webhooks or {})

    def for_channel(self, key: str) -> tuple[Deliverer, str]:
        """``(deliverer, conversation)`` of the channel key ``slack:C123`` / ``feishu:oc_x`` / ``feishu-webhook:NAME``.

        Raises:
            ConfigError: malformed key, or the platform (or webhook NAME) is not configured.
        """
        platform, ident = split_channel(key)
        if platform == "feishu-webhook":
            hook = self.webhooks.get(ident)
            if hook is None:
                known = ", ".join(sorted(self.webhooks)) or "none"
                raise ConfigError(f"no [feishu_webhooks.{ident}] in the config (known: {known})")
            return hook, ident
        if platform == "slack":
            if self.slack is None:
                raise ConfigError("Slack channels need SLACK_BOT_TOKEN")
            return self.slack, ident
        if self.feishu is None:
            raise ConfigError("Feishu channels need FEISHU_APP_ID and FEISHU_APP_SECRET")
        return self.feishu, ident


async def mark_full_report(claims: Claims, platform: str, conversation: str, anchor: str | None,
                           window: str) -> None:
    """Record that the thread ``anchor`` holds the whole digest of ``window`` (完整报告 then posts nothing)."""
    if anchor:
        await claims.take(full_report_key(platform, conversation, anchor, window))


async def post_digest(deliverer: Deliverer, claims: Claims, place: Place, digest: Digest, *,
                      key: str = "") -> Posted:
    """Post ``digest`` at ``place`` with its card's extras (:meth:`Deliverer.card_extras`); when it took
    several messages (all in one thread), mark the thread complete.

    Raises:
        DeliveryError: as :meth:`Deliverer.post`.
    """
    messages = deliverer.digest_messages(digest, await deliverer.card_extras(place, digest))
    posted = await deliverer.post(place, messages, key=key)
    if len(messages) > 1:
        await mark_full_report(claims, deliverer.platform, place.conversation, posted.anchor, digest.window.name)
    return posted


async def reply_extras(deliverer: Deliverer, place: Place, reply: Reply) -> CardExtras | None:
    """The card extras of a digest reply posted at ``place`` (``None`` for any other reply)."""
    return await deliverer.card_extras(place, reply.digest) if isinstance(reply, DigestReply) else None


async def post_reply(deliverer: Deliverer, claims: Claims, place: Place, reply: Reply, *,
                     key: str = "") -> Posted:
    """Post a chat reply at ``place`` (a digest with its card's extras; its thread is marked complete as by
    :func:`post_digest`).

    Raises:
        DeliveryError: as :meth:`Deliverer.post`.
    """
    messages = deliverer.reply_messages(reply, await reply_extras(deliverer, place, reply))
    posted = await deliverer.post(place, messages, key=key)
    if isinstance(reply, DigestReply) and len(messages) > 1:
        await mark_full_report(claims, deliverer.platform, place.conversation, posted.anchor,
                               reply.digest.window.name)
    return posted
