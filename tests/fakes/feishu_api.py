"""A fake Feishu Open API on 127.0.0.1 for the bot's tests.

Served by the standard library's threading HTTP server in a background thread
(a random free port), so lark-oapi's real client talks to it as to
``https://open.feishu.cn`` (``domain`` = :attr:`FakeFeishuAPI.base_url`). It answers:

- ``POST /open-apis/auth/v3/tenant_access_token/internal`` — a tenant token for
  the configured app id and secret (code ``10014`` otherwise);
- ``GET /open-apis/bot/v3/info`` — the bot's ``open_id`` (:data:`BOT_OPEN_ID`);
- ``POST /open-apis/im/v1/messages/{id}/reply`` and
  ``POST /open-apis/im/v1/messages?receive_id_type=chat_id`` — validates the
  message like Feishu: an ``interactive`` card must be card JSON 2.0 (schema,
  header title, known element tags, buttons with behaviors) — else ``230099``;
  content larger than :attr:`FakeFeishuAPI.max_content_bytes` — ``230025``;
  ``post`` and ``text`` content must have their shapes. A ``uuid`` seen before
  sends nothing new (Feishu's idempotency). :attr:`FakeFeishuAPI.rate_limit_next`
  makes the next sends answer HTTP 429 / ``99991400`` with ``x-ogw-ratelimit-reset``;
- ``POST /open-apis/bot/v2/hook/{id}`` — a custom-bot webhook, checking the
  signature against :attr:`FakeFeishuAPI.webhook_secret` (``19021`` when wrong)
  and the 20 KB body limit;
- ``POST /open-apis/im/v1/images`` — a multipart upload (``image_type=message``, an
  ``image`` file part that must be a PNG): answers an ``image_key`` and keeps the bytes in
  :attr:`FakeFeishuAPI.images`; :attr:`FakeFeishuAPI.refuse_images` answers ``99991672``
  (the app lacks ``im:resource``). A card's ``img`` element must name a key uploaded here and
  carry its ``alt`` (else ``230099``, as Feishu refuses an unknown image key);
- ``POST /open-apis/ephemeral/v1/send`` — a card only ``open_id`` sees in ``chat_id`` (checked like a
  card message; kept in :attr:`FakeFeishuAPI.ephemerals`);
- ``PATCH /open-apis/im/v1/messages/{id}`` — replaces a sent card's content (the card must be valid, the
  message one the fake sent as ``interactive`` with ``config.update_multi`` — else ``230099``, as
  Feishu does for a card shared with everyone; kept in :attr:`FakeFeishuAPI.patches`).

Every request is kept in :attr:`FakeFeishuAPI.calls`; every message actually
"sent" in :attr:`FakeFeishuAPI.messages`, every webhook card in
:attr:`FakeFeishuAPI.webhook_posts`.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

BOT_OPEN_ID = "ou_bot_prhub_0001"
APP_ID = "cli_test_app"
APP_SECRET = "test-secret"
TOKEN = "t-fake-tenant-token"
CARD_TAGS = {"markdown", "hr", "button", "div", "column_set", "img", "note", "plain_text"}


@dataclass(frozen=True)
class Call:
    """One request: method, path (without query), query, headers (lower-case names), JSON body."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Sent:
    """A message the fake accepted."""

    message_id: str
    kind: str  # "reply" or "create"
    target: str  # the replied-to message id, or the chat id
    msg_type: str
    content: dict[str, Any]
    reply_in_thread: bool
    uuid: str | None


