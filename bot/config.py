"""Configuration: one pydantic-settings ``Settings``, built once at start-up and passed down.

Sources, highest priority first:

1. keyword arguments to :func:`load_settings` (the CLI's flags);
2. environment variables ``PRHUB_*`` (``PRHUB_TIMEZONE``, ``PRHUB_LANGUAGE``,
   ``PRHUB_REDIS_URL``, …);
3. the TOML file given by ``--config FILE`` (:func:`load_settings`'s ``config``), else
   ``PRHUB_CONFIG``, else ``prhub.toml`` in the working directory (a missing ``prhub.toml`` is
   fine, a missing ``--config`` or ``PRHUB_CONFIG`` file is an error); an unknown key at any
   level of the file is an error naming the key and its line (:mod:`bot.config_file`);
4. defaults, including the label rules shipped in ``bot/defaults/labels.toml``.

TOML layout (every key optional)::

    timezone = "Asia/Shanghai"
    language = "zh"

    [repositories."verl-project/verl"]
    key_pr_bar = 6                                  # importance at or above -> key PR
    core_paths = ["verl/trainer/**"]                # globs; changes here are a risk
    pr_url_template = "https://github.com/{repo}/pull/{number}"
    aliases = { ascend = "npu", docs = "doc" }      # label -> canonical label
    [[repositories."verl-project/verl".label_rules]]
    label = "fully_async"
    paths = ["**/fully_async*/**"]                  # path globs (** crosses folders)
    tokens = ["fully_async"]                        # words of a path (split on / . - _ and case)
    keywords = []                                   # words of the title

A repository's rules are added to the default rules; its aliases override the
default aliases.

Chat channels (``prhub serve``) are bound to a repository, a source and a
language; a channel without a section uses ``default_repo`` / ``default_source``
(``prhub serve --repo/--source``, ``PRHUB_DEFAULT_REPO`` / ``PRHUB_DEFAULT_SOURCE``)::

    default_source = "github"
    [channels."slack:C0123456789"]                  # platform:channel id
    repo = "verl-project/verl"
    source = "jsonl:examples/verl-2026-W16.jsonl"
    language = "en"
    timezone = "Asia/Shanghai"                      # the channel's weeks and push time
    push = "mon 10:00"                              # weekly digest (docs/operator-guide.md "Pushes and alerts")

Feishu custom group-bot webhooks (push-only, no app) are named sections::

    [feishu_webhooks.team]
    url = "https://open.feishu.cn/open-apis/bot/v2/hook/…"
    secret = "…"                                    # when the bot's signature check is on

Subscriptions (docs/user-guide.md "Subscriptions and alerts"): alerts the file keeps, in the chat grammar
(:func:`bot.filters.parse_filter`), who may change a channel's subscriptions, bots left out, batching and quiet hours::

    bots = ["my-ci-bot"]                            # besides [bot] logins, dependabot, renovate …
    admins = ["slack:U0123ABCD"]                    # only they change channel subscriptions (every channel)
    alerts_batch_s = 600                            # at most one alert message per subscriber per 10 minutes
    quiet_hours = "22:00-08:00"                     # held until morning, in the person's (or channel's) zone
    personal_digest_at = "mon 09:00"                # "my area this week", in the person's zone
    [[subscriptions]]
    subscriber = "slack:C0123456789"                # slack:C…/D…/U…, feishu:oc_…, feishu-webhook:NAME
    repo = "verl-project/verl"                      # default: the subscriber's bound repository
    filter = "path:verl/trainer/** -label:ci"
    [channels."slack:C0123456789"]
    admins = ["U0123ABCD"]                          # this channel's admins (instead of the global ones)
    quiet_hours = "off"                             # or this channel's own hours
"""

from __future__ import annotations

import os
import re
import tomllib
from contextvars import ContextVar
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from bot.errors import ConfigError
from bot.models import Language

if TYPE_CHECKING:
    from bot.config_file import ConfigProblem
from bot.push_spec import PushSpec, cron_fields

DEFAULT_PR_URL_TEMPLATE = "https://github.com/{repo}/pull/{number}"


class LabelRule(BaseModel):
    """Assigns ``label`` to a PR when any file path matches one of ``paths`` (globs),
    any path contains one of ``tokens`` as a word, or the title contains one of
    ``keywords`` as a word. Matching is case-insensitive for tokens and keywords."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    paths: tuple[str, ...] = ()
    tokens: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


class RepoConfig(BaseModel):
    """The team's setup for one repository (or the defaults for any repository)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key_pr_bar: int = Field(default=6, ge=1, le=10)
    core_paths: tuple[str, ...] = ()
    pr_url_template: str = DEFAULT_PR_URL_TEMPLATE
    aliases: dict[str, str] = Field(default_factory=dict)
    label_rules: tuple[LabelRule, ...] = ()
    label_min_share: float = Field(default=0.25, gt=0, le=1)
    generated_paths: tuple[str, ...] = ()
    bots: tuple[str, ...] = ()
    """This repository's bot logins, left out of subscriptions unless named (besides the global ``bots``)."""

    def pr_url(self, repo: str, number: int) -> str:
        """The web address of PR ``number`` of ``repo`` from ``pr_url_template``."""
        return self.pr_url_template.format(repo=repo, number=number)


