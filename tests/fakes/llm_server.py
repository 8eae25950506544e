"""A fake OpenAI-compatible chat-completions server for tests and benchmarks.

``POST /v1/chat/completions`` on 127.0.0.1 (a random free port), served by the
standard library's threading HTTP server in a background thread, so real
litellm talks to it exactly as to a hosted provider (``PRHUB_LLM_API_BASE`` =
:attr:`FakeLLMServer.base_url`, model ``openai/fake-model``).

Replies are scripted by a *responder*: a function from the
:class:`RecordedRequest` to a :class:`Reply`. The default one answers every
per-PR prompt with a valid analysis JSON object and every digest prompt with a
valid narrative. The helpers below build the other kinds a test needs:
fenced JSON, JSON inside prose, plain prose, a truncated reply
(``finish_reason = "length"``), 429 with ``Retry-After``, 429
``insufficient_quota``, 401, a slow reply and a hang (no answer until the
server stops). Every request is recorded in :attr:`FakeLLMServer.requests`;
``latency_s`` delays every reply.

Usage::

    with FakeLLMServer(latency_s=0.05) as fake:
        fake.responder = lambda req: prose_reply() if req.pr_number == 6046 else default_reply(req)
        ...
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

_PR_LINE = re.compile(r"^Pull request: (\S+)#(\d+)\s*$", re.M)
_DIGEST_PR = re.compile(r"^- #(\d+)\b", re.M)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received: its JSON body and headers, in arrival order (``index``)."""

    index: int
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def text(self) -> str:
        """All message contents joined (system, user, any re-ask)."""
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))

    @property
    def pr_number(self) -> int | None:
        """The PR a per-PR prompt is about (its ``Pull request: owner/name#N`` line), else ``None``."""
        found = _PR_LINE.search(self.text)
        return int(found.group(2)) if found else None

    @property
    def kind(self) -> str:
        """``pr`` for a per-PR analysis prompt, ``digest`` for the narrative prompt."""
        return "pr" if self.pr_number is not None else "digest"

    @property
    def is_reask(self) -> bool:
        """Whether this is a second attempt (the conversation already holds an assistant turn)."""
        return any(m.get("role") == "assistant" for m in self.body.get("messages", []))


@dataclass(frozen=True)
class Reply:
    """What the server answers.

    ``content`` is the assistant message (``None`` with status 200: the default
    content for the request); ``error`` is the JSON error object of a non-200
    reply; ``delay_s`` is added to the server's latency; ``hang`` never answers
    (until the server stops).
    """

    status: int = 200
    content: str | None = None
    finish_reason: str = "stop"
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    delay_s: float = 0.0
    hang: bool = False
    prompt_tokens: int = 900
    completion_tokens: int = 300


def analysis_object(number: int, *, importance: int = 6, summary: str | None = None) -> dict[str, Any]:
    """A valid per-PR analysis reply for PR ``number``."""
    return {
        "summary": summary or f"LLM summary of PR #{number}: what it changes and why.",
        "change_type": "fix",
        "importance": importance,
        "insight": 6,
        "risks": [
            {"kind": "model_observation", "title": "Model observation", "detail": f"Noted by the model for #{number}.",
             "evidence": ["not/a/file/of/this/pr.py"]},
        ],
        "recommendation": {"level": "skim", "minutes": 7, "reason": f"LLM reason for #{number}.",
                           "focus": ["invented/path/nowhere.py", "the design of the change"]},
        "key_points": [f"LLM key point of #{number}"],
    }


def narrative_object(numbers: list[int]) -> dict[str, Any]:
    """A valid digest narrative naming the first PRs of the prompt."""
    refs = ", ".join(f"#{n}" for n in numbers[:3])
    return {
        "executive_summary": f"LLM executive summary: the week centres on {refs}.",
        "highlights": [f"LLM highlight about #{n}" for n in numbers[:3]],
        "trend_notes": {"trainer": "LLM trend note for trainer", "no-such-label": "ignored"},
        "suggestions": [f"LLM suggestion: re-test {refs}"],
    }


def default_content(request: RecordedRequest) -> str:
    """The default assistant content: an analysis for a PR prompt, a narrative otherwise."""
    if request.pr_number is not None:
        return json.dumps(analysis_object(request.pr_number))
    numbers = [int(n) for n in _DIGEST_PR.findall(request.text)]
    return json.dumps(narrative_object(numbers))


