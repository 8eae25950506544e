"""What the digest's headline, highlights, key changes and advice say, in zh and en: on real weeks
(tests/data/*.jsonl.gz) and on records made here (series, releases, reverts, a quiet week)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cards.markdown import render_markdown
from bot.config import Settings
from bot.digest import aggregate
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.models import Digest, FileChange, PullRequest
from bot.sources.jsonl import SnapshotSource

DATA = Path(__file__).parents[1] / "data"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _week(snapshot: str, repo: str, week: str, tz: str, settings: Settings, language: str) -> Digest:
    year, number = week.split("-W")
    window = week_window(int(year), int(number), tz)
    prs = SnapshotSource(DATA / snapshot).merged_prs(repo, window)
    return build_digest(prs, repo=repo, window=window, settings=settings, language=language,  # type: ignore[arg-type]
                        now=NOW)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_an_unconfigured_busy_week(default_settings: Settings, language: str) -> None:
    """torchtitan 2026-W34 (66 PRs, nobody configured it): no ``other`` area, no summary that repeats
    its title, no HTML, and the English headline counts in English."""
    digest = _week("torchtitan.jsonl.gz", "pytorch/torchtitan", "2026-W34", "America/Los_Angeles",
                   default_settings, language)
    text = "\n".join(digest.highlights)
    assert "other" not in digest.highlights[0]
    assert "<img" not in text
    assert "Stack from" not in text
    for line in (*digest.highlights, *digest.key_changes):
        found = re.match(r"#(\d+) (.+?)[:：] (.+)$", line)
        if found:
            assert not found[3].lower().startswith(found[2].lower()), line
    if language == "en":
        assert re.match(r"66 PRs merged this week, \d+ of them key; most activity in ", digest.headline)
    else:
        assert re.match(r"本周合并 66 个 PR，重点 PR \d+ 个；活动集中在 ", digest.headline)
    assert "other（" not in digest.headline
    assert "other (" not in digest.headline


@pytest.mark.parametrize(("language", "expected"), [
    ("zh", "#6029 和 #6046 修的是 `verl/experimental/fully_async_policy/agent_loop/agent_loop.py` 里的同一个问题"
           "（「routed_experts on partial rollout resume」）：一个问题修了 2 次，需要一起阅读，确认已经修好。"),
    ("en", "#6029 and #6046 fix the same problem in `verl/experimental/fully_async_policy/agent_loop/agent_loop.py` "
           "(“routed_experts on partial rollout resume”): one problem needed 2 fixes, so read them together to check "
           "it is solved."),
])
def test_fixes_of_one_bug_are_told_together(verl_settings: Settings, language: str, expected: str) -> None:
    digest = _week("verl-prs-with-patches.jsonl.gz", "verl-project/verl", "2026-W16", "Asia/Shanghai",
                   verl_settings, language)
    assert expected in digest.highlights
    assert not any(h.startswith(("#6029 replace", "#6046 preserve")) for h in digest.highlights)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_reverts_in_the_same_week_are_linked(verl_settings: Settings, language: str) -> None:
    """verl 2026-W08 holds #5330 and its revert #5333, #5345 and its revert #5353."""
    digest = _week("verl-prs-with-patches.jsonl.gz", "verl-project/verl", "2026-W08", "Asia/Shanghai",
                   verl_settings, language)
    if language == "en":
        assert "#5333 reverts #5330 “remove workers from vLLMHttpServer”, merged in the same window." in digest.headline
        assert ("#5353 reverts #5345, merged in the same window, so the two cancel out; check whether the work of "
                "#5345 comes back in a fixed form.") in digest.suggestions
        assert not any(s.startswith("Decide when and how the work reverted by") for s in digest.suggestions)
    else:
        assert "#5333 回滚了同期合并的 #5330「remove workers from vLLMHttpServer」。" in digest.headline
        assert any(s.startswith("#5353 回滚了同期合并的 #5345，两者相抵") for s in digest.suggestions)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_quiet_week_names_its_top_prs(default_settings: Settings, language: str) -> None:
    """OpenRLHF 2025-W14: five PRs, none key. The highlights and the key changes still name the most
    important ones; no section prints "(none)"."""
    digest = _week("openrlhf.jsonl.gz", "OpenRLHF/OpenRLHF", "2025-W14", "Asia/Shanghai", default_settings, language)
    assert digest.stats.key_pr_count == 0
    named = [h for h in digest.highlights if re.match(r"#\d+ ", h)]
    assert len(named) >= aggregate.MIN_NAMED_PRS
    assert len(digest.key_changes) == 4  # the note, then three PRs
    assert re.match(r"#\d+ ", digest.key_changes[1])
    report = render_markdown(digest)
    assert report.count("(none)") + report.count("（无）") <= 1
    if language == "en":
        assert digest.headline.startswith("5 PRs merged this week, none of them key;")
        assert "No PR reached the key bar (importance ≥ 6) this week" in digest.key_changes[0]
    else:
        assert digest.headline.startswith("本周合并 5 个 PR，没有重点 PR；")
        assert "本周没有 PR 达到重点线（重要性 ≥ 6）" in digest.key_changes[0]


T0 = datetime(2026, 4, 14, 9, tzinfo=UTC)