class ChannelRepo(BaseModel):
    """One repository of a channel that follows several (``repos``): ``owner/name`` and its own ``source``
    (``None``: the channel's, else ``default_source``). In TOML a plain ``"owner/name"`` string also reads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str = Field(pattern=r"^[^/\s]+/[^/\s]+$")
    source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_name(cls, data: Any) -> Any:
        return {"repo": data} if isinstance(data, str) else data


class ChannelConfig(BaseModel):
    """What one chat channel (``platform:id``, e.g. ``slack:C0123456789``) is about by default.

    ``None`` fields fall back to the global defaults (:meth:`Settings.channel`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str | None = None
    source: str | None = None
    language: Language | None = None
    timezone: str | None = None
    """IANA zone of the channel's weeks and push time (default: the global ``timezone``)."""
    push: PushSpec | None = None
    """Weekly push time: ``"mon 10:00"`` or cron fields ``{day_of_week = "mon", hour = 10}``
    (:func:`bot.push_spec.cron_fields`); ``None``: no scheduled push."""
    admins: tuple[str, ...] | None = None
    """Who may change this channel's subscriptions (user ids, ``U…`` / ``ou_…``, or ``platform:id``);
    ``None``: the global ``admins``; empty: every member."""
    quiet_hours: str | None = None
    """This channel's quiet hours (``"22:00-08:00"``, or ``"off"``); ``None``: the global ``quiet_hours``."""
    allowed_repos: tuple[str, ...] = ()
    """Repositories this channel may ask about besides ``repo`` (and the global ``allowed_repos``)."""
    repos: tuple[ChannelRepo, ...] = ()
    """Several repositories in one channel (issue 29): the weekly push is one post — a cross-repository
    headline, then each repository's own digest in its thread — and chat questions name one of them
    ("verl 的 #6046") or are asked back when a number exists in two. ``repo`` then defaults to the first."""
    full_digest: bool = False
    """A digest asked in chat posts everything at once (the card, then the full report and label view in
    its thread); ``False``: the card alone, the rest when 完整报告 is pressed."""

    @field_validator("push")
    @classmethod
    def _check_push(cls, value: PushSpec | None) -> PushSpec | None:
        if value is not None:
            cron_fields(value)  # raises ValueError with the accepted forms
        return value

    @field_validator("quiet_hours")
    @classmethod
    def _check_quiet(cls, value: str | None) -> str | None:
        return None if value is None else check_quiet_hours(value)


_QUIET = re.compile(r"^\s*(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s*[-–~]\s*(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s*$")


def check_quiet_hours(value: str) -> str:
    """``value`` if it is ``"off"`` or two different local times ``HH[:MM]-HH[:MM]`` (``22:00-08:00``).

    Raises:
        ValueError: another form (the message shows the accepted one).
    """
    text = value.strip()
    if text.lower() in ("off", "none", ""):
        return "off"
    if not _QUIET.match(text):
        raise ValueError(f"quiet hours {value!r}: expected HH:MM-HH:MM (e.g. 22:00-08:00) or \"off\"")
    start, end = (part.strip() for part in re.split(r"[-–~]", text))
    if _minutes(start) == _minutes(end):
        raise ValueError(f"quiet hours {value!r}: the start and the end must differ")
    return text


def _minutes(clock: str) -> int:
    hour, _, minute = clock.partition(":")
    return int(hour) * 60 + int(minute or 0)


SUBSCRIBER_PLATFORMS = ("slack", "feishu", "feishu-webhook")


class ConfiguredSubscription(BaseModel):
    """One ``[[subscriptions]]`` entry: alerts for ``subscriber`` (``slack:C…``, ``slack:D…``, ``slack:U…``,
    ``feishu:oc_…`` or ``feishu-webhook:NAME``) on the PRs of ``repo`` (default: the subscriber's bound
    repository) that ``filter`` matches (the chat grammar; empty: every PR). Kept by the file: chat
    cannot change it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subscriber: str
    repo: str | None = None
    filter: str = ""

    @field_validator("subscriber")
    @classmethod
    def _check_subscriber(cls, value: str) -> str:
        platform, sep, ident = value.strip().partition(":")
        if not sep or not ident or platform not in SUBSCRIBER_PLATFORMS:
            raise ValueError(f"subscriber {value!r}: expected slack:C…, slack:U…, feishu:oc_… or feishu-webhook:NAME")
        return value.strip()

    @field_validator("filter")
    @classmethod
    def _check_filter(cls, value: str) -> str:
        from bot.filters import parse_filter

        parse_filter(value)  # FilterError is a ValueError: the message names what is known
        return value


class FeishuWebhook(BaseModel):
    """A Feishu custom group-bot webhook: its ``url`` and, when signing is on, its ``secret``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    secret: SecretStr | None = None


class ConceptConfig(BaseModel):
    """One concept of ``[concepts.NAME]`` in ``prhub.toml`` (added to the shipped
    ``bot/defaults/concepts.toml``): the words people say for it (either language), the words
    searched in the PRs, and the risk kinds and change types that mean it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    words: tuple[str, ...] = ()
    search: tuple[str, ...] | None = None
    risks: tuple[str, ...] = ()
    change_types: tuple[str, ...] = ()


class _Defaults(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    aliases: dict[str, str] = Field(default_factory=dict)
    label_rules: tuple[LabelRule, ...] = ()
    generated_paths: tuple[str, ...] = ()


@cache
def default_rules() -> _Defaults:
    """The label rules, aliases and generated-file globs shipped with the package.

    Source: ``bot/defaults/labels.toml``.
    """
    text = resources.files("bot").joinpath("defaults/labels.toml").read_text(encoding="utf-8")
    return _Defaults.model_validate(tomllib.loads(text))


class Settings(BaseSettings):
    """Everything configurable; see the module docstring for sources and layout."""

    # extra="forbid": a key of the file that no field knows is an error (environment variables are read
    # by name, so an unrelated PRHUB_* variable is never one). An empty variable (SLACK_BOT_TOKEN= in a .env
    # copied from .env.example) is no value.
    model_config = SettingsConfigDict(env_prefix="PRHUB_", extra="forbid", frozen=True, env_ignore_empty=True)
    _config_file: Path | None = PrivateAttr(default=None)

    timezone: str = "Asia/Shanghai"
    """IANA zone of the digests' windows and the push times (a channel's ``timezone`` overrides it)."""
    language: Language = "zh"
    """``zh`` or ``en``: digests, cards, the bot's own words and the command line's messages."""
    redis_url: str = "redis://127.0.0.1:6379/0"
    """Redis of the bot (de-duplication, subscriptions, push markers, the job queue) and the analysis cache."""
    cache_file: Path | None = None
    """A JSON file that holds the command line's analysis cache instead of Redis (``PRHUB_CACHE_FILE``): read
    at start, written at the end — a CI job without Redis keeps it in the CI's cache between runs
    (docs/github-action.md). Unset: Redis at ``redis_url`` when it answers, else memory."""
    redis_key_prefix: str = ""
    """Put before every Redis key this process writes (deployments, or tests, sharing one Redis DB);
    ``PRHUB_REDIS_KEY_PREFIX``."""
    redis_max_connections: int = Field(default=64, ge=2, le=10_000)
    """Connections in the Redis pool; a request finding all busy waits (``PRHUB_REDIS_MAX_CONNECTIONS``)."""
    redis_pool_timeout_s: float = Field(default=2.0, gt=0, le=60)
    """Seconds a request waits for a free Redis connection before the store degrades."""
    redis_timeout_s: float = Field(default=2.0, gt=0, le=60)
    """Seconds one Redis call (connect, or a reply) may take before the store degrades (a hung Redis)."""
    log_level: str = "INFO"
    """Level of the bot's log (``DEBUG``, ``INFO``, ``WARNING``, ``ERROR``); ``PRHUB_LOG_LEVEL``."""
    log_format: Literal["text", "json"] = "text"
    """``text``: one readable line per record; ``json``: one JSON object per line (``PRHUB_LOG_FORMAT``)."""
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    """The largest request body ``prhub serve`` reads; a larger one gets HTTP 413 before it is read."""
    max_message_chars: int = Field(default=4000, ge=100)
    """Characters of a chat message that are read (the rest is ignored before any parsing)."""
    answer_deadline_s: float = Field(default=60.0, gt=0)
    """Seconds a chat answer's work may take; PR analyses not ready by then are shown as pending. The
    wait for the platform's per-channel pacing is not counted (a busy channel's answers queue, then post)."""
    answer_attempts: int = Field(default=3, ge=1, le=10)
    """Tries of a chat answer that failed after its event was acknowledged (the platform will not retry
    it): the bot tries again itself, after 1 s, 2 s, 4 s …, this many times in all."""
    push_lock_ttl_s: int = Field(default=60, ge=2)
    """Lifetime of the weekly push's lock, renewed every third of it while the push runs: a replica that
    dies mid-push frees it this soon, and another resumes the push where it stopped."""
    health_check_interval_s: int = Field(default=300, ge=1)
    """Seconds between two checks of each platform's credentials by ``prhub serve`` (Slack ``auth.test``, the
    Feishu bot info): ``/readyz`` turns not ready when a check fails (``PRHUB_HEALTH_CHECK_INTERVAL_S``)."""
    serve_health: bool = True
    """Serve ``GET /healthz``, ``/readyz`` and ``/metrics`` on ``--port`` even when no platform uses HTTP (Socket
    Mode, the Feishu long connection); ``PRHUB_SERVE_HEALTH=false`` opens no port then."""
    shutdown_grace_s: float = Field(default=60.0, ge=0)
    """On SIGTERM, seconds a push in flight may take to finish before it is handed over (resumed elsewhere)."""
    allowed_repos: tuple[str, ...] = ()
    """Repositories every channel may ask about besides its own binding (``owner/name``)."""
    pr_hosts: tuple[str, ...] = ("github.com",)
    """Hosts whose PR links the bot reads (GitHub Enterprise: add its host); other links are ignored."""
    max_subscriptions_per_person: int = Field(default=20, ge=1)
    """Subscriptions one person may make across conversations."""
    max_subscriptions_per_channel: int = Field(default=30, ge=1)
    """Subscriptions one conversation may hold (those of the config file not counted)."""
    max_subscribed_repos_per_channel: int = Field(default=5, ge=1)
    """Distinct repositories one conversation's subscriptions may name (each costs a poll per interval)."""
    # GitHub source (docs/digest.md "Sources"): the token is optional (anonymous REST: 60 requests/hour).
    # The alias choices let the usual GITHUB_TOKEN work; the field still has a default.
    github_token: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None, validation_alias=AliasChoices("github_token", "GITHUB_TOKEN", "PRHUB_GITHUB_TOKEN")
    )
    """GitHub token from ``GITHUB_TOKEN`` (or ``PRHUB_GITHUB_TOKEN``); enables GraphQL search."""
    github_api_url: str = "https://api.github.com"
    """GitHub API root (GitHub Enterprise: ``https://HOST/api/v3``; tests: a local fake); ``PRHUB_GITHUB_API_URL``."""
    github_history_prs: int = Field(default=300, ge=0, le=1000)
    """PRs of the 11 windows before a digest's window read from the GitHub API (GraphQL, 100 a query, file paths
    only) to work out the repository's core files; 0 reads none (core files then come from the window's own busy
    files); at most 1,000 (GitHub's search gives no more); ``PRHUB_GITHUB_HISTORY_PRS``."""
    # git sources (git:PATH, git:URL): fetched by prhub serve on a schedule and before each push.
    git_fetch_interval_s: int = Field(default=600, ge=0)
    """Seconds between two ``git fetch`` of each ``git:`` source ``prhub serve`` reads (0: never fetch; it also
    fetches at start and before each weekly push; ``prhub push`` and ``prhub alerts`` fetch before their first
    read); ``PRHUB_GIT_FETCH_INTERVAL_S``."""
    git_timeout_s: float = Field(default=300.0, gt=0)
    """The longest one ``git fetch`` (or the first clone of a ``git:URL`` source) may take, seconds."""
    git_clones_dir: str = "~/.cache/prhub/clones"
    """Where ``git:URL`` sources are cloned (bare) on first use (the compose file: a volume at /app/clones)."""
    # LLM analysis (see docs/digest.md "LLM"); llm_model None = the heuristic analyzer only.
    llm_model: str | None = None
    """Any litellm model string (``openai/gpt-4o-mini``, ``ollama/qwen2.5``); ``PRHUB_LLM_MODEL``."""
    llm_api_base: str | None = None
    """OpenAI-compatible base URL (self-hosted servers, tests' fake server); ``PRHUB_LLM_API_BASE``."""
    llm_api_key: SecretStr | None = None
    """API key; when unset litellm reads the provider's usual variable (``OPENAI_API_KEY``, …)."""
    llm_concurrency: int = Field(default=8, ge=1, le=256)
    """Chat completions in flight at once."""
    llm_timeout_s: float = Field(default=120.0, gt=0)
    """Seconds one chat completion may take (the outer guard adds a few seconds)."""
    llm_max_retries: int = Field(default=3, ge=0, le=10)
    """Retries of a rate-limited (429) or temporarily failing call, waiting ``Retry-After``."""
    llm_context_default: int = Field(default=8192, ge=1024)
    """Context size in tokens for models litellm has no metadata for (local models)."""
    cache_ttl_s: int = Field(default=30 * 24 * 3600, ge=1)
    """How long analyses and narratives stay in the Redis cache, in seconds (default 30 days)."""
    # Analysis jobs (docs/operator-guide.md "Scale out"): bot/jobs, the queue on the same Redis.
    worker_concurrency: int = Field(default=4, ge=1, le=64)
    """Analysis jobs one ``prhub worker`` runs at once (its threads); ``PRHUB_WORKER_CONCURRENCY``."""
    jobs_queue: str = Field(default="analysis", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    """Name of the analysis queue (workers and the bots that enqueue must agree); ``PRHUB_JOBS_QUEUE``."""
    jobs_heartbeat_timeout_s: int = Field(default=60, ge=2)
    """A worker silent this long is dead: its unfinished jobs go back to the queue for another, seconds."""
    jobs_max_retries: int = Field(default=3, ge=0, le=20)
    """Retries of a job whose model call failed (exponential backoff from 2 s), before its PR gets the
    heuristic analysis with the reason."""
    jobs_time_limit_s: int = Field(default=600, ge=10)
    """How long one analysis job may run before the worker stops it (and retries it), seconds."""
    jobs_maintenance_chance: int = Field(default=50_000, ge=1, le=1_000_000)
    """Of a million queue commands, how many also move dead workers' jobs back to the queue (Dramatiq's
    maintenance; its own default is 1,000, minutes between two looks with a few idle workers)."""
    # GitHub webhooks (POST /github/webhook in prhub serve) and the GitHub App.
    github_webhook_secret: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None,
        validation_alias=AliasChoices("github_webhook_secret", "GITHUB_WEBHOOK_SECRET", "PRHUB_GITHUB_WEBHOOK_SECRET"),
    )
    """The webhook's secret (``GITHUB_WEBHOOK_SECRET``); set, ``prhub serve`` takes ``POST /github/webhook``."""
    github_webhook_max_bytes: int = Field(default=1024 * 1024, ge=1024)
    """Largest webhook body accepted (413 beyond), bytes; the server's ``max_body_bytes`` bounds it too."""
    github_app_id: str | None = None
    """GitHub App id (``PRHUB_GITHUB_APP_ID``); with the private key, the bot authenticates as the app's
    installation instead of ``GITHUB_TOKEN``."""
    github_app_private_key: SecretStr | None = None
    """The app's private key, PEM text or the path of the ``.pem`` file (``PRHUB_GITHUB_APP_PRIVATE_KEY``)."""
    github_app_installation_id: int | None = None
    """The installation to act as (``PRHUB_GITHUB_APP_INSTALLATION_ID``); unset: the app's only installation."""
    # Chat bots (docs/operator-guide.md "Slack app"): the platforms' usual variable names, or PRHUB_* ones.
    slack_bot_token: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None, validation_alias=AliasChoices("slack_bot_token", "SLACK_BOT_TOKEN", "PRHUB_SLACK_BOT_TOKEN")
    )
    """Bot token ``xoxb-…`` from ``SLACK_BOT_TOKEN``."""
    slack_signing_secret: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None,
        validation_alias=AliasChoices("slack_signing_secret", "SLACK_SIGNING_SECRET", "PRHUB_SLACK_SIGNING_SECRET"),
    )
    """Signing secret from ``SLACK_SIGNING_SECRET``; verifies HTTP requests (and is required by bolt)."""
    slack_app_token: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None, validation_alias=AliasChoices("slack_app_token", "SLACK_APP_TOKEN", "PRHUB_SLACK_APP_TOKEN")
    )
    """App-level token ``xapp-…`` from ``SLACK_APP_TOKEN``, for Socket Mode."""
    slack_api_url: str = "https://slack.com/api/"
    """Slack Web API base URL (tests: a local fake); ``PRHUB_SLACK_API_URL``."""
    feishu_app_id: str | None = Field(  # type: ignore[pydantic-alias]
        default=None, validation_alias=AliasChoices("feishu_app_id", "FEISHU_APP_ID", "PRHUB_FEISHU_APP_ID")
    )
    """Feishu app id ``cli_…`` from ``FEISHU_APP_ID`` (docs/operator-guide.md "Feishu app")."""
    feishu_app_secret: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None,
        validation_alias=AliasChoices("feishu_app_secret", "FEISHU_APP_SECRET", "PRHUB_FEISHU_APP_SECRET"),
    )
    """Feishu app secret from ``FEISHU_APP_SECRET``."""
    feishu_verification_token: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None,
        validation_alias=AliasChoices("feishu_verification_token", "FEISHU_VERIFICATION_TOKEN",
                                      "PRHUB_FEISHU_VERIFICATION_TOKEN"),
    )
    """Verification token of HTTP event delivery, from ``FEISHU_VERIFICATION_TOKEN``."""
    feishu_encrypt_key: SecretStr | None = Field(  # type: ignore[pydantic-alias]
        default=None,
        validation_alias=AliasChoices("feishu_encrypt_key", "FEISHU_ENCRYPT_KEY", "PRHUB_FEISHU_ENCRYPT_KEY"),
    )
    """Encrypt key of HTTP event delivery (decrypts bodies, checks signatures), from ``FEISHU_ENCRYPT_KEY``."""
    feishu_allow_unverified: bool = False
    """Run Feishu HTTP mode without a verification token or encrypt key (anyone could forge events);
    ``PRHUB_FEISHU_ALLOW_UNVERIFIED=true`` for a closed network only."""
    feishu_api_url: str = "https://open.feishu.cn"
    """Feishu Open API origin (Lark: ``https://open.larksuite.com``; tests: a local fake); ``PRHUB_FEISHU_API_URL``."""
    feishu_webhooks: dict[str, FeishuWebhook] = Field(default_factory=dict)
    """Custom group-bot webhooks by name (push-only installs): ``[feishu_webhooks.NAME]`` with ``url``, ``secret``."""
    feishu_webhook_secret: SecretStr | None = None
    """The signing secret of ``prhub digest --post feishu-webhook:URL`` (a webhook given by its URL, not by a
    ``[feishu_webhooks.NAME]``); ``PRHUB_FEISHU_WEBHOOK_SECRET``."""
    push_grace_s: int = Field(default=24 * 3600, ge=0)
    """A weekly push missed while the bot was down is caught up at start within this many seconds."""
    alerts_interval_s: int = Field(default=300, ge=10)
    """Seconds between two polls of the label alerts (``prhub serve``)."""
    alerts_overlap_s: int = Field(default=3600, ge=0)
    """Each poll re-reads this many seconds before its checkpoint (sources that list a merge late)."""
    alerts_batch_s: int = Field(default=600, ge=0)
    """At most one alert message per subscriber per this many seconds, listing every PR that arrived (0: each
    poll sends what it found)."""
    quiet_hours: str | None = None
    """Local hours ``"22:00-08:00"`` when alerts are held until the end (in the person's time zone, else the
    channel's); ``None``: none. A channel's ``quiet_hours`` overrides it."""
    personal_digest_at: PushSpec = "mon 09:00"
    """When "my area this week" goes out, in each person's time zone (the forms of ``push``)."""
    codeowners_ttl_s: int = Field(default=3600, ge=60)
    """How long a repository's CODEOWNERS (for ``path:@me``) is kept in Redis before it is read again, seconds."""
    bots: tuple[str, ...] = ()
    """Bot logins left out of subscriptions unless a filter names them, besides ``…[bot]`` logins and
    :data:`bot.filters.DEFAULT_BOTS`."""
    concepts: dict[str, ConceptConfig] = Field(default_factory=dict)
    """Concepts people ask about (``[concepts.NAME]``: ``words``, ``search``, ``risks``, ``change_types``),
    added to the shipped ones of ``bot/defaults/concepts.toml`` (docs/understanding.md)."""
    thread_memory_ttl_s: int = Field(default=6 * 3600, ge=60)
    """How long the last answer of a chat thread is remembered for follow-ups ("那上周呢", "and #6029?"), seconds."""
    admins: tuple[str, ...] = ()
    """``platform:user`` ids who alone may change channel subscriptions (a channel's ``admins`` overrides it);
    empty: every member of a channel may."""
    subscriptions: tuple[ConfiguredSubscription, ...] = ()
    """``[[subscriptions]]``: alerts kept by the config file (listed with the others, not changed in chat)."""
    dedup_ttl_s: int = Field(default=12 * 3600, ge=8 * 3600)
    """How long a handled chat delivery is remembered (redeliveries, restarts), in seconds: at least
    8 hours, past Feishu's last retry (~6 hours after the first try); see :mod:`bot.claims`."""
    # Digest pages and charts (docs/operator-guide.md "Pages and charts"): bot/web serves them, bot/delivery links them.
    page_secret: SecretStr | None = None
    """Key that signs page links (``PRHUB_PAGE_SECRET``, any long random string; rotating it revokes every
    link); without it ``prhub serve`` serves no page."""
    page_link_ttl_s: int = Field(default=30 * 24 * 3600, ge=60)
    """How long a page link works, and a page's digest is kept, in seconds (``PRHUB_PAGE_LINK_TTL_S``)."""
    public_url: str | None = None
    """The bot's public base URL (``PRHUB_PUBLIC_URL``, e.g. ``https://prhub.example.com``); set, the cards'
    完整报告 button and the push link to ``{public_url}/pages/{token}``; unset, 完整报告 posts the report
    into the thread."""
    charts: bool = True
    """Whether digest cards carry their charts (``PRHUB_CHARTS=false``: no upload, no plotting)."""
    default_repo: str | None = None
    """Repository of channels without a ``[channels]`` section (``prhub serve --repo``)."""
    default_source: str = "github"
    """Source spec of channels without a ``[channels]`` section (``prhub serve --source``)."""
    channels: dict[str, ChannelConfig] = Field(default_factory=dict)
    """``platform:channel`` -> the channel's repository, source and language."""
    repositories: dict[str, RepoConfig] = Field(default_factory=dict)
    defaults: RepoConfig = Field(default_factory=RepoConfig)

    @field_validator("quiet_hours")
    @classmethod
    def _check_quiet(cls, value: str | None) -> str | None:
        return None if value is None else check_quiet_hours(value)

    @field_validator("personal_digest_at")
    @classmethod
    def _check_personal_at(cls, value: PushSpec) -> PushSpec:
        cron_fields(value)
        return value

    @model_validator(mode="after")
    def _check_subscriptions(self) -> Settings:
        if not self.subscriptions:
            return self
        from bot.filters import parse_filter  # the grammar loads only when the file has subscriptions

        for n, entry in enumerate(self.subscriptions):
            repo = entry.repo or self.channel(entry.subscriber).repo
            if not repo or "/" not in repo:
                raise ValueError(f"subscriptions[{n}] ({entry.subscriber}): no repo, and the subscriber has no "
                                 "bound repository (set repo = \"owner/name\")")
            parse_filter(entry.filter, aliases=self.repo(repo).aliases)  # the repository's aliases apply
        return self

    @field_validator("public_url")
    @classmethod
    def _check_public_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        url = value.strip().rstrip("/")
        if not url.startswith(("https://", "http://")) or "?" in url or "#" in url:
            raise ValueError("expected the bot's base address, like https://prhub.example.com")
        return url

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=_config_path()))

    def model_post_init(self, context: Any, /) -> None:
        """Remember which file the settings were read from (:attr:`config_file`)."""
        self._config_file = _config_path()

    @property
    def config_file(self) -> Path | None:
        """The TOML file these settings were read from, or ``None`` (built-in defaults and the environment)."""
        return self._config_file

    @property
    def config_name(self) -> str | None:
        """The config file's name without its folder (``prhub.toml``), for reports; ``None`` without a file."""
        return self._config_file.name if self._config_file is not None else None

    def repo(self, name: str) -> RepoConfig:
        """The effective configuration of repository ``owner/name``: the shipped default
        rules, then ``[defaults]`` of the file, then the repository's own section."""
        wanted = name.strip().lower()
        own = next((cfg for key, cfg in self.repositories.items() if key.lower() == wanted), self.defaults)
        shipped = default_rules()
        return own.model_copy(
            update={
                "aliases": {**shipped.aliases, **self.defaults.aliases, **own.aliases},
                "label_rules": _merge_rules(shipped.label_rules, self.defaults.label_rules, own.label_rules),
                "generated_paths": tuple(
                    dict.fromkeys(
                        (*shipped.generated_paths, *self.defaults.generated_paths, *own.generated_paths)
                    )
                ),
            }
        )


    def channel(self, key: str) -> ChannelConfig:
        """The effective binding of chat channel ``key`` (``platform:id``): its own section,
        with missing fields from ``default_repo``, ``default_source``, ``language``, ``timezone``,
        ``admins`` and ``quiet_hours``."""
        own = self.channels.get(key, ChannelConfig())
        return ChannelConfig(
            repo=own.repo or (own.repos[0].repo if own.repos else None) or self.default_repo,
            source=own.source or self.default_source,
            language=own.language or self.language,
            timezone=own.timezone or self.timezone,
            push=own.push,
            admins=own.admins if own.admins is not None else self.admins,
            quiet_hours=own.quiet_hours if own.quiet_hours is not None else self.quiet_hours,
            allowed_repos=own.allowed_repos,
            full_digest=own.full_digest,
            repos=own.repos,
        )

    def visible_repos(self, key: str) -> list[str]:
        """The repositories channel ``key`` may see: its bound ``repo`` (else ``default_repo``), its
        ``allowed_repos`` and the global ``allowed_repos``, in that order, each once (case kept, compared
        without case)."""
        binding = self.channel(key)
        seen: dict[str, str] = {}
        for name in (binding.repo, *(r.repo for r in binding.repos), *binding.allowed_repos, *self.allowed_repos):
            if name and "/" in name:
                seen.setdefault(name.strip().lower(), name.strip())
        return list(seen.values())

    def bots_of(self, repo: str) -> frozenset[str]:
        """The bot logins left out of ``repo``'s subscriptions: the built-in ones, ``bots`` and the repository's."""
        from bot.filters import DEFAULT_BOTS

        return frozenset({*DEFAULT_BOTS, *self.bots, *self.repo(repo).bots})


