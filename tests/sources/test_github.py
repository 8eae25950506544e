"""GitHubSource against the fake GitHub API (tests/fakes/github_server.py) on 127.0.0.1."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from conftest import REPO, SHANGHAI
from fakes.github_server import FakeGitHub, serve

from bot.digest.window import week_window
from bot.errors import GitHubError, PRNotFoundError, RateLimitError, UnknownRepoError
from bot.models import PullRequest
from bot.sources.github import GitHubSource
from bot.sources.github_http import FileETagCache

W16 = week_window(2026, 16, SHANGHAI)
TOKEN = "test-token"
ISSUE = 99991


def facts(pr: PullRequest) -> tuple[object, ...]:
    """What every source must agree on."""
    return (pr.number, pr.title, pr.body, pr.author, pr.merged_at, pr.merge_commit_sha, pr.additions,
            pr.deletions, pr.changed_files,
            tuple((f.path, f.status, f.additions, f.deletions, f.previous_path) for f in pr.files))


@pytest.fixture(scope="module")
def fake(all_prs: list[PullRequest]) -> Iterator[FakeGitHub]:
    prs = [pr.model_copy(update={"body": ""}) if pr.number == 6046 else pr for pr in all_prs]
    server = FakeGitHub(prs, token=TOKEN, issue_numbers=(ISSUE,), unmerged=(99992,))
    with serve(server):
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture(scope="module", autouse=True)
def _client() -> Iterator[None]:
    global CLIENT
    with httpx.Client(timeout=10) as client:
        CLIENT = client
        yield


CLIENT: httpx.Client | None = None


def source(fake: FakeGitHub, sleeps: list[float], token: str | None = TOKEN, **kw: object) -> GitHubSource:
    return GitHubSource(token, fake.base_url, CLIENT, sleep=sleeps.append, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("token", [TOKEN, None], ids=["graphql", "rest"])
def test_week_matches_snapshot_and_reruns_are_cheap(
    fake: FakeGitHub, real_source: object, token: str | None, sleeps: list[float]
) -> None:
    from bot.sources.jsonl import SnapshotSource

    assert isinstance(real_source, SnapshotSource)
    expected = [pr for pr in real_source.merged_prs(REPO, W16)]
    src = source(fake, sleeps, token)
    got = src.merged_prs(REPO, W16)
    assert len(got) == 39
    null_body = {pr.number: pr for pr in got}[6046]
    assert null_body.body == ""
    assert [facts(p) for p in got if p.number != 6046] == [facts(p) for p in expected if p.number != 6046]
    assert all(f.patch for pr in got for f in pr.files if f.changed_lines)
    cold = src.stats.requests
    releases = 2  # the releases and the tags (released_in), read once per source and remembered
    if token:
        assert cold == 1 + 39 + releases  # one search page, one files page per PR
        assert got[0].reviews == 1
        assert got[0].comments == 2
    else:
        assert cold <= 39 + 10 + releases  # list pages until past the window, one files page per PR
    again = src.merged_prs(REPO, W16)
    assert [facts(p) for p in again] == [facts(p) for p in got]
    assert src.stats.requests == 2 * cold - releases
    assert src.stats.not_modified == cold - releases - (1 if token else 0)
    assert src.stats.counted(authenticated=bool(token)) == (cold + 1 if token else 2 * cold - releases)
    assert sleeps == []


def test_file_cache_across_sources(fake: FakeGitHub, sleeps: list[float], tmp_path: Path) -> None:
    first = source(fake, sleeps, cache=FileETagCache(tmp_path))
    first.merged_prs(REPO, W16)
    second = source(fake, sleeps, cache=FileETagCache(tmp_path))
    second.merged_prs(REPO, W16)
    assert second.stats.requests == 42  # the search, 39 file lists, the releases and the tags
    assert second.stats.not_modified == 41


def test_many_files_are_paged_to_the_end(fake: FakeGitHub, sleeps: list[float],
                                         prs_by_number: dict[int, PullRequest]) -> None:
    src = source(fake, sleeps)
    pr = src.pull_request(REPO, 4795)
    assert pr.changed_files == 344 == len(pr.files)
    assert facts(pr)[6:] == facts(prs_by_number[4795])[6:]
    assert not pr.files_partial
    pages = [p for m, p, s in fake.log if "/pulls/4795/files" in p]
    assert len(pages) >= 4


def test_file_cap_marks_partial(all_prs: list[PullRequest], sleeps: list[float]) -> None:
    capped = FakeGitHub(all_prs, token=TOKEN, files_cap=150)
    with serve(capped):
        pr = source(capped, sleeps).pull_request(REPO, 4795)
    assert pr.files_partial
    assert len(pr.files) == 150
    assert pr.changed_files == 344


def test_patch_budget_rows_are_read_again(all_prs: list[PullRequest], sleeps: list[float],
                                          prs_by_number: dict[int, PullRequest]) -> None:
    tight = FakeGitHub(all_prs, token=TOKEN, patch_budget=5000)
    with serve(tight):
        pr = source(tight, sleeps).pull_request(REPO, 4795)
    assert facts(pr)[6:] == facts(prs_by_number[4795])[6:]
    assert any("per_page=10&" in path for _, path, _ in tight.log)


@pytest.mark.parametrize("kind", ["primary", "secondary", "secondary_429"])
def test_rate_limits_are_waited_out(fake: FakeGitHub, sleeps: list[float], kind: str,
                                    caplog: pytest.LogCaptureFixture) -> None:
    fake.fail_next(f"/repos/{REPO}/pulls/6046/files", kind)
    src = source(fake, sleeps)
    with caplog.at_level(logging.WARNING, "bot.sources.github"):
        pr = src.pull_request(REPO, 6046)
    assert pr.number == 6046
    assert len(sleeps) == 1
    assert {"primary": 0 < sleeps[0] <= 3, "secondary": sleeps[0] == 1, "secondary_429": sleeps[0] == 60}[kind]
    assert src.stats.rate_limited == 1
    assert "rate limit" in caplog.text


def test_rate_limit_retries_are_bounded(fake: FakeGitHub, sleeps: list[float]) -> None:
    for _ in range(3):
        fake.fail_next("/graphql", "secondary")
    with pytest.raises(RateLimitError, match="after 2 retries"):
        source(fake, sleeps, max_retries=2).merged_prs(REPO, W16)
    assert sleeps == [1, 1]
    fake.fail_next("/graphql", "secondary_429")
    with pytest.raises(RateLimitError, match="longer than"):
        source(fake, sleeps, max_wait_s=10).merged_prs(REPO, W16)


def test_not_found_issue_unmerged_and_unknown_repo(fake: FakeGitHub, sleeps: list[float]) -> None:
    src = source(fake, sleeps)
    with pytest.raises(PRNotFoundError, match="is an issue"):
        src.pull_request(REPO, ISSUE)
    with pytest.raises(PRNotFoundError, match="no pull request #123456"):
        src.pull_request(REPO, 123456)
    with pytest.raises(PRNotFoundError, match="not merged"):
        src.pull_request(REPO, 99992)
    with pytest.raises(UnknownRepoError):
        src.pull_request("nobody/nothing", 1)
    with pytest.raises(UnknownRepoError):
        source(fake, sleeps, None).merged_prs("nobody/nothing", W16)
    with pytest.raises(GitHubError, match=r"401|Bad credentials"):
        source(fake, sleeps, "wrong").pull_request(REPO, 6046)


def test_diff_falls_back_to_patches_on_406(all_prs: list[PullRequest], sleeps: list[float]) -> None:
    small = FakeGitHub(all_prs, token=TOKEN, diff_line_limit=10)
    with serve(small):
        src = source(small, sleeps)
        text = src.diff(REPO, 6046)
    assert text.count("diff --git") == len([f for f in src.pull_request(REPO, 6046).files if f.patch])
    assert any(status == 406 for _, _, status in small.log)


def test_long_windows_split_below_the_search_cap(fake: FakeGitHub, sleeps: list[float],
                                                 real_source: object) -> None:
    from bot.digest.window import date_window
    from bot.sources.jsonl import SnapshotSource

    assert isinstance(real_source, SnapshotSource)
    from datetime import date

    window = date_window(date(2025, 1, 1), date(2026, 8, 31), "UTC")
    src = source(fake, sleeps)
    heads = src._search(REPO, window.start, window.end)
    expected = {pr.number for pr in real_source.merged_prs(REPO, window)}
    assert len(expected) > 1000
    assert set(heads) == expected


def test_history_reads_file_paths_within_its_budget(fake: FakeGitHub, sleeps: list[float],
                                                    prs_by_number: dict[int, PullRequest]) -> None:
    """The look back for core files: GraphQL only (100 PRs a query, first 100 files each, no patch), at most
    ``max_prs`` PRs, every one merged in the span; a span read before costs nothing; no token, no history."""
    start, end = W16.start - timedelta(weeks=11), W16.start
    src = source(fake, sleeps)
    records = src.history(REPO, start, end, max_prs=250)
    assert src.stats.requests == src.stats.graphql == 3
    assert len(records) == 250
    assert all(start <= pr.merged_at < end for pr in records)
    assert [pr.merged_at for pr in records] == sorted(pr.merged_at for pr in records)
    for pr in records:
        real = prs_by_number[pr.number]
        assert (pr.title, pr.author, pr.merged_at) == (real.title, real.author, real.merged_at)
        assert [(f.path, f.status) for f in pr.files] == [(f.path, f.status) for f in real.files[:100]]
        assert all(f.patch is None for f in pr.files)
        assert pr.files_partial == (real.changed_files > 100)
    assert src.history(REPO, start, end, max_prs=250) == records
    assert src.stats.requests == 3
    everything = src.history(REPO, start, end, max_prs=1000)
    in_span = [p for p in prs_by_number.values() if start <= p.merged_at < end]
    assert sorted(p.number for p in everything) == sorted(p.number for p in in_span)
    anonymous = source(fake, sleeps, token=None)
    assert anonymous.history(REPO, start, end) == ()
    assert anonymous.stats.requests == 0


def test_the_etag_cache_keeps_at_most_its_bytes() -> None:
    from bot.sources.github_http import CachedAnswer, MemoryETagCache

    cache = MemoryETagCache(max_bytes=10_000)
    for n in range(100):  # 100 answers of 1 KB: far more than the cache holds
        cache.put(f"GET /x/{n}", CachedAnswer(etag=f'"{n}"', body=b"x" * 1000, link=""))
    assert cache.size_bytes <= 10_000
    assert cache.get("GET /x/99") is not None  # the latest are kept
    assert cache.get("GET /x/0") is None  # the oldest went
    cache.put("GET /huge", CachedAnswer(etag='"h"', body=b"x" * 20_000, link=""))  # larger than it all: not kept
    assert cache.get("GET /huge") is None
