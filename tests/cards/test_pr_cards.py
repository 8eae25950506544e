"""The one-PR answer ("PR #6046 值得读吗") as Markdown, one Slack message and one Feishu card.

Real verl PRs analysed as their week's digest analyses them, a pending PR, hostile
text and oversized analyses; Slack blocks validated by slack_sdk, Feishu cards by size.
Regenerate the golden files with ``PRHUB_UPDATE_GOLDEN=1 pytest tests/cards/test_pr_cards.py``.
"""

from __future__ import annotations

import html
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import REPO, SHANGHAI

from bot.cards.feishu import card_bytes
from bot.cards.pr import render_pr_feishu, render_pr_markdown, render_pr_slack
from bot.cards.slack import MESSAGE_TEXT_BUDGET
from bot.config import Settings
from bot.digest.service import analyze_pr
from bot.digest.window import week_window
from bot.models import Analysis, Coverage, Digest, DigestPR, Language, LeftOutFile, PullRequest, Recommendation, Risk
from bot.sources.jsonl import SnapshotSource
from cards.card_checks import check_feishu, check_slack, feishu_texts, slack_texts
from cards.card_digests import HOSTILE

GOLDEN = Path(__file__).parent / "golden"
REAL = (6046, 6029, 5951, 7173)
LANGUAGES: tuple[Language, ...] = ("zh", "en")


def _week_of(number: int, source: SnapshotSource) -> list[PullRequest]:
    pr = source.pull_request(REPO, number)
    day = pr.merged_at.astimezone(ZoneInfo(SHANGHAI)).date().isocalendar()
    return source.merged_prs(REPO, week_window(day.year, day.week, SHANGHAI))


@pytest.fixture(scope="module")
def real(real_source: SnapshotSource, verl_settings: Settings) -> dict[tuple[int, Language], DigestPR]:
    """The real PRs analysed in both languages, with their merge week as context."""
    out = {}
    for number in REAL:
        pr = real_source.pull_request(REPO, number)
        week = _week_of(number, real_source)
        for lang in LANGUAGES:
            out[number, lang] = analyze_pr(pr, settings=verl_settings, language=lang, window_prs=week)
    return out


def _all(pr: DigestPR, lang: Language) -> tuple[str, dict[str, Any], dict[str, Any]]:
    kw: dict[str, Any] = {"repo": REPO, "language": lang, "timezone": SHANGHAI}
    return render_pr_markdown(pr, **kw), render_pr_slack(pr, **kw), render_pr_feishu(pr, **kw)


def _slack_joined(message: dict[str, Any]) -> str:
    return "\n".join(slack_texts([message]))


def _analysis(**update: Any) -> Analysis:
    base = Analysis(
        summary="Adds a sharded save/restore handler for FSDP1.",
        change_type="fix", importance=7, insight=6,
        risks=(Risk(kind="missing_tests", title="缺少测试覆盖", detail="没有测试。", evidence=("verl/a.py",)),),
        recommendation=Recommendation(level="close_read", minutes=12, reason="核心路径上的修复。",
                                      focus=("verl/a.py", "barrier 的位置")),
        key_points=("新增两个函数", "改动 engine_workers 的分支"),
        coverage=Coverage(files_seen=3, files_total=4, lines_seen=120, lines_total=180,
                          left_out=(LeftOutFile(path="uv.lock", reason="lock_file"),)),
        status="llm", analyzer="llm:openai/gpt-4o-mini", language="zh",
    )
    return base.model_copy(update=update)


def _pr(analysis: Analysis | None, **update: Any) -> DigestPR:
    base = DigestPR(
        number=6100, title="[fsdp] fix: sharded save for FSDP1", url="https://github.com/verl-project/verl/pull/6100",
        author="someone", labels=("fsdp", "trainer"), merged_at=datetime(2026, 4, 15, 3, 0, tzinfo=UTC),
        additions=150, deletions=30, changed_files=4, analysis=analysis,
    )
    return base.model_copy(update=update)