def _merge_rules(*groups: tuple[LabelRule, ...]) -> tuple[LabelRule, ...]:
    seen: dict[LabelRule, None] = {}
    for group in groups:
        for rule in group:
            seen.setdefault(rule, None)
    return tuple(seen)


_EXPLICIT: ContextVar[Path | None] = ContextVar("prhub_config_file", default=None)
"""The file of ``--config`` while :func:`load_settings` builds the settings."""


def _config_path() -> Path | None:
    explicit = _EXPLICIT.get()
    if explicit is not None:
        return explicit
    named = os.environ.get("PRHUB_CONFIG")
    if named:
        return Path(named)
    local = Path("prhub.toml")
    return local if local.is_file() else None


def settings_source(settings: Settings | None = None) -> str:
    """Where the settings come from, for people: the config file's path, or that there is none."""
    path = settings.config_file if settings is not None else _config_path()
    return str(path) if path is not None else "none (built-in defaults; no ./prhub.toml, PRHUB_CONFIG unset)"


def load_settings(*, config: Path | str | None = None, **overrides: Any) -> Settings:
    """Build the settings once, at start-up.

    Args:
        config: the TOML file to read (``--config``); default ``PRHUB_CONFIG``, else ``./prhub.toml``.
        **overrides: values that win over the environment and the file (CLI flags);
            ``None`` values are ignored.

    Raises:
        ConfigError: the config file is missing (when named), does not parse, has a key no setting
            knows, or a value is invalid — one line naming the file, the line and the key
            (``prhub.toml:3: unknown key 'timezon' (did you mean 'timezone'?)``).
    """
    token = _EXPLICIT.set(Path(config).expanduser() if config is not None and str(config) else None)
    try:
        path = _config_path()
        if path is not None and not path.is_file():
            origin = "--config" if _EXPLICIT.get() is not None else "PRHUB_CONFIG"
            raise ConfigError(f"config file not found: {path} (from {origin})",
                              zh=f"找不到配置文件：{path}（来自 {origin}）")
        try:
            return Settings(**{k: v for k, v in overrides.items() if v is not None})
        except tomllib.TOMLDecodeError as exc:
            from bot.config_file import toml_error_line

            line, message = toml_error_line(exc)
            place = f"{path}{f':{line}' if line else ''}"
            raise ConfigError(f"{place}: not valid TOML: {message}", zh=f"{place}：不是有效的 TOML：{message}") from exc
        except ValidationError as exc:
            english, chinese = _first_problem(exc, path)
            raise ConfigError(english, zh=chinese) from exc
    finally:
        _EXPLICIT.reset(token)


