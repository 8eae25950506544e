"""The composition root builds each client once and every door shares it; importing the core loads no door,
no platform SDK and no scheduler."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import SecretStr

from bot.app import build_services, check_serve
from bot.config import FeishuWebhook, Settings
from bot.errors import ConfigError
from bot.store import MemoryStore


@pytest.fixture
def everything(verl_settings: Settings) -> Settings:
    return verl_settings.model_copy(update={
        "slack_bot_token": SecretStr("xoxb-test"), "slack_signing_secret": SecretStr("s"),
        "feishu_app_id": "cli_test", "feishu_app_secret": SecretStr("secret"),
        "feishu_webhooks": {"team": FeishuWebhook(url="http://127.0.0.1:9/hook")},
        "llm_model": "openai/fake-model", "llm_api_base": "http://127.0.0.1:9/v1",
    })


async def test_one_client_per_platform_and_one_llm_runtime_shared_by_every_door(everything: Settings) -> None:
    services = build_services(everything, MemoryStore())
    core, pusher, poller = services.core, services.pusher(), services.poller()
    assert services.deliverers.slack is services.slack
    assert services.deliverers.feishu is services.feishu
    assert services.deliverers.for_channel("slack:C1")[0] is services.slack
    assert services.deliverers.for_channel("feishu-webhook:team")[0].platform == "feishu-webhook"
    assert core.digests is pusher._digests is poller._digests is services.digests
    assert services.digests._llm is services.llm is not None  # one LLM client: one concurrency limit
    assert core.channels is pusher._channels is poller._channels  # one source per spec, shared
    assert pusher._claims is poller._claims is services.claims
    assert services.feishu is not None
    assert services.feishu.client._pacer is services.pacer  # the Feishu sends and the alerts share one pacer
    await services.aclose()


def test_without_tokens_there_is_no_client_and_a_channel_says_what_is_missing(default_settings: Settings) -> None:
    services = build_services(default_settings, MemoryStore())
    assert services.slack is None
    assert services.feishu is None
    assert services.llm is None
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN"):
        services.deliverers.for_channel("slack:C1")
    with pytest.raises(ConfigError, match="FEISHU_APP_ID"):
        services.deliverers.for_channel("feishu:oc_1")
    with pytest.raises(ConfigError, match=r"no \[feishu_webhooks\.nope\]"):
        services.deliverers.for_channel("feishu-webhook:nope")


def test_serve_refuses_what_cannot_run(default_settings: Settings, everything: Settings) -> None:
    with pytest.raises(ConfigError, match="nothing to serve: no chat platform is set up; set SLACK_BOT_TOKEN"):
        check_serve(default_settings, slack="off", feishu="off")
    with pytest.raises(ConfigError, match="SLACK_APP_TOKEN"):
        check_serve(everything, slack="socket", feishu="off")
    check_serve(everything, slack="http", feishu="ws")
    socket_only = everything.model_copy(update={"slack_signing_secret": None, "slack_app_token": SecretStr("xapp-1")})
    check_serve(socket_only, slack="socket", feishu="off")  # Socket Mode needs no signing secret
    with pytest.raises(ConfigError, match="Slack HTTP mode needs SLACK_SIGNING_SECRET"):
        check_serve(socket_only, slack="http", feishu="off")


def test_pages_need_a_secret_and_links_need_a_public_url(everything: Settings) -> None:
    with pytest.raises(ConfigError, match="PRHUB_PAGE_SECRET"):
        check_serve(everything.model_copy(update={"public_url": "https://prhub.example.com"}), slack="http",
                    feishu="off")
    with pytest.raises(ConfigError, match="at least"):
        check_serve(everything.model_copy(update={"page_secret": SecretStr("short")}), slack="http", feishu="off")
    assert build_services(everything, MemoryStore()).page_routes() == []
    secret_only = build_services(everything.model_copy(update={"page_secret": SecretStr("s" * 32)}), MemoryStore())
    assert [getattr(r, "path", "") for r in secret_only.page_routes()] == ["/pages/{token}", "/pages", "/pages/"]
    assert not secret_only.media.links_pages  # no public address: 完整报告 keeps posting into the thread
    linked = build_services(everything.model_copy(update={"page_secret": SecretStr("s" * 32),
                                                          "public_url": "https://prhub.example.com"}), MemoryStore())
    assert linked.media.links_pages
    assert linked.slack is not None
    assert linked.slack._media is linked.media
    assert linked.digests._history is linked.pages  # every digest kept: its page, and week over week


@pytest.mark.parametrize(("module", "absent"), [
    ("bot.config", ["apscheduler", "typer", "bot.scheduler", "bot.handlers"]),
    ("bot.handlers.core", ["typer", "slack_sdk", "slack_bolt", "lark_oapi", "apscheduler", "bot.commands"]),
    ("bot.cli", ["slack_sdk", "slack_bolt", "lark_oapi", "apscheduler", "litellm", "bot.handlers"]),
])
def test_importing_a_layer_loads_nothing_above_it(module: str, absent: list[str]) -> None:
    code = f"import sys, {module}; print([m for m in {absent!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"
