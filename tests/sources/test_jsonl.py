"""The JSONL snapshot source: real-data facts, format errors with line numbers, and open_source."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import EXAMPLE, REAL_DATA, REPO, SHANGHAI

from bot.digest.window import date_window, week_window
from bot.errors import PRNotFoundError, SnapshotFormatError, SourceError, UnknownRepoError
from bot.models import PullRequest
from bot.sources import PRSource, SnapshotSource, open_source

REAL = REAL_DATA
SH = SHANGHAI


@pytest.fixture(scope="module")
def real(real_source: SnapshotSource) -> SnapshotSource:
    """The shared session source of tests/conftest.py (the full verl history)."""
    return real_source


@pytest.fixture(scope="module")
def everything(all_prs: list[PullRequest]) -> list[PullRequest]:
    return all_prs


def record(number: Any = 2, **changes: Any) -> dict[str, Any]:
    """A valid snapshot record; ``changes`` replace fields (a value of ``...`` removes the field)."""
    base: dict[str, Any] = {
        "repo": "acme/widgets",
        "number": number,
        "title": f"[core] feat: change {number}",
        "body": "",
        "author": "contributor-001",
        "merged_at": "2026-04-15T10:00:00+08:00",
        "authored_at": "2026-04-14T09:00:00+08:00",
        "merge_commit_sha": hashlib.sha1(str(number).encode()).hexdigest(),
        "additions": 3,
        "deletions": 1,
        "changed_files": 1,
        "files": [{"path": "src/a.py", "status": "modified", "additions": 3, "deletions": 1}],
    }
    for key, value in changes.items():
        if value is ...:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def write(path: Path, lines: list[str | dict[str, Any]], *, compress: bool = False) -> Path:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def format_error(path: Path) -> SnapshotFormatError:
    with pytest.raises(SnapshotFormatError) as info:
        SnapshotSource(path).load()
    return info.value


# --- facts of the real data -------------------------------------------------------------------


def test_the_file_holds_one_repository(real: SnapshotSource) -> None:
    assert real.repos() == [REPO]


def test_week_16_in_shanghai_holds_the_reference_39(real: SnapshotSource) -> None:
    prs = real.merged_prs(REPO, week_window(2026, 16, SH))
    numbers = [pr.number for pr in prs]
    assert len(prs) == 39
    assert 6046 in numbers
    assert 6029 in numbers
    expected = {
        json.loads(line)["number"] for line in EXAMPLE.read_text("utf-8").splitlines() if line.strip()
    }
    assert set(numbers) == expected
    # The example is the same 39 records with each file's diff added (from the patch-bearing copy).
    example = SnapshotSource(EXAMPLE).merged_prs(REPO, week_window(2026, 16, SH))
    without_patches = [
        pr.model_copy(update={"files": tuple(f.model_copy(update={"patch": None}) for f in pr.files)}) for pr in example
    ]
    assert without_patches == prs
    assert sum(f.patch is not None for pr in example for f in pr.files) > 0.9 * sum(len(pr.files) for pr in example)


def test_fully_async_routed_experts_prs(real: SnapshotSource) -> None:
    for number in (6046, 6029):
        pr = real.pull_request(REPO, number)
        assert pr.title.startswith("[fully_async]")
        assert "routed_experts" in pr.body


def test_merged_prs_are_in_instant_order_then_number(everything: list[PullRequest]) -> None:
    keys = [(pr.merged_at.astimezone(UTC), pr.number) for pr in everything]
    assert keys == sorted(keys)


def test_record_count_and_2026_in_shanghai(real: SnapshotSource, everything: list[PullRequest]) -> None:
    assert len(everything) == 2883
    # The data README's "1,079 records fall in 2026" counts the ISO year 2026 (2026-W01 starts on
    # Monday 2025-12-29); the calendar year 2026 holds 20 fewer (merged 2025-12-29..31).
    iso_2026 = date_window(date.fromisocalendar(2026, 1, 1), date.fromisocalendar(2026, 53, 7), SH)
    assert len(real.merged_prs(REPO, iso_2026)) == 1079
    assert sum(len(real.merged_prs(REPO, week_window(2026, week, SH))) for week in range(1, 54)) == 1079
    assert len(real.merged_prs(REPO, date_window(date(2026, 1, 1), date(2026, 12, 31), SH))) == 1059
    assert len(real.merged_prs(REPO, date_window(date(2025, 12, 29), date(2025, 12, 31), SH))) == 20


def test_busiest_iso_week_is_2025_w23(real: SnapshotSource, everything: list[PullRequest]) -> None:
    zone = ZoneInfo(SH)
    weeks = Counter(pr.merged_at.astimezone(zone).isocalendar()[:2] for pr in everything)
    (busiest, count), (_, runner_up) = weeks.most_common(2)
    assert busiest == (2025, 23)
    assert count == 63
    assert runner_up < 63
    assert len(real.merged_prs(REPO, week_window(2025, 23, SH))) == 63


def test_empty_bodies_and_the_largest_pr(real: SnapshotSource, everything: list[PullRequest]) -> None:
    assert sum(1 for pr in everything if pr.body == "") == 359
    largest = max(everything, key=lambda pr: pr.changed_files)
    assert largest.number == 4795
    assert largest.changed_files == len(largest.files) == 344
    assert real.pull_request(REPO, 4795) == largest


def test_revert_is_in_the_data(real: SnapshotSource) -> None:
    assert "(#5599)" in real.pull_request(REPO, 7173).title


def test_every_record_survives_a_json_round_trip(everything: list[PullRequest]) -> None:
    for pr in everything:
        again = PullRequest.model_validate_json(pr.model_dump_json())
        assert again == pr
        assert again.merged_at.utcoffset() == pr.merged_at.utcoffset()


def test_binary_files_and_renames_come_through(everything: list[PullRequest]) -> None:
    files = [f for pr in everything for f in pr.files]
    assert any(f.additions is None and f.deletions is None for f in files)
    renamed = [f for f in files if f.status == "renamed"]
    assert renamed
    assert all(f.previous_path for f in renamed)


def test_pull_request_lookups(real: SnapshotSource) -> None:
    pr = real.pull_request(REPO, 6046)
    assert pr.number == 6046
    assert pr.repo == REPO
    assert real.pull_request("Verl-Project/VERL", 6046) == pr  # GitHub names are case-insensitive
    with pytest.raises(PRNotFoundError, match="#999999"):
        real.pull_request(REPO, 999999)
    with pytest.raises(UnknownRepoError) as info:
        real.pull_request("octo/cat", 1)
    assert REPO in str(info.value)


def test_unknown_repo_lists_the_repositories_held(real: SnapshotSource) -> None:
    with pytest.raises(UnknownRepoError, match="'octo/cat'") as info:
        real.merged_prs("octo/cat", week_window(2026, 16, SH))
    assert REPO in str(info.value)


def test_shuffled_file_gives_the_same_answers(tmp_path: Path, real: SnapshotSource) -> None:
    with gzip.open(REAL, "rt", encoding="utf-8") as stream:
        lines = stream.read().splitlines()
    random.Random(16).shuffle(lines)
    shuffled = SnapshotSource(write(tmp_path / "shuffled.jsonl.gz", list(lines), compress=True))
    for window in (
        week_window(2026, 16, SH),
        week_window(2025, 23, SH),
        date_window(date(2026, 1, 1), date(2026, 12, 31), SH),
        date_window(date(2000, 1, 1), date(2100, 12, 31), "UTC"),
    ):
        assert shuffled.merged_prs(REPO, window) == real.merged_prs(REPO, window)
    assert shuffled.pull_request(REPO, 4795) == real.pull_request(REPO, 4795)


# --- format: what is accepted -----------------------------------------------------------------


def test_unknown_fields_are_ignored_and_optional_ones_used(tmp_path: Path) -> None:
    rec = record(
        7,
        future_field={"nested": [1, 2]},
        url="https://example.org/acme/widgets/pull/7",
        labels=["npu", "trainer"],
        reviews=2,
        comments=5,
        files=[
            {
                "path": "src/new.py",
                "status": "renamed",
                "previous_path": "src/old.py",
                "additions": 3,
                "deletions": 1,
                "patch": "@@ -1 +1 @@\n-a\n+b\n",
                "blame": "ignored",
            }
        ],
    )
    pr = SnapshotSource(write(tmp_path / "s.jsonl", [rec])).pull_request("acme/widgets", 7)
    assert pr.url == "https://example.org/acme/widgets/pull/7"
    assert pr.labels == ("npu", "trainer")
    assert (pr.reviews, pr.comments) == (2, 5)
    assert pr.files[0].previous_path == "src/old.py"
    assert pr.files[0].patch == "@@ -1 +1 @@\n-a\n+b\n"
    assert not hasattr(pr, "future_field")


def test_optional_fields_default_when_absent(tmp_path: Path) -> None:
    pr = SnapshotSource(write(tmp_path / "s.jsonl", [record(1)])).pull_request("acme/widgets", 1)
    assert (pr.url, pr.labels, pr.reviews, pr.comments) == (None, (), None, None)
    assert pr.files[0].patch is None


def test_blank_lines_crlf_and_bom_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    body = "\ufeff" + json.dumps(record(1)) + "\r\n\r\n   \r\n" + json.dumps(record(2)) + "\r\n\n"
    path.write_bytes(body.encode("utf-8"))
    source = SnapshotSource(path)
    assert [pr.number for pr in source.merged_prs("acme/widgets", week_window(2026, 16, SH))] == [1, 2]


def test_gzip_is_detected_by_content_not_name(tmp_path: Path) -> None:
    packed = write(tmp_path / "snapshot.data", [record(1)], compress=True)
    plain_named_gz = write(tmp_path / "plain.jsonl.gz", [record(1)])
    for path in (packed, plain_named_gz):
        assert SnapshotSource(path).pull_request("acme/widgets", 1).number == 1


def test_ties_on_the_merge_instant_are_ordered_by_number(tmp_path: Path) -> None:
    same_instant = [
        record(9, merged_at="2026-04-15T02:00:00+00:00"),
        record(3, merged_at="2026-04-15T10:00:00+08:00"),
        record(5, merged_at="2026-04-14T19:00:00-07:00"),
        record(1, merged_at="2026-04-15T09:00:00+08:00"),  # an hour earlier
        record(2, merged_at="2026-04-15T03:00:00+01:00"),  # the same hour as the three above
    ]
    source = SnapshotSource(write(tmp_path / "s.jsonl", list(same_instant)))
    numbers = [pr.number for pr in source.merged_prs("acme/widgets", week_window(2026, 16, SH))]
    assert numbers == [1, 2, 3, 5, 9]


def test_window_edges_against_records(tmp_path: Path) -> None:
    lines: list[str | dict[str, Any]] = [
        record(1, merged_at="2026-04-12T23:59:59.999999+08:00"),
        record(2, merged_at="2026-04-12T16:00:00+00:00"),  # Monday 00:00 in Shanghai
        record(3, merged_at="2026-04-19T08:59:59-07:00"),  # Sunday 23:59:59 in Shanghai
        record(4, merged_at="2026-04-20T00:00:00+08:00"),
    ]
    source = SnapshotSource(write(tmp_path / "s.jsonl", lines))
    assert [pr.number for pr in source.merged_prs("acme/widgets", week_window(2026, 16, SH))] == [2, 3]
    assert source.merged_prs("acme/widgets", week_window(2026, 20, SH)) == []


def test_several_repositories(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl", [record(1), record(1, repo="zeta/tools"), record(2, repo="Acme/Widgets")]
    )
    source = SnapshotSource(path)
    assert source.repos() == ["acme/widgets", "zeta/tools"]
    assert [pr.number for pr in source.merged_prs("ACME/widgets", week_window(2026, 16, SH))] == [1, 2]
    assert source.pull_request("zeta/tools", 1).repo == "zeta/tools"


# --- format: what is rejected, with line numbers ------------------------------------------------


def test_bad_json_on_line_3(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl", [record(1), record(2), '{"repo": "acme/widgets", "number": 3,', record(4)]
    )
    err = format_error(path)
    assert err.line == 3
    assert err.path == str(path)
    assert str(err).startswith(f"{path}:3: not valid JSON")
    assert "\n" not in str(err)


def test_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    err = format_error(write(tmp_path / "s.jsonl", [record(1), "", "  ", "not json"]))
    assert err.line == 4


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (record(merged_at=...), "missing required field `merged_at`"),
        (record(repo=...), "missing required field `repo`"),
        (record(files=...), "missing required field `files`"),
        (record(body=None), "`body` is null"),
        (record(merged_at="2026-04-15T10:00:00"), "`merged_at`: Input should have timezone info"),
        (record(merged_at="yesterday"), "`merged_at`"),
        (record(additions=-5), "`additions`: Input should be greater than or equal to 0 (got -5)"),
        (record(number="12"), "`number`: Input should be a valid integer"),
        (record(number=0), "`number`"),
        (record(changed_files=1.5), "`changed_files`"),
        (record(repo="no-slash"), "`repo`"),
        (record(merge_commit_sha="abc123"), "`merge_commit_sha`: expected 40 hex digits"),
        (record(labels="npu"), "`labels`"),
        (
            record(files=[{"path": "a", "status": "modified", "additions": -1, "deletions": 0}]),
            "`files[0].additions`",
        ),
        (
            record(files=[{"path": "a", "status": "changed", "additions": 1, "deletions": 0}]),
            "`files[0].status`",
        ),
        (
            record(files=[{"path": "a", "status": "modified", "additions": 1}]),
            "`files[0]`: missing required field `deletions`",
        ),
        (
            record(files=[{"path": None, "status": "modified", "additions": 1, "deletions": 0}]),
            "`files[0].path`",
        ),
        (record(files={"path": "a"}), "`files`: expected an array"),
        (record(files=["a.py"]), "`files[0]`: expected an object"),
        ("[1, 2, 3]", "expected a JSON object, got an array"),
        ('"just a string"', "expected a JSON object, got a string"),
    ],
)
def test_bad_records_name_the_field_and_line(tmp_path: Path, line: str | dict[str, Any], reason: str) -> None:
    path = write(tmp_path / "s.jsonl", [record(1), line, record(3)])
    err = format_error(path)
    assert err.line == 2
    assert reason in err.reason
    assert "\n" not in str(err)
    assert str(err) == f"{path}:2: {err.reason}"


def test_naive_merged_at_is_rejected_not_guessed(tmp_path: Path) -> None:
    err = format_error(write(tmp_path / "s.jsonl", [record(1, merged_at="2026-04-15 10:00:00")]))
    assert err.line == 1
    assert "merged_at" in err.reason
    assert "timezone" in err.reason


def test_errors_are_not_skipped_when_a_good_record_follows(tmp_path: Path) -> None:
    source = SnapshotSource(write(tmp_path / "s.jsonl", [record(1), record(2, additions=-1), record(3)]))
    with pytest.raises(SnapshotFormatError):
        source.pull_request("acme/widgets", 1)
    with pytest.raises(SnapshotFormatError):
        source.repos()


def test_duplicate_pr_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [record(1), record(2), "", record(1, title="again")])
    err = format_error(path)
    assert err.line == 4
    assert "duplicate PR acme/widgets#1" in err.reason
    assert "line 1" in err.reason


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(json.dumps(record(1)).encode() + b"\n" + b'{"title": "\xff"}\n')
    err = format_error(path)
    assert err.line == 2
    assert "UTF-8" in err.reason


def test_snapshot_format_error_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError):
        SnapshotSource(write(tmp_path / "s.jsonl", ["nope"])).repos()


# --- file handling ----------------------------------------------------------------------------


def test_missing_file_is_reported_on_first_use(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    source = SnapshotSource(missing)  # lazy: no error yet
    with pytest.raises(SourceError, match=f"snapshot not found: {missing}"):
        source.repos()
    # a failed read is not cached: once the file appears it is read
    write(missing, [record(1)])
    assert source.repos() == ["acme/widgets"]


def test_directory_is_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="directory"):
        SnapshotSource(tmp_path).load()


def test_corrupt_gzip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(
        gzip.compress(b"".join(json.dumps(record(n)).encode() + b"\n" for n in range(1, 50)))[:-20]
    )
    with pytest.raises(SourceError, match="cannot read snapshot") as info:
        SnapshotSource(path).load()
    assert not isinstance(info.value, SnapshotFormatError)


def test_file_is_read_once_and_cached(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [record(1)])
    source = SnapshotSource(path)
    assert source.repos() == ["acme/widgets"]
    path.unlink()
    assert source.pull_request("acme/widgets", 1).number == 1
    assert source.path == path


def test_empty_file_says_it_is_empty(tmp_path: Path) -> None:
    """An empty snapshot is named as such (not blamed on a missing repository or git remote)."""
    path = write(tmp_path / "s.jsonl", [])
    source = SnapshotSource(path)
    for ask in (source.repos, lambda: source.merged_prs("acme/widgets", week_window(2026, 16, SH)),
                lambda: source.pull_request("acme/widgets", 1)):
        with pytest.raises(SourceError, match=f"snapshot {path} is empty: it holds no PR records") as caught:
            ask()
        assert not isinstance(caught.value, UnknownRepoError)


# --- open_source --------------------------------------------------------------------------------


def test_open_source_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [record(1)])
    source = open_source(f"jsonl:{path}")
    assert isinstance(source, SnapshotSource)
    assert isinstance(source, PRSource)
    assert source.path == path
    assert source.repos() == ["acme/widgets"]


def test_open_source_is_lazy() -> None:
    source = open_source("jsonl:/definitely/not/here.jsonl")
    with pytest.raises(SourceError, match="snapshot not found"):
        source.repos()


@pytest.mark.parametrize(
    "spec", ["", "git:", "githubx", "tests/data/verl-prs.jsonl.gz", "http://x", "csv:a.csv"]
)
def test_open_source_rejects_unknown_specs(spec: str) -> None:
    with pytest.raises(SourceError) as info:
        open_source(spec)
    message = str(info.value)
    assert "jsonl:PATH" in message
    assert "github" in message
    assert "git:PATH" in message
    assert "\n" not in message


@pytest.mark.parametrize("spec", ["jsonl:", "jsonl:   "])
def test_open_source_needs_a_path(spec: str) -> None:
    with pytest.raises(SourceError, match="no path"):
        open_source(spec)


def _protocol_user(source: PRSource) -> Iterator[int]:
    yield from (pr.number for pr in source.merged_prs(REPO, week_window(2026, 16, SH)))


def test_snapshot_source_satisfies_the_protocol_statically(real: SnapshotSource) -> None:
    assert sum(1 for _ in _protocol_user(real)) == 39
