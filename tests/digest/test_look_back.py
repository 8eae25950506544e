"""What the doors compare a digest with (:meth:`DigestService.look_back`): the source's earlier weeks, and —
for the GitHub API, which only counts them — the digests of those weeks the service built and kept (in
the real Redis, as ``prhub serve`` keeps them), never one built before its week ended."""

from __future__ import annotations

from datetime import timedelta

from fakes.github_server import FakeGitHub, serve
from page_support import FIVE_WEEKS, compared_w16
from redis_support import redis_store

from bot.config import Settings
from bot.digest.history import earlier_windows
from bot.digest.service import DigestService
from bot.digest.window import week_window
from bot.models import PullRequest
from bot.sources.github import GitHubSource
from bot.sources.jsonl import SnapshotSource
from bot.web.pages import DigestPages

REPO = "verl-project/verl"


async def test_github_weeks_come_from_kept_digests(verl_settings: Settings, all_prs: list[PullRequest]) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    snapshot = SnapshotSource(FIVE_WEEKS)
    fake = FakeGitHub(all_prs)
    async with redis_store() as store:
        pages = DigestPages(store)
        service = DigestService(verl_settings, history=pages)
        with serve(fake) as url:
            source = GitHubSource(token=fake.token, api_url=url)
            try:
                before = await service.look_back(source, REPO, window)
                assert before.lookback.gap == "github_counts_only"
                assert dict(before.known) == {}
                for earlier in earlier_windows(window, 4):  # asked in chat or pushed, each after its week
                    await service.digest(snapshot.merged_prs(REPO, earlier), repo=REPO, window=earlier,
                                         now=earlier.end + timedelta(hours=10))
                after = await service.look_back(source, REPO, window)
                requests = source.stats.requests
            finally:
                source.close()
        # one count search per earlier window each time, no file listing; and the history (core files) in three
        # GraphQL queries of 100 PRs the first time, kept by the source for the second
        assert requests == 22 + 3
        assert set(after.known) == {"2026-W12", "2026-W13", "2026-W14", "2026-W15"}
        prs = snapshot.merged_prs(REPO, window)
        digest = await service.digest(prs, repo=REPO, window=window, lookback=after.lookback, known=after.known)
        wow = digest.week_over_week
        assert wow is not None
        assert wow.unavailable == ()
        npu = next(c for c in wow.labels if c.name == "npu")
        assert (npu.count, npu.last, npu.average) == (13, 9, 8.0)
        assert wow.prs.last == 27
        # the labels and risks the snapshot's own records give (the kept digests were built from them); a
        # kept digest knows only the hot files its trends show, so a few more files count as new
        by_records = compared_w16(verl_settings).week_over_week
        assert by_records is not None
        assert wow.labels == by_records.labels
        # core files come from the earlier weeks' records (the snapshot's four weeks; the GitHub API's history
        # of eleven, at most 300 PRs): the other risks are the same
        assert [c for c in wow.risks_grew if c.name != "core_path_change"] == [
            c for c in by_records.risks_grew if c.name != "core_path_change"]
        assert set(by_records.new_hot_files) <= set(wow.new_hot_files)
        assert await pages.latest(REPO, "2026-W16", "zh") == digest  # kept too, for the next week

        # 本周周报 asked on the Wednesday of W15 saw part of it only: not a week to compare with
        w15 = earlier_windows(window, 1)[0]
        partial = [p for p in snapshot.merged_prs(REPO, w15) if p.merged_at < w15.start + timedelta(days=2)]
        await service.digest(partial, repo=REPO, window=w15, now=w15.start + timedelta(days=2))
        with serve(fake) as url:
            source = GitHubSource(token=fake.token, api_url=url)
            try:
                again = await service.look_back(source, REPO, window)
            finally:
                source.close()
        assert set(again.known) == {"2026-W12", "2026-W13", "2026-W14"}
        compared = await service.digest(prs, repo=REPO, window=window, lookback=again.lookback, known=again.known)
        assert compared.week_over_week is not None
        assert set(compared.week_over_week.unavailable) == {"labels", "hot_files", "risks"}


async def test_a_snapshot_needs_no_kept_digest(verl_settings: Settings) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    async with redis_store() as store:
        service = DigestService(verl_settings, history=DigestPages(store))
        earlier = await service.look_back(SnapshotSource(FIVE_WEEKS), REPO, window)
    assert [earlier.lookback.counts[n] for n in ("2026-W12", "2026-W13", "2026-W14", "2026-W15")] == [27, 40, 31, 27]
    assert set(earlier.lookback.prs) == {"2026-W12", "2026-W13", "2026-W14", "2026-W15"}
    assert dict(earlier.known) == {}


async def test_github_history_gives_the_core_files_of_the_records(verl_settings: Settings,
                                                                  all_prs: list[PullRequest]) -> None:
    """On the GitHub API, core files come from the repository's history as they do on a snapshot (the 11 weeks
    before, every PR's first 100 files), not from the window's own busy files; a budget of 0 reads nothing."""
    from bot.digest.heuristic import core_files, hot_files

    window = week_window(2026, 16, "Asia/Shanghai")
    start = earlier_windows(window, 11)[0].start
    expected = [p.model_copy(update={"files": p.files[:100]}) for p in all_prs if start <= p.merged_at < window.start]
    config = verl_settings.repo(REPO)
    fake = FakeGitHub(all_prs)
    with serve(fake) as url:
        source = GitHubSource(token=fake.token, api_url=url)
        try:
            roomy = DigestService(verl_settings.model_copy(update={"github_history_prs": 1000}))
            records = await roomy.earlier_records(source, REPO, window)
            off = DigestService(verl_settings.model_copy(update={"github_history_prs": 0}))
            before = source.stats.requests
            assert await off.earlier_records(source, REPO, window) == ()
            assert source.stats.requests == before
        finally:
            source.close()
    assert len(records) == len(expected) > 300
    core = core_files(records, config)
    assert core == core_files(expected, config)
    week = [p for p in all_prs if window.start <= p.merged_at < window.end]
    assert core != hot_files(week, config)