def card_problem(card: Any, images: dict[str, bytes] | None = None) -> str | None:
    """Why Feishu would refuse ``card`` as card JSON 2.0, or ``None`` when it is fine (``images``: the
    uploaded image keys an ``img`` element may name; ``None``: any key)."""
    if not isinstance(card, dict) or card.get("schema") != "2.0":
        return "schema must be 2.0"
    title = ((card.get("header") or {}).get("title") or {}).get("content")
    if not isinstance(title, str) or not title:
        return "header.title.content missing"
    elements = (card.get("body") or {}).get("elements")
    if not isinstance(elements, list) or not elements:
        return "body.elements must be a non-empty list"
    if len(elements) > 200:
        return "element exceeds the limit"
    for element in elements:
        tag = element.get("tag") if isinstance(element, dict) else None
        if tag not in CARD_TAGS:
            return f"unknown tag {tag!r}"
        if tag == "markdown" and not isinstance(element.get("content"), str):
            return "markdown.content must be a string"
        if tag == "img":
            key = element.get("img_key")
            alt = element.get("alt")
            if not isinstance(alt, dict) or alt.get("tag") != "plain_text" or not isinstance(alt.get("content"), str):
                return "img needs alt (plain_text)"
            if not isinstance(key, str) or (images is not None and key not in images):
                return f"image key not found: {key!r}"
        if tag == "button":
            text = (element.get("text") or {}).get("content")
            behaviors = element.get("behaviors")
            if not isinstance(text, str) or not isinstance(behaviors, list) or not behaviors:
                return "button needs text and behaviors"
            for behavior in behaviors:
                kind = behavior.get("type")
                if kind == "callback" and not isinstance(behavior.get("value"), dict):
                    return "callback behavior needs a value object"
                if kind == "open_url" and not isinstance(behavior.get("default_url"), str):
                    return "open_url behavior needs default_url"
                if kind not in ("callback", "open_url"):
                    return f"unknown behavior {kind!r}"
    return None


def _post_problem(content: Any) -> str | None:
    if not isinstance(content, dict) or not content:
        return "post content must be an object"
    for body in content.values():
        if not isinstance(body, dict) or not isinstance(body.get("content"), list):
            return "post needs content paragraphs"
        for paragraph in body["content"]:
            if not isinstance(paragraph, list) or not all(isinstance(n, dict) and "tag" in n for n in paragraph):
                return "post paragraphs are lists of tagged nodes"
    return None


