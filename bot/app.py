"""The composition root: the one place that builds the process's clients and services from ``Settings``.

Every door (the CLI commands, ``prhub serve``'s Slack and Feishu bots, the scheduler) gets what it
needs from here, as arguments; nothing below builds a client of its own. One process has:

========================  ===========================================================================
store                     Redis (:class:`~bot.store.RedisStore`) or memory, by :data:`StoreMode`
claims                    :class:`~bot.claims.Claims` on the store (``dedup_ttl_s`` for deliveries)
subscriptions             :class:`~bot.subscriptions.Subscriptions` on the store and the config file's
                          ``[[subscriptions]]`` (earlier layouts migrated when the store is Redis)
people, personal          :class:`~bot.people.People` (GitHub handles, DMs, weekly opt-ins) and
                          :class:`~bot.personal.PersonalDigests` ("my area this week")
channels                  :class:`~bot.channels.Channels`: bindings and one opened source per spec
digests                   :class:`~bot.digest.service.DigestService` with one LLM runtime (one client,
                          one concurrency limit) when ``PRHUB_LLM_MODEL`` is set
jobs                      :class:`~bot.jobs.queue.JobQueue` (``prhub serve``, ``prhub push`` with a model):
                          the digest service's analyses go to the workers while one is alive
pacer                     :class:`~bot.delivery.pacing.Pacer`: the per-chat rate limits of every platform
pages                     :class:`~bot.web.pages.DigestPages` on the store: every digest built (the
                          digest service's history, week over week's ``known``) and its page
links                     :class:`~bot.web.links.PageLinks` (``PRHUB_PAGE_SECRET``), or ``None``
media                     :class:`~bot.delivery.media.CardMedia`: the cards' page links (with
                          ``PRHUB_PUBLIC_URL``) and charts (``PRHUB_CHARTS``), one for every deliverer
deliverers                one Slack Web API client (``SLACK_BOT_TOKEN``), one Feishu Open API client
                          (``FEISHU_APP_ID`` + secret), one HTTP client for the custom-bot webhooks
========================  ===========================================================================

Heavy parts (litellm, slack_sdk, lark-oapi) are imported and built on first use, so a CLI digest
loads none of them. :func:`open_services` opens the store (and closes everything on exit);
:func:`build_services` builds around a store the caller owns (tests); :func:`serve` runs
``prhub serve``: the scheduler, the Feishu bot, the Slack bot and the HTTP server (the HTTP
platforms' events and, with ``PRHUB_PAGE_SECRET``, the digest pages ``GET /pages/{token}``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from bot.channels import Channels, SourceOpener
from bot.claims import Claims
from bot.config import Settings
from bot.digest.service import Analyzer, DigestService
from bot.errors import ConfigError, StoreUnavailableError
from bot.people import People
from bot.sources.base import open_source
from bot.store import FileStore, MemoryStore, RedisStore, ResilientStore, Store, open_store, redis_errors

# What a CLI digest does not use (subscriptions and their grammar, delivery, pacing, the personal
# digests) is imported where it is first built, so `prhub digest` loads none of it.
if TYPE_CHECKING:
    import httpx
    from slack_bolt.async_app import AsyncApp
    from starlette.routing import BaseRoute

    from bot.delivery import Deliverers
    from bot.delivery.feishu import FeishuDeliverer
    from bot.delivery.health import PlatformState
    from bot.delivery.media import CardMedia
    from bot.delivery.pacing import Pacer
    from bot.delivery.slack import SlackDeliverer
    from bot.digest.llm import LLMRuntime
    from bot.digest.service import AsyncAnalyzer, LLMParts, Narrator
    from bot.digest.usage import UsageMeter
    from bot.handlers.core import Core
    from bot.handlers.github import GitHubWebhook
    from bot.handlers.health import Health
    from bot.jobs.queue import JobQueue
    from bot.models import Digest
    from bot.personal import PersonalDigests
    from bot.scheduler.alerts import AlertPoller
    from bot.scheduler.personal import PersonalDigestJob
    from bot.scheduler.push import Pusher
    from bot.subscriptions import SubscribeGuard, Subscriptions
    from bot.web.links import PageLinks
    from bot.web.pages import DigestPages

__all__ = ["FeishuMode", "Services", "SlackMode", "StoreMode", "build_services", "check_serve",
           "configure_logging", "open_services", "serve"]

log = logging.getLogger(__name__)

StoreMode = Literal["memory", "cache", "redis"]
"""``memory``: a dict (a CLI digest without a model); ``cache``: Redis when it answers, else memory
with one warning (a CLI run with a model: the analysis cache); ``redis``: the
:class:`~bot.store.ResilientStore` on Redis (the bot, pushes, alerts: exactly-once state) — a
:class:`~bot.errors.ConfigError` when Redis does not answer at start, unless ``degraded_start``
(``prhub serve``)."""
SlackMode = Literal["socket", "http", "off"]
FeishuMode = Literal["ws", "http", "off"]


class Services:
    """The clients and services of one process (see the module docstring); made by :func:`build_services`.

    Args:
        settings: the settings everything is built from.
        store: the process's store.
        open_source: opens a source spec (default :func:`bot.sources.base.open_source` with the settings).
        analyzer: a fixed per-PR analyzer instead of the LLM (tests).
        clock: the current instant for the core, the push and the alerts (tests pin it).
        pacer: the per-chat rate limits (tests pass faster ones).
        on_fallback: told when the model is unusable and the heuristic answers (the CLI's stderr).
        guard: the check before a subscription is stored (default :class:`~bot.access.AccessGuard`).
        keep_digests: keep every digest built in :attr:`pages` (``False`` for a one-shot run on the
            memory store, where nothing could read them back).
        jobs: hand LLM analyses to ``prhub worker`` processes while one is alive (needs a Redis store).
        fetch_git: ``git:`` sources fetch their remote before their first read (``prhub push``, ``prhub alerts``).
    """

    def __init__(self, settings: Settings, store: Store, *, open_source: SourceOpener | None = None,
                 analyzer: Analyzer | None = None, clock: Callable[[], datetime] | None = None,
                 pacer: Pacer | None = None, on_fallback: Callable[[str], None] | None = None,
                 guard: SubscribeGuard | None = None, keep_digests: bool = True, jobs: bool = False,
                 fetch_git: bool = False) -> None:
        self.settings = settings
        self.store = store
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self.claims = Claims(store, seen_ttl_s=settings.dedup_ttl_s)
        self.people = People(store)
        self.channels = Channels(settings, open_source=open_source or _source_opener(settings, fetch=fetch_git))
        self._guard = guard
        self._pacer = pacer
        self._analyzer = analyzer
        self._on_fallback = on_fallback
        self._keep_digests = keep_digests
        self._use_jobs = jobs
        self._http: httpx.AsyncClient | None = None
        self.health_parts: dict[str, Callable[[], str]] = {}
        self.platforms: dict[str, PlatformState] = {}
        """Each chat platform's API as this process saw it (:mod:`bot.delivery.health`), by name."""

    @cached_property
    def subscriptions(self) -> Subscriptions:
        """The subscriptions on the store and the config file's ``[[subscriptions]]``."""
        from bot.subscriptions import Subscriptions

        return Subscriptions(self.store, self.settings)

    @cached_property
    def guard(self) -> SubscribeGuard:
        """The check before a subscription is stored: the one given, or the channel access rules
        (:class:`~bot.access.AccessGuard`)."""
        if self._guard is not None:
            return self._guard
        from bot.access import AccessGuard

        return AccessGuard(self.settings, self.channels, self.subscriptions)

    @cached_property
    def pacer(self) -> Pacer:
        """The per-chat rate limits of every platform (the one given, or the default ones)."""
        from bot.delivery.pacing import Pacer

        return self._pacer or Pacer()

    # -- the digest service and its LLM runtime --------------------------------------------------

    @cached_property
    def llm(self) -> LLMRuntime | None:
        """The one LLM runtime (client, analyzer, narrator; caching in the store), or ``None``."""
        if self._analyzer is not None or not self.settings.llm_model:
            return None
        from bot.digest.llm import llm_runtime  # only with a model; litellm itself loads with the first request

        return llm_runtime(self.settings, self.store)

    @cached_property
    def jobs(self) -> JobQueue | None:
        """The analysis job queue, when this process hands analyses to workers (``jobs``, a model, Redis)."""
        if not self._use_jobs or self.llm is None or isinstance(self.store, MemoryStore):
            return None
        from bot.jobs.queue import JobQueue

        return JobQueue(self.settings)

    @cached_property
    def digests(self) -> DigestService:
        """The digest service every door uses (keeping every digest in :attr:`pages`); with :attr:`jobs`,
        its LLM analyses go through the queue (:class:`~bot.jobs.queue.QueueAnalyzer`)."""
        llm: LLMParts | None = self.llm
        if self.llm is not None and self.jobs is not None:
            from bot.jobs.queue import QueueAnalyzer

            meter = self.llm.meter

            def hit() -> None:
                meter.cache_hits += 1

            llm = _QueuedLLM(self.llm, QueueAnalyzer(self.llm.analyzer, self.jobs, self.store, on_hit=hit))
        return DigestService(self.settings, llm=llm, analyzer=self._analyzer, on_fallback=self._on_fallback,
                             history=self.pages if self._keep_digests else None)

    # -- pages, links and the cards' extras ------------------------------------------------------

    @cached_property
    def pages(self) -> DigestPages:
        """The digests kept in the store, for their pages and for week over week."""
        from bot.web.pages import DigestPages

        return DigestPages(self.store, ttl_s=self.settings.page_link_ttl_s)

    @cached_property
    def links(self) -> PageLinks | None:
        """The page-link signer, or ``None`` without ``PRHUB_PAGE_SECRET``.

        Raises:
            ConfigError: the secret is too short.
        """
        if self.settings.page_secret is None:
            return None
        from bot.web.links import PageLinks

        return PageLinks.from_env(self.settings)

    @cached_property
    def media(self) -> CardMedia:
        """The digest cards' page links (with ``PRHUB_PUBLIC_URL`` and a secret) and charts."""
        from bot.delivery.media import CardMedia

        links = self.links
        if links is None or not links.public_url:
            return CardMedia(charts=self.settings.charts)
        pages = self.pages

        async def link(digest: Digest) -> str:
            return links.url(await pages.put(digest))

        return CardMedia(link=link, charts=self.settings.charts)

    def page_routes(self) -> list[BaseRoute]:
        """``GET /pages/{token}`` (:func:`bot.web.pages.page_routes`), or none without ``PRHUB_PAGE_SECRET``."""
        if self.links is None:
            return []
        from bot.web.pages import page_routes

        return list(page_routes(self.pages, self.links))

    @cached_property
    def webhook(self) -> GitHubWebhook | None:
        """The GitHub webhook receiver (``GITHUB_WEBHOOK_SECRET``): merged PRs analysed and alerted as they
        merge (:meth:`~bot.scheduler.alerts.AlertPoller.on_merged`), or ``None``."""
        if self.settings.github_webhook_secret is None:
            return None
        from bot.handlers.github import GitHubWebhook

        poller = self.poller()
        return GitHubWebhook(secret=self.settings.github_webhook_secret.get_secret_value(), claims=self.claims,
                             on_merged=poller.on_merged, max_bytes=self.settings.github_webhook_max_bytes)

    def webhook_routes(self) -> list[BaseRoute]:
        """``POST /github/webhook``, or none without ``GITHUB_WEBHOOK_SECRET``."""
        return list(self.webhook.routes()) if self.webhook is not None else []

    def health_routes(self) -> list[BaseRoute]:
        """``GET /healthz/workers``: the analysis workers alive (their heartbeats), the jobs waiting and the
        jobs' counts, as JSON (``{"alive": 0, …}`` without a queue). Each worker's host name and process id
        only with the pages' access (``Authorization: Bearer`` + ``PRHUB_PAGE_SECRET``); without it, the
        workers' other fields (counts, concurrency, last beat)."""
        import hmac

        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        jobs = self.jobs
        secret = self.settings.page_secret.get_secret_value() if self.settings.page_secret else ""

        def shown(request: Request) -> bool:
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            return bool(secret) and hmac.compare_digest(given.encode(), secret.encode())

        async def workers(request: Request) -> Response:
            if jobs is None:
                return JSONResponse({"alive": 0, "workers": [], "queued": 0, "stats": {}, "queue": None})
            try:
                beats, queued, stats = await asyncio.to_thread(lambda: (jobs.workers(), jobs.pending(), jobs.stats()))
            except redis_errors():
                return JSONResponse({"error": "Redis does not answer"}, status_code=503)
            private = () if shown(request) else ("host", "pid")
            listed = [{k: v for k, v in b.as_json().items() if k not in private} for b in beats]
            return JSONResponse({"alive": len(beats), "workers": listed, "queued": queued,
                                 "stats": stats, "queue": self.settings.jobs_queue})

        return [Route("/healthz/workers", workers, methods=["GET"])]

    @cached_property
    def personal(self) -> PersonalDigests:
        """"My area this week", for the chat core and the weekly job."""
        from bot.personal import PersonalDigests

        return PersonalDigests(settings=self.settings, channels=self.channels, digests=self.digests,
                               subscriptions=self.subscriptions, people=self.people, store=self.store)

    # -- platforms ------------------------------------------------------------------------------------

    def platform_state(self, name: str) -> PlatformState:
        """The state of platform ``name`` (made on first use, told of every call its client makes)."""
        from bot.delivery.health import PlatformState

        return self.platforms.setdefault(name, PlatformState(name, clock=self.clock))

    @cached_property
    def slack(self) -> SlackDeliverer | None:
        """The Slack deliverer on the process's one Web API client, or ``None`` without ``SLACK_BOT_TOKEN``."""
        if self.settings.slack_bot_token is None:
            return None
        from slack_sdk.webhook.async_client import AsyncWebhookClient

        from bot.delivery.health import ObservedWebClient
        from bot.delivery.slack import SlackDeliverer, rate_limited_retries, server_error_retries

        client = ObservedWebClient(token=self.settings.slack_bot_token.get_secret_value(),
                                   base_url=self.settings.slack_api_url.rstrip("/") + "/",  # slack_sdk joins url+method
                                   state=self.platform_state("slack"))
        client.retry_handlers.extend(rate_limited_retries())
        client.retry_handlers.extend(server_error_retries())

        def response_url_client(url: str) -> AsyncWebhookClient:
            return AsyncWebhookClient(url, retry_handlers=rate_limited_retries())

        return SlackDeliverer(client, webhook=response_url_client, pacer=self.pacer, media=self.media)

    @cached_property
    def feishu(self) -> FeishuDeliverer | None:
        """The Feishu app's deliverer on the process's one Open API client (one pacer), or ``None``
        without ``FEISHU_APP_ID`` and ``FEISHU_APP_SECRET``."""
        if not self.settings.feishu_app_id or self.settings.feishu_app_secret is None:
            return None
        from bot.delivery.feishu import FeishuClient, FeishuDeliverer

        client = FeishuClient(app_id=self.settings.feishu_app_id,
                              app_secret=self.settings.feishu_app_secret.get_secret_value(),
                              base_url=self.settings.feishu_api_url, pacer=self.pacer,
                              state=self.platform_state("feishu"))
        return FeishuDeliverer(client, media=self.media)

    @cached_property
    def deliverers(self) -> Deliverers:
        """Every configured platform's deliverer, by channel key."""
        from bot.delivery import Deliverers

        webhooks = {}
        if self.settings.feishu_webhooks:
            import httpx

            from bot.delivery.webhook import WebhookDeliverer

            self._http = httpx.AsyncClient(timeout=15.0)
            for name, hook in self.settings.feishu_webhooks.items():
                secret = hook.secret.get_secret_value() if hook.secret is not None else None
                webhooks[name] = WebhookDeliverer(name, hook.url, secret, self._http, self.pacer, media=self.media)
        return Deliverers(slack=self.slack, feishu=self.feishu, webhooks=webhooks)

    # -- the doors' services ----------------------------------------------------------------------

    @cached_property
    def core(self) -> Core:
        """The chat core of both bots."""
        from bot.handlers.core import Core

        return Core(settings=self.settings, channels=self.channels, digests=self.digests,
                    subscriptions=self.subscriptions, people=self.people, personal=self.personal, store=self.store,
                    guard=self.guard, clock=self.clock, llm=self.llm)

    def pusher(self, **kwargs: Any) -> Pusher:
        """The weekly push (``kwargs``: :class:`~bot.scheduler.push.Pusher`'s ``deadline_s``, ``refresher``)."""
        from bot.scheduler.push import Pusher

        return Pusher(settings=self.settings, claims=self.claims, channels=self.channels,
                      deliverers=self.deliverers, digests=self.digests, clock=self.clock, **kwargs)

    def poller(self) -> AlertPoller:
        """The label alerts."""
        from bot.scheduler.alerts import AlertPoller

        return AlertPoller(settings=self.settings, store=self.store, claims=self.claims,
                           subscriptions=self.subscriptions, people=self.people, channels=self.channels,
                           deliverers=self.deliverers, digests=self.digests, clock=self.clock)

    def personal_job(self) -> PersonalDigestJob:
        """The weekly personal digests ("my area this week"), in each person's time zone."""
        from bot.scheduler.personal import PersonalDigestJob

        return PersonalDigestJob(settings=self.settings, claims=self.claims, people=self.people,
                                 personal=self.personal, deliverers=self.deliverers, clock=self.clock)

    @cached_property
    def health_report(self) -> Health:
        """``/healthz`` and ``/readyz`` (:mod:`bot.handlers.health`): the store, the platforms built so far (with
        their credentials checks), the parts ``prhub serve`` adds (``scheduler``, ``slack``, ``feishu``), the
        queue and the channels' bindings."""
        from bot.handlers.health import Health, bindings

        checks: dict[str, Any] = {}
        if self.slack is not None:
            checks["slack"] = (self.platform_state("slack"), self.slack.check_credentials)
        if self.feishu is not None:
            checks["feishu"] = (self.platform_state("feishu"), self.feishu.client.check_credentials)
        return Health(settings=self.settings, store=self.store, platforms=checks, parts=self.health_parts,
                      jobs=self.jobs, bound=bindings(self.settings, self.channels),
                      meter=self.llm.meter if self.llm is not None else None, sources=self.channels.opened)

    async def health(self) -> dict[str, Any]:
        """What ``/healthz`` reports (:meth:`bot.handlers.health.Health.live`)."""
        return await self.health_report.live()

    async def ready(self) -> tuple[bool, dict[str, Any]]:
        """What ``/readyz`` reports (:meth:`bot.handlers.health.Health.ready`)."""
        return await self.health_report.ready()

    async def aclose(self) -> None:
        """Stop background analyses, release the sources and the HTTP clients (not the store: its owner's)."""
        if "digests" in self.__dict__:
            await self.digests.aclose()
        self.channels.close()
        if self._http is not None:
            await self._http.aclose()
        jobs = self.__dict__.get("jobs")
        if jobs is not None:
            jobs.close()


class _QueuedLLM:
    """The LLM runtime's parts with the per-PR analyzer going through the job queue."""

    def __init__(self, runtime: LLMRuntime, analyzer: AsyncAnalyzer) -> None:
        self._runtime = runtime
        self._analyzer = analyzer

    @property
    def analyzer(self) -> AsyncAnalyzer:
        """The queue analyzer."""
        return self._analyzer

    @property
    def narrator(self) -> Narrator:
        """The runtime's narrator (the digest's one narrative call stays in the process)."""
        return self._runtime.narrator

    @property
    def meter(self) -> UsageMeter:
        """The runtime's usage meter."""
        return self._runtime.meter


def build_services(settings: Settings, store: Store, **kwargs: Any) -> Services:
    """The services around ``store`` (no I/O; ``kwargs`` as :class:`Services`)."""
    return Services(settings, store, **kwargs)


@asynccontextmanager
async def open_services(settings: Settings, *, store: StoreMode, purpose: str = "prhub needs Redis",
                        warn: Callable[[str], None] | None = None, degraded_start: bool = False,
                        **kwargs: Any) -> AsyncIterator[Services]:
    """The services of a process, with the store ``store`` says (see :data:`StoreMode`), closed on exit.

    Args:
        purpose: the start of the error when ``store="redis"`` and Redis does not answer.
        warn: shows one line when ``store="cache"`` and Redis does not answer (now or later).
        degraded_start: with ``store="redis"``, start even when Redis does not answer (``prhub serve``:
            the :class:`~bot.store.ResilientStore` answers degraded and tries Redis again), instead of
            refusing.
        **kwargs: as :class:`Services`.

    Raises:
        ConfigError: ``store="redis"``, Redis does not answer at ``PRHUB_REDIS_URL`` and not ``degraded_start``.
    """
    made: Store
    if store == "cache" and settings.cache_file is not None:
        made = FileStore(settings.cache_file.expanduser(), warn=warn)
    elif store == "memory":
        made = MemoryStore()
    elif store == "cache":
        made = await open_store(settings.redis_url, warn=warn or log.warning, key_prefix=settings.redis_key_prefix)
    else:
        redis_store = RedisStore.from_url(settings.redis_url, degrade=False, key_prefix=settings.redis_key_prefix,
                                          max_connections=settings.redis_max_connections,
                                          pool_timeout_s=settings.redis_pool_timeout_s,
                                          socket_timeout_s=settings.redis_timeout_s)
        try:
            await redis_store.ping()
        except redis_errors() as exc:
            if not degraded_start:
                await redis_store.close()
                raise ConfigError(f"{purpose} at PRHUB_REDIS_URL ({exc})") from exc
            log.warning("Redis at PRHUB_REDIS_URL does not answer (%s): starting degraded; answers still go out, "
                        "subscriptions cannot be saved until it is back (GET /healthz tells)", exc)
        made = ResilientStore(redis_store)
        if degraded_start:
            await made.check()  # records the fault, if any, for /healthz
    services = Services(settings, made, **{"keep_digests": store != "memory", **kwargs})
    try:
        if store == "redis":
            try:
                await services.subscriptions.migrate()
            except StoreUnavailableError as exc:
                if not degraded_start:
                    raise
                log.warning("subscription layouts not migrated (%s); the next start does it", exc)
        yield services
    finally:
        await services.aclose()
        await made.close()


def configure_logging(settings: Settings) -> None:
    """The bot's log on stderr: ``log_level``, ``log_format`` (``text`` lines or ``json`` objects). Lines
    name the event or message they are about; secrets are never logged (the Redis URL is shown without
    its password)."""
    import json as _json
    import sys

    from bot.handlers.signatures import EscapingFormatter  # control characters escaped: one record, one line

    class JsonFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            entry = {"at": self.formatTime(record), "level": record.levelname, "logger": record.name,
                     "message": record.getMessage()}
            if record.exc_info:
                entry["error"] = self.formatException(record.exc_info)
            return _json.dumps(entry, ensure_ascii=False)

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if settings.log_format == "json" else
                         EscapingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    for noisy in ("httpx", "httpcore", "LiteLLM", "litellm"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))