def default_reply(request: RecordedRequest) -> Reply:
    """The default responder: always a valid reply."""
    return Reply(content=default_content(request))


def fenced_reply(obj: dict[str, Any]) -> Reply:
    """The JSON object inside a Markdown code fence, with a line of prose before it."""
    return Reply(content="Here is the analysis:\n```json\n" + json.dumps(obj, indent=2) + "\n```\n")


def prose_around_reply(obj: dict[str, Any]) -> Reply:
    """The JSON object with prose before and after it, no fence."""
    return Reply(content="Sure. " + json.dumps(obj) + " Hope this helps!")


def prose_reply() -> Reply:
    """No JSON at all."""
    return Reply(content="This pull request looks fine to me; I would skim it.")


def truncated_reply(obj: dict[str, Any]) -> Reply:
    """Half of the JSON object and ``finish_reason = "length"``."""
    text = json.dumps(obj)
    return Reply(content=text[: len(text) // 2], finish_reason="length")


def rate_limited(retry_after_s: float = 1) -> Reply:
    """429 with ``Retry-After`` (a transient rate limit)."""
    return Reply(status=429, headers={"Retry-After": f"{retry_after_s:g}"},
                 error={"message": "Rate limit reached, retry later", "type": "requests",
                        "code": "rate_limit_exceeded"})


def quota_exceeded() -> Reply:
    """429 whose error code says the quota is spent (OpenAI's ``insufficient_quota``)."""
    return Reply(status=429, error={"message": "You exceeded your current quota, please check your plan.",
                                    "type": "insufficient_quota", "code": "insufficient_quota"})


def unauthorized() -> Reply:
    """401: the key is wrong."""
    return Reply(status=401, error={"message": "Incorrect API key provided.", "type": "invalid_request_error",
                                    "code": "invalid_api_key"})


def slow_reply(delay_s: float) -> Callable[[RecordedRequest], Reply]:
    """A responder whose valid replies take ``delay_s`` extra seconds."""
    return lambda request: Reply(content=default_content(request), delay_s=delay_s)


def hang() -> Reply:
    """Never answer (the connection stays open until the server stops)."""
    return Reply(hang=True)


class _Server(ThreadingHTTPServer):
    """The standard library's threading server with a listen backlog a provider would have.

    Its default (``request_queue_size = 5``) makes the kernel drop the connection attempts past
    the fifth when a client opens 8 or 16 at once (the analyzer's first wave; this HTTP/1.0 server
    closes every connection, so every request opens one) and the client's TCP stack tries again
    one second later: a stall no hosted provider causes, which benchmarks would charge to the client.
    """

    request_queue_size = 128


class FakeLLMServer:
    """The fake server; a context manager that starts and stops it.

    Args:
        latency_s: seconds added before every reply.
        responder: the script; default :func:`default_reply`. May be replaced while running.
    """

    def __init__(self, *, latency_s: float = 0.0,
                 responder: Callable[[RecordedRequest], Reply] = default_reply) -> None:
        self.latency_s = latency_s
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-llm", daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — the OpenAI-style base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def pr_requests(self) -> list[RecordedRequest]:
        """The per-PR requests received so far."""
        with self._lock:
            return [r for r in self.requests if r.kind == "pr"]

    def reset(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self.requests.clear()

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(index=len(self.requests), path=path, headers=headers, body=body)
            self.requests.append(request)
            return request

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                request = fake._record(self.path, dict(self.headers.items()), body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}, {})
                    return
                reply = fake.responder(request)
                if reply.hang:
                    fake._stopping.wait(600)
                    return
                if fake.latency_s + reply.delay_s > 0 and fake._stopping.wait(fake.latency_s + reply.delay_s):
                    return
                if reply.status != 200:
                    self._send(reply.status, {"error": reply.error or {"message": "error"}}, reply.headers)
                    return
                content = reply.content if reply.content is not None else default_content(request)
                self._send(200, {
                    "id": f"chatcmpl-fake-{request.index}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": str(body.get("model", "fake-model")),
                    "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                              "total_tokens": reply.prompt_tokens + reply.completion_tokens},
                }, reply.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout); nothing to answer

        return Handler
