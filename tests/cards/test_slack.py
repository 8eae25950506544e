"""Slack Block Kit messages: validity, limits, completeness, escaping."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.cards._outline import SLACK
from bot.cards.actions import ACTION_ANALYZE_PR, ACTION_FULL_REPORT, ACTION_SUBSCRIBE_LABEL
from bot.cards.slack import render_slack
from bot.models import Digest
from cards.card_checks import check_slack, slack_texts
from cards.card_digests import ALL_DIGESTS, make_digest


@pytest.mark.parametrize("fixture", ALL_DIGESTS)
def test_every_message_validates_and_fits(fixture: str, request: pytest.FixtureRequest, caplog: Any) -> None:
    digest: Digest = request.getfixturevalue(fixture)
    check_slack(render_slack(digest), caplog)


@pytest.mark.parametrize("fixture", ALL_DIGESTS)
def test_nothing_is_dropped(fixture: str, request: pytest.FixtureRequest) -> None:
    digest: Digest = request.getfixturevalue(fixture)
    text = "\n".join(slack_texts(render_slack(digest)))
    shown = {int(n) for n in re.findall(r"#(\d+)", text)}
    assert {pr.number for pr in digest.prs} <= shown


def test_long_texts_are_split_not_cut(huge_digest: Digest) -> None:
    messages = render_slack(huge_digest)
    assert len(messages) > 2
    sections = [b["text"]["text"] for m in messages for b in m["blocks"] if b["type"] == "section"]
    joined = re.sub(r"\s+", "", "".join(sections))
    summary = re.sub(r"\s+", "", SLACK.paragraphs(huge_digest.executive_summary))
    assert len(summary) > 10_000
    assert summary in joined
    for highlight in huge_digest.highlights[:3]:  # the chat card holds three to five, each whole
        assert re.sub(r"\s+", "", SLACK.text(highlight)) in joined


def test_first_message_is_the_card(realistic_digest: Digest) -> None:
    first = render_slack(realistic_digest)[0]
    blocks = first["blocks"]
    assert blocks[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "2026 第 16 周 · 04-13 至 04-19 周报"},
    }
    assert blocks[1]["type"] == "context"
    assert blocks[1]["elements"][0]["text"].startswith("仓库：verl-project/verl")
    assert first["text"].startswith("2026 第 16 周 · 04-13 至 04-19 周报 — ")
    texts = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert any(t.startswith("*本周亮点*") for t in texts)
    # one screen: headline, highlights, the top key PRs and the buttons; the risks stay in the full report
    assert not any(t.startswith("*风险观察*") for t in texts)
    assert any(t.startswith("*重点 PR（前 5 / 共") for t in texts)
    analyze = [b["accessory"] for b in blocks if "accessory" in b]
    assert [a["value"] for a in analyze] == [f"verl-project/verl#{n}" for n in realistic_digest.key_prs[:5]]
    assert {a["action_id"] for a in analyze} == {ACTION_ANALYZE_PR}
    actions = blocks[-1]
    assert actions["type"] == "actions"
    button, select = actions["elements"]
    assert (button["action_id"], button["value"]) == (ACTION_FULL_REPORT, "verl-project/verl|2026-W16")
    assert button["text"]["text"] == "完整报告"
    assert select["action_id"] == ACTION_SUBSCRIBE_LABEL


def test_thread_messages_continue_the_full_report(realistic_digest: Digest) -> None:
    messages = render_slack(realistic_digest)
    thread = messages[1:]
    assert thread
    for index, message in enumerate(thread, 2):
        label = f"2026 第 16 周 · 04-13 至 04-19 周报（续 {index}/{len(messages)}）"
        assert message["text"] == label
        assert message["blocks"][0]["elements"][0]["text"] == label
    text = "\n".join(slack_texts(thread))
    order = ["完整周报", "*1. 执行摘要*", "*2. 本周重点变化*", "*3. 模块与主题趋势*", "*4. 风险观察*",
             "*5. 重点 PR 速览*", "*6. 后续建议*", "标签视图", "*分析尚未完成的 PR*"]  # fmt: skip
    positions = [text.index(title) for title in order]
    assert positions == sorted(positions)
    key_list = text.split("*5. 重点 PR 速览*")[1].split("*6. 后续建议*")[0]
    assert [int(n) for n in re.findall(r"\|#(\d+)>", key_list)] == list(realistic_digest.key_prs)


def test_pending_prs_show_the_placeholder(pending_digest: Digest) -> None:
    text = "\n".join(slack_texts(render_slack(pending_digest)))
    for number in pending_digest.pending:
        assert re.search(rf"\|#{number}> .* — _分析结果尚未生成_", text)
    assert "5 个 PR 的分析结果尚未生成" in text


def test_empty_digest_is_one_short_message(empty_digest: Digest) -> None:
    (message,) = render_slack(empty_digest)
    assert message["text"] == "2026 第 16 周 · 04-13 至 04-19 周报"
    assert message["blocks"][-1]["text"]["text"] == "本周期内没有合并的 PR。"


def test_hostile_text_is_inert(hostile_digest: Digest) -> None:
    messages = render_slack(hostile_digest)
    for text in slack_texts(messages) + [m["text"] for m in messages]:
        # The only angle brackets left are our own PR links.
        for bracket in re.findall(r"<[^>]*>?", text):
            assert re.fullmatch(r"<https://github\.com/verl-project/verl/pull/\d+\|#\d+>", bracket), bracket
        assert "<!" not in text
        assert "<@" not in text
        assert "&&" not in text
    joined = "\n".join(slack_texts(messages))
    assert "&lt;!channel&gt; please read" in joined
    assert "ping &lt;@U123&gt; and &lt;!here&gt;" in joined
    assert "a &lt; b &amp;&amp; c &gt; d" in joined
    assert "&amp;lt;at id=all&amp;gt;" in joined


def test_english_digest() -> None:
    messages = render_slack(make_digest(n_prs=15, language="en"))
    check_slack(messages)
    first = messages[0]["blocks"]
    assert first[0]["text"]["text"] == "2026 week 16 · Apr 13 – Apr 19 digest"
    assert first[-1]["elements"][0]["text"]["text"] == "Full report"


def test_a_huge_headline_spreads_over_several_card_messages() -> None:
    digest = make_digest(n_prs=5)
    digest = digest.model_copy(update={"headline": "头条" * 20_000})
    messages = render_slack(digest)
    check_slack(messages)
    assert messages[0]["blocks"][-1]["type"] == "actions"
    assert len(messages[0]["text"]) < 400
    joined = "".join(slack_texts(messages))
    assert joined.count("头条") == 20_000
