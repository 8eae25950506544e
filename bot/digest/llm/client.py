"""One chat completion through litellm, with our timeouts, retries and error mapping.

This is the only module that calls the provider. Per call:

- at most ``concurrency`` calls are in flight (an :class:`asyncio.Semaphore`;
  waiting for ``Retry-After`` keeps the slot, which is what a rate limit asks);
- litellm's own ``timeout`` plus an outer :func:`asyncio.wait_for` of
  ``timeout_s + OUTER_GRACE_S`` for providers that ignore theirs;
- after an auth or quota error every later call fails at once (the run stops
  without cancelling requests already in flight);
- retries happen here only (tenacity): the OpenAI SDK's and litellm's are off
  (``max_retries=0``, ``num_retries=0``), so the call count and waits are ours.

Errors, mapped in :meth:`LLMClient._send`:

======================================  ==========================================
429 rate limit                           wait ``Retry-After`` (else 1, 2, 4 … s, at most
                                         ``MAX_WAIT_S``), retry up to ``max_retries`` times
5xx, connection refused/reset           the same retries
429 with ``insufficient_quota``          :class:`~bot.errors.LLMQuotaError` (stops the run)
401 / 403                                :class:`~bot.errors.LLMAuthError` (stops the run)
timeout (inner or outer)                 :class:`~bot.errors.LLMCallError`, no retry
any other API error (400, 404, …)        :class:`~bot.errors.LLMCallError`
retries spent                            :class:`~bot.errors.LLMCallError`
======================================  ==========================================

Each request sent counts one call in the :class:`~bot.digest.usage.UsageMeter`,
with the tokens the provider reports and the price litellm knows (if any).
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from bot.config import Settings
from bot.digest.llm import _litellm
from bot.digest.usage import UsageMeter
from bot.errors import LLMAuthError, LLMCallError, LLMQuotaError, LLMStopError

OUTER_GRACE_S = 5.0
MAX_WAIT_S = 60.0
STOP_FOR_S = 600.0
"""After an auth or quota error, calls fail at once for this many seconds, then the provider is asked again."""
_QUOTA_MARKERS = ("insufficient_quota", "exceeded your current quota")


@dataclass(frozen=True)
class Completion:
    """The assistant's text and why it stopped (``stop``, ``length``, …)."""

    text: str
    finish_reason: str | None


