"""Renderers of the replies to how people ask: comparisons, question answers, the nearest examples,
an empty window — within every platform limit, escaped, in the reply's language."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import EXAMPLE, FIXED_NOW, REPO, SHANGHAI

from bot.cards.answers import (
    ACTION_OPEN_WINDOW,
    render_answer_feishu,
    render_answer_markdown,
    render_answer_slack,
    render_comparison_feishu,
    render_comparison_markdown,
    render_comparison_slack,
    render_empty_window_feishu,
    render_empty_window_slack,
    render_nearest_feishu,
    render_nearest_markdown,
    render_nearest_slack,
)
from bot.cards.i18n import (
    clarify_text,
    latest_window_note,
    so_far_note,
    window_echo,
    window_notes,
    window_text,
)
from bot.config import Settings
from bot.digest.ask import Answer, Claim, Evidence, Match, Phrasing, TermCount, answer_question
from bot.digest.compare import compare_prs
from bot.digest.service import build_digest
from bot.digest.window import week_window, window_from_spec
from bot.models import Digest, PullRequest
from bot.sources.jsonl import SnapshotSource
from cards.card_checks import check_feishu, check_slack, feishu_texts, slack_texts
from cards.card_digests import HOSTILE, make_digest

W16 = week_window(2026, 16, SHANGHAI)


@pytest.fixture(scope="module")
def records() -> list[PullRequest]:
    return SnapshotSource(EXAMPLE).merged_prs(REPO, W16)


def _digest(records: list[PullRequest], settings: Settings, language: str) -> Digest:
    return build_digest(records, repo=REPO, window=W16, settings=settings, language=language,  # type: ignore[arg-type]
                        now=FIXED_NOW)


@pytest.fixture(scope="module")
def zh(records: list[PullRequest], verl_settings: Settings) -> Digest:
    return _digest(records, verl_settings, "zh")


@pytest.fixture(scope="module")
def en(records: list[PullRequest], verl_settings: Settings) -> Digest:
    return _digest(records, verl_settings, "en")


def _all(answer: Answer, phrasing: Phrasing | None = None, notes: tuple[str, ...] = ()) -> tuple[
        str, list[dict[str, Any]], list[dict[str, Any]]]:
    md = render_answer_markdown(answer, phrasing=phrasing, notes=notes)
    sl = render_answer_slack(answer, phrasing=phrasing, notes=notes)
    fs = render_answer_feishu(answer, phrasing=phrasing, notes=notes)
    check_slack(sl)
    check_feishu(fs)
    return md, sl, fs


def test_a_question_answer_lists_the_prs_and_what_matched(zh: Digest, records: list[PullRequest]) -> None:
    answer = answer_question(zh, records, ["rollout", "配置"])
    echo = window_echo("上周", W16, "zh")
    md, sl, fs = _all(answer, notes=(echo,))
    assert md.startswith("## 2026-W16（04-13 – 04-19） · 与“rollout、配置”相关的 PR")
    assert "我把“上周”理解为 2026-W16（04-13 – 04-19）。" in md
    assert "找到 5 个 PR（本期共 39 个 PR）" in md
    assert "1. [#5978](https://github.com/verl-project/verl/pull/5978)" in md
    assert "文件: `verl/trainer/config/rollout/rollout.yaml`" in md
    slack_all = "\n".join(slack_texts(sl))
    assert "<https://github.com/verl-project/verl/pull/5986|#5986>" in slack_all
    assert "匹配：rollout、配置" in slack_all
    buttons = [b["accessory"]["value"] for m in sl for b in m["blocks"] if "accessory" in b]
    assert buttons[:2] == ["verl-project/verl#5978", "verl-project/verl#5986"]
    feishu_all = "\n".join(feishu_texts(fs))
    assert "[#5986](https://github.com/verl-project/verl/pull/5986)" in feishu_all
    values = [e["behaviors"][0]["value"] for c in fs for e in c["body"]["elements"] if e["tag"] == "button"]
    assert values[0] == {"action": "prhub_analyze_pr", "repo": REPO, "number": "5978", "lang": "zh"}


def test_none_in_that_window_in_both_languages(zh: Digest, en: Digest, records: list[PullRequest]) -> None:
    md, _sl, fs = _all(answer_question(zh, records, ["xyzzy"]))
    assert "2026-W16（04-13 – 04-19） 没有与“xyzzy”相关的 PR。" in md
    assert "没有与“xyzzy”相关的 PR" in json.dumps(fs, ensure_ascii=False)
    md_en, sl_en, _ = _all(answer_question(en, records, ["rollout", "xyzzy"]))
    assert "No PR matches all of rollout, xyzzy (rollout 15 PRs, xyzzy 0 PRs)." in md_en
    assert "No PR matches all of rollout, xyzzy" in "\n".join(slack_texts(sl_en))


def test_a_common_word_is_said_to_only_rank(en: Digest, records: list[PullRequest]) -> None:
    md, _, _ = _all(answer_question(en, records, ["verl", "docker"]))
    assert "too common to narrow the answer, it only ranks" in md


def test_the_model_s_claims_cite_their_prs(zh: Digest, records: list[PullRequest]) -> None:
    answer = answer_question(zh, records, ["fully_async"])
    phrasing = Phrasing(claims=(Claim("两个 PR 修复了部分 rollout 恢复时 routed_experts 的处理", (6029, 6046)),),
                        dropped=1, model="openai/fake")
    md, _sl, _fs = _all(answer, phrasing)
    assert ("- 两个 PR 修复了部分 rollout 恢复时 routed_experts 的处理 ([#6029](https://github.com/verl-project/verl/pull/6029)"
            " [#6046](https://github.com/verl-project/verl/pull/6046))") in md
    assert "另有 1 条没有注明本期 PR 出处的说法已删除。" in md
    assert "由 LLM" in md or "LLM 根据" in md


def test_hostile_text_is_escaped_everywhere() -> None:
    digest = make_digest(n_prs=12, hostile=True)
    matches = tuple(
        Match(pr, 1.0, (Evidence("title", "x", pr.title),
                        Evidence("diff", "x", "+ <!channel> `code` <@U1>", "a`b<c>.py"),
                        Evidence("body", "x", '<at user_id="all">所有人</at>')), ("x",))
        for pr in digest.prs)
    answer = Answer(digest, ("<!here>",), matches, 12, 12, (TermCount("<!here>", 12),))
    phrasing = Phrasing((Claim("<!channel> ping <@U123>", (digest.prs[0].number,)),))
    md, sl, fs = _all(answer, phrasing)
    blob = json.dumps(sl)
    assert "<!channel>" not in blob
    assert "<@U1" not in blob
    assert "<!here>" not in blob
    assert "<at" not in json.dumps(fs, ensure_ascii=False)
    prose = re.sub(r"(`+).*?\1", "", md)  # inside code spans text is shown as it is
    assert "<at" not in prose
    assert "<!" not in prose


def test_a_long_answer_continues_in_more_messages_and_cards(zh: Digest, records: list[PullRequest]) -> None:
    digest = make_digest(n_prs=120, long_text=20_000)
    long_line = "+ " + "很长的改动行 " * 400
    matches = tuple(Match(pr, 1.0, tuple(Evidence("diff", "t", long_line[:160], f"verl/{i}/{'x' * 200}.py")
                                         for i in range(4)), ("t",)) for pr in digest.prs)
    answer = Answer(digest, ("t",), matches, 120, 120, (TermCount("t", 120),))
    md, sl, fs = _all(answer)
    assert len(sl) > 1
    assert len(fs) > 1
    assert md.count("\n1. ") + md.count("\n120. ") == 2  # Markdown is never cut


def test_comparison_side_by_side_and_which_first(zh: Digest, en: Digest) -> None:
    comparison = compare_prs([zh.pr(6029), zh.pr(6046), zh.pr(5899)], repo=REPO, language="zh", missing=[999999])
    first = comparison.first
    assert first is not None
    assert first.analysis is not None
    ranks = [(p.analysis.recommendation.level, -p.analysis.importance) for p in comparison.prs if p.analysis]
    assert ranks == sorted(ranks, key=lambda r: ({"close_read": 0, "skim": 1, "skip": 2}[r[0]], r[1]))
    md = render_comparison_markdown(comparison)
    assert md.startswith(f"## 对比 #{comparison.prs[0].number} · ")
    assert "| PR | 结论 | 时长 | 重要性 | 风险 |" in md
    assert f"**先读 [#{first.number}]" in md
    assert "没有找到 #999999：数据源里没有这个编号的已合并 PR。" in md
    sl = render_comparison_slack(comparison)
    check_slack([sl])
    sections = [b for b in sl["blocks"] if b["type"] == "section" and "fields" in b]
    assert len(sections) == 3
    assert all(len(b["fields"]) == 4 for b in sections)
    assert sections[0]["accessory"]["value"] == f"{REPO}#{first.number}"
    fs = render_comparison_feishu(comparison)
    check_feishu([fs])
    assert "| PR | 结论 | 时长 | 重要性 | 风险 |" in "\n".join(feishu_texts([fs]))
    comparison_en = compare_prs([en.pr(6029), en.pr(6046)], repo=REPO, language="en")
    assert "Read [#" in render_comparison_markdown(comparison_en)
    assert "| PR | Verdict | Time | Importance | Risks |" in render_comparison_markdown(comparison_en)


def test_comparison_with_pending_prs_and_hostile_titles() -> None:
    digest = make_digest(n_prs=6, hostile=True, pending=(0, 1))
    comparison = compare_prs(digest.prs, repo=REPO, language="zh")
    assert [p.analysis is None for p in comparison.prs][-2:] == [True, True]
    md = render_comparison_markdown(comparison)
    assert "分析结果尚未生成，排在最后" in md
    sl = render_comparison_slack(comparison)
    check_slack([sl])
    assert "<!channel>" not in json.dumps(sl)
    fs = render_comparison_feishu(comparison)
    check_feishu([fs])
    table = [line for line in feishu_texts([fs])[1].splitlines() if line.startswith("| [#")]
    assert all(line.count(" | ") == 4 for line in table)  # a | in a title cannot add a column
    assert not any(h in json.dumps(fs, ensure_ascii=False) for h in HOSTILE[:2])


@pytest.mark.parametrize("language", ["zh", "en"])
def test_nearest_examples(language: str) -> None:
    examples = ("npu 标签 W16", "订阅 npu") if language == "zh" else ("label npu W16", "subscribe npu")
    sl = render_nearest_slack(examples, language)  # type: ignore[arg-type]
    check_slack([sl])
    fs = render_nearest_feishu(examples, language)  # type: ignore[arg-type]
    check_feishu([fs])
    md = render_nearest_markdown(examples, language)  # type: ignore[arg-type]
    assert ("你可能想问" if language == "zh" else "Did you mean") in md
    assert f"`{examples[0]}`" in "\n".join(slack_texts([sl]))


def test_an_empty_window_names_the_latest_with_a_button() -> None:
    empty = week_window(2026, 30, SHANGHAI)
    latest = week_window(2026, 34, SHANGHAI)
    note = latest_window_note(latest, datetime(2026, 8, 22, 17, 24, tzinfo=ZoneInfo(SHANGHAI)), "zh")
    assert note == "最近一个有合并 PR 的周是 2026-W34（08-17 – 08-23）（最后一次合并在 2026-08-22）。"
    sl = render_empty_window_slack(empty, repo=REPO, language="zh", latest=latest, notes=(note,))
    check_slack([sl])
    [actions] = [b for b in sl["blocks"] if b["type"] == "actions"]
    assert actions["elements"][0]["action_id"] == ACTION_OPEN_WINDOW
    assert actions["elements"][0]["value"] == f"{REPO}|2026-W34"
    assert "2026-W30（07-20 – 07-26） 没有合并的 PR。" in sl["text"]
    fs = render_empty_window_feishu(empty, repo=REPO, language="en", latest=latest,
                                    notes=(latest_window_note(latest, datetime(2026, 8, 22, tzinfo=ZoneInfo(SHANGHAI)),
                                                              "en"),))
    check_feishu([fs])
    assert fs["header"]["title"]["content"] == "No PRs were merged in 2026-W30 (07-20 – 07-26)."
    button = next(e for e in fs["body"]["elements"] if e["tag"] == "button")
    assert button["behaviors"][0]["value"] == {"action": ACTION_OPEN_WINDOW, "repo": REPO, "window": "2026-W34",
                                               "lang": "en"}
    none_at_all = render_empty_window_slack(empty, repo=REPO, language="en", latest=None)
    assert "The source holds no merged PR of verl-project/verl yet." in "\n".join(slack_texts([none_at_all]))


def test_window_texts() -> None:
    now = datetime(2026, 4, 22, 10, tzinfo=ZoneInfo(SHANGHAI))
    w14 = window_from_spec("week-2", tz=SHANGHAI, now=now)
    assert window_echo("上上周", w14, "zh") == "我把“上上周”理解为 2026-W15（04-06 – 04-12）。"
    assert window_echo("the week before last", w14, "en") == (
        "I read “the week before last” as 2026-W15 (04-06 – 04-12).")
    month = window_from_spec("month-0", tz=SHANGHAI, now=now)
    assert window_text(month, "zh") == "2026-04-01 – 04-30"
    assert so_far_note(month, now, "zh") == "2026-04-01 – 04-30 还没有结束：这是截至 04-22 已合并的 PR。"
    assert so_far_note(w14, now, "en") is None
    this = window_from_spec("this", tz=SHANGHAI, now=now)
    assert so_far_note(this, now, "en") == ("2026-W17 (04-20 – 04-26) is not over yet: these are the PRs merged so far "
                                            "(through 04-22).")
    span = window_from_spec("*-12-28..*-01-03", tz=SHANGHAI, now=now)
    assert window_text(span, "en") == "2025-12-28 – 2026-01-03"
    assert clarify_text("第60周", "no_such_week", "zh") == (
        "我没能确定“第60周”指哪段时间：ISO 周只有 W01 到 W53。"
        "可以这样写：2026-W16、第16周、上周、本月、4月13日到19日。")
    assert clarify_text("W14-W16", "week_range", "en").startswith("I could not tell which dates “W14-W16” means")


def test_window_notes_echo_what_depends_on_the_day() -> None:
    now = datetime(2026, 4, 22, 10, tzinfo=ZoneInfo(SHANGHAI))
    w15 = window_from_spec("week-2", tz=SHANGHAI, now=now)
    assert window_notes(w15, spec="week-2", said="上上周", now=now, language="zh") == [
        "我把“上上周”理解为 2026-W15（04-06 – 04-12）。"]
    assert window_notes(W16, spec="2026-W16", said="2026-W16", now=now, language="zh") == []  # explicit: no echo
    this = window_from_spec("this", tz=SHANGHAI, now=now)
    assert window_notes(this, spec="this", said="this week", now=now, language="en") == [
        "I read “this week” as 2026-W17 (04-20 – 04-26).",
        "2026-W17 (04-20 – 04-26) is not over yet: these are the PRs merged so far (through 04-22)."]
    assert window_notes(W16, spec=None, said=None, now=now, language="en") == []  # the default window
