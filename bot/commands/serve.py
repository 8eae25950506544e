"""``prhub serve``: run the chat bot — Slack and/or Feishu, the weekly pushes and the alerts.

Slack in Socket Mode (``--slack socket``, the default when ``SLACK_BOT_TOKEN`` is
set; needs ``SLACK_APP_TOKEN``) or in HTTP mode (``--slack http``: ``POST
/slack/events``, for deployments behind a load balancer; needs ``SLACK_SIGNING_SECRET``
to check the requests' signatures). Feishu over the long
connection (``--feishu ws``, the default when ``FEISHU_APP_ID`` is set; no public
URL needed) or HTTP (``--feishu http``: ``POST /feishu/events``). HTTP modes share
one Starlette server on ``--host``/``--port`` with ``GET /healthz`` (liveness), ``GET /readyz``
(readiness: each platform's last call and auth check, Redis, the scheduler, the queue), ``GET /metrics``
(Prometheus) and ``GET /healthz/workers``; with ``GITHUB_WEBHOOK_SECRET`` it also takes ``POST /github/webhook``
(merged PRs analysed and alerted as they merge), and the server runs whatever the modes. Redis
(``PRHUB_REDIS_URL``) keeps the de-duplication, subscriptions and push markers; when it
does not answer (at start or later) the bot runs degraded — it answers, tells people that
subscriptions cannot be saved, tries Redis again and says so in ``/healthz`` (docs/operator-guide.md
"Operations"). SIGTERM stops it after the pushes in flight. Everything is built and
run by :func:`bot.app.serve`; this module reads the options.

``--source`` and ``--repo`` are the defaults of channels that have no
``[channels."slack:C…"]`` section in the config file. With no platform configured it stops at once
with one line naming what to set (exit 1); with no repository bound to any channel it starts, says so
in its log and in ``/healthz``, and answers the first mention in an unbound channel with how to bind it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from bot.commands.common import ConfigOption, LangOption, cli_language, fail
from bot.errors import PrhubError

_stderr = Console(stderr=True)


class SlackMode(StrEnum):
    """How Slack reaches the bot."""

    socket = "socket"
    http = "http"
    off = "off"


class FeishuMode(StrEnum):
    """How Feishu reaches the bot."""

    ws = "ws"
    http = "http"
    off = "off"


def register(app: typer.Typer) -> None:
    """Add the ``serve`` command to ``app``."""
    app.command("serve")(serve)


def serve(
    slack: Annotated[
        SlackMode | None,
        typer.Option(metavar="socket|http|off",
                     help="socket: Socket Mode (SLACK_APP_TOKEN); http: serve POST /slack/events "
                          "(SLACK_SIGNING_SECRET); off. Default: socket when SLACK_BOT_TOKEN is set, else off."),
    ] = None,
    feishu: Annotated[
        FeishuMode | None,
        typer.Option(metavar="ws|http|off", help="ws: long connection; http: serve POST /feishu/events; off. "
                                                 "Default: ws when FEISHU_APP_ID is set, else off."),
    ] = None,
    host: Annotated[str, typer.Option(metavar="ADDRESS", help="The HTTP server's address.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(metavar="PORT", help="The HTTP server's port (/healthz, /readyz, /metrics, "
                                                           "HTTP modes).")] = 3000,
    source: Annotated[
        str | None, typer.Option(metavar="SPEC", help="Default source of channels without a binding (github, "
                                                      "git:PATH, jsonl:PATH).")
    ] = None,
    repo: Annotated[str | None, typer.Option(metavar="OWNER/NAME",
                                             help="Default repository of channels without a binding.")] = None,
    lang: LangOption = None,
    config: ConfigOption = None,
) -> None:
    """Run the chat bot: Slack and/or Feishu, the weekly pushes and the label alerts (Ctrl-C stops it).

    Example: prhub serve --slack http --feishu http --port 3000 --source jsonl:examples/verl-2026-W16.jsonl
    """
    import asyncio

    from bot import app as root
    from bot.config import load_settings, settings_source

    language = cli_language(lang, config)
    try:
        settings = load_settings(config=config, default_source=source, default_repo=repo, language=lang)
        language = settings.language
        slack_mode = slack or (SlackMode.socket if settings.slack_bot_token else SlackMode.off)
        feishu_mode = feishu or (FeishuMode.ws if settings.feishu_app_id else FeishuMode.off)
        root.check_serve(settings, slack=slack_mode.value, feishu=feishu_mode.value)
        _stderr.print(Text(f"prhub serve: Slack {slack_mode.value} · Feishu {feishu_mode.value} · "
                           f"config {settings_source(settings)}"), highlight=False)
        asyncio.run(root.serve(settings, slack=slack_mode.value, feishu=feishu_mode.value, host=host, port=port))
    except PrhubError as exc:
        raise fail(exc, language) from exc