# -- real PRs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("number", REAL)
def test_real_prs_render_within_limits(real: dict[tuple[int, Language], DigestPR], number: int,
                                       lang: Language, caplog: pytest.LogCaptureFixture) -> None:
    pr = real[number, lang]
    assert pr.analysis is not None
    markdown, message, card = _all(pr, lang)
    check_slack([message], caplog)
    check_feishu([card])
    rec = pr.analysis.recommendation
    level = {"zh": {"close_read": "值得精读", "skim": "建议浏览", "skip": "可跳过"},
             "en": {"close_read": "worth a close read", "skim": "skim", "skip": "skip"}}[lang][rec.level]
    assert markdown.startswith(f"# PR #{number} · {level}\n")
    assert message["blocks"][0] == {"type": "header", "text": {"type": "plain_text", "text": f"PR #{number} · {level}"}}
    assert card["header"]["title"]["content"] == f"PR #{number} · {level}"
    # The Markdown answer is whole: every focus item and evidence file is in it.
    slack_text, feishu_text = _slack_joined(message), "\n".join(feishu_texts([card]))
    for item in [*rec.focus, *(e for r in pr.analysis.risks for e in r.evidence)]:
        assert item[:40] in markdown
    shortened = "缩略" if lang == "zh" else "shortened"
    assert shortened not in markdown
    # In chat, one screen: what it does, the verdict, risks by title, where to start as file paths, no internals.
    for chat in (html.unescape(slack_text), html.unescape(feishu_text)):
        assert len(chat) <= 1200 + 200  # the section titles and the header line are counted apart
        assert pr.analysis.analyzer not in chat
        assert "改动行" not in chat
        assert "changed lines" not in chat
        for risk in pr.analysis.risks[:2]:
            assert risk.title in chat or shortened in chat
        paths = [f for f in rec.focus if "/" in f and " " not in f][:3]
        assert all(f"`{p}`" in chat or shortened in chat for p in paths)
        assert not any(line.lstrip().startswith(("1. `+", "1. `-")) for line in chat.splitlines())


@pytest.mark.parametrize("lang", LANGUAGES)
def test_verdict_comes_first_then_summary_risks_focus(real: dict[tuple[int, Language], DigestPR],
                                                      lang: Language) -> None:
    markdown, message, card = _all(real[6046, lang], lang)
    titles = (["结论：", "## 做了什么", "## 风险", "## 从哪里开始读", "## 关键点", "## 标签", "## 分析说明"]
              if lang == "zh" else
              ["Verdict: ", "## What it does", "## Risks", "## Where to start", "## Key points", "## Labels",
               "## About this analysis"])
    positions = [markdown.index(t) for t in titles]
    assert positions == sorted(positions)
    slack_text = _slack_joined(message)
    left_out = ("## 关键点", "## 分析说明", "## Key points", "## About this analysis")  # the full answer's
    chat_titles = [t for t in titles if t not in left_out]
    assert "## 关键点".removeprefix("## ") not in slack_text
    slack_positions = [slack_text.index(t.removeprefix("## ")) for t in chat_titles]
    assert slack_positions == sorted(slack_positions)
    feishu_text = "\n".join(feishu_texts([card]))
    assert feishu_text.index(titles[0]) < feishu_text.index(titles[1].removeprefix("## "))


def test_analyze_pr_matches_the_week_digest(real: dict[tuple[int, Language], DigestPR], w16_digest: Digest) -> None:
    for number in (6046, 6029, 5951):
        assert real[number, "zh"] == w16_digest.pr(number)


def test_revert_shows_the_reverted_pr(real: dict[tuple[int, Language], DigestPR]) -> None:
    markdown, message, card = _all(real[7173, "zh"], "zh")
    for text in (markdown, _slack_joined(message), "\n".join(feishu_texts([card]))):
        assert "回滚" in text
        assert "#5599" in text


def test_large_pr_lists_every_focus_file_and_the_file_left_out(real: dict[tuple[int, Language], DigestPR]) -> None:
    pr = real[5951, "zh"]
    markdown, message, _card = _all(pr, "zh")
    assert "大规模变更" in markdown
    assert "`verl/trainer/config/_generated_diffusion_trainer.yaml`（生成文件）" in markdown
    assert "_generated_diffusion_trainer.yaml" not in _slack_joined(message)  # coverage notes stay out of chat
    assert pr.analysis is not None
    for number, path in enumerate(pr.analysis.recommendation.focus, 1):
        assert f"{number}. `{path}`" in markdown