def check_serve(settings: Settings, *, slack: SlackMode, feishu: FeishuMode) -> None:
    """Refuse a ``prhub serve`` that cannot run, before anything starts.

    Raises:
        ConfigError: no platform, Slack without its token, HTTP mode without its signing secret, Socket Mode
            without its app token,
            Feishu without its app id or secret, Feishu HTTP mode without a verification token or encrypt key
            (unless ``feishu_allow_unverified``), ``PRHUB_PUBLIC_URL`` without ``PRHUB_PAGE_SECRET``
            (or one too short to sign with).
    """
    if settings.public_url and settings.page_secret is None:
        raise ConfigError("PRHUB_PUBLIC_URL is set but PRHUB_PAGE_SECRET is not: page links are signed with it "
                          "(any long random string)")
    if settings.page_secret is not None:
        from bot.web.links import PageLinks

        PageLinks.from_env(settings)  # refuses a secret too short to sign with
    if slack == "off" and feishu == "off":
        raise ConfigError("nothing to serve: no chat platform is set up; set SLACK_BOT_TOKEN and SLACK_APP_TOKEN "
                          "(Slack) or FEISHU_APP_ID and FEISHU_APP_SECRET (Feishu), e.g. in .env (see .env.example)",
                          zh="没有可以服务的平台：没有配置任何聊天平台；请设置 SLACK_BOT_TOKEN 和 SLACK_APP_TOKEN"
                             "（Slack），"
                             "或 FEISHU_APP_ID 和 FEISHU_APP_SECRET（飞书），例如写在 .env 里（参照 .env.example）")
    if slack != "off" and settings.slack_bot_token is None:
        raise ConfigError("the Slack bot needs SLACK_BOT_TOKEN (xoxb-…)",
                          zh="Slack 机器人需要 SLACK_BOT_TOKEN（xoxb-…）")
    if slack == "http" and settings.slack_signing_secret is None:
        raise ConfigError("Slack HTTP mode needs SLACK_SIGNING_SECRET to check the requests' signatures; or use "
                          "Socket Mode (SLACK_APP_TOKEN)",
                          zh="Slack HTTP 模式需要 SLACK_SIGNING_SECRET 来校验请求签名；"
                             "或改用 Socket Mode（SLACK_APP_TOKEN）")
    if slack == "socket" and settings.slack_app_token is None:
        raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (xapp-…); or use --slack http",
                          zh="Socket Mode 需要 SLACK_APP_TOKEN（xapp-…）；或使用 --slack http")
    if feishu != "off" and (not settings.feishu_app_id or settings.feishu_app_secret is None):
        raise ConfigError("Feishu needs FEISHU_APP_ID and FEISHU_APP_SECRET (or --feishu off)")
    if (feishu == "http" and settings.feishu_verification_token is None and settings.feishu_encrypt_key is None
            and not settings.feishu_allow_unverified):
        raise ConfigError("Feishu HTTP mode needs FEISHU_VERIFICATION_TOKEN or FEISHU_ENCRYPT_KEY: without them "
                          "anyone can forge events (PRHUB_FEISHU_ALLOW_UNVERIFIED=true runs it open, on a closed "
                          "network only)")


