"""The alert cards: one PR in detail; a batch as one list, what to read first at the top, within every platform
limit however long (continued for the thread), PR text escaped, pending PRs said so."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from bot.cards import feishu
from bot.cards.alert import Alert, AlertBatch, render_batch_feishu, render_batch_slack
from bot.models import Digest, DigestPR
from cards.card_checks import check_feishu, check_slack, feishu_texts, slack_texts


def _batch(prs: tuple[DigestPR, ...], language: str = "zh") -> AlertBatch:
    alerts = tuple(Alert(pr=pr, repo="verl-project/verl", subscription="npu，排除 ci", why="标签 npu",
                         language=language, timezone="Asia/Shanghai") for pr in prs)  # type: ignore[arg-type]
    return AlertBatch(alerts, language, "Asia/Shanghai")  # type: ignore[arg-type]


def _listed(texts: list[str]) -> list[int]:
    return [int(n) for n in re.findall(r"#(\d+) ", "\n".join(texts))]


def test_one_pr_is_the_detailed_card(realistic_digest: Digest) -> None:
    pr = next(p for p in realistic_digest.prs if p.analysis is not None and p.analysis.risks)
    [message] = render_batch_slack(_batch((pr,)))
    check_slack([message])
    assert message["blocks"][0]["text"]["text"] == "🔔 npu，排除 ci · verl-project/verl"
    assert "风险：" in message["blocks"][1]["text"]["text"]
    assert "匹配：标签 npu" in message["blocks"][2]["elements"][0]["text"]
    [card] = render_batch_feishu(_batch((pr,)))
    check_feishu([card])
    assert card["body"]["elements"][-1]["behaviors"][0]["default_url"] == pr.url


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_batch_is_one_list_read_first_at_the_top(realistic_digest: Digest, language: str) -> None:
    prs = tuple(realistic_digest.prs[:30])
    messages = render_batch_slack(_batch(prs, language))
    check_slack(messages)
    assert len(messages) == 1
    header = messages[0]["blocks"][0]["text"]["text"]
    expected = "🔔 30 个 PR 合并 · verl-project/verl" if language == "zh" else "🔔 30 merged PRs · verl-project/verl"
    assert header == expected
    listed = _listed(slack_texts(messages))
    assert sorted(listed) == sorted(p.number for p in prs)
    levels = ["close_read", "skim", "skip", None]
    order = [levels.index(p.analysis.recommendation.level if p.analysis else None)
             for n in listed for p in prs if p.number == n]
    assert order == sorted(order)  # close reads first, pending last
    cards = render_batch_feishu(_batch(prs, language))
    check_feishu(cards)
    assert len(cards) == 1
    assert sorted(_listed(feishu_texts(cards))) == sorted(p.number for p in prs)


def test_a_night_s_worth_continues_in_more_messages_and_loses_nothing(
    digest_factory: Callable[..., Digest],
) -> None:
    big = digest_factory(n_prs=200, long_text=2_000, pending=(3, 50))
    batch = _batch(tuple(big.prs))
    messages = render_batch_slack(batch)
    check_slack(messages)
    assert len(messages) > 1
    assert "续 2/" in json.dumps(messages[1]["blocks"], ensure_ascii=False)
    assert sorted(_listed(slack_texts(messages))) == sorted(p.number for p in big.prs)
    cards = render_batch_feishu(batch)
    check_feishu(cards)
    assert sorted(_listed(feishu_texts(cards))) == sorted(p.number for p in big.prs)
    webhook = render_batch_feishu(batch, card_bytes=feishu.WEBHOOK_CARD_BYTES - 2_000)
    assert all(len(json.dumps(c, ensure_ascii=False).encode()) < feishu.WEBHOOK_CARD_BYTES for c in webhook)
    assert len(webhook) > len(cards)
    assert "分析结果尚未生成" in "\n".join(feishu_texts(cards))


def test_pr_text_cannot_mention_or_link(hostile_digest: Digest) -> None:
    messages = render_batch_slack(_batch(tuple(hostile_digest.prs)))
    check_slack(messages)
    text = "\n".join(slack_texts(messages))
    assert "<!channel>" not in text
    assert "<!here>" not in text
    assert not re.search(r"<@U", text)
    check_feishu(render_batch_feishu(_batch(tuple(hostile_digest.prs))))
