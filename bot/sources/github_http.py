"""A small typed layer over ``httpx`` for the GitHub API: rate limits, ETags, pagination, counting.

What it does for every request (REST ``GET`` and GraphQL ``POST``):

- **counts** it in :class:`RequestStats` (retries included; 304 answers apart);
- **conditional GETs**: the ``ETag`` of each 200 answer is kept in an
  :class:`ETagCache` (in memory by default; :class:`FileETagCache` keeps it
  across runs) and sent back as ``If-None-Match``; a ``304 Not Modified`` is
  answered from the cache. GitHub does not count a 304 against the primary
  limit when the request carries a token (anonymous 304s still count);
- **rate limits**, waited out with at most ``max_retries`` retries
  (tenacity), each wait announced on the ``bot.sources.github`` logger:

  ========================================  =====================================================
  answer                                    wait
  ========================================  =====================================================
  403/429 with ``X-RateLimit-Remaining: 0``  primary limit: until ``X-RateLimit-Reset`` (epoch s) + 1 s
  403/429 with ``Retry-After: N``           secondary limit: ``N`` seconds
  429, or 403 saying "secondary rate limit"  secondary limit: 60 s, doubling per retry
  GraphQL ``errors[].type == RATE_LIMITED``  as the primary limit
  500/502/503/504, network errors           1 s, doubling per retry
  ========================================  =====================================================

  A wait longer than ``max_wait_s`` is not attempted: :class:`~bot.errors.RateLimitError`
  says when to come back instead;
- **errors**: any other status ≥ 400 raises :class:`~bot.errors.GitHubError` with
  GitHub's ``message``; a 404 raises :class:`NotFound` (the callers turn it into
  :class:`~bot.errors.UnknownRepoError` or :class:`~bot.errors.PRNotFoundError`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import httpx
from cachetools import LRUCache
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from bot import __version__
from bot.errors import GitHubError, RateLimitError

__all__ = [
    "Answer",
    "CachedAnswer",
    "ETagCache",
    "FileETagCache",
    "GitHubHTTP",
    "MemoryETagCache",
    "NotFound",
    "RequestStats",
    "TokenSource",
]

log = logging.getLogger("bot.sources.github")

_SECONDARY_FLOOR_S = 60.0
_TRANSIENT_STATUSES = frozenset({500, 502, 503, 504})


ETAG_CACHE_BYTES = 32 * 1024 * 1024
"""The most response-body bytes one GitHub source keeps in memory for ``If-None-Match`` (32 MiB)."""


@dataclass
class RequestStats:
    """What one source has sent so far.

    Attributes:
        requests: HTTP requests sent, retries included (REST and GraphQL).
        not_modified: of those, 304 answers served from the ETag cache.
        graphql: of those, GraphQL queries.
        rate_limited: rate-limit answers (403/429) that were waited out or gave up.
        retries: requests repeated after a rate limit, a server error or a network error.
    """

    requests: int = 0
    not_modified: int = 0
    graphql: int = 0
    rate_limited: int = 0
    retries: int = 0
    remaining: int | None = None
    """Requests left in GitHub's rate-limit window, as the last answer's ``X-RateLimit-Remaining`` said."""

    def counted(self, *, authenticated: bool) -> int:
        """Requests that count against the primary rate limit (304s are free with a token)."""
        return self.requests - (self.not_modified if authenticated else 0)


@dataclass(frozen=True)
class CachedAnswer:
    """A 200 answer kept for conditional requests: its ``ETag``, body bytes and ``Link`` header."""

    etag: str
    body: bytes
    link: str = ""


class ETagCache(Protocol):
    """Where conditional-request answers are kept, keyed by method, URL and credentials."""

    def get(self, key: str) -> CachedAnswer | None:
        """The answer stored under ``key``, or ``None``."""
        ...

    def put(self, key: str, answer: CachedAnswer) -> None:
        """Store ``answer`` under ``key`` (replacing any earlier one)."""
        ...


class MemoryETagCache:
    """An :class:`ETagCache` in memory, bounded: the least recently used answers go once their bodies
    pass ``max_bytes`` in all (cachetools' ``LRUCache`` weighed by body size; thread-safe). A bot that
    reads many windows keeps the answers it reads again, not every answer it ever had.

    Args:
        max_bytes: the most body bytes kept (default :data:`ETAG_CACHE_BYTES`).
    """

    def __init__(self, max_bytes: int = 0) -> None:
        self._items: LRUCache[str, CachedAnswer] = LRUCache(
            maxsize=max_bytes or ETAG_CACHE_BYTES, getsizeof=lambda answer: len(answer.body) + 200)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def size_bytes(self) -> int:
        """The bytes of the bodies kept now (plus a small allowance per entry)."""
        return int(self._items.currsize)

    def get(self, key: str) -> CachedAnswer | None:
        """The answer stored under ``key``, or ``None``."""
        with self._lock:
            return self._items.get(key)

    def put(self, key: str, answer: CachedAnswer) -> None:
        """Store ``answer`` under ``key`` (an answer larger than the whole cache is not kept)."""
        with self._lock:
            try:
                self._items[key] = answer
            except ValueError:  # larger than max_bytes by itself
                self._items.pop(key, None)


class FileETagCache:
    """An :class:`ETagCache` in a directory, one JSON file per key (so re-runs of the CLI are cheap).

    Unreadable or corrupt entries count as missing. Args: ``directory`` (created on first write).
    """

    def __init__(self, directory: Path) -> None:
        self._dir = Path(directory).expanduser()

    def _file(self, key: str) -> Path:
        return self._dir / (hashlib.sha256(key.encode()).hexdigest() + ".json")

    def get(self, key: str) -> CachedAnswer | None:
        """The answer stored under ``key``, or ``None`` (also when the file is unreadable)."""
        try:
            data = json.loads(self._file(key).read_text(encoding="utf-8"))
            return CachedAnswer(etag=str(data["etag"]), body=str(data["body"]).encode(), link=str(data["link"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, answer: CachedAnswer) -> None:
        """Store ``answer`` under ``key`` (write to a temporary file, then rename)."""
        self._dir.mkdir(parents=True, exist_ok=True)
        target = self._file(key)
        tmp = target.with_suffix(f".{threading.get_ident()}.tmp")
        payload = {"etag": answer.etag, "body": answer.body.decode("utf-8", "replace"), "link": answer.link}
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        tmp.replace(target)


@dataclass(frozen=True)
class Answer:
    """A successful (2xx or 304) answer: status, decoded JSON (or text) and the next page's URL."""

    status: int
    data: Any
    next_url: str | None
    from_cache: bool = False


class NotFound(GitHubError):
    """The API answered 404 (the caller decides what was missing)."""


class _Wait(Exception):
    """Internal: a retryable answer; ``wait_s`` is how long to wait before the next attempt."""

    def __init__(self, reason: str, *, status: int, wait_s: float, rate_limit: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.wait_s = wait_s
        self.rate_limit = rate_limit


def _next_link(source: httpx.Response | str) -> str | None:
    """The ``rel="next"`` URL of a response's ``Link`` header (or of a stored header's text, for an
    answer from the ETag cache), or ``None``; parsed by httpx (:attr:`httpx.Response.links`)."""
    response = source if isinstance(source, httpx.Response) else httpx.Response(200, headers={"link": source})
    url = response.links.get("next", {}).get("url")
    return url or None


def _message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200].strip() or response.reason_phrase
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])
    return response.reason_phrase


