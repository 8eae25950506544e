"""A local fake of the Slack Web API and of ``response_url`` endpoints, on 127.0.0.1.

Records every call (:attr:`FakeSlack.calls`) and answers like Slack:

- ``POST /api/auth.test`` — the bot's identity (``user_id`` :data:`BOT_USER_ID`);
- ``POST /api/apps.connections.open`` — with the app-level token, the URL of the fake Socket Mode server
  (:mod:`fakes.slack_socket`, when one runs: :attr:`FakeSlack.socket_url`);
- ``POST /api/chat.postMessage`` / ``chat.postEphemeral`` — ``{"ok": true, "ts": …}``, or
  Slack's error codes for what Slack rejects: ``not_authed`` / ``invalid_auth`` (token),
  ``channel_not_found``, ``not_in_channel`` (channels in :attr:`FakeSlack.not_member`),
  ``no_text`` (empty ``text``), ``invalid_blocks`` (more than 50 blocks, or a block
  slack_sdk's models reject), ``msg_too_long``; ``rate_limit_next`` makes the next
  call of a method answer HTTP 429 with ``Retry-After``; ``fail_next`` makes the next N calls
  of a method answer HTTP 503 (a Slack outage); ``delay_s`` slows every Web API call;
- ``POST /api/chat.update`` — a message posted here (``channel`` + ``ts``) replaced, checked like a
  new one; ``message_not_found`` for any other ``ts``;
- ``GET /api/users.info`` — a person of :attr:`FakeSlack.users` (``{"id", "tz", …}``, as Slack gives it to an
  app with ``users:read``), else ``user_not_found``;
- ``POST /services/{T}/{B}/{secret}`` — an incoming webhook (:meth:`FakeSlack.incoming_webhook` makes one):
  ``ok``, or HTTP 400 ``no_text`` / ``invalid_blocks`` (the limits above; a button that calls an app back —
  no ``url`` — is ``invalid_blocks`` here, since no app answers it), 404 ``no_service`` for an unknown URL, 429
  with ``Retry-After`` after ``rate_limit_next("incoming-webhook")``; accepted messages in
  :attr:`FakeSlack.webhook_posts`;
- ``POST /response/{id}`` — a ``response_url``: ``ok``, or HTTP 400 with ``no_text`` /
  ``invalid_blocks`` (as Slack's webhooks answer); after 5 posts ``used_url``;
- file uploads as slack_sdk's ``files_upload_v2`` makes them: ``files.getUploadURLExternal``
  (an upload URL on this fake and a file id), ``POST /upload/{id}`` (the bytes, kept in
  :attr:`FakeSlack.files`), ``files.completeUploadExternal`` (shares the files in ``channel_id``;
  ``not_in_channel`` for channels in :attr:`FakeSlack.not_member`; :attr:`FakeSlack.refuse_uploads`
  answers that error instead), and ``GET files.info`` — like Slack, a file shows its share only
  after :attr:`FakeSlack.share_after` checks (uploads complete asynchronously). A message whose
  ``image`` block names a ``slack_file`` that is unknown, or not (yet) shown as shared in the
  message's channel, is refused with ``invalid_blocks``, as Slack refuses it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

BOT_USER_ID = "U0BOT"
BOT_TOKEN = "xoxb-test-token"
TEAM_ID = "T0TEAM"
MAX_BLOCKS = 50
MAX_TEXT = 40_000
RESPONSE_URL_USES = 5


@dataclass
class SlackFileRecord:
    """One uploaded file: its id, name, title, alt text, bytes, the channel (and thread) it is shared
    in once completed, and how many ``files.info`` checks asked about it."""

    id: str
    filename: str
    alt_txt: str
    data: bytes = b""
    title: str = ""
    channel: str | None = None
    thread_ts: str | None = None
    checks: int = 0


@dataclass
class Call:
    """One recorded request: ``method`` (``chat.postMessage``, ``response_url``, …), its
    arguments, the path and the monotonic time it arrived."""

    method: str
    args: dict[str, Any]
    path: str
    at: float = field(default_factory=time.monotonic)


class FakeSlack:
    """State of the fake; thread-safe. ``base_url`` is set once serving."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.not_member: set[str] = set()
        self.users: dict[str, dict[str, Any]] = {}
        self.base_url = ""
        self._lock = threading.Lock()
        self._ts = 1713500000_000100
        self._rate_limited: dict[str, int] = {}
        self._response_uses: dict[str, int] = {}
        self.files: dict[str, SlackFileRecord] = {}
        self.share_after = 1
        """``files.info`` shows a completed file's share from this check on (0: at once)."""
        self.broken_uploads = False
        """``files.getUploadURLExternal`` answers ``ok`` without ``upload_url`` and ``file_id`` (a malformed answer)."""
        self.refuse_uploads: str | None = None
        """An error (e.g. ``missing_scope``) ``files.completeUploadExternal`` answers instead of sharing."""
        self._failing: dict[str, int] = {}
        self.delay_s = 0.0
        """Seconds every Web API call takes before it is answered (a slow Slack)."""
        self.socket_url = ""
        """The Socket Mode server's URL ``apps.connections.open`` answers (``""``: Socket Mode is off)."""
        self.app_token = ""
        """The app-level token ``apps.connections.open`` accepts."""
        self.webhook_posts: list[dict[str, Any]] = []
        """Every message an incoming webhook accepted, in order."""
        self._webhooks: set[str] = set()

    # -- test helpers ---------------------------------------------------------------------------

    def incoming_webhook(self, name: str = "team") -> str:
        """A fresh incoming-webhook URL on this fake."""
        path = f"/services/T0TEAM/B0{name.upper()}/secret{len(self._webhooks)}"
        self._webhooks.add(path)
        return self.base_url + path

    def response_url(self, name: str) -> str:
        """A fresh ``response_url`` on this fake."""
        return f"{self.base_url}/response/{name}"

    def rate_limit_next(self, method: str, retry_after: int = 1) -> None:
        """Answer the next call of ``method`` with HTTP 429 and ``Retry-After: retry_after``."""
        with self._lock:
            self._rate_limited[method] = retry_after

    def fail_next(self, method: str, count: int = 1) -> None:
        """Answer the next ``count`` calls of ``method`` with HTTP 503 (nothing is posted)."""
        with self._lock:
            self._failing[method] = count

    def of(self, method: str) -> list[Call]:
        """The recorded calls of ``method`` that Slack accepted, in order."""
        with self._lock:
            return [c for c in self.calls if c.method == method and c.args.get("_accepted")]

    def wait_for(self, method: str, count: int, timeout: float = 20.0) -> list[Call]:
        """Block until ``count`` accepted calls of ``method`` were recorded (or ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of(method)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        return self.of(method)

    # -- the API --------------------------------------------------------------------------------

    def handle(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        """Answer one request: ``(status, headers, body)``."""
        path, _, query = path.partition("?")
        if path.startswith("/upload/"):
            return self._upload(path.removeprefix("/upload/"), body)
        args = {**dict(parse_qsl(query)), **_decode(headers.get("content-type", ""), body)}
        if path.startswith("/response/"):
            return self._response(path, args)
        if path.startswith("/services/"):
            return self._incoming(path, args)
        method = path.removeprefix("/api/")
        call = Call(method, args, path)
        if self.delay_s:
            time.sleep(self.delay_s)
        with self._lock:
            self.calls.append(call)
            retry_after = self._rate_limited.pop(method, None)
            failing = self._failing.get(method, 0)
            if failing:
                self._failing[method] = failing - 1
        if failing:
            return 503, {}, b"service unavailable"
        if retry_after is not None:
            return 429, {"Retry-After": str(retry_after)}, _json({"ok": False, "error": "ratelimited"})
        token = headers.get("authorization", "").removeprefix("Bearer ") or str(args.get("token", ""))
        if not token:
            return 200, {}, _json({"ok": False, "error": "not_authed"})
        if method == "apps.connections.open":
            if not self.socket_url or token != self.app_token:
                return 200, {}, _json({"ok": False, "error": "invalid_auth"})
            call.args["_accepted"] = True
            return 200, {}, _json({"ok": True, "url": self.socket_url})
        if token != BOT_TOKEN:
            return 200, {}, _json({"ok": False, "error": "invalid_auth"})
        if method == "auth.test":
            call.args["_accepted"] = True
            return 200, {}, _json({
                "ok": True, "url": "https://prhub-test.slack.com/", "team": "prhub test", "user": "prhub",
                "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": "B0BOT", "is_enterprise_install": False,
            })
        if method == "users.info":
            user = self.users.get(str(args.get("user", "")))
            if user is None:
                return 200, {}, _json({"ok": False, "error": "user_not_found"})
            call.args["_accepted"] = True
            return 200, {}, _json({"ok": True, "user": {"id": args["user"], **user}})
        if method.startswith("files."):
            return self._files(method, call)
        if method in ("chat.postMessage", "chat.postEphemeral"):
            error = self._check_message(args)
            if error:
                return 200, {}, _json({"ok": False, "error": error})
            call.args["_accepted"] = True
            with self._lock:
                self._ts += 100
                ts = f"{self._ts // 1_000_000}.{self._ts % 1_000_000:06d}"
            call.args["_ts"] = ts
            if method == "chat.postEphemeral":
                return 200, {}, _json({"ok": True, "message_ts": ts})
            return 200, {}, _json({"ok": True, "channel": args["channel"], "ts": ts,
                                   "message": {"text": args.get("text"), "ts": ts}})
        if method == "chat.update":
            error = self._check_message(args)
            if error:
                return 200, {}, _json({"ok": False, "error": error})
            with self._lock:
                posted = any(c.method == "chat.postMessage" and c.args.get("_accepted")
                             and c.args.get("channel") == args.get("channel") and c.args.get("_ts") == args.get("ts")
                             for c in self.calls)
            if not posted:
                return 200, {}, _json({"ok": False, "error": "message_not_found"})
            call.args["_accepted"] = True
            return 200, {}, _json({"ok": True, "channel": args["channel"], "ts": args["ts"]})
        return 200, {}, _json({"ok": False, "error": "unknown_method"})

    def _check_message(self, args: dict[str, Any]) -> str | None:
        channel = str(args.get("channel", ""))
        if not channel or channel.startswith("CGONE"):
            return "channel_not_found"
        if channel in self.not_member:
            return "not_in_channel"
        return _message_error(args) or self._image_error(args, channel)

    def _image_error(self, args: dict[str, Any], channel: str) -> str | None:
        """``invalid_blocks`` when an image block names a file not shown as shared in ``channel``."""
        blocks = args.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        for block in blocks or []:
            if block.get("type") != "image" or "slack_file" not in block:
                continue
            ref = str((block.get("slack_file") or {}).get("id", ""))
            with self._lock:
                record = self.files.get(ref)
                if record is None or record.channel != channel or record.checks < self.share_after:
                    return "invalid_blocks"
        return None

    # -- files --------------------------------------------------------------------------------

    def uploaded(self) -> list[SlackFileRecord]:
        """The files uploaded and shared, in order."""
        with self._lock:
            return [f for f in self.files.values() if f.channel is not None]

    def _upload(self, ref: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            record = self.files.get(ref)
            if record is None:
                return 404, {}, b"no such upload"
            record.data = body
            self.calls.append(Call("upload", {"file_id": ref, "bytes": len(body)}, f"/upload/{ref}"))
        return 200, {}, f"OK - {len(body)}".encode()

    def _files(self, method: str, call: Call) -> tuple[int, dict[str, str], bytes]:
        args = call.args
        if method == "files.getUploadURLExternal":
            if self.broken_uploads:
                return 200, {}, _json({"ok": True})
            with self._lock:
                ref = f"F0FAKE{len(self.files) + 1:04d}"
                self.files[ref] = SlackFileRecord(ref, str(args.get("filename", "")), str(args.get("alt_txt", "")))
            call.args["_accepted"] = True
            return 200, {}, _json({"ok": True, "upload_url": f"{self.base_url}/upload/{ref}", "file_id": ref})
        if method == "files.completeUploadExternal":
            channel = str(args.get("channel_id", ""))
            if self.refuse_uploads:
                return 200, {}, _json({"ok": False, "error": self.refuse_uploads})
            if channel in self.not_member:
                return 200, {}, _json({"ok": False, "error": "not_in_channel"})
            items = json.loads(str(args.get("files", "[]")))
            out = []
            with self._lock:
                for item in items:
                    record = self.files.get(str(item.get("id", "")))
                    if record is None or not record.data:
                        return 200, {}, _json({"ok": False, "error": "file_not_found"})
                    record.title, record.channel = str(item.get("title", "")), channel or None
                    record.thread_ts = str(args["thread_ts"]) if args.get("thread_ts") else None
                    out.append({"id": record.id, "title": record.title, "name": record.filename})
            call.args["_accepted"] = True
            return 200, {}, _json({"ok": True, "files": out})
        if method == "files.info":
            with self._lock:
                record = self.files.get(str(args.get("file", "")))
                if record is None:
                    return 200, {}, _json({"ok": False, "error": "file_not_found"})
                shown = record.channel is not None and record.checks >= self.share_after
                record.checks += 1
                shares = {"public": {record.channel: [{"ts": "1713500000.000001"}]}} if shown else {}
                file = {"id": record.id, "name": record.filename, "title": record.title,
                        "mimetype": "image/png" if shown else "", "shares": shares}
            call.args["_accepted"] = True
            return 200, {}, _json({"ok": True, "file": file})
        return 200, {}, _json({"ok": False, "error": "unknown_method"})

    def _response(self, path: str, args: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        call = Call("response_url", args, path)
        with self._lock:
            self.calls.append(call)
            uses = self._response_uses[path] = self._response_uses.get(path, 0) + 1
        if uses > RESPONSE_URL_USES:
            return 404, {}, b"used_url"
        error = _message_error(args)
        if error:
            return 400, {}, error.encode()
        call.args["_accepted"] = True
        return 200, {}, b"ok"


    def _incoming(self, path: str, args: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.calls.append(Call("incoming-webhook", args, path))
            retry_after = self._rate_limited.pop("incoming-webhook", None)
        if path not in self._webhooks:
            return 404, {}, b"no_service"
        if retry_after is not None:
            return 429, {"Retry-After": str(retry_after)}, b"rate_limited"
        error = _message_error(args)
        blocks = args.get("blocks") or []
        if error is None and any(e.get("type") != "button" or not e.get("url")
                                 for b in blocks if b.get("type") == "actions" for e in b.get("elements", [])):
            error = "invalid_blocks"
        if error:
            return 400, {}, error.encode()
        with self._lock:
            self.webhook_posts.append(args)
        return 200, {}, b"ok"


def _message_error(args: dict[str, Any]) -> str | None:
    """Slack's error code for a message it would reject, or ``None``."""
    text = args.get("text")
    if not isinstance(text, str) or not text.strip():
        return "no_text"
    if len(text) > MAX_TEXT:
        return "msg_too_long"
    blocks = args.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    if blocks is None:
        return None
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return "invalid_blocks"
    for raw in blocks:
        try:
            block = Block.parse(raw)
            if block is None:
                return "invalid_blocks"
            block.validate_json()
        except (SlackObjectFormationError, KeyError, TypeError):
            return "invalid_blocks"
    return None


def _decode(content_type: str, body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    if "json" in content_type:
        data = json.loads(body)
        return dict(data) if isinstance(data, dict) else {}
    return dict(parse_qsl(body.decode("utf-8")))


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


@contextmanager
def serve(fake: FakeSlack) -> Iterator[str]:
    """Run ``fake`` on 127.0.0.1 (a free port) in a thread; yields its base URL (also ``fake.base_url``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.do_POST()

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra, payload = fake.handle(self.path, headers, body)
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if payload.startswith(b"{") else "text/plain")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake.base_url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