async def serve(settings: Settings, *, slack: SlackMode, feishu: FeishuMode, host: str, port: int) -> None:
    """``prhub serve``: the weekly pushes and label alerts, the Feishu bot and the Slack bot, until cancelled.

    HTTP modes share one Starlette server on ``host:port`` (``/slack/events``, ``/feishu/events``,
    ``/healthz``, ``/readyz``, ``/metrics``, ``/healthz/workers``, with ``PRHUB_PAGE_SECRET`` ``/pages/{token}``
    and with ``GITHUB_WEBHOOK_SECRET`` ``/github/webhook``); Socket Mode and the Feishu long connection need no
    public address, and the server runs for health and metrics unless ``PRHUB_SERVE_HEALTH=false``. Each
    platform's credentials are checked at start and every ``health_check_interval_s`` (``/readyz``).
    Pushes posted with pending analyses are filled in when they land (:mod:`bot.scheduler.refresh`).

    Redis that does not answer (at start or later) makes the bot degraded, not stopped: see
    :class:`~bot.store.ResilientStore`; ``/healthz`` says so.

    Raises:
        ConfigError: as :func:`check_serve`.
        FeishuAPIError: the Feishu bot-info call failed (wrong credentials, API unreachable).
    """
    check_serve(settings, slack=slack, feishu=feishu)
    configure_logging(settings)
    from bot.scheduler.jobs import scheduled

    async with AsyncExitStack() as stack:
        # git sources are fetched by the scheduler's git-fetch job (at start, then every interval) in a worker
        # thread, never on the event loop's first read
        services = await stack.enter_async_context(open_services(settings, store="redis", degraded_start=True,
                                                                 jobs=True))
        from bot.scheduler.refresh import PendingRefresher

        warming = asyncio.create_task(asyncio.to_thread(_warm_understanding))  # no first message waits for it
        stack.push_async_callback(_awaited, warming)
        refresher = PendingRefresher(services.digests)
        stack.push_async_callback(refresher.aclose)
        scheduler = await stack.enter_async_context(
            scheduled(services.pusher(refresher=refresher), services.poller(), services.personal_job(),
                      fetch=lambda: asyncio.to_thread(services.channels.refresh)))
        services.health_parts["scheduler"] = lambda: "running" if scheduler.running else "stopped"
        services.health_parts["slack"] = lambda: slack
        services.health_parts["feishu"] = lambda: feishu
        for name, mode in (("slack", slack), ("feishu", feishu)):
            if mode != "off":
                services.platform_state(name).mode = mode
        health = _observed(services)
        routes = await stack.enter_async_context(_feishu(services, feishu)) if feishu != "off" else []
        slack_app = _slack_app(services) if slack != "off" else None
        pages = services.page_routes()
        hooks = services.webhook_routes()
        if services.webhook is not None:
            stack.push_async_callback(services.webhook.aclose)
        tasks: list[Coroutine[Any, Any, Any]] = [health.watch()]
        if slack == "http" or feishu == "http" or (pages and settings.public_url) or settings.serve_health or hooks:
            tasks.append(_serve_http(slack_app if slack == "http" else None,
                                     [*routes, *pages, *hooks, *services.health_routes()], host, port,
                                     health=services.health, ready=services.ready,
                                     max_body_bytes=settings.max_body_bytes))
        if slack == "socket":
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            assert settings.slack_app_token is not None
            assert slack_app is not None
            handler = AsyncSocketModeHandler(slack_app, settings.slack_app_token.get_secret_value())
            health.platforms["slack"] = (services.platform_state("slack"), _socket_check(services, handler))
            tasks.append(handler.start_async())  # type: ignore[no-untyped-call]
        await _until_stopped(tasks)  # then the exit stack: the scheduler stops after the pushes in flight


