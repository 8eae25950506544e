"""Week over week: earlier windows, the look back per source, and the numbers against the data.

The W16 numbers are checked against counts made here straight from the shipped five-week file
(its JSON lines bucketed by ISO week in Asia/Shanghai), not through the digest code.
"""

from __future__ import annotations

import gzip
import itertools
import json
from collections import Counter
from datetime import UTC, date, datetime
from statistics import mean
from zoneinfo import ZoneInfo

import pytest
from fakes.github_server import FakeGitHub, serve
from page_support import FIVE_WEEKS, REPO, compared_w16

from bot.config import Settings
from bot.digest.history import Lookback, earlier_windows, read_earlier
from bot.digest.labels import Labeler
from bot.digest.service import build_digest, with_week_over_week
from bot.digest.window import date_window, week_window
from bot.errors import SourceError
from bot.models import Digest, PullRequest, Window
from bot.sources.github import GitHubSource
from bot.sources.jsonl import SnapshotSource

SHANGHAI = ZoneInfo("Asia/Shanghai")


def _records() -> list[dict[str, object]]:
    with gzip.open(FIVE_WEEKS, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _week(record: dict[str, object]) -> str:
    iso = datetime.fromisoformat(str(record["merged_at"])).astimezone(SHANGHAI).isocalendar()
    return f"{iso.year}-W{iso.week:02d}"


@pytest.fixture(scope="module")
def w16(verl_settings: Settings) -> Digest:
    return compared_w16(verl_settings)


def test_earlier_windows_of_an_iso_week_cross_the_year() -> None:
    weeks = earlier_windows(week_window(2026, 2, "Asia/Shanghai"), 4)
    assert [w.name for w in weeks] == ["2025-W50", "2025-W51", "2025-W52", "2026-W01"]
    assert weeks[-1].end == week_window(2026, 2, "Asia/Shanghai").start
    assert all(a.end == b.start for a, b in itertools.pairwise(weeks))


def test_earlier_windows_of_a_date_range_have_its_length() -> None:
    window = date_window(date(2026, 4, 13), date(2026, 4, 22), "Asia/Shanghai")  # ten days
    before = earlier_windows(window, 2)
    assert [w.name for w in before] == ["2026-03-24..2026-04-02", "2026-04-03..2026-04-12"]
    assert before[-1].end == window.start


def test_w16_pr_counts_match_the_file(w16: Digest) -> None:
    per_week = Counter(_week(r) for r in _records())
    assert per_week == {"2026-W12": 27, "2026-W13": 40, "2026-W14": 31, "2026-W15": 27, "2026-W16": 39}
    wow = w16.week_over_week
    assert wow is not None
    history = {w.name: w.pr_count for w in wow.history}
    assert len(wow.history) == 12
    assert wow.history[-1].name == "2026-W16"
    for name, count in per_week.items():
        assert history[name] == count
    # The file starts in W12: the seven weeks before are unknown, not empty.
    assert [w.pr_count for w in wow.history[:7]] == [None] * 7
    assert wow.gap == "not_covered"
    assert wow.unavailable == ()
    assert wow.prs.count == 39
    assert wow.prs.last == 27
    assert wow.average_windows == 4
    assert wow.prs.average == pytest.approx(mean([27, 40, 31, 27]))
    assert wow.prs.delta == pytest.approx(39 - mean([27, 40, 31, 27]))


def test_w16_label_changes_match_the_labeler_on_the_file(w16: Digest, verl_settings: Settings) -> None:
    labeler = Labeler(verl_settings.repo(REPO))
    per_week: dict[str, Counter[str]] = {}
    for record in _records():
        pr = PullRequest.model_validate(record)
        per_week.setdefault(_week(record), Counter()).update(labeler.labels(pr))
    wow = w16.week_over_week
    assert wow is not None
    assert wow.labels
    earlier = ["2026-W12", "2026-W13", "2026-W14", "2026-W15"]
    by_name = {c.name: c for c in wow.labels}
    for label, change in by_name.items():
        assert change.count == per_week["2026-W16"][label]
        assert change.last == per_week["2026-W15"][label]
        assert change.average == pytest.approx(mean(per_week[w][label] for w in earlier), abs=0.005)
    assert set(by_name) == {label for w in [*earlier, "2026-W16"] for label in per_week[w]}
    # Largest change first.
    deltas = [abs(c.delta or 0) for c in wow.labels]
    assert deltas == sorted(deltas, reverse=True)
    npu = by_name["npu"]
    assert (npu.count, npu.last) == (13, 9)


def test_w16_new_hot_files_and_risks_that_grew(w16: Digest) -> None:
    wow = w16.week_over_week
    assert wow is not None
    earlier_paths: Counter[str] = Counter()
    per_week: dict[str, Counter[str]] = {}
    for record in _records():
        paths = {str(f["path"]) for f in record["files"]}  # type: ignore[attr-defined]
        per_week.setdefault(_week(record), Counter()).update(paths)
    for week in ("2026-W12", "2026-W13", "2026-W14", "2026-W15"):
        earlier_paths.update({p for p, n in per_week[week].items() if n >= 2})
    hot_now = {f.path for t in w16.trends for f in t.hot_files}
    assert wow.new_hot_files
    for new in wow.new_hot_files:
        assert new.path in hot_now
        assert new.path not in earlier_paths
    assert {f.path for f in wow.new_hot_files} == hot_now - set(earlier_paths)
    rollup = {r.kind: r.count for r in w16.risk_rollup}
    for change in wow.risks_grew:
        assert change.count == rollup[change.name]
        assert change.average is not None
        assert change.count > change.average


def test_week_over_week_survives_json(w16: Digest) -> None:
    again = Digest.model_validate_json(w16.model_dump_json())
    assert again == w16
    assert json.loads(w16.model_dump_json())["week_over_week"]["prs"]["delta"] == pytest.approx(7.75)


def test_a_snapshot_of_one_week_says_there_is_nothing_to_compare(verl_settings: Settings) -> None:
    from conftest import EXAMPLE

    source = SnapshotSource(EXAMPLE)
    window = week_window(2026, 16, "Asia/Shanghai")
    digest = build_digest(source.merged_prs(REPO, window), repo=REPO, window=window, settings=verl_settings,
                          lookback=read_earlier(source, REPO, window))
    wow = digest.week_over_week
    assert wow is not None
    assert wow.gap == "not_covered"
    assert set(wow.unavailable) == {"counts", "labels", "hot_files", "risks"}
    from bot.cards.markdown import render_markdown

    assert "数据源中没有 2026-W16 之前的记录" in render_markdown(digest)


class _Broken:
    def __init__(self, inner: SnapshotSource) -> None:
        self.inner = inner

    def merged_prs(self, repo: str, window: Window) -> list[PullRequest]:
        if window.name != "2026-W16":
            raise SourceError("the disk went away")
        return self.inner.merged_prs(repo, window)

    def pull_request(self, repo: str, number: int) -> PullRequest:
        return self.inner.pull_request(repo, number)

    def repos(self) -> list[str]:
        return self.inner.repos()


def test_a_failing_look_back_keeps_the_digest(verl_settings: Settings) -> None:
    source = _Broken(SnapshotSource(FIVE_WEEKS))
    window = week_window(2026, 16, "Asia/Shanghai")
    lookback = read_earlier(source, REPO, window)
    assert lookback.gap == "source_error"
    assert not lookback.counts
    digest = build_digest(source.merged_prs(REPO, window), repo=REPO, window=window, settings=verl_settings,
                          lookback=lookback)
    assert digest.stats.pr_count == 39
    assert digest.week_over_week is not None
    assert "counts" in digest.week_over_week.unavailable


def test_github_counts_within_the_budget(verl_settings: Settings, all_prs: list[PullRequest]) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    fake = FakeGitHub(all_prs)
    with serve(fake) as url:
        source = GitHubSource(token=fake.token, api_url=url)
        lookback = read_earlier(source, REPO, window)
        sent = source.stats.requests
        anonymous = GitHubSource(token=None, api_url=url)
        refused = read_earlier(anonymous, REPO, window)
        assert anonymous.stats.requests == 0
        source.close()
        anonymous.close()
    assert sent == 11, "one count search per earlier window, no file listing"
    assert lookback.gap == "github_counts_only"
    assert not lookback.prs
    expected = {w.name: sum(1 for p in all_prs if w.start <= p.merged_at < w.end) for w in lookback.windows}
    assert dict(lookback.counts) == expected
    assert refused.gap == "github_no_token"
    assert not refused.counts

    snapshot = SnapshotSource(FIVE_WEEKS)
    digest = build_digest(snapshot.merged_prs(REPO, window), repo=REPO, window=window, settings=verl_settings,
                          lookback=lookback)
    wow = digest.week_over_week
    assert wow is not None
    assert wow.prs.last == expected["2026-W15"]
    assert set(wow.unavailable) == {"labels", "hot_files", "risks"}
    from bot.cards.markdown import render_markdown

    assert "GitHub API 只统计了前几期的 PR 数" in render_markdown(digest)

    # Digests already built for those weeks (e.g. kept with their pages) fill the labels in.
    known = {}
    for earlier in lookback.windows[-4:]:
        known[earlier.name] = build_digest(snapshot.merged_prs(REPO, earlier), repo=REPO, window=earlier,
                                           settings=verl_settings)
    filled = with_week_over_week(digest.model_copy(update={"week_over_week": None}), lookback,
                                 settings=verl_settings, known=known)
    assert filled.week_over_week is not None
    assert filled.week_over_week.unavailable == ()
    assert {c.name for c in filled.week_over_week.labels} >= {"npu", "trainer"}


def test_no_earlier_window_means_no_comparison(verl_settings: Settings) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    digest = build_digest([], repo=REPO, window=window, settings=verl_settings, lookback=Lookback(windows=()),
                          now=datetime(2026, 4, 20, tzinfo=UTC))
    assert digest.week_over_week is None
