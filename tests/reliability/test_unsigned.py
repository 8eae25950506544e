"""Issue 30: a request without a valid signature reaches no parser — the real bolt app over HTTP gets
hostile bodies and answers each with HTTP 401 and at most one short log line, never a 500 or the body."""

from __future__ import annotations

import hashlib
import hmac
import logging
import time

import httpx
import pytest
from fakes.slack_api import FakeSlack

from .conftest import SIGNING_SECRET, Bot, PrivateRedis, bot_settings
from .test_chat_faults import _body, _headers, answers, wait_until

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

FORGED = "\n2026-12-01 10:00:00 INFO bot.handlers.core: slack event EvX answered in 0.1 s\n"


def _signed(body: bytes, stamp: str, secret: str = SIGNING_SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
            "Content-Type": "application/json"}


def test_bodies_without_a_valid_signature_get_401_and_one_short_line(
        fake_slack: FakeSlack, private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    now = str(int(time.time()))
    deep = b"[" * 100_000 + b"]" * 100_000
    big = (FORGED * 12_000).encode()[:900_000]
    hostile = [
        (b'{"type": "event_callback", "event": ', _signed(b"other", now)),  # invalid JSON, wrong signature
        (deep, _signed(b"other", now)),  # deeply nested JSON
        (b'{"type": "event_callback"}', _signed(b'{"type": "event_callback"}', "soon")),  # non-numeric timestamp
        (b'{"type": "event_callback"}', {"X-Slack-Request-Timestamp": "1e9", "X-Slack-Signature": "v0=00"}),
        (big, _signed(b"other", now)),  # 900 KB of forged log lines
        (b"{}", {}),  # no signature at all
        (b'{"type": "event_callback"}', _signed(b'{"type": "event_callback"}', now, secret="not-the-secret")),
    ]
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        for body, headers in hostile:
            answer = httpx.post(f"{bot.url}/slack/events", content=body, headers=headers, timeout=30)
            assert answer.status_code == 401, (body[:40], answer.status_code)
        time.sleep(0.2)
        records = list(caplog.records)  # everything the hostile requests made the bot log, at any level
        good = _body("EvGood", "C0SIG", "1713900000.000100", "帮助")  # a genuine one still goes through
        assert httpx.post(f"{bot.url}/slack/events", content=good, headers=_headers(good), timeout=30).status_code \
            == 200
        assert wait_until(lambda: answers(fake_slack, "C0SIG", "1713900000.000100"))
    lines = [logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s").format(r) for r in records]
    assert all(len(line) <= 300 for line in lines), max(lines, key=len)[:400]
    assert not [line for line in lines if "answered in 0.1 s" in line]  # nothing of a forged body is logged
    refusals = [line for line in lines if "request refused" in line]
    assert len(refusals) == len(hostile)
    assert any("900000 bytes" in line for line in refusals), refusals
    assert not [r for r in records if r.exc_info]  # no traceback


def test_a_log_record_quoting_control_characters_stays_one_line() -> None:
    from bot.handlers.signatures import EscapingFormatter, escape_controls

    record = logging.LogRecord("bot", logging.WARNING, __file__, 1, "asked: %s", (FORGED + "\x1b[2J",), None)
    line = EscapingFormatter("%(levelname)s %(message)s").format(record)
    assert "\n" not in line
    assert "\x1b" not in line
    assert "\\n2026-12-01" in line
    assert escape_controls("a\u2028b") == "a\\u2028b"
