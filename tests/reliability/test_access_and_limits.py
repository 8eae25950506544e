"""Access follows the binding (issue 14's hostile requests), bounded requests, Feishu HTTP mode closed by
default, PR text without bidirectional controls, and the deployment files."""

from __future__ import annotations

import json
import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fakes.slack_api import FakeSlack

from bot.app import Services, build_services, check_serve
from bot.cards.chat import render_reply_feishu, render_reply_slack
from bot.config import Settings
from bot.errors import ConfigError
from bot.handlers.core import Conversation
from bot.handlers.intents import HelpIntent, PRIntent, parse_intent
from bot.models import PullRequest
from bot.replies import DigestReply, ErrorReply, PRReply, SubscriptionReply
from bot.store import MemoryStore

from .conftest import EXAMPLE, REPO, ROOT, Bot, PrivateRedis, bot_settings

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

NOW = datetime(2026, 4, 21, 2, 0, tzinfo=UTC)
CHANNEL = Conversation(platform="slack", channel="C1", user="U1")
SECRET_PR = 104


@pytest.fixture
def two_repo_source(tmp_path: Path) -> Path:
    """The example's week, plus the same PRs as ``acme/private`` (a repository the source also holds)."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    private = []
    for n, line in enumerate(lines):
        record = json.loads(line)
        record.update(repo="acme/private", number=SECRET_PR + n, title=f"secret plan {n}")
        private.append(json.dumps(record))
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join([*lines, *private]) + "\n", encoding="utf-8")
    return path


def _services(settings: Settings, source: Path, **update: Any) -> Services:
    bound = settings.model_copy(update={"default_source": f"jsonl:{source}", "default_repo": REPO, **update})
    return build_services(bound, MemoryStore(), clock=lambda: NOW)


async def _ask(services: Services, text: str, where: Conversation = CHANNEL) -> Any:
    intent = parse_intent(text, hosts=services.settings.pr_hosts)
    return await services.core.answer(intent, where)


async def test_a_channel_sees_only_the_repositories_bound_to_it(verl_settings: Settings,
                                                               two_repo_source: Path) -> None:
    services = _services(verl_settings, two_repo_source)
    for text in ("周报 2026-W02 acme/private", "acme/private#104 值得读吗", "acme/private 上周周报"):
        reply = await _ask(services, text)
        assert isinstance(reply, ErrorReply), (text, reply)
        assert REPO in reply.message  # the polite refusal names what the channel may see
        assert "acme" not in reply.message
        assert "/" + "tmp" not in reply.message
    missing = await _ask(services, "PR #99999 值得读吗")
    assert isinstance(missing, ErrorReply)
    assert "#99999" in missing.message
    assert str(two_repo_source.parent) not in missing.message  # no server path in an error reply
    assert "snapshot" not in missing.message
    own = await _ask(services, "2026-W16 周报")
    assert isinstance(own, DigestReply)
    assert own.digest.repo == REPO
    allowed = _services(verl_settings, two_repo_source, allowed_repos=("acme/private",))
    assert isinstance(await _ask(allowed, f"acme/private#{SECRET_PR} 值得读吗"), PRReply)  # the allow-list opens it


async def test_a_pr_link_of_another_host_is_not_read(verl_settings: Settings, two_repo_source: Path) -> None:
    assert isinstance(parse_intent(f"https://evil.example/acme/private/pull/{SECRET_PR}", hosts=("github.com",)),
                      HelpIntent)
    read = parse_intent(f"https://github.com/{REPO}/pull/6046", hosts=("github.com",))
    assert isinstance(read, PRIntent)
    assert read.repo == REPO
    services = _services(verl_settings, two_repo_source)
    reply = await _ask(services, f"https://evil.example/acme/private/pull/{SECRET_PR}")
    assert "secret plan" not in json.dumps(render_reply_slack(reply), ensure_ascii=False)


async def test_subscriptions_only_to_visible_repositories_and_within_the_caps(verl_settings: Settings,
                                                                             two_repo_source: Path) -> None:
    services = _services(verl_settings, two_repo_source, max_subscriptions_per_channel=3,
                         max_subscriptions_per_person=4, allowed_repos=("a/one", "a/two"),
                         max_subscribed_repos_per_channel=2)
    refused = await _ask(services, "订阅 npu in evil/repo")
    assert isinstance(refused, SubscriptionReply)
    assert refused.change == "refused"
    assert "evil/repo" not in refused.message
    assert REPO in refused.message
    for text in ("订阅 npu", "subscribe ci in a/one"):
        assert (await _ask(services, text)).change == "subscribed", text
    third_repo = await _ask(services, "subscribe ci in a/two")
    assert third_repo.change == "refused"
    assert "2" in third_repo.message
    assert (await _ask(services, "订阅 trainer")).change == "subscribed"
    full = await _ask(services, "订阅 rollout")
    assert full.change == "refused"
    assert "3" in full.message
    other = Conversation(platform="slack", channel="C2", user="U1")
    assert (await _ask(services, "订阅 rollout", other)).change == "subscribed"
    mine = await _ask(services, "订阅 megatron", other)
    assert mine.change == "refused"
    assert "4" in mine.message
    assert len(await services.subscriptions.of(CHANNEL.subscriber)) == 3


def _rss_kb() -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]


def _send_big(url: str, path: str, *, chunked: bool) -> tuple[int, float]:
    """Send the headers of a 20 MB POST and its first 2 MB, then read the answer: ``(status, seconds)``."""
    host, port = url.removeprefix("http://").split(":")
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {20 * 1024 * 1024}"
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n").encode()
    part = b"x" * (1024 * 1024)
    started = time.perf_counter()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head)
        try:
            for _ in range(2):
                sock.sendall(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
        except OSError:
            pass  # the server answered and closed before taking more: what the limit is for
        answer = sock.recv(4096).decode("latin-1")
    return int(answer.split(" ", 2)[1]), time.perf_counter() - started


def test_a_20_mb_body_is_refused_with_413_before_it_is_read(fake_slack: FakeSlack,
                                                            private_redis: PrivateRedis) -> None:
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        before = _rss_kb()
        with ThreadPoolExecutor(6) as pool:
            runs = [pool.submit(_send_big, bot.url, path, chunked=chunked) for path, chunked in (
                ("/slack/events", False), ("/feishu/events", False), ("/slack/events", False),
                ("/x", False), ("/healthz", False), ("/slack/events", True))]
            results = [run.result() for run in runs]
        grown_mb = (_rss_kb() - before) / 1024
        assert [status for status, _ in results] == [413] * 6
        assert max(seconds for _, seconds in results) < 5
        assert grown_mb < 20  # RSS within +20 MB while five 20 MB bodies (and one without a length) came
        assert bot.health()["status"] == "ok"


def test_feishu_http_mode_refuses_to_run_open(verl_settings: Settings) -> None:
    settings = verl_settings.model_copy(update={"feishu_app_id": "cli_x", "feishu_app_secret": "s"})
    with pytest.raises(ConfigError, match="FEISHU_VERIFICATION_TOKEN"):
        check_serve(settings, slack="off", feishu="http")
    check_serve(settings, slack="off", feishu="ws")  # the long connection needs no token
    check_serve(settings.model_copy(update={"feishu_allow_unverified": True}), slack="off", feishu="http")


async def test_feishu_garbage_ciphertext_gets_one_identical_answer() -> None:
    import base64

    import lark_oapi as lark

    from bot.handlers.feishu.http import events_route

    dispatcher = lark.EventDispatcherHandler.builder("encrypt-key-test", "v-token").build()
    from starlette.applications import Starlette

    app = Starlette(routes=[events_route(dispatcher)])
    bodies = [{"encrypt": base64.b64encode(b"\x00" * 32).decode()},  # bad padding
              {"encrypt": base64.b64encode(b"\x01" * 16 + b"\x10" * 16).decode()},  # padding-shaped garbage
              {"encrypt": "not base64 !!"}, {"nothing": 1}]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as http:
        answers = [await http.post("/feishu/events", json=b) for b in bodies]
        raw = await http.post("/feishu/events", content=b"\xff\xfe not json")
    seen = {(a.status_code, a.text) for a in [*answers, raw]}
    assert seen == {(401, '{"msg":"invalid request"}')}


def test_bidi_controls_never_reach_a_card(verl_settings: Settings, w16_digest: Any) -> None:
    pr = PullRequest(repo=REPO, number=1, title="fix \u202egnp.exe\u202c and \u2066x\u2069", body="\u202ebody",
                     merged_at=NOW)
    assert pr.title == "fix gnp.exe and x"
    first = w16_digest.prs[0]
    hostile = first.model_copy(update={"title": "a\u202eb \u2067c"})  # past the model's own check
    digest = w16_digest.model_copy(update={"prs": (hostile, *w16_digest.prs[1:])})
    for rendered in (render_reply_slack(DigestReply(digest)), render_reply_feishu(DigestReply(digest))):
        text = json.dumps(rendered, ensure_ascii=False)
        assert not re.search("[\u202a-\u202e\u2066-\u2069]", text)


def test_a_lone_surrogate_in_pr_text_is_replaced_not_fatal(verl_settings: Settings) -> None:
    """GitHub's JSON may hold a broken emoji escape (``"\\ud83d"`` alone); json.loads keeps it as a lone surrogate,
    which no UTF-8 text can hold: the record replaces it, so the digest, its JSON and its cards still build."""
    from bot.digest.service import build_digest
    from bot.digest.window import week_window
    from bot.models import FileChange

    raw = json.loads('{"title": "fix \\ud83d emoji", "body": "Broken \\ud83d escape in a long enough body text.",'
                     ' "patch": "@@ -1 +1 @@\\n-a\\n+b \\udc00"}')
    pr = PullRequest(repo=REPO, number=1, title=raw["title"], body=raw["body"], merged_at=NOW,
                     files=(FileChange(path="pkg/a.py", status="modified", additions=1, deletions=1,
                                       patch=raw["patch"]),))
    assert pr.title == "fix \ufffd emoji"
    assert "\ufffd" in pr.body
    assert "\ufffd" in (pr.files[0].patch or "")
    window = week_window(NOW.isocalendar().year, NOW.isocalendar().week, "UTC")
    digest = build_digest([pr], repo=REPO, window=window, settings=verl_settings)
    assert digest.stats.pr_count == 1
    digest.model_dump_json().encode()
    json.dumps(render_reply_slack(DigestReply(digest)), ensure_ascii=False).encode()


MANIFEST_KEYS = {  # the manifest fields Slack documents (a hand-kept list: no schema file is at hand)
    "display_information": {"name", "description", "background_color", "long_description"},
    "features": {"app_home", "bot_user", "slash_commands", "shortcuts", "unfurl_domains"},
    "oauth_config": {"scopes", "redirect_urls", "token_management_enabled"},
    "settings": {"event_subscriptions", "interactivity", "org_deploy_enabled", "socket_mode_enabled",
                 "token_rotation_enabled", "allowed_ip_address_ranges", "is_hosted", "function_runtime"},
}
NEEDED_SCOPES = {"app_mentions:read", "chat:write", "commands", "im:history", "im:read", "im:write", "files:write",
                 "files:read", "users:read"}


def test_the_slack_manifest_parses_with_its_strings_whole() -> None:
    manifest = yaml.safe_load((ROOT / "slack" / "manifest.yml").read_text(encoding="utf-8"))
    assert set(manifest) <= set(MANIFEST_KEYS)
    for section, keys in MANIFEST_KEYS.items():
        assert set(manifest.get(section, {})) <= keys, section
    assert manifest["display_information"]["description"].endswith("alerts that fit a person.")
    assert "#N" in manifest["display_information"]["description"]  # not cut at " #" (a YAML comment)
    assert set(manifest["oauth_config"]["scopes"]["bot"]) >= NEEDED_SCOPES
    assert {"app_mention", "message.im"} <= set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert manifest["features"]["slash_commands"][0]["command"] == "/prhub"


def test_the_image_carries_git_and_compose_restarts_mounts_and_checks() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    runtime = dockerfile.split("FROM python:3.11-slim\n", 1)[1]
    assert re.search(r"apt-get install[^\n]*\bgit\b", runtime)
    assert "HEALTHCHECK" in runtime
    assert "/healthz" in runtime
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    bot, store = compose["services"]["bot"], compose["services"]["redis"]
    assert store["restart"] == "unless-stopped"
    assert bot["restart"] == "on-failure:5"  # a bot with nothing configured exits at once: no restart loop
    assert any(v.endswith(":/app/config/prhub.toml:ro") for v in bot["volumes"])
    assert bot["environment"]["PRHUB_CONFIG"] == "/app/config/prhub.toml"
    assert "/healthz" in " ".join(bot["healthcheck"]["test"])
    assert bot["environment"]["PRHUB_SERVE_HEALTH"] == "true"


async def test_a_hung_model_costs_a_person_seconds(verl_settings: Settings) -> None:
    from fakes.llm_server import FakeLLMServer, hang
    from llm_support import llm_settings

    from bot.handlers.intents import DigestIntent
    from bot.handlers.intents import PRIntent as AskPR

    with FakeLLMServer() as fake:
        fake.responder = lambda request: hang()
        settings = llm_settings(verl_settings, fake.base_url, llm_timeout_s=30.0).model_copy(update={
            "default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO, "answer_deadline_s": 4.0})
        services = build_services(settings, MemoryStore(), clock=lambda: NOW)
        started = time.perf_counter()
        reply = await services.core.answer(AskPR(number=6046, language="zh"), CHANNEL)
        pr_s = time.perf_counter() - started
        assert isinstance(reply, PRReply)
        assert reply.pr.analysis is not None  # the heuristic analysis, marked as standing in for the model
        assert "did not answer within" in (reply.pr.analysis.fallback_reason or "")
        started = time.perf_counter()
        digest = await services.core.answer(DigestIntent(week="2026-W16", language="zh"), CHANNEL)
        digest_s = time.perf_counter() - started
        assert isinstance(digest, DigestReply)
        assert len(digest.digest.prs) == 39  # every PR is there, those the model did not finish shown pending
        assert digest.digest.pending
        await services.aclose()
    assert pr_s < 4.0  # within the answer's deadline (the model's share of it is 3 s), not the 30 s timeout
    assert digest_s < 4.0 + 2.0 + 1.0  # the deadline, the summary's grace, the rest