def test_merge_time_is_shown_in_the_given_zone(real: dict[tuple[int, Language], DigestPR]) -> None:
    pr = real[6046, "zh"]
    local = pr.merged_at.astimezone(ZoneInfo(SHANGHAI))
    assert f"合并于 {local:%Y-%m-%d %H:%M} +08:00" in render_pr_markdown(pr, repo=REPO, language="zh",
                                                                          timezone=SHANGHAI)


# -- pending, fallback, status ------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "placeholder"), [("zh", "分析结果尚未生成"), ("en", "Analysis not available yet")])
def test_pending_pr_says_so(lang: Language, placeholder: str, caplog: pytest.LogCaptureFixture) -> None:
    pr = _pr(None)
    markdown, message, card = _all(pr, lang)
    check_slack([message], caplog)
    check_feishu([card])
    assert markdown.startswith(f"# PR #6100 · {placeholder}\n")
    assert message["text"].startswith(f"PR #6100 · {placeholder}")
    assert card["header"]["template"] == "grey"
    for text in (markdown, _slack_joined(message), "\n".join(feishu_texts([card]))):
        assert placeholder in text
        assert "fsdp" in text  # labels are known without an analysis
        assert "做了什么" not in text
        assert "What it does" not in text


def test_llm_status_and_fallback_reason_are_shown() -> None:
    markdown = render_pr_markdown(_pr(_analysis()), repo=REPO, language="zh")
    assert "LLM 分析（llm:openai/gpt-4o-mini）" in markdown
    assert "覆盖：文件 3/4 · 改动行 120/180" in markdown
    assert "`uv.lock`（锁文件）" in markdown
    fallback = _analysis(status="heuristic", analyzer="heuristic-v1", fallback_reason="reply was not JSON twice")
    for lang, words in (("zh", "模型分析失败，改用启发式分析：reply was not JSON twice"),
                        ("en", "the model failed, heuristic analysis instead: reply was not JSON twice")):
        markdown, message, card = _all(_pr(fallback), lang)  # type: ignore[arg-type]
        assert words in markdown
        assert words in _slack_joined(message)
        assert words in "\n".join(feishu_texts([card]))


def test_header_colour_follows_the_level() -> None:
    for level, colour in (("close_read", "green"), ("skim", "blue"), ("skip", "grey")):
        rec = Recommendation(level=level, minutes=3, reason="r")  # type: ignore[arg-type]
        card = render_pr_feishu(_pr(_analysis(recommendation=rec)), repo=REPO, language="zh")
        assert card["header"]["template"] == colour


def test_no_risk_no_focus_no_points_say_so() -> None:
    rec = Recommendation(level="skip", minutes=1, reason="")
    markdown = render_pr_markdown(_pr(_analysis(risks=(), key_points=(), recommendation=rec, summary="")),
                                  repo=REPO, language="en")
    assert "## Risks\n\n- no notable risk found" in markdown
    assert "## Where to start\n\n(none)" in markdown
    assert "## Key points\n\n(none)" in markdown
    assert "Why:" not in markdown


# -- hostile and oversized text -----------------------------------------------------------------


def _hostile() -> DigestPR:
    text = " ".join(HOSTILE)
    analysis = _analysis(
        summary="\n\n".join(HOSTILE),
        risks=(Risk(kind="x", title=HOSTILE[0], detail=HOSTILE[1], evidence=(HOSTILE[3], "<@U999>/evil.py")),),
        recommendation=Recommendation(level="close_read", minutes=5, reason=text, focus=HOSTILE),
        key_points=HOSTILE, fallback_reason=HOSTILE[4], analyzer="<!everyone>",
        coverage=Coverage(files_seen=0, files_total=1, lines_seen=0, lines_total=1,
                          left_out=(LeftOutFile(path="<at id=all></at>", reason="<!here>"),)),
    )
    return _pr(analysis, title=text, author="<@U1>", labels=("<!subteam^S1>", HOSTILE[3]))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_hostile_text_stays_inert(lang: Language, caplog: pytest.LogCaptureFixture) -> None:
    markdown, message, card = _all(_hostile(), lang)
    check_slack([message], caplog)
    check_feishu([card])
    for text in [*slack_texts([message]), message["text"]]:
        for bracket in re.findall(r"<[^>]*>?", text):
            assert bracket == "<https://github.com/verl-project/verl/pull/6100|#6100>", bracket
    joined = _slack_joined(message)
    assert "&lt;!channel&gt; please read" in joined
    assert "ping &lt;@U123&gt; and &lt;!here&gt;" in joined
    for content in feishu_texts([card]):
        assert "<at" not in content
        assert "<font" not in content
        assert not re.search(r"<(?!br>)", content)
    assert "<at" not in json.dumps(card, ensure_ascii=False)
    prose = re.sub(r"`[^`\n]*`", "", markdown)  # code spans show tags as text
    assert "<at " not in prose
    assert "<font" not in prose
    assert "<!" not in prose
    assert "\n# not a heading" not in markdown
    assert "\n```" not in markdown


