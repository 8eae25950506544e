"""Helpers of the page, chart and week-over-week tests: the shipped five-week example, its
W16 digest compared with W12–W15, and Debian's Chromium driven by Playwright.

Without Chromium a browser test fails when ``CI=true`` (scripts/test installs it) and is
skipped otherwise.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.cards.pdf import BROWSER_FLAGS
from bot.config import Settings
from bot.digest.history import read_earlier
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.models import Digest, Language
from bot.sources.jsonl import SnapshotSource

ROOT = Path(__file__).resolve().parents[1]
FIVE_WEEKS = ROOT / "examples" / "verl-2026-W12-W16.jsonl.gz"
REPO = "verl-project/verl"
AXOLOTL = ROOT / "tests" / "data" / "axolotl.jsonl.gz"
AXOLOTL_REPO = "axolotl-ai-cloud/axolotl"


def compared_w16(settings: Settings, language: Language = "zh") -> Digest:
    """verl 2026-W16 from the five-week example, with week over week against W12–W15."""
    from datetime import UTC, datetime

    source = SnapshotSource(FIVE_WEEKS)
    window = week_window(2026, 16, "Asia/Shanghai")
    return build_digest(source.merged_prs(REPO, window), repo=REPO, window=window, settings=settings,
                        language=language, now=datetime(2026, 4, 20, 1, 3, tzinfo=UTC),
                        lookback=read_earlier(source, REPO, window))


def quiet_axolotl(settings: Settings, language: Language = "zh") -> Digest:
    """axolotl 2026-W11: a quiet week (7 PRs, none key) of PRs mostly without descriptions, compared with
    the eleven weeks before (the snapshot covers them all)."""
    from datetime import UTC, datetime

    source = SnapshotSource(AXOLOTL)
    window = week_window(2026, 11, "Asia/Shanghai")
    return build_digest(source.merged_prs(AXOLOTL_REPO, window), repo=AXOLOTL_REPO, window=window,
                        settings=settings, language=language, now=datetime(2026, 3, 16, 1, 3, tzinfo=UTC),
                        lookback=read_earlier(source, AXOLOTL_REPO, window))


def chromium_path() -> str:
    """Debian's Chromium (fail in CI when missing, skip elsewhere)."""
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is required in CI (scripts/test installs it with apt-get)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


@contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium (Playwright) with a fresh profile and no network services."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with tempfile.TemporaryDirectory(prefix="prhub-browser-") as profile, sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True,
            args=[flag for flag in BROWSER_FLAGS if flag != "--headless"], viewport={"width": 1200, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()
