"""The README's sample digest is what the README's first command prints today."""

from __future__ import annotations

import re

from conftest import ROOT
from typer.testing import CliRunner

from bot.cli import app

_GENERATED = re.compile(r"生成于 \d{4}-\d{2}-\d{2} \d{2}:\d{2}")


def test_readme_sample_matches_the_digest(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PRHUB_CONFIG", str(ROOT / "prhub.toml"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sample = readme.split("````markdown\n", 1)[1].split("\n## 完整周报", 1)[0]
    five_weeks = ROOT / "examples" / "verl-2026-W12-W16.jsonl.gz"  # the README's first command reads it
    assert f"--source jsonl:examples/{five_weeks.name} " in readme
    result = CliRunner().invoke(app, ["digest", "--source", f"jsonl:{five_weeks}", "--repo", "verl-project/verl",
                                      "--week", "2026-W16"])
    assert result.exit_code == 0, result.stderr
    printed = result.stdout.split("\n## 完整周报", 1)[0]
    assert _GENERATED.sub("生成于 …", sample) == _GENERATED.sub("生成于 …", printed), (
        "README.md's sample is stale: regenerate it from the README's first command")
