"""Every kind of request once, as a person asks it in a Slack channel: signed events into the real bolt app,
answers out of the fake Slack API — public answers in the message's thread, private ones (subscriptions,
the help, questions back, errors) with ``chat.postEphemeral``, a digest as one card."""

from __future__ import annotations

import json
import time
from typing import Any

from fakes.slack_api import FakeSlack

from .conftest import BotServer, StartBot, post_action, post_event


class Asker:
    """Asks in channel C0CHAN as U0ALICE and waits for the answer (a new post, or a new ephemeral with blocks)."""

    def __init__(self, bot: BotServer, fake: FakeSlack) -> None:
        self.bot = bot
        self.fake = fake
        self.n = 0

    def _answers(self) -> list[Any]:
        return [c for c in self.fake.calls if c.args.get("_accepted") and (
            c.method == "chat.postMessage" or (c.method == "chat.postEphemeral" and c.args.get("blocks")))]

    def ask(self, text: str, *, channel: str = "C0CHAN", kind: str = "app_mention") -> Any:
        self.n += 1
        before = len(self._answers())
        ts = f"1713501{self.n:03d}.000100"
        event = {"type": kind, "user": "U0ALICE", "text": f"<@U0BOT> {text}", "ts": ts, "channel": channel,
                 "event_ts": ts}
        if channel.startswith("D"):
            event |= {"type": "message", "channel_type": "im", "text": text}
        assert post_event(self.bot, event, event_id=f"Ev0ASK{self.n:03d}").status_code == 200
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = self._answers()
            if len(found) > before:
                time.sleep(0.3)  # anything more of the same answer arrives now
                answer = self._answers()[before]
                assert answer.args.get("thread_ts") == ts
                return answer
            time.sleep(0.05)
        raise AssertionError(f"no answer to {text!r}")


def _text(call: Any) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False)


def test_each_kind_of_request_once(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    asker = Asker(start_bot(), fake_slack)
    posts = len(fake_slack.of("chat.postMessage"))

    digest = asker.ask("上周周报")
    assert digest.method == "chat.postMessage"
    assert "2026 第 16 周" in _text(digest)
    assert "prhub_full_report" in _text(digest)
    assert len(fake_slack.of("chat.postMessage")) == posts + 1  # one card, not four messages

    what = asker.ask("6046这个PR讲了什么")
    assert what.method == "chat.postMessage"
    assert "PR #6046" in _text(what)

    compared = asker.ask("帮我看看 #6046 和 #6029 哪个更值得读")
    assert "对比" in _text(compared)
    assert "#6029" in _text(compared)
    assert "先读" in _text(compared)

    label = asker.ask("上周 trainer 有哪些重点 PR")
    assert "trainer · 2026 第 16 周" in _text(label)

    merged = asker.ask("本月合并了哪些 PR")
    assert "2026-04-01 – 04-30 合并的 PR" in _text(merged)
    assert "还没有结束" in _text(merged)

    question = asker.ask("哪些 PR 改了 fully_async？")
    assert "与“fully_async”相关的 PR" in _text(question)
    assert "#6046" in _text(question)

    who = asker.ask("谁贡献最多")
    assert "的贡献者" in _text(who)

    english = asker.ask("which PRs touched megatron last week?")
    assert "PRs about “megatron”" in _text(english)
    assert "I read “last week” as 2026-W16" in _text(english)

    empty = asker.ask("上上周周报")  # the example holds W16 only
    assert "2026-W15" in _text(empty)
    assert "最近一个有合并 PR 的周是 2026-W16" in _text(empty)
    assert "prhub_open_window" in _text(empty)

    for private, words in [("第60周周报", "ISO 周只有 W01 到 W53"), ("今天天气怎么样", "你可能想问"),
                           ("订阅 npu", "已订阅 verl-project/verl：npu"), ("help", "我能做什么"),
                           ("PR #999999 值得读吗", "没有找到 PR #999999")]:
        answer = asker.ask(private)
        assert answer.method == "chat.postEphemeral", private
        assert answer.args["user"] == "U0ALICE"
        assert words in _text(answer), private
        assert "/work/" not in _text(answer)
        assert ".jsonl" not in _text(answer)

    dm = asker.ask("上周周报", channel="D0ALICE")
    assert dm.method == "chat.postMessage"
    assert dm.args["channel"] == "D0ALICE"
    time.sleep(0.5)
    assert [c for c in fake_slack.of("chat.postMessage") if c.args["channel"] == "D0ALICE"] == [dm]  # one card
    mine = asker.ask("我订阅了什么", channel="D0ALICE")
    assert mine.method == "chat.postMessage"  # private things are normal in a DM


def test_the_latest_week_button_opens_it_once(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    asker = Asker(bot, fake_slack)
    empty = asker.ask("上上周周报")
    ts = str(empty.args["thread_ts"])
    button = next(e for b in empty.args["blocks"] if b["type"] == "actions" for e in b["elements"])
    payload = {
        "type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
        "channel": {"id": "C0CHAN"}, "response_url": fake_slack.response_url("open"), "trigger_id": "1.2.3",
        "message": {"type": "message", "ts": "1713509999.000100", "thread_ts": ts, "blocks": empty.args["blocks"]},
        "container": {"type": "message", "message_ts": "1713509999.000100", "channel_id": "C0CHAN"},
        "actions": [{"type": "button", "action_id": button["action_id"], "block_id": "b1", "value": button["value"],
                     "action_ts": "1713600001.000000"}],
    }
    before = len(fake_slack.of("chat.postMessage"))
    assert post_action(bot, payload).status_code == 200
    posts = fake_slack.wait_for("chat.postMessage", before + 1)
    assert posts[-1].args["thread_ts"] == ts
    assert "2026 第 16 周" in _text(posts[-1])
    assert post_action(bot, payload).status_code == 200  # pressed again
    [note] = fake_slack.wait_for("response_url", 1)
    assert note.args["response_type"] == "ephemeral"
    assert len(fake_slack.of("chat.postMessage")) == before + 1