class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` in seconds when the server said."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class LLMClient:
    """Chat completions for one model.

    Args:
        model: a litellm model string (``openai/gpt-4o-mini``, ``ollama/qwen2.5``).
        api_base: base URL, or ``None`` for the provider's default.
        api_key: key, or ``None`` to let litellm read the provider's variable.
        timeout_s: seconds per request.
        max_retries: retries after a rate limit or transient server error.
        concurrency: requests in flight at once.
        meter: where calls, tokens and cost are counted.
        max_wait_s: the longest wait between retries (``Retry-After`` is capped to it).
    """

    def __init__(
        self, *, model: str, api_base: str | None = None, api_key: str | None = None, timeout_s: float = 120.0,
        max_retries: int = 3, concurrency: int = 8, meter: UsageMeter | None = None, max_wait_s: float = MAX_WAIT_S,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.meter = meter or UsageMeter()
        self.max_wait_s = max_wait_s
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._stopped: LLMStopError | None = None
        self._stopped_until = 0.0
        self.stop_for_s = STOP_FOR_S
        self._clock: Callable[[], float] = time.monotonic
        self._on_wire = asyncio.Event()

    @classmethod
    def from_settings(cls, settings: Settings, meter: UsageMeter | None = None) -> LLMClient:
        """The client ``PRHUB_LLM_*`` describes.

        Raises:
            ValueError: ``settings.llm_model`` is not set.
        """
        if not settings.llm_model:
            raise ValueError("no LLM model configured (PRHUB_LLM_MODEL)")
        return cls(
            model=settings.llm_model, api_base=settings.llm_api_base,
            api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
            timeout_s=settings.llm_timeout_s, max_retries=settings.llm_max_retries,
            concurrency=settings.llm_concurrency, meter=meter,
        )

    async def sending(self) -> None:
        """Return once a request of this client has left (at once if one has before): from then on
        the run waits on the network, and other work of the process (week over week's earlier
        digests) no longer delays a request — before that it would, sharing the interpreter with
        the import of litellm and the first prompts."""
        await self._on_wire.wait()

    async def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> Completion:
        """Send one chat completion (retrying rate limits and transient errors).

        Args:
            messages: OpenAI-style ``[{"role", "content"}]``.
            max_tokens: the completion's token limit.

        Raises:
            LLMCallError: timeout, refused request, or retries spent.
            LLMAuthError: credentials refused.
            LLMQuotaError: quota spent. After either of these, every call of this client in
                the next ``stop_for_s`` seconds raises the same error at once, without a
                request; after that the provider is asked again (a long-running bot recovers
                once the key or the quota is fixed).
        """
        async with self._slots:
            if self._stopped is not None:
                if self._clock() < self._stopped_until:
                    raise self._stopped
                self._stopped = None
            retrying = AsyncRetrying(
                stop=stop_after_attempt(self.max_retries + 1), wait=self._wait,
                retry=retry_if_exception_type(_Transient), reraise=True,
            )
            try:
                async for attempt in retrying:
                    with attempt:
                        return await self._send(messages, max_tokens)
            except LLMStopError as exc:
                self._stopped, self._stopped_until = exc, self._clock() + self.stop_for_s
                raise
            except _Transient as exc:
                raise LLMCallError(f"{exc} (after {self.max_retries} retries)") from exc
        raise AssertionError("unreachable: tenacity either returns or re-raises")  # pragma: no cover

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(max(exc.retry_after, 0.0), self.max_wait_s)
        return float(min(2 ** (state.attempt_number - 1), self.max_wait_s))

    async def _send(self, messages: list[dict[str, str]], max_tokens: int) -> Completion:
        litellm = _litellm.load()  # the first request imports litellm (and the OpenAI SDK it brings)
        _litellm.prepare(self.model)
        import openai

        self.meter.llm_calls += 1
        request = asyncio.ensure_future(asyncio.wait_for(
            litellm.acompletion(
                model=self.model, messages=messages, api_base=self.api_base, api_key=self._api_key,
                timeout=self.timeout_s, max_tokens=max_tokens, temperature=0.2,
                num_retries=0, max_retries=0,
            ),
            timeout=self.timeout_s + OUTER_GRACE_S,
        ))
        # Said after the request's first step has run (litellm building it; the OpenAI SDK's lazy imports
        # were done by `prepare` above): whoever waits in `sending` wakes once the request is on its way.
        asyncio.get_running_loop().call_soon(self._on_wire.set)
        try:
            response: Any = await request
        except (TimeoutError, openai.APITimeoutError) as exc:
            raise LLMCallError(f"timeout after {self.timeout_s:g}s") from exc
        except openai.RateLimitError as exc:
            if _is_quota(exc):
                raise LLMQuotaError(f"the LLM quota of {self.model} is spent (429 insufficient_quota): "
                                    "add credit or change PRHUB_LLM_MODEL / PRHUB_LLM_API_KEY") from exc
            raise _Transient("rate limited (429)", _retry_after(exc)) from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise LLMAuthError(f"the LLM provider refused the credentials for {self.model} "
                               f"({_status(exc)}): check PRHUB_LLM_API_KEY") from exc
        except (openai.InternalServerError, openai.APIConnectionError) as exc:
            raise _Transient(f"server error ({_status(exc)})", _retry_after(exc)) from exc
        except openai.APIError as exc:
            raise LLMCallError(f"request refused ({_status(exc)}): {_first_line(exc)}") from exc
        self._count(response)
        choice = response.choices[0]
        return Completion(text=str(choice.message.content or ""), finish_reason=choice.finish_reason)

    def _count(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.meter.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.meter.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        try:
            self.meter.add_cost(float(_litellm.load().completion_cost(completion_response=response, model=self.model)))
        except Exception:  # litellm raises a bare Exception for models without a price
            self.meter.add_cost(None)


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _is_quota(exc: BaseException) -> bool:
    """Whether a 429 says the quota is spent: the error body's code/type (OpenAI SDK's ``body``
    on the wrapped exception), or the message."""
    for item in _chain(exc):
        body = getattr(item, "body", None)
        if isinstance(body, dict) and "insufficient_quota" in (body.get("code"), body.get("type")):
            return True
        if any(marker in str(item).lower() for marker in _QUOTA_MARKERS):
            return True
    return False


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds or an HTTP date) of the error's response."""
    for item in _chain(exc):
        headers = getattr(item, "litellm_response_headers", None) or getattr(
            getattr(item, "response", None), "headers", None)
        value = headers.get("retry-after") if headers is not None else None
        if value:
            try:
                return float(value)
            except ValueError:
                pass
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


def _status(exc: BaseException) -> str:
    code = getattr(exc, "status_code", None)
    return f"HTTP {code}" if code else type(exc).__name__


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
