"""The process's metrics, in the Prometheus text format (``GET /metrics`` of ``prhub serve``), with the official
client library (``prometheus-client``).

Every metric is in :data:`REGISTRY` (the process's own registry: the metrics below, the process's CPU and
memory from the library's ``ProcessCollector``, and what :func:`add_collector` adds when ``/metrics`` is read:
the queue's depth from Redis, the LLM runtime's meter and the GitHub sources' request counts,
:meth:`bot.handlers.health.Health.collect`). Names follow Prometheus' conventions: ``prhub_`` first, ``_total``
for counters, base units (seconds, US dollars). Labels have few values: a platform (``slack``, ``feishu``), an
intent (``digest``, ``pr``, ``label`` …), an outcome, a kind of failure — never a user, a channel or a PR.

=====================================  ==========================================================================
``prhub_events_received_total``        chat requests read (platform, intent)
``prhub_events_answered_total``        requests answered (platform, intent, outcome ``ok`` | ``error``)
``prhub_answer_seconds``               time to answer a request (histogram; platform, intent)
``prhub_failures_total``               failures by ``kind`` (``delivery``, ``deadline``, ``store``, ``source``,
                                       ``github``, ``llm``, ``platform_auth``, ``git_fetch``, ``internal`` …)
``prhub_digests_total``                digests built (door ``chat`` | ``push`` | ``personal``, outcome)
``prhub_pushes_total``                 weekly pushes (outcome ``posted`` | ``already_done`` | ``busy`` |
                                       ``missed`` | ``failed``)
``prhub_llm_calls_total``              model requests sent by this process, and analyses answered from the
                                       cache or by the heuristic after a model failure (outcome ``sent`` |
                                       ``cached`` | ``fallback``; read from the LLM runtime's meter)
``prhub_llm_tokens_total``             tokens (kind ``prompt`` | ``completion``)
``prhub_llm_cost_usd_total``           the calls' cost as litellm prices it (US dollars; unknown prices: 0)
``prhub_github_requests_total``        GitHub API requests of the sources opened (outcome ``sent`` |
                                       ``not_modified`` | ``rate_limited`` | ``retried``)
``prhub_github_rate_limit_remaining``  requests left in GitHub's window, as its last answer said
``prhub_platform_calls_total``         calls of a chat platform's API (platform, outcome ``ok`` | ``error``)
``prhub_platform_ready``               1 when the platform accepted the bot's credentials at the last check
``prhub_git_fetches_total``            fetches of ``git:`` sources (outcome ``ok`` | ``failed``)
``prhub_queue_depth``                  analysis jobs waiting (read from Redis at scrape time)
``prhub_jobs_total``                   analysis jobs done by every worker (outcome ``stored`` | ``cached`` |
                                       ``failed``; Redis, at scrape time)
``prhub_workers_alive``                analysis workers with a fresh heartbeat (Redis, at scrape time)
=====================================  ==========================================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

__all__ = ["ANSWER_SECONDS", "CONTENT_TYPE", "DIGESTS", "EVENTS_ANSWERED", "EVENTS_RECEIVED", "FAILURES",
           "GIT_FETCHES", "PLATFORM_CALLS", "PUSHES", "REGISTRY", "add_collector", "failure_kind", "intent_label",
           "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text format's media type."""

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)

EVENTS_RECEIVED = Counter("prhub_events_received", "Chat requests read, by platform and intent.",
                          ["platform", "intent"], registry=REGISTRY)
EVENTS_ANSWERED = Counter("prhub_events_answered", "Chat requests answered, by platform, intent and outcome.",
                          ["platform", "intent", "outcome"], registry=REGISTRY)
ANSWER_SECONDS = Histogram("prhub_answer_seconds", "Seconds to answer a chat request.", ["platform", "intent"],
                           buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120), registry=REGISTRY)
FAILURES = Counter("prhub_failures", "Failures, by kind.", ["kind"], registry=REGISTRY)
DIGESTS = Counter("prhub_digests", "Digests built, by door and outcome.", ["door", "outcome"], registry=REGISTRY)
PUSHES = Counter("prhub_pushes", "Weekly pushes, by outcome.", ["outcome"], registry=REGISTRY)
PLATFORM_CALLS = Counter("prhub_platform_calls", "Calls of a chat platform's API, by platform and outcome.",
                         ["platform", "outcome"], registry=REGISTRY)
GIT_FETCHES = Counter("prhub_git_fetches", "Fetches of git sources, by outcome.", ["outcome"], registry=REGISTRY)


class _Callback(Collector):
    """A collector that asks ``collect`` for its metrics each time ``/metrics`` is read."""

    def __init__(self, collect: Callable[[], Iterable[Metric]]) -> None:
        self._collect = collect

    def collect(self) -> Iterable[Metric]:
        return self._collect()


_added: dict[str, _Callback] = {}


def add_collector(name: str, collect: Callable[[], Iterable[Metric]]) -> None:
    """Read ``collect()`` into every ``/metrics`` (the queue's depth, the workers' counts); a second call with the
    same ``name`` replaces the first (a process builds its services once; tests build many)."""
    old = _added.pop(name, None)
    if old is not None:
        REGISTRY.unregister(old)
    _added[name] = _Callback(collect)
    REGISTRY.register(_added[name])


def render() -> bytes:
    """Every metric in the Prometheus text format (:data:`CONTENT_TYPE`)."""
    return generate_latest(REGISTRY)


def intent_label(intent: object) -> str:
    """A request's intent as a label: ``DigestIntent`` -> ``digest``, ``PRIntent`` -> ``pr``,
    ``ListSubscriptionsIntent`` -> ``list_subscriptions``."""
    name = type(intent).__name__.removesuffix("Intent")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower() or "unknown"


def failure_kind(exc: BaseException) -> str:
    """The ``kind`` label of a failure: what failed, from the exception's class (no message, no id)."""
    from bot import errors

    table: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
        (errors.DeliveryError, "delivery"),
        (errors.StoreUnavailableError, "store"),
        (errors.GitHubError, "github"),
        (errors.SourceError, "source"),
        (errors.LLMError, "llm"),
        (errors.WindowError, "window"),
        (errors.AccessError, "access"),
        (errors.ConfigError, "config"),
        (TimeoutError, "deadline"),
        (OSError, "network"),
        (errors.PrhubError, "other"),
    )
    return next((kind for cls, kind in table if isinstance(exc, cls)), "internal")