class FakeFeishuAPI:
    """The fake server; use as a context manager.

    Attributes:
        max_content_bytes: content larger than this is refused with ``230025`` (Feishu: ~30 KB).
        rate_limit_next: how many of the next sends answer 429 (each decrements it).
        webhook_secret: the secret webhook signatures are checked against (``None``: unsigned).
    """

    def __init__(self, *, max_content_bytes: int = 30_000) -> None:
        self.max_content_bytes = max_content_bytes
        self.rate_limit_next = 0
        self.webhook_secret: str | None = None
        self.calls: list[Call] = []
        self.messages: list[Sent] = []
        self.webhook_posts: list[dict[str, Any]] = []
        self.images: dict[str, bytes] = {}
        self.refuse_images = False
        self.ephemerals: list[dict[str, Any]] = []
        self.patches: list[tuple[str, dict[str, Any]]] = []
        self._uuids: dict[str, str] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeFeishuAPI:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def replies(self) -> list[Sent]:
        """The accepted messages that were replies."""
        return [m for m in self.messages if m.kind == "reply"]

    def _answer(self, call: Call) -> tuple[int, dict[str, str], dict[str, Any]]:
        path = call.path
        if path == "/open-apis/auth/v3/tenant_access_token/internal":
            body = call.body or {}
            if body.get("app_id") != APP_ID or body.get("app_secret") != APP_SECRET:
                return 200, {}, {"code": 10014, "msg": "app secret invalid"}
            return 200, {}, {"code": 0, "msg": "ok", "tenant_access_token": TOKEN, "expire": 7200}
        if path.startswith("/open-apis/bot/v2/hook/"):
            return self._webhook(call)
        if call.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, {}, {"code": 99991663, "msg": "Invalid access token for authorization"}
        if path == "/open-apis/bot/v3/info" and call.method == "GET":
            return 200, {}, {"code": 0, "msg": "ok",
                             "bot": {"open_id": BOT_OPEN_ID, "app_name": "prhub", "activate_status": 2}}
        if call.method == "POST" and path == "/open-apis/im/v1/images":
            return self._image(call)
        if call.method == "POST" and path == "/open-apis/ephemeral/v1/send":
            return self._ephemeral(call)
        if call.method == "PATCH" and path.startswith("/open-apis/im/v1/messages/"):
            return self._patch(call)
        if call.method == "POST" and path.startswith("/open-apis/im/v1/messages"):
            return self._message(call)
        return 404, {}, {"code": 404, "msg": f"no such API {call.method} {path}"}

    def _image(self, call: Call) -> tuple[int, dict[str, str], dict[str, Any]]:
        if self.refuse_images:
            return 400, {}, {"code": 99991672, "msg": "Access denied. One of the following scopes is required: "
                                                      "[im:resource]"}
        form = call.body if isinstance(call.body, dict) else {}
        image = form.get("image")
        if form.get("image_type") != "message" or not isinstance(image, bytes):
            return 400, {}, {"code": 234001, "msg": "Invalid request param."}
        if not image.startswith(b"\x89PNG\r\n\x1a\n"):
            return 400, {}, {"code": 234011, "msg": "Can't recognize image format."}
        with self._lock:
            key = f"img_v3_fake_{len(self.images) + 1:04d}"
            self.images[key] = image
        return 200, {}, {"code": 0, "msg": "success", "data": {"image_key": key}}

    def _message(self, call: Call) -> tuple[int, dict[str, str], dict[str, Any]]:
        parts = call.path.strip("/").split("/")
        body = call.body if isinstance(call.body, dict) else {}
        if len(parts) == 6 and parts[5] == "reply":
            kind, target = "reply", parts[4]
        elif len(parts) == 4 and call.query.get("receive_id_type") == "chat_id":
            kind, target = "create", str(body.get("receive_id", ""))
        else:
            return 400, {}, {"code": 99992402, "msg": "field validation failed"}
        if self.rate_limit_next > 0:
            self.rate_limit_next -= 1
            return 429, {"x-ogw-ratelimit-reset": "1"}, {"code": 99991400, "msg": "request trigger frequency limit"}
        raw = body.get("content")
        msg_type = body.get("msg_type")
        if not isinstance(raw, str):
            return 400, {}, {"code": 230001, "msg": "content must be a string"}
        if len(raw.encode()) > self.max_content_bytes:
            return 400, {}, {"code": 230025, "msg": "The length of the message content reaches its limit."}
        try:
            content = json.loads(raw)
        except ValueError:
            return 400, {}, {"code": 230099, "msg": "Failed to create card content, ext=ErrCode: 200621"}
        problem = None
        if msg_type == "interactive":
            with self._lock:
                images = dict(self.images)
            problem = card_problem(content, images)
        elif msg_type == "post":
            problem = _post_problem(content)
        elif msg_type == "text":
            problem = None if isinstance(content, dict) and isinstance(content.get("text"), str) else "bad text"
        else:
            problem = f"unknown msg_type {msg_type!r}"
        if problem is not None:
            return 400, {}, {"code": 230099, "msg": f"Failed to create card content, ext=ErrMsg: {problem}"}
        uuid = body.get("uuid")
        with self._lock:
            if isinstance(uuid, str) and uuid in self._uuids:
                return 200, {}, {"code": 0, "msg": "success", "data": {"message_id": self._uuids[uuid]}}
            message_id = f"om_fake_{len(self.messages) + 1:04d}"
            if isinstance(uuid, str):
                self._uuids[uuid] = message_id
            self.messages.append(Sent(message_id=message_id, kind=kind, target=target, msg_type=str(msg_type),
                                      content=content, reply_in_thread=bool(body.get("reply_in_thread")),
                                      uuid=uuid if isinstance(uuid, str) else None))
        return 200, {}, {"code": 0, "msg": "success", "data": {"message_id": message_id, "chat_id": "oc_fake"}}

    def _ephemeral(self, call: Call) -> tuple[int, dict[str, str], dict[str, Any]]:
        body = call.body if isinstance(call.body, dict) else {}
        if not str(body.get("chat_id", "")).startswith("oc_") or not body.get("open_id"):
            return 400, {}, {"code": 99992402, "msg": "field validation failed"}
        problem = card_problem(body.get("card"), dict(self.images))
        if body.get("msg_type") != "interactive" or problem is not None:
            return 400, {}, {"code": 230099, "msg": f"Failed to create card content, ext=ErrMsg: {problem}"}
        with self._lock:
            self.ephemerals.append(body)
            message_id = f"om_ephemeral_{len(self.ephemerals):04d}"
        return 200, {}, {"code": 0, "msg": "success", "data": {"message_id": message_id}}

    def _patch(self, call: Call) -> tuple[int, dict[str, str], dict[str, Any]]:
        message_id = call.path.rstrip("/").rsplit("/", 1)[-1]
        body = call.body if isinstance(call.body, dict) else {}
        sent = next((m for m in self.messages if m.message_id == message_id), None)
        if sent is None or sent.msg_type != "interactive":
            return 400, {}, {"code": 230001, "msg": "message not found or not a card"}
        if not (sent.content.get("config") or {}).get("update_multi"):
            return 400, {}, {"code": 230099, "msg": "a card updated for everyone needs config.update_multi"}
        try:
            content = json.loads(str(body.get("content", "")))
        except ValueError:
            return 400, {}, {"code": 230099, "msg": "content is not JSON"}
        problem = card_problem(content, dict(self.images))
        if problem is not None:
            return 400, {}, {"code": 230099, "msg": f"Failed to create card content, ext=ErrMsg: {problem}"}
        with self._lock:
            self.patches.append((message_id, content))
            at = self.messages.index(sent)  # the chat shows the new card in the old one's place
            self.messages[at] = Sent(message_id=sent.message_id, kind=sent.kind, target=sent.target,
                                     msg_type=sent.msg_type, content=content, reply_in_thread=sent.reply_in_thread,
                                     uuid=sent.uuid)
        return 200, {}, {"code": 0, "msg": "success", "data": {}}

    def _webhook(self, call: Call) -> tuple[int, dict[str, str], dict[str, Any]]:
        body = call.body if isinstance(call.body, dict) else {}
        if self.webhook_secret is not None:
            timestamp = str(body.get("timestamp", ""))
            key = f"{timestamp}\n{self.webhook_secret}".encode()
            expected = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
            if body.get("sign") != expected:
                return 200, {}, {"code": 19021, "msg": "sign match fail or timestamp is not within one hour"}
        if len(json.dumps(body, ensure_ascii=False).encode()) > 20_000:
            return 200, {}, {"code": 9499, "msg": "request body too large"}
        problem = card_problem(body.get("card"), {})  # a webhook has no image of its own to show
        if body.get("msg_type") != "interactive" or problem is not None:
            return 200, {}, {"code": 9499, "msg": f"bad card: {problem}"}
        with self._lock:
            self.webhook_posts.append(body)
        return 200, {}, {"code": 0, "msg": "success", "data": {}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                kind = self.headers.get("Content-Type") or ""
                if kind.startswith("multipart/form-data"):
                    body: Any = _form(kind, data)
                else:
                    try:
                        body = json.loads(data) if data else None
                    except ValueError:
                        body = None
                url = urlsplit(self.path)
                call = Call(method=method, path=url.path, query={k: v[0] for k, v in parse_qs(url.query).items()},
                            headers={k.lower(): v for k, v in self.headers.items()}, body=body)
                with fake._lock:
                    fake.calls.append(call)
                status, headers, answer = fake._answer(call)
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def _form(content_type: str, data: bytes) -> dict[str, Any]:
    """A ``multipart/form-data`` body: text fields as ``str``, file parts as ``bytes``."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + data)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(payload, bytes):
            continue
        fields[name] = payload if part.get_filename() else payload.decode()
    return fields