def _socket_check(services: Services, handler: Any) -> Callable[[], Coroutine[Any, Any, None]]:
    """Slack's check in Socket Mode: the bot token accepted (``auth.test``) and the app token's connection up."""
    from bot.errors import DeliveryError

    slack = services.slack
    assert slack is not None

    async def check() -> None:
        await slack.check_credentials()
        if not await handler.client.is_connected():
            raise DeliveryError("the Socket Mode connection is not up (SLACK_APP_TOKEN)", code="socket_not_connected")

    return check


def _observed(services: Services) -> Health:
    """The bot's health (``/healthz``, ``/readyz``), its scrape-time metrics registered, and a line in the log
    when no channel is bound to a repository (the first mention in such a channel tells how to bind one)."""
    from bot import metrics

    health = services.health_report
    metrics.add_collector("health", health.collect)
    unbound = health.bound.get("unbound")
    if unbound:
        log.warning("%s; /healthz says so under bindings", unbound)
    else:
        log.info("channels see %s", ", ".join(health.bound["repositories"]))
    return health


async def _until_stopped(tasks: list[Coroutine[Any, Any, Any]]) -> None:
    """Run ``tasks`` until one ends or SIGTERM / SIGINT comes (uvicorn takes them while it serves, and ends),
    then cancel the rest. With no task (the Feishu long connection alone, in its own thread) only a signal ends it."""
    import signal

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread (tests), or no signals
            loop.add_signal_handler(sig, stop.set)
    running = [asyncio.ensure_future(task) for task in tasks]
    stopper = asyncio.ensure_future(stop.wait())
    try:
        done, _ = await asyncio.wait([*running, stopper], return_when=asyncio.FIRST_COMPLETED)
        log.info("prhub serve stopping (%s)", "signal" if stopper in done else "a server ended")
    finally:
        for task in [*running, stopper]:
            task.cancel()
        await asyncio.gather(*running, stopper, return_exceptions=True)
    for task in running:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


