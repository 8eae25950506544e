"""A weekly push whose process is killed (SIGKILL) or stopped (SIGTERM) midway ends with one root post and
every message of the digest; ``prhub push`` with Slack unreachable fails in one line. ``prhub push`` runs as
a real process against the fake Slack and the shared Redis (DB 15, a key prefix of its own)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from fakes.slack_api import BOT_TOKEN, FakeSlack
from redis_support import REDIS_URL

from .conftest import EXAMPLE, REPO

PRHUB = Path(sys.executable).with_name("prhub")
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture
def push_env(tmp_path: Path, fake_slack: FakeSlack) -> Iterator[dict[str, str]]:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {REDIS_URL} is required in CI: {exc}")
        pytest.skip(f"no Redis at {REDIS_URL}")
    prefix = f"test-push-{uuid.uuid4().hex[:10]}:"
    config = tmp_path / "prhub.toml"
    config.write_text("".join(
        f'[channels."slack:{name}"]\nrepo = "{REPO}"\nsource = "jsonl:{EXAMPLE}"\nlanguage = "zh"\n'
        f'timezone = "Asia/Shanghai"\n' for name in ("C0REF", "C0KILL", "C0TERM")), encoding="utf-8")
    env = {**os.environ, "PRHUB_CONFIG": str(config), "PRHUB_REDIS_URL": REDIS_URL,
           "PRHUB_REDIS_KEY_PREFIX": prefix, "SLACK_BOT_TOKEN": BOT_TOKEN,
           "PRHUB_SLACK_API_URL": fake_slack.base_url + "/api/", "PRHUB_CHARTS": "false",
           "PRHUB_PUSH_LOCK_TTL_S": "2", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("PRHUB_LLM_MODEL", None)
    yield env
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


def _push(env: dict[str, str], channel: str) -> subprocess.Popen[str]:
    return subprocess.Popen([str(PRHUB), "push", "--channel", f"slack:{channel}", "--week", "2026-W16"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _posts(fake: FakeSlack, channel: str) -> list[dict[str, object]]:
    return [c.args for c in fake.of("chat.postMessage") if c.args.get("channel") == channel]


def _wait_posts(fake: FakeSlack, channel: str, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while len(_posts(fake, channel)) < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _reference(env: dict[str, str], fake: FakeSlack) -> list[str]:
    ref = _push(env, "C0REF")
    _out, err = ref.communicate(timeout=120)
    assert ref.returncode == 0, err
    texts = [str(p["text"]) for p in _posts(fake, "C0REF")]
    assert len(texts) >= 3  # a card and its thread: a push that can be cut midway
    return texts


def _assert_whole(fake: FakeSlack, channel: str, texts: list[str]) -> None:
    posts = _posts(fake, channel)
    roots = [p for p in posts if not p.get("thread_ts")]
    assert len(roots) == 1  # one root post, never the digest again
    thread = {p.get("thread_ts") for p in posts if p.get("thread_ts")}
    assert len(thread) == 1  # the rest continue the one thread
    shown = [str(p["text"]) for p in posts]
    assert sorted(set(shown)) == sorted(set(texts))  # every message of the digest
    assert len(shown) - len(texts) in (0, 1)  # at most the one accepted in the instant of the kill


def test_a_push_killed_midway_is_resumed_not_repeated(push_env: dict[str, str], fake_slack: FakeSlack) -> None:
    texts = _reference(push_env, fake_slack)
    fake_slack.delay_s = 0.3
    first = _push(push_env, "C0KILL")
    _wait_posts(fake_slack, "C0KILL", 1, first)  # the root post is recorded before the next message
    time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert len(_posts(fake_slack, "C0KILL")) < len(texts)  # cut midway
    time.sleep(2.5)  # the killed replica's lease (PRHUB_PUSH_LOCK_TTL_S=2) runs out
    fake_slack.delay_s = 0.0
    second = _push(push_env, "C0KILL")
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    assert "posted" in err
    assert "resuming the push" in err  # continued in the thread begun, not posted again
    _assert_whole(fake_slack, "C0KILL", texts)


def test_a_push_told_to_stop_finishes_first(push_env: dict[str, str], fake_slack: FakeSlack) -> None:
    texts = _reference(push_env, fake_slack)
    fake_slack.delay_s = 0.3
    proc = _push(push_env, "C0TERM")
    _wait_posts(fake_slack, "C0TERM", 1, proc)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "SIGTERM" in err
    _assert_whole(fake_slack, "C0TERM", texts)
    assert len(_posts(fake_slack, "C0TERM")) == len(texts)


def test_a_push_with_slack_unreachable_fails_in_one_line(push_env: dict[str, str]) -> None:
    env = {**push_env, "PRHUB_SLACK_API_URL": "http://127.0.0.1:9/api/"}  # nothing listens on the discard port
    proc = _push(env, "C0REF")
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(("error:", "错误："))  # the settings' language
    assert "Slack could not be reached" in lines[0]
    assert "Traceback" not in err


def test_a_push_held_by_another_run_exits_2_and_names_the_holder(push_env: dict[str, str],
                                                                 fake_slack: FakeSlack) -> None:
    fake_slack.delay_s = 2.0  # each message takes 2 s: the first run holds the push while the second starts
    first = _push(push_env, "C0REF")
    _wait_posts(fake_slack, "C0REF", 1, first)  # the first run holds the push now
    second = _push(push_env, "C0REF")
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error:")
    assert f"pid {first.pid}" in lines[0]  # who holds it
    assert "nothing posted" in lines[0]
    fake_slack.delay_s = 0.0
    assert first.wait(120) == 0


async def test_a_push_whose_run_died_is_resumed_by_the_bot_within_a_minute(
        push_env: dict[str, str], fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    import asyncio
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    from bot.app import build_services
    from bot.config import ChannelConfig, load_settings
    from bot.scheduler.jobs import build_scheduler
    from bot.store import RedisStore

    caplog.set_level(logging.WARNING)
    texts = _reference(push_env, fake_slack)
    fake_slack.delay_s = 0.3
    proc = _push(push_env, "C0KILL")
    _wait_posts(fake_slack, "C0KILL", 1, proc)  # the root post is recorded before the next message
    await asyncio.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert len(_posts(fake_slack, "C0KILL")) < len(texts)
    fake_slack.delay_s = 0.0
    settings = load_settings(slack_bot_token=BOT_TOKEN, slack_api_url=fake_slack.base_url + "/api/",
                             push_lock_ttl_s=2, charts=False,
                             channels={"slack:C0KILL": ChannelConfig(repo=REPO, source=f"jsonl:{EXAMPLE}",
                                                                     language="zh", timezone="Asia/Shanghai",
                                                                     push="mon 10:00")})
    monday = datetime(2026, 4, 20, 10, 0, 5, tzinfo=ZoneInfo("Asia/Shanghai"))  # the fire of 2026-W16's push
    store = RedisStore.from_url(push_env["PRHUB_REDIS_URL"], degrade=False,
                                key_prefix=push_env["PRHUB_REDIS_KEY_PREFIX"])
    services = build_services(settings, store, clock=lambda: monday)
    try:
        pusher = services.pusher()
        job = build_scheduler(pusher).get_job("push-resume")
        assert job is not None
        assert job.trigger.interval <= timedelta(seconds=30)  # looked for every 20 s
        assert await pusher.resume_interrupted() == []  # the dead run's lease still lives: not yet
        await asyncio.sleep(2.5)  # PRHUB_PUSH_LOCK_TTL_S=2 runs out
        [outcome] = await pusher.resume_interrupted()
        assert (outcome.status, outcome.resumed) == ("posted", True)
    finally:
        await services.aclose()
        await store.close()
    assert any("stopped midway" in r.getMessage() for r in caplog.records)
    _assert_whole(fake_slack, "C0KILL", texts)
