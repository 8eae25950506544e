"""The Feishu bot's wiring: lark-oapi's event dispatcher, the handlers, and the loop they run on.

:class:`FeishuBot` registers two handlers on an ``EventDispatcherHandler``:

- ``im.message.receive_v1`` — read the message (:mod:`.events`); if it is for
  the bot, hand it to the bot's event loop and return at once (Feishu wants an
  answer within 3 seconds); there it is claimed (:mod:`bot.claims`: Feishu delivers at
  least once and retries an event it thinks went unanswered — 15 s, 5 min, 1 h, 6 h later —
  possibly under a new ``event_id``, so the ``message_id`` is claimed as well as the event id),
  parsed into an intent (:mod:`bot.handlers.intents`), answered by the shared core
  (:mod:`bot.handlers.core`), drawn as cards (:mod:`bot.cards.chat`) and sent as
  replies in the message's thread (:mod:`bot.delivery.feishu`);
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
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, Literal, cast

import lark_oapi as lark
from lark_oapi.core.json import JSON
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTriggerResponse
from starlette.routing import BaseRoute

from bot.cards.actions import ACTION_ANALYZE_PR, ACTION_FULL_REPORT, ACTION_OPEN_WINDOW
from bot.cards.chat import render_note_feishu
from bot.cards.escape import feishu_text
from bot.cards.i18n import ask_phrases, chat_phrases, error_text
from bot.claims import Claims, full_report_key, pr_answer_key, seen_key
from bot.deadline import on_long_wait, once
from bot.delivery import Place, mark_full_report, post_reply, reply_extras
from bot.delivery.feishu import FeishuAPIError, FeishuDeliverer, Target
from bot.errors import PrhubError
from bot.handlers.core import Conversation, Core, answer_once, is_slow
from bot.handlers.feishu.actions import ActionReply, CardAction, Send, Toast, read_action, respond
from bot.handlers.feishu.events import IncomingMessage, MessageReceived, read_message
from bot.handlers.feishu.http import events_route
from bot.handlers.feishu.ws import ClientFactory, LongConnection
from bot.handlers.intents import parse_intent
from bot.models import Language
from bot.replies import DigestReply, Reply, is_public

__all__ = ["ACTION_TIMEOUT_S", "FeishuBot", "FeishuMode", "running"]

FeishuMode = Literal["ws", "http"]
"""How Feishu reaches the bot: the long connection, or ``POST /feishu/events``."""

log = logging.getLogger(__name__)

ACTION_TIMEOUT_S = 2.5
"""How long a card callback may take before it answers with a "busy" toast (Feishu allows 3 s)."""


class FeishuBot:
    """The handlers and the dispatcher.

    Args:
        deliverer: the Feishu deliverer (the process's one Open API client).
        core: the shared core (intents to replies).
        claims: message, event and full-report claims.
        verification_token: ``FEISHU_VERIFICATION_TOKEN`` (checked on HTTP events; may be empty).
        encrypt_key: ``FEISHU_ENCRYPT_KEY`` (decrypts and signs HTTP events; may be empty).
        language: the default language of toasts.
    """

    def __init__(self, *, deliverer: FeishuDeliverer, core: Core, claims: Claims,
                 verification_token: str = "", encrypt_key: str = "", language: Language = "zh") -> None:
        self.deliverer = deliverer
        self.core = core
        self.claims = claims
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
        self._open_id = await self.deliverer.client.bot_open_id()
        self._loop = asyncio.get_running_loop()
        keys = ("", "") if self.decrypt_here else (self._encrypt_key, self._verification_token)
        self.dispatcher = (
            lark.EventDispatcherHandler.builder(*keys)
            .register_p2_im_message_receive_v1(self._on_message)
            .register_p2_card_action_trigger(self._on_card_action)
            .build()
        )

    @property
    def decrypt_here(self) -> bool:
        """An encrypt key without a verification token: the HTTP route decrypts the events itself, once
        their signature holds (:func:`bot.handlers.feishu.http.events_route`)."""
        return bool(self._encrypt_key) and not self._verification_token

    def events_route(self) -> BaseRoute:
        """``POST /feishu/events`` for this bot's dispatcher and keys."""
        return events_route(self.dispatcher, encrypt_key=self._encrypt_key, decrypt_here=self.decrypt_here)

    @property
    def open_id(self) -> str:
        """The bot's own ``open_id`` (empty before :meth:`start`)."""
        return self._open_id

    async def drain(self) -> None:
        """Wait until every reply scheduled so far has been sent (tests, shutdown)."""
        await asyncio.sleep(0)  # tasks handed over from this loop's own thread start on its next turn
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
        keys = [seen_key("feishu", "msg", message.message_id)]
        if message.event_id:
            keys.append(seen_key("feishu", "event", message.event_id))
        settings = self.core.settings
        intent = await asyncio.to_thread(parse_intent, message.text, hosts=settings.pr_hosts,
                                         max_chars=settings.max_message_chars)
        direct = message.chat_type == "p2p"
        conversation = Conversation(platform="feishu", channel=message.chat_id, user=message.sender_open_id,
                                    direct=direct, thread=message.thread_id or message.message_id)
        lang = await self.core.reply_language(intent, conversation)
        place = Place(message.chat_id, thread=message.message_id)

        async def rate_limited(seconds: float) -> None:
            text = chat_phrases(lang).rate_limited.format(minutes=max(1, math.ceil(seconds / 60)))
            await self.deliverer.post(place, [render_note_feishu("prhub", feishu_text(text))],
                                      key=f"{message.message_id}:rate-limited")

        async def answer() -> None:
            on_long_wait(once(rate_limited))
            working: str | None = None
            if is_slow(intent):  # a "处理中" card, patched into the answer when it is ready
                sent = await self.deliverer.client.send_cards(Target(reply_to=message.message_id, in_thread=True),
                                                              [render_note_feishu("prhub", ask_phrases(lang).working)],
                                                              key=f"{message.message_id}:working")
                working = sent[0] if sent else None
            reply = await self.core.answer(intent, conversation)
            if not direct and not is_public(reply) and await self._ephemeral(message, reply, working, lang):
                return
            await self._deliver(message, reply, working)

        async def tell() -> None:
            words = chat_phrases(lang)
            await self.deliverer.post(place, [render_note_feishu("prhub", feishu_text(words.failed), template="red")],
                                      key=f"failed:{message.message_id}")

        what = f"feishu message {message.message_id} (event {message.event_id or '-'}, {type(intent).__name__})"
        await answer_once(self.claims, keys, answer, what=what, tell=tell, deadline_s=settings.answer_deadline_s,
                          attempts=settings.answer_attempts)

    async def _ephemeral(self, message: IncomingMessage, reply: Reply, working: str | None,
                         lang: Language) -> bool:
        """Show ``reply`` only to the asker (subscriptions, help, questions back, errors in a group), with
        the ephemeral card API; ``False`` when Feishu refused it (the reply then goes to the thread)."""
        try:
            for card in self.deliverer.reply_messages(reply):
                await self.deliverer.client.send_ephemeral(message.chat_id, message.sender_open_id, card)
        except FeishuAPIError as exc:
            log.warning("no ephemeral card in %s (%s); replying in the thread", message.chat_id, exc)
            return False
        if working is not None:  # the "处理中" card says where the answer went
            done = render_note_feishu("prhub", ask_phrases(lang).only_you)
            await self._patch_or_send(working, done, message)
        return True

    async def _deliver(self, message: IncomingMessage, reply: Reply, working: str | None) -> None:
        """Post ``reply`` in the message's thread: into the "处理中" card first when there is one."""
        place = Place(message.chat_id, thread=message.message_id)
        if working is None:
            # a digest's thread that holds every card is marked complete: 完整报告 posts nothing more
            await post_reply(self.deliverer, self.claims, place, reply, key=message.message_id)
            return
        cards = self.deliverer.reply_messages(reply, await reply_extras(self.deliverer, place, reply))
        await self._patch_or_send(working, cards[0], message)
        if len(cards) > 1:
            await self.deliverer.post(place, cards[1:], key=f"{message.message_id}:rest")
        if isinstance(reply, DigestReply) and len(cards) > 1:
            await mark_full_report(self.claims, "feishu", message.chat_id, working, reply.digest.window.name)

    async def _patch_or_send(self, working: str, card: dict[str, Any], message: IncomingMessage) -> None:
        try:
            await self.deliverer.client.patch_card(working, card)
        except FeishuAPIError as exc:
            log.warning("could not update the card %s (%s); sending the answer as a new one", working, exc)
            await self.deliverer.post(Place(message.chat_id, thread=message.message_id), [card],
                                      key=f"{message.message_id}:answer")

    async def handle_action(self, action: CardAction) -> dict[str, Any]:
        """The callback body for ``action``; its follow-up (cards) is scheduled, not awaited."""
        lang: Language = "en" if action.value.get("lang") == "en" else self._language
        if action.event_id and not await self.claims.first_delivery(seen_key("feishu", "event", action.event_id)):
            return {"toast": Toast(type="info", content="…")}
        if (action.value.get("action") == ACTION_FULL_REPORT and action.message_id
                and not await self.claims.take(_full_report(action))):
            return {"toast": Toast(type="info", content=chat_phrases(lang).full_report_in_thread)}
        once = _once_key(action)  # a second press of 分析此 PR or 查看 2026-W34 posts nothing new
        if once is not None and not await self.claims.take(once):
            kind = action.value.get("action")
            text = chat_phrases(lang).already_in_thread if kind == ACTION_ANALYZE_PR \
                else ask_phrases(lang).window_in_thread
            return {"toast": Toast(type="info", content=text)}
        reply: ActionReply = await respond(action, self.core, language=lang)
        if reply.follow_up is not None and action.message_id:
            place = Place(action.chat_id, thread=action.message_id)
            key = f"action:{action.event_id}"

            async def send(cards: list[dict[str, Any]]) -> None:
                await self.deliverer.post(place, cards, key=key)

            self._spawn(self._follow(reply.follow_up, send, action, lang))
        return reply.response()

    async def _follow(self, follow_up: Callable[[Send], Awaitable[None]], send: Send, action: CardAction,
                      lang: Language) -> None:
        """Run a button's follow-up; on failure give its claim back and say so in the thread."""
        claim = _full_report(action) if action.value.get("action") == ACTION_FULL_REPORT else _once_key(action)
        try:
            await follow_up(send)
        except PrhubError as exc:
            if claim is not None:
                await self.claims.release(claim)
            log.warning("a button's follow-up failed in %s: %s", action.chat_id, exc)
            text = feishu_text(chat_phrases(lang).error.format(message=error_text(exc, lang,
                                                                                  repo=action.value.get("repo"),
                                                                                  window=action.value.get("window"))))
            await send([render_note_feishu("prhub", text, template="red")])
        except BaseException:
            if claim is not None:
                await self.claims.release(claim)
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


def _full_report(action: CardAction) -> str:
    """The claim of "the full report is in the thread of the clicked card"."""
    return full_report_key("feishu", action.chat_id, action.message_id, action.value.get("window", ""))


def _once_key(action: CardAction) -> str | None:
    """The claim of a button that answers once per card thread (分析此 PR, 查看 a window), or ``None``."""
    kind = action.value.get("action")
    if not action.message_id:
        return None
    if kind == ACTION_ANALYZE_PR and action.value.get("number", "").isdigit():
        return pr_answer_key("feishu", action.chat_id, action.message_id, action.value.get("repo", ""),
                             int(action.value["number"]))
    if kind == ACTION_OPEN_WINDOW and action.value.get("window"):
        return full_report_key("feishu", action.chat_id, action.message_id, "open:" + action.value["window"])
    return None


def _as_dict(data: Any) -> dict[str, Any]:
    """An SDK event object back as the JSON dict it was parsed from (``None`` fields dropped)."""
    value = json.loads(JSON.marshal(data) or "{}")
    return value if isinstance(value, dict) else {}


@asynccontextmanager
async def running(bot: FeishuBot, *, mode: FeishuMode, app_id: str, app_secret: str, domain: str,
                  client_factory: ClientFactory) -> AsyncIterator[list[BaseRoute]]:
    """The Feishu bot, running while the context is open (``prhub serve --feishu ws|http``; :mod:`bot.app`).

    Args:
        bot: the handlers (not started yet).
        mode: ``ws`` (the long connection, in its own thread) or ``http``.
        app_id, app_secret, domain: ``FEISHU_APP_ID``, ``FEISHU_APP_SECRET``, ``PRHUB_FEISHU_API_URL``
            (the long connection's own credentials).
        client_factory: the long connection's SDK client class (:mod:`bot.app` passes
            ``lark_oapi.ws.Client``; tests replace its connection step).

    Yields:
        The routes to mount on the bot's HTTP server: ``[POST /feishu/events]``
        in ``http`` mode, none in ``ws`` mode (the long connection runs in its
        own thread and is closed on exit).

    Raises:
        FeishuAPIError: the bot-info call failed (wrong credentials, API unreachable).
    """
    await bot.start()
    if mode == "http":
        try:
            yield [bot.events_route()]
        finally:
            await bot.drain()
        return
    connection = LongConnection(app_id=app_id, app_secret=app_secret, dispatcher=bot.dispatcher, domain=domain,
                                client_factory=client_factory)
    connection.start()
    try:
        yield []
    finally:
        await asyncio.to_thread(connection.stop)
        await bot.drain()
