"""What the doors do with a request that is not what it claims: refuse it before reading it, and say so in
one short line.

- :func:`slack_signature_ok` checks Slack's ``X-Slack-Signature`` (HMAC-SHA256 of ``v0:{timestamp}:{body}``
  with the signing secret, a timestamp within five minutes) before bolt parses anything: a body with a
  wrong signature, a non-numeric timestamp, invalid or deeply nested JSON gets HTTP 401, never a 500.
- :func:`refused_request` logs a refusal as one line of at most :data:`MAX_REFUSAL_LINE` characters: the
  platform, the body's size, the peer and the reason — never the body (a forged body could be megabytes,
  or hold newlines that forge log lines).
- :class:`EscapingFormatter` is the text log's formatter: control characters in a message (newlines,
  escapes) are written as ``\\n``, ``\\x1b``…, so one record is one line whatever it quotes.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from collections.abc import Mapping

__all__ = ["MAX_REFUSAL_LINE", "SLACK_TOLERANCE_S", "EscapingFormatter", "escape_controls", "refused_request",
           "slack_signature_ok"]

log = logging.getLogger("bot.handlers.refused")

SLACK_TOLERANCE_S = 300
"""How old (or how far ahead) a Slack request's timestamp may be, seconds (Slack's own advice)."""
MAX_REFUSAL_LINE = 200
"""The longest record of a refused request, characters."""
_CONTROLS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def slack_signature_ok(body: bytes, headers: Mapping[str, str], signing_secret: str, *,
                       now: float | None = None) -> bool:
    """Whether ``body`` carries a valid Slack signature (``X-Slack-Signature``, ``X-Slack-Request-Timestamp``)."""
    stamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    if not signing_secret or not stamp.isascii() or not stamp.isdigit() or len(stamp) > 12:
        return False
    if abs((time.time() if now is None else now) - int(stamp)) > SLACK_TOLERANCE_S:
        return False
    expected = "v0=" + hmac.new(signing_secret.encode(), b"v0:" + stamp.encode() + b":" + body,
                                hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


def escape_controls(text: str) -> str:
    """``text`` with each control character written as an escape (``\\n``, ``\\x1b``, ``\\u2028``)."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def refused_request(platform: str, size: int, peer: str, reason: str) -> None:
    """Log one refused request in one short line (no body)."""
    where = escape_controls(peer)[:45]
    line = f"{platform} request refused: {escape_controls(reason)[:80]} ({size} bytes from {where})"
    log.warning("%s", line[:MAX_REFUSAL_LINE])


class EscapingFormatter(logging.Formatter):
    """A :class:`logging.Formatter` whose message part has its control characters escaped (a traceback,
    when a record has one, keeps its lines)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape_controls(record.message)
        return super().formatMessage(record)
