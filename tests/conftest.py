"""Shared fixtures: the real verl PR records shipped in tests/data and the project's own prhub.toml; and the
guard that fails any test reaching past 127.0.0.1 / ::1 (:mod:`network_guard`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import network_guard
import pytest

network_guard.install()  # before any test module (or the bot) opens a socket
# No test reads a developer's ./.env (prhub reads one at start, as docker compose does); the test of the .env
# itself names its file.
os.environ["PRHUB_ENV_FILE"] = ""

from bot.config import Settings, load_settings  # noqa: E402
from bot.digest.window import date_window, week_window  # noqa: E402
from bot.models import Digest, PullRequest  # noqa: E402
from bot.sources.jsonl import SnapshotSource  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL_DATA = ROOT / "tests" / "data" / "verl-prs.jsonl.gz"
EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"
REPO = "verl-project/verl"
SHANGHAI = "Asia/Shanghai"
FIXED_NOW = datetime(2026, 4, 20, 1, 3, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _only_loopback_network() -> Iterator[None]:
    """Fail the test if it (or a thread it started) tried to connect outside the loopback addresses."""
    since = network_guard.mark()
    yield
    network_guard.check(since)


@pytest.fixture(scope="session")
def real_source() -> SnapshotSource:
    """Every merged PR of verl up to 2026-08-22 (2,883 records)."""
    return SnapshotSource(REAL_DATA)


@pytest.fixture(scope="session")
def all_prs(real_source: SnapshotSource) -> list[PullRequest]:
    return real_source.merged_prs(REPO, date_window(date(2000, 1, 1), date(2100, 12, 31), "UTC"))


@pytest.fixture(scope="session")
def prs_by_number(all_prs: list[PullRequest]) -> dict[int, PullRequest]:
    return {pr.number: pr for pr in all_prs}


def _settings(config: Path | None) -> Settings:
    mp = pytest.MonkeyPatch()
    try:
        if config is None:
            mp.delenv("PRHUB_CONFIG", raising=False)
            mp.chdir(ROOT / "tests")  # no prhub.toml there: the shipped defaults alone
        else:
            mp.setenv("PRHUB_CONFIG", str(config))
        return load_settings()
    finally:
        mp.undo()


@pytest.fixture(scope="session")
def verl_settings() -> Settings:
    """Settings from the repository's own prhub.toml (verl's label rules and core paths)."""
    return _settings(ROOT / "prhub.toml")


@pytest.fixture(scope="session")
def default_settings() -> Settings:
    """Settings with no config file: the shipped default rules only."""
    return _settings(None)


@pytest.fixture(scope="session")
def w16_digest(real_source: SnapshotSource, verl_settings: Settings) -> Digest:
    from bot.digest.service import build_digest

    window = week_window(2026, 16, SHANGHAI)
    return build_digest(real_source.merged_prs(REPO, window), repo=REPO, window=window,
                        settings=verl_settings, now=FIXED_NOW)


@pytest.fixture
def no_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Run in an empty directory with no PRHUB_* variables."""
    for name in ("PRHUB_CONFIG", "PRHUB_TIMEZONE", "PRHUB_LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path
