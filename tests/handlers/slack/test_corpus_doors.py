"""A share of the phrasing corpus (tests/understand/corpus) through the real bolt app: each case's thread
played in one Slack thread of a direct message, then the case itself; the answer must be in the case's
language and answer what it asks (:func:`corpus_check.door_problems`)."""

from __future__ import annotations

import json
import time
from typing import Any

from fakes.slack_api import FakeSlack
from understand.corpus_check import door_cases, door_problems

from .conftest import StartBot, post_event


def test_a_share_of_the_corpus_through_slack(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    n = 0
    wrong: list[str] = []

    def say(text: str, channel: str, user: str, thread: str | None) -> tuple[str, str]:
        nonlocal n
        n += 1
        ts = f"1713600{n:03d}.000100"
        before = len(fake_slack.calls)
        event: dict[str, Any] = {"type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts,
                                 "channel": channel, "event_ts": ts}
        if thread:
            event["thread_ts"] = thread
        assert post_event(bot, event, event_id=f"Ev0CORPUS{n:04d}").status_code == 200
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            posted = [c for c in fake_slack.calls[before:] if c.args.get("_accepted")
                      and c.method in ("chat.postMessage", "chat.postEphemeral", "chat.update")]
            if any(c.method == "chat.postMessage" for c in posted):
                time.sleep(0.3)
                posted = [c for c in fake_slack.calls[before:] if c.args.get("_accepted")
                          and c.method in ("chat.postMessage", "chat.update")]
                return ts, json.dumps([{k: c.args.get(k) for k in ("text", "blocks")} for c in posted],
                                      ensure_ascii=False)
            time.sleep(0.05)
        raise AssertionError(f"no answer to {text!r}")

    cases = door_cases()
    for index, case in enumerate(cases):
        channel, user = f"D0CORPUS{index:02d}", f"U0CORPUS{index:02d}"
        if case.get("subscribed"):
            for filter_text in case["subscribed"]:
                say("subscribe " + filter_text.replace(" OR ", " "), channel, user, None)
        root: str | None = None
        for earlier in case.get("thread", ()):
            ts, _ = say(earlier, channel, user, root)
            root = root or ts
        _, shown = say(case["text"], channel, user, root)
        if problems := door_problems(case, shown):
            wrong.append(f"{case['text']!r}: {'; '.join(problems)} — {shown[:200]}")
    assert not wrong, "\n".join(wrong)
    assert len(cases) >= 35