def _feishu(services: Services, mode: FeishuMode) -> Any:
    """The Feishu bot's running context (:func:`bot.handlers.feishu.app.running`)."""
    import lark_oapi as lark

    from bot.handlers.feishu.app import FeishuBot, running

    settings = services.settings
    assert services.feishu is not None
    assert settings.feishu_app_id
    assert settings.feishu_app_secret is not None
    bot = FeishuBot(deliverer=services.feishu, core=services.core, claims=services.claims,
                    language=settings.language, verification_token=_secret(settings.feishu_verification_token),
                    encrypt_key=_secret(settings.feishu_encrypt_key))
    return running(bot, mode="http" if mode == "http" else "ws", app_id=settings.feishu_app_id,
                   app_secret=settings.feishu_app_secret.get_secret_value(), domain=settings.feishu_api_url,
                   client_factory=lark.ws.Client)


def _slack_app(services: Services) -> AsyncApp:
    """The bolt app on the process's Slack client."""
    from bot.handlers.slack.app import build_slack_app
    from bot.handlers.slack.deps import SlackDeps

    assert services.slack is not None
    deps = SlackDeps(core=services.core, claims=services.claims, deliverer=services.slack)
    return build_slack_app(deps, signing_secret=_secret(services.settings.slack_signing_secret))