def _pr(number: int, title: str, *paths: str, author: str = "dev", body: str = "", hours: int = 0,
        lines: int = 40) -> PullRequest:
    return PullRequest(
        repo="acme/tool", number=number, title=title, body=body, author=author,
        merged_at=T0 + timedelta(hours=hours or number % 100),
        files=tuple(FileChange(path=p, status="modified", additions=lines, deletions=lines // 2) for p in paths),
    )


def _made(prs: list[PullRequest], settings: Settings, language: str) -> Digest:
    return build_digest(prs, repo="acme/tool", window=week_window(2026, 16, "UTC"), settings=settings,
                        language=language, now=NOW)  # type: ignore[arg-type]


SERIES = [
    _pr(100 + k, f"Refactor CLI [{k}/N]: {what}", f"acme/cli/{name}.py", "acme/cli/main.py", author="ann",
        body=f"Part {k} of the CLI refactor: {what.lower()} into its own module, no behaviour change.")
    for k, what, name in [(7, "Move parsing", "parse"), (8, "Move help text", "help"), (9, "Split commands", "cmds"),
                          (10, "Move output", "output"), (11, "Move config", "config"), (12, "Drop globals", "state"),
                          (13, "Add prog= to help", "help2")]
]
OTHERS = [
    _pr(200, "Change the contract of the rollout function", "acme/rollout/core.py", author="bo", lines=120,
        body="The rollout function now returns a RolloutResult instead of a tuple; callers must unpack it."),
    _pr(201, "Release: v0.28", "pyproject.toml", "CHANGELOG.md", author="rel", lines=4),
    _pr(202, "Fix typo in docs", "docs/index.md", author="cy", lines=2),
]


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "“Refactor CLI”, parts 7–13 (7 PRs): "),
    ("zh", "「Refactor CLI」（第 7–13 部分，7 个 PR）："),
])
def test_a_series_is_one_highlight(default_settings: Settings, language: str, expected: str) -> None:
    digest = _made([*SERIES, *OTHERS], default_settings, language)
    series = [h for h in digest.highlights if h.startswith(expected)]
    assert len(series) == 1, digest.highlights
    assert series[0].endswith("3 more; parts of one series need reading in order." if language == "en"
                              else "另 3 个；同一系列需要按顺序阅读。")
    # no part is told again on its own, in the highlights or in the key changes
    for lines in (digest.highlights, digest.key_changes):
        assert not any(re.match(r"#1(0[7-9]|1[0-3]) ", h) for h in lines), lines
    # parts that move code without changing behaviour are not key: the series is at most one key change
    assert sum(line.startswith(expected) for line in digest.key_changes) <= 1


@pytest.mark.parametrize(("language", "expected"), [
    ("en", " Release: #201 “v0.28”."),
    ("zh", "发布：#201「v0.28」。"),
])
def test_a_release_is_in_the_headline(default_settings: Settings, language: str, expected: str) -> None:
    digest = _made([*SERIES, *OTHERS], default_settings, language)
    assert digest.headline.endswith(expected)


def test_the_english_headline_counts_one_pr(default_settings: Settings) -> None:
    digest = _made([OTHERS[2]], default_settings, "en")
    assert digest.headline.startswith("1 PR merged this week, ")
    report = render_markdown(digest)
    assert "1 PRs" not in report
    assert "No PR carries a risk worth flagging." in report  # a typo fix in the docs: no risk section of "(none)"


@pytest.mark.parametrize(("title", "repo", "release"), [
    ("Release: v0.28", "", True),
    ("Bump version to 0.2.0", "", True),
    ("Bump torchtitan version to v0.2.1", "pytorch/torchtitan", True),
    ("[release] chore: bump version to v0.4", "", True),
    ("v1.2.0", "", True),
    ("bump up python version to 3.12", "pytorch/torchtitan", False),
    ("Add TestPyPI release workflow", "", False),
    ("Update PP to release memory earlier", "", False),
    ("[rl] Update monarch version in README to `0.4.1`", "pytorch/torchtitan", False),
])
def test_is_release(title: str, repo: str, release: bool) -> None:
    assert aggregate.is_release(title, repo) is release


def test_one_authors_prs_with_one_opening_are_a_series(default_settings: Settings) -> None:
    """torchtitan 2026-W34: three PRs of one author remove the legacy import paths one by one."""
    digest = _week("torchtitan.jsonl.gz", "pytorch/torchtitan", "2026-W34", "America/Los_Angeles",
                   default_settings, "en")
    assert ("“Remove the legacy” … (a series of 3 PRs): #4172 “torchtitan.components.lr_scheduler import path”, "
            "#4184 “torchtitan.components.checkpoint import path”, #4241 “torchtitan.components.checkpoint_utils "
            "import path”; parts of one series need reading in order.") in digest.highlights


@pytest.mark.parametrize("language", ["zh", "en"])
def test_exports_and_generated_files_pair_nothing_and_a_quieter_area_is_not_called_busiest(
        default_settings: Settings, language: str) -> None:
    """diffusers 2026-W28: three unrelated key PRs (a release, two new pipelines) all touch the package's
    ``__init__.py`` and the generated dummy objects — no "read together" for them; the two PRs on one attention
    backend are paired. The area named first holds key PRs but doc and schedulers were busier: not "busiest"."""
    digest = _week("diffusers.jsonl.gz", "huggingface/diffusers", "2026-W28", "UTC", default_settings, language)
    text = "\n".join(digest.highlights) + digest.executive_summary
    assert "__init__.py" not in text
    assert "dummy_" not in text
    assert "attention_dispatch.py" in "\n".join(digest.highlights)
    first = digest.highlights[0]
    assert first.startswith("model")
    assert ("最活跃" not in first) if language == "zh" else ("busiest" not in first)
    assert "#14115" in first
    assert "#13809" in first