def _first_problem(exc: ValidationError, path: Path | None) -> tuple[str, str]:
    """One line about the first error of ``exc`` (English, Chinese): the file's line and key when the value came
    from the file, else the environment variable (or the flag) it came from."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    env_name = f"PRHUB_{str(first['loc'][0]).upper()}" if first["loc"] else ""
    if env_name and env_name in os.environ and len(first["loc"]) == 1:
        return (f"invalid setting {where} (from {env_name}): {first['msg']}",
                f"设置 {where} 无效（来自 {env_name}）：{first['msg']}")
    if path is not None:
        found = check_config(path)
        if found:
            return found[0].render(path), found[0].render(path, "zh")
    return f"invalid setting {where}: {first['msg']}", f"设置 {where} 无效：{first['msg']}"


def check_config(path: Path) -> list[ConfigProblem]:
    """Every problem of the config file ``path`` (with the environment as it is), in the order of its lines;
    empty when it loads (``prhub config check``). :meth:`~bot.config_file.ConfigProblem.render` writes each.

    Raises:
        ConfigError: the file is missing.
    """
    from bot.config_file import ConfigProblem, problems, toml_error_line

    if not path.is_file():
        raise ConfigError(f"config file not found: {path}", zh=f"找不到配置文件：{path}")
    token = _EXPLICIT.set(path)
    try:
        Settings()
    except tomllib.TOMLDecodeError as exc:
        line, message = toml_error_line(exc)
        return [ConfigProblem(line, "", f"not valid TOML: {message}", f"不是有效的 TOML：{message}")]
    except ValidationError as exc:
        return problems(exc, path.read_text(encoding="utf-8"), Settings)
    finally:
        _EXPLICIT.reset(token)
    return []
