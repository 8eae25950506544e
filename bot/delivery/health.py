"""What the bot knows of each chat platform's API right now, for ``/healthz``, ``/readyz`` and ``/metrics``.

A :class:`PlatformState` per platform (``slack``, ``feishu``) is told of every call the process's client
makes (:meth:`~PlatformState.called`: the Slack Web API client of :class:`ObservedWebClient`, the Feishu
client's requests) and of every credentials check (:meth:`~PlatformState.checked`: Slack's ``auth.test``,
Feishu's bot info, at start and every ``health_check_interval_s``). It keeps the last successful call, the
last failure (its kind and when) and the last check's result; the counters go to
:data:`bot.metrics.PLATFORM_CALLS`.

A platform is *ready* when its last credentials check passed: a token the platform refuses makes
``/readyz`` answer 503 (a load balancer stops sending events, an orchestrator does not restart a bot whose
token is wrong), while ``/healthz`` stays 200 (the process itself is alive).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot import metrics

__all__ = ["AuthState", "ObservedWebClient", "PlatformState"]

AuthState = Literal["ok", "failed", "unknown"]


@dataclass
class PlatformState:
    """One platform's API as this process has seen it (see the module docstring).

    Args:
        platform: ``slack`` or ``feishu``.
        mode: how events arrive (``socket``, ``http``, ``ws``).
        clock: the current instant (tests pin it).
    """

    platform: str
    mode: str = ""
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    last_ok_at: datetime | None = None
    last_error: str | None = None
    last_error_at: datetime | None = None
    auth: AuthState = "unknown"
    auth_checked_at: datetime | None = None
    auth_error: str | None = None
    calls: int = 0
    failures: int = 0

    def called(self, ok: bool, error: str | None = None) -> None:
        """One API call ended: ``ok``, or failed with ``error`` (the platform's error code, or the exception's
        class; never a token or a message text)."""
        self.calls += 1
        metrics.PLATFORM_CALLS.labels(self.platform, "ok" if ok else "error").inc()
        if ok:
            self.last_ok_at = self.clock()
            return
        self.failures += 1
        self.last_error, self.last_error_at = error or "error", self.clock()

    def checked(self, ok: bool, error: str | None = None) -> None:
        """A credentials check ended (``auth.test``, the bot info): the platform accepted them or not."""
        self.auth, self.auth_checked_at = ("ok" if ok else "failed"), self.clock()
        self.auth_error = None if ok else (error or "refused")
        if not ok:
            metrics.FAILURES.labels("platform_auth").inc()

    @property
    def ready(self) -> bool:
        """Whether the last credentials check passed."""
        return self.auth == "ok"

    def as_json(self) -> dict[str, Any]:
        """The state for ``/healthz`` and ``/readyz``: mode, auth (and its error), last call and last failure."""

        def stamp(moment: datetime | None) -> str | None:
            return moment.isoformat(timespec="seconds") if moment is not None else None

        out: dict[str, Any] = {"mode": self.mode, "auth": self.auth, "auth_checked_at": stamp(self.auth_checked_at),
                               "last_ok_at": stamp(self.last_ok_at), "calls": self.calls, "failures": self.failures}
        if self.auth_error:
            out["auth_error"] = self.auth_error
        if self.last_error:
            out["last_error"] = self.last_error
            out["last_error_at"] = stamp(self.last_error_at)
        return out


class ObservedWebClient(AsyncWebClient):
    """slack_sdk's Web API client that tells a :class:`PlatformState` how each call ended (its retry handlers,
    rate limits included, run inside the call as before)."""

    def __init__(self, *args: Any, state: PlatformState, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state = state

    async def api_call(self, api_method: str, **kwargs: Any) -> AsyncSlackResponse:
        """The call, its outcome recorded (a :class:`~slack_sdk.errors.SlackApiError` by Slack's error code)."""
        try:
            response = await super().api_call(api_method, **kwargs)
        except SlackApiError as exc:
            data = exc.response.data  # a dict from Slack; the text of an HTML page from a proxy's 5xx
            code = data.get("error") if isinstance(data, dict) else f"http_{exc.response.status_code}"
            self.state.called(False, str(code or "slack_api_error"))
            raise
        except Exception as exc:  # transport failures: recorded by class, then raised unchanged
            self.state.called(False, type(exc).__name__)
            raise
        self.state.called(True)
        return response