class TokenSource(Protocol):
    """Where each request's token comes from when it is not a fixed one (a GitHub App)."""

    def token(self) -> str:
        """A token valid for the request about to be sent."""
        ...

    def close(self) -> None:
        """Release what it holds (its HTTP client)."""
        ...


class GitHubHTTP:
    """Sends GitHub API requests with counting, ETags, bounded rate-limit waits and pagination.

    Args:
        token: a GitHub token (sent as ``Authorization: Bearer``), or ``None`` for anonymous access.
        api_url: the API root (``https://api.github.com``; GitHub Enterprise ``https://HOST/api/v3``).
        client: an ``httpx.Client`` to use (tests pass one; its base URL is ignored). One is
            created (and owned, see :meth:`close`) when ``None``.
        cache: where ETag answers are kept (default: in memory).
        max_retries: retries per request after rate limits, 5xx answers and network errors.
        max_wait_s: the longest single wait accepted; a longer one raises ``RateLimitError``.
        sleep, clock: ``time.sleep`` and ``time.time`` (tests replace them).
        timeout_s: per-request timeout of a created client, seconds.
        auth: gives the token of each request instead of ``token`` (a GitHub App's installation token,
            :class:`bot.sources.github_app.GitHubApp`, refreshed before it expires); closed with this object.
    """

    def __init__(self, *, token: str | None, api_url: str = "https://api.github.com",
                 client: httpx.Client | None = None, cache: ETagCache | None = None, max_retries: int = 4,
                 max_wait_s: float = 900.0, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time, timeout_s: float = 30.0,
                 auth: TokenSource | None = None) -> None:
        self.token = token
        self._auth = auth
        self.api_url = api_url.rstrip("/")
        self._own_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout_s, follow_redirects=True)
        self.cache: ETagCache = cache if cache is not None else MemoryETagCache()
        self.stats = RequestStats()
        self._max_retries = max_retries
        self._max_wait_s = max_wait_s
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._waiting: dict[int, float] = {}  # thread id -> epoch seconds its wait ends
        identity = hashlib.sha256(token.encode()).hexdigest()[:12] if token else "app" if auth else "anonymous"
        self._identity = identity

    def close(self) -> None:
        """Close the HTTP client if this object created it, and the token source."""
        if self._own_client:
            self._client.close()
        if self._auth is not None:
            self._auth.close()

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": f"prhub/{__version__}", "X-GitHub-Api-Version": "2022-11-28"}
        token = self._auth.token() if self._auth is not None else self.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    @property
    def authenticated(self) -> bool:
        """Whether requests carry a token (a personal token, or a GitHub App's installation token)."""
        return self._auth is not None or bool(self.token)

    def url(self, path: str, params: Mapping[str, str | int] | None = None) -> str:
        """The absolute URL of API ``path`` (absolute URLs pass through) with query ``params``."""
        base = path if path.startswith(("http://", "https://")) else f"{self.api_url}/{path.lstrip('/')}"
        return str(httpx.URL(base, params=dict(params)) if params else httpx.URL(base))

    # -- one attempt ------------------------------------------------------------------------------

    def _count(self, **fields: int) -> None:
        with self._lock:
            for name, value in fields.items():
                setattr(self.stats, name, getattr(self.stats, name) + value)

    def _rate_limit_wait(self, response: httpx.Response, attempt: int) -> _Wait | None:
        """The wait a 403/429 answer asks for, or ``None`` when it is not a rate limit."""
        headers = response.headers
        message = _message(response)
        if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset", "").isdigit():
            wait = max(0.0, int(headers["x-ratelimit-reset"]) - self._clock()) + 1.0
            return _Wait(f"primary rate limit reached ({message})", status=response.status_code, wait_s=wait,
                         rate_limit=True)
        retry_after = headers.get("retry-after", "")
        if retry_after.strip().isdigit():
            return _Wait(f"secondary rate limit ({message})", status=response.status_code,
                         wait_s=float(retry_after.strip()), rate_limit=True)
        if response.status_code == 429 or "secondary rate limit" in message.lower():
            return _Wait(f"secondary rate limit ({message})", status=response.status_code,
                         wait_s=_SECONDARY_FLOOR_S * 2 ** (attempt - 1), rate_limit=True)
        return None

    def _attempt(self, method: str, url: str, *, accept: str, body: bytes | None, cache_key: str | None,
                 attempt: int) -> Answer:
        cached = self.cache.get(cache_key) if cache_key is not None else None
        headers = self._headers(accept)
        if cached is not None:
            headers["If-None-Match"] = cached.etag
        if body is not None:
            headers["Content-Type"] = "application/json"
        self._count(requests=1, graphql=int(url.endswith("/graphql")), retries=int(attempt > 1))
        try:
            response = self._client.request(method, url, headers=headers, content=body)
        except httpx.TransportError as exc:
            raise _Wait(f"network error: {exc}", status=0, wait_s=2.0 ** (attempt - 1), rate_limit=False) from exc
        status = response.status_code
        left = response.headers.get("x-ratelimit-remaining", "")
        if left.isdigit():
            self.stats.remaining = int(left)
        if status == 304 and cached is not None:
            self._count(not_modified=1)
            return Answer(304, self._decode(cached.body, accept), _next_link(cached.link), from_cache=True)
        if status in (403, 429):
            wait = self._rate_limit_wait(response, attempt)
            if wait is not None:
                self._count(rate_limited=1)
                raise wait
        if status in _TRANSIENT_STATUSES:
            raise _Wait(f"GitHub answered {status}", status=status, wait_s=2.0 ** (attempt - 1), rate_limit=False)
        if status == 404:
            raise NotFound(f"GitHub API: {url} not found", status=404)
        if status >= 400:
            raise GitHubError(f"GitHub API refused {method} {url}: {status} {_message(response)}", status=status)
        if url.endswith("/graphql") and b'"RATE_LIMITED"' in response.content:
            self._count(rate_limited=1)
            reset = response.headers.get("x-ratelimit-reset", "")
            wait_s = (max(0.0, int(reset) - self._clock()) + 1.0 if reset.isdigit()
                      else _SECONDARY_FLOOR_S * 2 ** (attempt - 1))
            raise _Wait("GraphQL rate limit reached", status=status, wait_s=wait_s, rate_limit=True)
        link = response.headers.get("link", "")
        etag = response.headers.get("etag")
        if cache_key is not None and etag:
            self.cache.put(cache_key, CachedAnswer(etag=etag, body=response.content, link=link))
        return Answer(status, self._decode(response.content, accept), _next_link(response))

    @staticmethod
    def _decode(body: bytes, accept: str) -> Any:
        if "json" not in accept:
            return body.decode("utf-8", "replace")
        try:
            return json.loads(body) if body else None
        except ValueError as exc:
            raise GitHubError(f"GitHub API answered text that is not JSON: {body[:80]!r}") from exc

    # -- retries ----------------------------------------------------------------------------------

    def _wait_for(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        return exc.wait_s if isinstance(exc, _Wait) else 1.0

    def _announce(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Wait):
            log.warning("GitHub: %s; waiting %.0f s before retry %d of %d", exc.reason, exc.wait_s,
                        state.attempt_number, self._max_retries)

    def request(self, method: str, path: str, *, params: Mapping[str, str | int] | None = None,
                accept: str = "application/vnd.github+json", json_body: Any = None,
                conditional: bool = True) -> Answer:
        """Send one request, waiting out rate limits and transient failures.

        Args:
            method: ``GET`` or ``POST``.
            path: API path (``repos/o/n/pulls``) or an absolute URL (a ``Link`` next page).
            params: query parameters.
            accept: the ``Accept`` media type; JSON types are decoded, others returned as text.
            json_body: a JSON-encodable request body (GraphQL).
            conditional: send ``If-None-Match`` from the ETag cache (GETs only).

        Returns:
            The answer; ``data`` is the decoded JSON (``str`` for non-JSON media types).

        Raises:
            NotFound: 404.
            RateLimitError: a rate limit lasted longer than ``max_wait_s`` or the retries.
            GitHubError: any other error status, or failures that outlasted the retries.
        """
        url = self.url(path, params)
        body = json.dumps(json_body).encode() if json_body is not None else None
        cache_key = f"{method} {url} {accept} {self._identity}" if conditional and method == "GET" else None

        def attempt(state: RetryCallState | None = None) -> Answer:
            number = state.attempt_number if state is not None else 1
            return self._attempt(method, url, accept=accept, body=body, cache_key=cache_key, attempt=number)

        retrying = Retrying(
            retry=retry_if_exception_type(_Wait), stop=stop_after_attempt(self._max_retries + 1),
            wait=self._wait_for, sleep=self._guarded_sleep, before_sleep=self._announce, reraise=True,
        )
        try:
            for tried in retrying:
                with tried:
                    return attempt(tried.retry_state)
        except _Wait as exc:
            raise self._give_up(exc, method, url) from exc
        except _TooLong as exc:
            raise self._too_long(exc, f"{method} {url}") from exc
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    def _guarded_sleep(self, seconds: float) -> None:
        if seconds > self._max_wait_s:
            raise _TooLong(seconds)
        until = self._clock() + seconds
        with self._lock:
            self._waiting[threading.get_ident()] = until
        try:
            self._sleep(seconds)
        finally:
            with self._lock:
                self._waiting.pop(threading.get_ident(), None)

    @property
    def rate_limited_until(self) -> float | None:
        """Epoch seconds until which a request of this client waits out a rate limit (or a retry), the
        latest of them; ``None`` while none waits. Read by ``/readyz`` and by the chat answers, which tell
        the asker how long a source keeps them waiting."""
        with self._lock:
            return max(self._waiting.values(), default=None)

    def _give_up(self, exc: _Wait, method: str, url: str) -> GitHubError:
        if exc.rate_limit:
            return RateLimitError(
                f"GitHub {exc.reason} for {method} {url}: still limited after {self._max_retries} retries; "
                f"try again in {exc.wait_s:.0f} s", status=exc.status, wait_s=exc.wait_s)
        return GitHubError(f"GitHub API {method} {url} failed after {self._max_retries} retries: {exc.reason}",
                           status=exc.status)

    def get(self, path: str, params: Mapping[str, str | int] | None = None, *,
            accept: str = "application/vnd.github+json") -> Answer:
        """A conditional ``GET`` (see :meth:`request`)."""
        return self.request("GET", path, params=params, accept=accept)

    def file_text(self, repo: str, path: str) -> str | None:
        """The text of file ``path`` of ``repo`` on its default branch (``GET repos/O/N/contents/PATH``),
        or ``None`` when there is no such file (404, or a folder). The JSON answer carries the text
        base64-encoded; a file over 1 MB comes without it and is read again as raw text.

        Raises:
            GitHubError: the API refused the request (other than 404) or failed.
        """
        where = f"repos/{repo}/contents/{quote(path.lstrip('/'))}"
        try:
            answer = self.get(where)
        except NotFound:
            return None
        data = answer.data
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("encoding") == "base64" and isinstance(data.get("content"), str):
            return base64.b64decode(data["content"]).decode("utf-8", "replace")
        raw = self.get(where, accept="application/vnd.github.raw").data
        return raw if isinstance(raw, str) else None

    def pages(self, path: str, params: Mapping[str, str | int] | None = None) -> Iterator[Answer]:
        """``GET path`` and every following page of its ``Link: rel="next"`` chain, lazily."""
        answer = self.get(path, params)
        yield answer
        while answer.next_url is not None:
            answer = self.get(answer.next_url)
            yield answer

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """Run a GraphQL query and return its ``data``.

        Raises:
            GitHubError: the API refused the query or answered ``errors`` (the first message is quoted).
            RateLimitError: as :meth:`request` (also for ``RATE_LIMITED`` GraphQL errors).
        """
        if not self.authenticated:
            raise GitHubError("the GitHub GraphQL API needs a token (set GITHUB_TOKEN)", status=401)
        payload = {"query": query, "variables": dict(variables)}
        answer = self.request("POST", "graphql", json_body=payload, accept="application/json", conditional=False)
        data = answer.data if isinstance(answer.data, dict) else {}
        errors = data.get("errors") or []
        if errors:
            first = errors[0] if isinstance(errors[0], dict) else {}
            raise GitHubError(f"GitHub GraphQL error: {first.get('message', errors[0])}", status=answer.status)
        result = data.get("data")
        if not isinstance(result, dict):
            raise GitHubError("GitHub GraphQL answered no data", status=answer.status)
        return result

    def _too_long(self, exc: _TooLong, what: str) -> RateLimitError:
        return RateLimitError(
            f"GitHub rate limit for {what}: it asks for a {exc.seconds:.0f} s wait, longer than the "
            f"{self._max_wait_s:.0f} s this run accepts; try again later", status=403, wait_s=exc.seconds)


class _TooLong(Exception):
    """Internal: a rate-limit wait longer than ``max_wait_s`` (never slept)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"{seconds:.0f} s")
        self.seconds = seconds