async def _serve_http(slack_app: AsyncApp | None, routes: list[BaseRoute], host: str, port: int, *,
                      health: Callable[[], Coroutine[Any, Any, dict[str, Any]]],
                      ready: Callable[[], Coroutine[Any, Any, tuple[bool, dict[str, Any]]]],
                      max_body_bytes: int) -> None:
    """One Starlette server for every HTTP platform, the pages, health and metrics: /slack/events,
    /feishu/events, /healthz, /readyz, /metrics, /pages/{token}."""
    import uvicorn

    from bot.handlers.server import build_server

    app = build_server(slack_app=slack_app, routes=routes, health=health, ready=ready, metrics=True,
                       max_body_bytes=max_body_bytes)
    config = uvicorn.Config(app, host=host, port=port, lifespan="off", log_config=None)
    await uvicorn.Server(config).serve()


def _secret(value: Any) -> str:
    return str(value.get_secret_value()) if value is not None else ""


def _source_opener(settings: Settings, *, fetch: bool = False) -> SourceOpener:
    """Opens a spec with the settings; with ``fetch`` (and ``git_fetch_interval_s`` > 0), a git source fetches its
    remote before its first read."""
    def opener(spec: str) -> Any:
        return open_source(spec, settings=settings, fetch=fetch and settings.git_fetch_interval_s > 0)

    return opener


def _warm_understanding() -> None:
    """Load the understanding's dictionaries (segmenter, parts of speech, OpenCC, pinyin) ahead of the first
    message (:func:`bot.understand.tokens.warm_up`, :func:`bot.understand.canon.warm_up`)."""
    from bot.understand import canon, tokens

    tokens.warm_up()
    canon.warm_up()


async def _awaited(task: asyncio.Task[None]) -> None:
    """Wait for a start-up task on the way out (its failure was logged by it, or is raised here)."""
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
