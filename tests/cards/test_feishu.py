"""Feishu card JSON 2.0: shape, size bound, completeness, escaping."""

from __future__ import annotations

import re

import pytest

from bot.cards._outline import FEISHU
from bot.cards.actions import ACTION_FULL_REPORT
from bot.cards.feishu import render_feishu
from bot.models import Digest
from cards.card_checks import check_feishu, feishu_texts
from cards.card_digests import ALL_DIGESTS, make_digest


@pytest.mark.parametrize("fixture", ALL_DIGESTS)
def test_every_card_is_json_2_and_under_the_bound(fixture: str, request: pytest.FixtureRequest) -> None:
    digest: Digest = request.getfixturevalue(fixture)
    check_feishu(render_feishu(digest))


@pytest.mark.parametrize("fixture", ALL_DIGESTS)
def test_every_pr_is_present(fixture: str, request: pytest.FixtureRequest) -> None:
    digest: Digest = request.getfixturevalue(fixture)
    text = "\n".join(feishu_texts(render_feishu(digest)))
    assert {pr.number for pr in digest.prs} <= {int(n) for n in re.findall(r"#(\d+)", text)}


def test_long_texts_are_split_not_cut(huge_digest: Digest) -> None:
    cards = render_feishu(huge_digest)
    assert len(cards) > 2
    joined = re.sub(r"\s+", "", "".join(feishu_texts(cards)))
    assert re.sub(r"\s+", "", FEISHU.paragraphs(huge_digest.executive_summary)) in joined
    for highlight in huge_digest.highlights[:3]:  # the chat card holds three to five, each whole
        assert re.sub(r"\s+", "", FEISHU.text(highlight)) in joined


def test_first_card(realistic_digest: Digest) -> None:
    first, *rest = render_feishu(realistic_digest)
    assert first["header"] == {
        "title": {"tag": "plain_text", "content": "2026 第 16 周 · 04-13 至 04-19 周报"},
        "template": "blue",
    }
    elements = first["body"]["elements"]
    assert elements[0]["text_size"] == "notation"
    assert elements[0]["content"].startswith("仓库：verl-project/verl 周期：2026-04-13 至 2026-04-19")
    contents = [e.get("content", "") for e in elements]
    assert any(c.startswith("**本周亮点**") for c in contents)
    # one screen: headline, highlights, the top key PRs and the button; the risks stay in the full report
    assert not any(c.startswith("**风险观察**") for c in contents)
    top = next(c for c in contents if c.startswith("**重点 PR（前 5 / 共"))
    assert [int(n) for n in re.findall(r"\*\*\[#(\d+)\]", top)] == list(realistic_digest.key_prs[:5])
    assert sum(len(c) for c in contents) <= 2500
    button = elements[-1]
    assert button["tag"] == "button"
    assert button["text"]["content"] == "完整报告"
    assert button["behaviors"] == [
        {
            "type": "callback",
            "value": {"action": ACTION_FULL_REPORT, "repo": "verl-project/verl", "window": "2026-W16"},
        }
    ]
    for index, card in enumerate(rest, 2):
        title = card["header"]["title"]["content"]
        assert title == f"2026 第 16 周 · 04-13 至 04-19 周报（续 {index}/{len(rest) + 1}）"
        assert card["body"]["elements"][0]["tag"] != "hr"


def test_full_report_order_and_all_key_prs(realistic_digest: Digest) -> None:
    text = "\n".join(feishu_texts(render_feishu(realistic_digest)[1:]))
    order = ["**完整周报**", "**1. 执行摘要**", "**2. 本周重点变化**", "**3. 模块与主题趋势**", "**4. 风险观察**",
             "**5. 重点 PR 速览**", "**6. 后续建议**", "**标签视图**", "**分析尚未完成的 PR**"]  # fmt: skip
    positions = [text.index(title) for title in order]
    assert positions == sorted(positions)
    key_list = text.split("**5. 重点 PR 速览**")[1].split("**6. 后续建议**")[0]
    assert [int(n) for n in re.findall(r"- \[#(\d+)\]", key_list)] == list(realistic_digest.key_prs)


def test_pending_placeholder(pending_digest: Digest) -> None:
    text = "\n".join(feishu_texts(render_feishu(pending_digest)))
    for number in pending_digest.pending:
        assert re.search(rf"\[#{number}\]\([^)]*\) .* — \*分析结果尚未生成\*", text)


def test_empty_digest(empty_digest: Digest) -> None:
    (card,) = render_feishu(empty_digest)
    assert card["body"]["elements"][-1] == {"tag": "markdown", "content": "本周期内没有合并的 PR。"}


def test_hostile_text_is_inert(hostile_digest: Digest) -> None:
    cards = render_feishu(hostile_digest)
    for text in feishu_texts(cards):
        # The only tag left is our own line break.
        assert re.findall(r"<[^>]*>", text.replace("<br>", "")) == []
        assert "<" not in text.replace("<br>", "")
        # No entity a PR wrote survives as one: every & of PR text that starts a reference is escaped.
        assert not re.search(r"&(?!#(?:38|60|62);)[#A-Za-z0-9]+;", text)
    joined = "\n".join(feishu_texts(cards))
    assert '&#60;at user_id="all"&#62;所有人&#60;/at&#62;' in joined
    assert "&#38;lt;at id=all&#38;gt;" in joined
    assert "a &#60; b && c &#62; d" in joined
    assert "&#60;font color=red&#62;" in joined


def test_emoji_and_cjk_at_a_split_point_survive() -> None:
    unit = "训练器🚀改进👩‍👩‍👧🇨🇳"
    digest = make_digest(n_prs=3)
    digest = digest.model_copy(update={"executive_summary": unit * 2_000})
    cards = render_feishu(digest)
    check_feishu(cards)
    text = "".join(feishu_texts(cards))
    assert text.count(unit) == 2_000


def test_english_digest() -> None:
    cards = render_feishu(make_digest(n_prs=15, language="en"))
    check_feishu(cards)
    assert cards[0]["header"]["title"]["content"] == "2026 week 16 · Apr 13 – Apr 19 digest"
    assert cards[0]["body"]["elements"][-1]["text"]["content"] == "Full report"