def _huge(n_files: int = 300, text: int = 40_000) -> DigestPR:
    files = tuple(f"verl/module_{i:03d}/very/long/path/to/the/file_{i:03d}.py" for i in range(n_files))
    analysis = _analysis(
        summary=("训练器🚀改进 émoji👩‍👩‍👧 text & <x> " * (text // 30)).strip(),
        risks=tuple(Risk(kind=f"k{i}", title=f"风险 {i}", detail="细节 " * 200, evidence=files) for i in range(10)),
        recommendation=Recommendation(level="skim", minutes=90, reason="理由 " * 2000, focus=files),
        key_points=tuple(f"要点 {i} " + "x" * 300 for i in range(100)),
        coverage=Coverage(files_seen=0, files_total=n_files, lines_seen=0, lines_total=10 ** 6,
                          left_out=tuple(LeftOutFile(path=f, reason="token_budget") for f in files)),
    )
    return _pr(analysis, title="巨大的 PR " * 300)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_oversized_analysis_is_shortened_visibly_in_chat(lang: Language, caplog: pytest.LogCaptureFixture) -> None:
    pr = _huge()
    markdown, message, card = _all(pr, lang)
    check_slack([message], caplog)
    check_feishu([card])
    assert card_bytes(card) < 28_000
    note = "完整分析见 Markdown 版本（prhub pr 6100）" if lang == "zh" else "full analysis is in the Markdown version"
    more = "……另有" if lang == "zh" else "… and"
    for text in (_slack_joined(message), "\n".join(feishu_texts([card]))):
        assert note in text
        assert more in text
        assert "…" in text
    # The Markdown answer keeps everything.
    assert note not in markdown
    assert markdown.count("file_299.py") == 10 + 1 + 1  # each risk's evidence, focus, left out
    assert markdown.count("要点 ") == 100


def test_long_summary_is_split_into_sections_not_cut(caplog: pytest.LogCaptureFixture) -> None:
    summary = " ".join(f"第{i}句说明改动的动机与影响。" for i in range(300))  # ~4,800 characters
    message = render_pr_slack(_pr(_analysis(summary=summary)), repo=REPO, language="zh")
    check_slack([message], caplog)
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]
    joined = "\n".join(sections)
    assert "第0句" in joined
    # in chat the answer stays one screen: shortened visibly, the whole text in the Markdown answer
    assert "第299句说明改动的动机与影响。" not in joined
    assert "缩略" in joined
    assert sum(len(s) for s in sections) <= MESSAGE_TEXT_BUDGET
    assert "第299句说明改动的动机与影响。" in render_pr_markdown(_pr(_analysis(summary=summary)), repo=REPO,
                                                                   language="zh")


def test_fallback_text_is_short_and_escaped() -> None:
    message = render_pr_slack(_pr(_analysis(), title="<!channel> " + "word " * 100), repo=REPO, language="zh")
    assert message["text"].startswith("PR #6100 · 值得精读 — &lt;!channel&gt; ")
    assert message["text"].endswith("…")
    assert len(message["text"]) < 260


# -- golden -------------------------------------------------------------------------------------


GOLDEN_CASES = {
    "pr-markdown-zh.md": lambda: render_pr_markdown(_pr(_analysis()), repo=REPO, language="zh", timezone=SHANGHAI),
    "pr-slack-en.json": lambda: json.dumps(render_pr_slack(_pr(_analysis()), repo=REPO, language="en"),
                                           ensure_ascii=False, indent=2) + "\n",
    "pr-feishu-zh.json": lambda: json.dumps(render_pr_feishu(_pr(_analysis()), repo=REPO, language="zh"),
                                            ensure_ascii=False, indent=2) + "\n",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden(name: str) -> None:
    actual = GOLDEN_CASES[name]()
    path = GOLDEN / name
    if os.environ.get("PRHUB_UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with PRHUB_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8")
