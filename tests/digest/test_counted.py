"""Week over week's earlier windows are analysed without reading descriptions (issue 11: a body is
parsed only where its words are used). What week over week takes from them — PR counts, labels,
hot files, risk kinds and titles — must be the same as with the descriptions read, on every week
of real data: verl with its config, torchtitan and OpenRLHF unconfigured."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from bot.config import Settings
from bot.digest.heuristic import HeuristicAnalyzer
from bot.digest.service import build_digest
from bot.digest.weekly import tally
from bot.digest.window import week_window
from bot.sources.jsonl import SnapshotSource

DATA = ROOT / "tests" / "data"


@pytest.mark.parametrize(("file", "repo", "year"), [
    ("verl-prs.jsonl.gz", "verl-project/verl", 2026),
    ("torchtitan.jsonl.gz", "pytorch/torchtitan", 2025),
    ("openrlhf.jsonl.gz", "OpenRLHF/OpenRLHF", 2025),
])
def test_earlier_windows_count_the_same_without_descriptions(
    file: str, repo: str, year: int, verl_settings: Settings, default_settings: Settings,
) -> None:
    settings = verl_settings if repo == "verl-project/verl" else default_settings
    source = SnapshotSource(Path(DATA / file))
    weeks = 0
    for number in range(1, 53):
        window = week_window(year, number, settings.timezone)
        prs = source.merged_prs(repo, window)
        if not prs:
            continue
        weeks += 1
        read = build_digest(prs, repo=repo, window=window, settings=settings, analyzer=HeuristicAnalyzer())
        counted = build_digest(prs, repo=repo, window=window, settings=settings,
                               analyzer=HeuristicAnalyzer(descriptions=False))
        assert tally(counted, prs) == tally(read, prs), window.name
        assert [p.number for p in counted.prs] == [p.number for p in read.prs]
    assert weeks >= 10
