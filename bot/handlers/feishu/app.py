"""The Feishu bot's wiring: lark-oapi's event dispatcher, the handlers, and the loop they run on.

:class:`FeishuBot` registers two handlers on an ``EventDispatcherHandler``:

- ``im.message.receive_v1`` — read the message (:mod:`.events`); if it is for
  the bot, hand it to the bot's event loop and return at once (Feishu wants an
  answer within 3 seconds); there it is claimed (:mod:`.dedup`), parsed into an
  intent (:mod:`bot.handlers.intents`), answered by the shared core
  (:mod:`bot.handlers.core`), drawn as cards (:mod:`.answers`) and sent as
  replies in the message's thread (:mod:`.client`);
- ``card.action.trigger`` — claimed on its event id, the quick part done on the
  bot's loop within :data:`ACTION_TIMEOUT_S`, the toast returned, the slow
  part (cards) sent afterwards.

The dispatcher calls handlers synchronously from whatever thread delivers the
event: the long connection's thread (:mod:`.ws`) or a worker thread of the HTTP
adapter (:mod:`.http`) — never the bot's loop itself, so a handler may wait
briefly on the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, Literal, cast

import lark_oapi as lark
from lark_oapi.core.json import JSON
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTriggerResponse
from starlette.routing import BaseRoute

from bot.cards.chat import chat_phrases
from bot.cards.escape import feishu_text
from bot.cards.feishu import ACTION_FULL_REPORT
from bot.config import Settings
from bot.errors import ConfigError, PrhubError
from bot.handlers.core import Conversation, Core, DigestReply
from bot.handlers.feishu.actions import ActionReply, CardAction, Send, Toast, read_action, respond
from bot.handlers.feishu.answers import feishu_cards, note_card
from bot.handlers.feishu.client import FeishuClient, Target
from bot.handlers.feishu.dedup import Deduper
from bot.handlers.feishu.events import IncomingMessage, MessageReceived, read_message
from bot.handlers.feishu.http import events_route
from bot.handlers.feishu.ws import ClientFactory, LongConnection
from bot.handlers.intents import parse_intent
from bot.models import Language

__all__ = ["ACTION_TIMEOUT_S", "FeishuBot", "FeishuMode", "running"]

FeishuMode = Literal["ws", "http"]
"""How Feishu reaches the bot: the long connection, or ``POST /feishu/events``."""

log = logging.getLogger(__name__)

ACTION_TIMEOUT_S = 2.5
"""How long a card callback may take before it answers with a "busy" toast (Feishu allows 3 s)."""


class FeishuBot:
    """The handlers and the dispatcher.

    Args:
        client: the Open API client.
        core: the shared core (intents to replies).
        deduper: message/event claims.
        verification_token: ``FEISHU_VERIFICATION_TOKEN`` (checked on HTTP events; may be empty).
        encrypt_key: ``FEISHU_ENCRYPT_KEY`` (decrypts and signs HTTP events; may be empty).
        language: the default language of toasts.
    """

    def __init__(self, *, client: FeishuClient, core: Core, deduper: Deduper,
                 verification_token: str = "", encrypt_key: str = "", language: Language = "zh") -> None:
        self.client = client
        self.core = core
        self._deduper = deduper
        self._language: Language = language
        self._verification_token = verification_token
        self._encrypt_key = encrypt_key
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open_id = ""
        self._tasks: set[asyncio.Task[None]] = set()
        self.dispatcher: Any = None

    async def start(self) -> None:
        """Learn the bot's ``open_id``, remember the running loop and build the dispatcher.

        Raises:
            FeishuAPIError: the bot-info call failed (wrong app id or secret, unreachable API).
        """
        self._open_id = await self.client.bot_open_id()
        self._loop = asyncio.get_running_loop()
        self.dispatcher = (
            lark.EventDispatcherHandler.builder(self._encrypt_key, self._verification_token)
            .register_p2_im_message_receive_v1(self._on_message)
            .register_p2_card_action_trigger(self._on_card_action)
            .build()
        )

    @property
    def open_id(self) -> str:
        """The bot's own ``open_id`` (empty before :meth:`start`)."""
        return self._open_id

    async def drain(self) -> None:
        """Wait until every reply scheduled so far has been sent (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # -- dispatcher callbacks (run in the delivering thread) ------------------------------------

    def _on_message(self, data: Any) -> None:
        payload = cast("MessageReceived", _as_dict(data))
        message = read_message(payload, bot_open_id=self._open_id)
        if message is not None:
            self._spawn(self.handle_message(message))

    def _on_card_action(self, data: Any) -> Any:
        action = read_action(_as_dict(data))
        if action is None:
            return P2CardActionTriggerResponse({})
        future = self._call(self.handle_action(action))
        try:
            body = future.result(timeout=ACTION_TIMEOUT_S)
        except concurrent.futures.TimeoutError:
            body = {"toast": Toast(type="info", content="…")}
        return P2CardActionTriggerResponse(body)

    # -- on the bot's loop --------------------------------------------------------------------

    async def handle_message(self, message: IncomingMessage) -> None:
        """Answer ``message`` once: claim it, parse the intent, reply with cards in its thread."""
        if not await self._deduper.first_message(message.message_id, message.event_id):
            log.info("feishu message %s already answered", message.message_id)
            return
        intent = parse_intent(message.text)
        conversation = Conversation(platform="feishu", channel=message.chat_id, user=message.sender_open_id)
        reply = await self.core.answer(intent, conversation)
        cards = feishu_cards(reply)
        sent = await self.client.send_cards(Target(reply_to=message.message_id, in_thread=True), cards,
                                            key=message.message_id)
        if isinstance(reply, DigestReply) and len(cards) > 1 and sent:
            await self._deduper.first_full_report(sent[0])  # the thread holds it all: 完整报告 posts nothing more

    async def handle_action(self, action: CardAction) -> dict[str, Any]:
        """The callback body for ``action``; its follow-up (cards) is scheduled, not awaited."""
        lang: Language = "en" if action.value.get("lang") == "en" else self._language
        if action.event_id and not await self._deduper.first_event(action.event_id):
            return {"toast": Toast(type="info", content="…")}
        if (action.value.get("action") == ACTION_FULL_REPORT and action.message_id
                and not await self._deduper.first_full_report(action.message_id)):
            return {"toast": Toast(type="info", content=ALREADY_IN_THREAD[lang])}
        reply: ActionReply = await respond(action, self.core, language=lang)
        if reply.follow_up is not None and action.message_id:
            target = Target(reply_to=action.message_id, in_thread=True)
            key = f"action:{action.event_id}"

            async def send(cards: list[dict[str, Any]]) -> None:
                await self.client.send_cards(target, cards, key=key)

            self._spawn(self._follow(reply.follow_up, send, action, lang))
        return reply.response()

    async def _follow(self, follow_up: Callable[[Send], Awaitable[None]], send: Send, action: CardAction,
                      lang: Language) -> None:
        """Run a button's follow-up; on failure give its claim back and say so in the thread."""
        full = action.value.get("action") == ACTION_FULL_REPORT
        try:
            await follow_up(send)
        except PrhubError as exc:
            if full:
                await self._deduper.release_full_report(action.message_id)
            text = feishu_text(chat_phrases(lang).error.format(message=str(exc)))
            await send([note_card("prhub", text, template="red")])
        except BaseException:
            if full:
                await self._deduper.release_full_report(action.message_id)
            raise

    # -- plumbing -----------------------------------------------------------------------------

    def _call(self, coro: Coroutine[Any, Any, dict[str, Any]]) -> concurrent.futures.Future[dict[str, Any]]:
        if self._loop is None:
            coro.close()
            raise RuntimeError("FeishuBot.start() was not awaited")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` as a task on the bot's loop (from any thread); failures are logged."""
        if self._loop is None:
            coro.close()
            raise RuntimeError("FeishuBot.start() was not awaited")

        def create() -> None:
            task = asyncio.ensure_future(coro)
            self._tasks.add(task)
            task.add_done_callback(self._done)

        self._loop.call_soon_threadsafe(create)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("feishu handler failed", exc_info=task.exception())


ALREADY_IN_THREAD: dict[Language, str] = {
    "zh": "完整报告已在这条消息的话题里",
    "en": "The full report is already in this thread",
}


def _as_dict(data: Any) -> dict[str, Any]:
    """An SDK event object back as the JSON dict it was parsed from (``None`` fields dropped)."""
    value = json.loads(JSON.marshal(data) or "{}")
    return value if isinstance(value, dict) else {}


@asynccontextmanager
async def running(settings: Settings, core: Core, claims: Deduper, *, mode: FeishuMode,
                  client_factory: ClientFactory | None = None) -> AsyncIterator[list[BaseRoute]]:
    """The Feishu bot, running while the context is open (``prhub serve --feishu ws|http``).

    Yields:
        The routes to mount on the bot's HTTP server: ``[POST /feishu/events]``
        in ``http`` mode, none in ``ws`` mode (the long connection runs in its
        own thread and is closed on exit).

    Args:
        settings: ``FEISHU_APP_ID``, ``FEISHU_APP_SECRET``, ``FEISHU_VERIFICATION_TOKEN``,
            ``FEISHU_ENCRYPT_KEY``, ``PRHUB_FEISHU_API_URL`` come from here.
        core: the shared core.
        claims: the de-duplication (on the bot's Redis store).
        client_factory: the long connection's SDK client class (tests replace its connection step).

    Raises:
        ConfigError: the app id or secret is missing.
        FeishuAPIError: the bot-info call failed (wrong credentials, API unreachable).
    """
    if not settings.feishu_app_id or settings.feishu_app_secret is None:
        raise ConfigError("Feishu needs FEISHU_APP_ID and FEISHU_APP_SECRET (or --feishu off)")
    secret = settings.feishu_app_secret.get_secret_value()
    client = FeishuClient(app_id=settings.feishu_app_id, app_secret=secret, base_url=settings.feishu_api_url)
    bot = FeishuBot(
        client=client, core=core, deduper=claims, language=settings.language,
        verification_token=_secret(settings.feishu_verification_token),
        encrypt_key=_secret(settings.feishu_encrypt_key),
    )
    await bot.start()
    if mode == "http":
        try:
            yield [events_route(bot.dispatcher)]
        finally:
            await bot.drain()
        return
    connection = LongConnection(app_id=settings.feishu_app_id, app_secret=secret, dispatcher=bot.dispatcher,
                                domain=settings.feishu_api_url, client_factory=client_factory)
    connection.start()
    try:
        yield []
    finally:
        await asyncio.to_thread(connection.stop)
        await bot.drain()


def _secret(value: Any) -> str:
    return str(value.get_secret_value()) if value is not None else ""
