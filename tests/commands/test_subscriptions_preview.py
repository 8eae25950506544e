"""``prhub subscriptions preview FILTER``: the count of alerts a filter would have sent over the last four weeks
equals the count this test computes from the raw records of the same span (verl's real data, no Redis), and bots
are counted apart (a pseudonym the config names as a bot)."""

from __future__ import annotations

import gzip
import json
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import REAL_DATA, REPO
from typer.testing import CliRunner

from bot.cli import app

UNTIL = date(2026, 4, 19)
FIRST = UNTIL - timedelta(days=27)
ZONE = ZoneInfo("Asia/Shanghai")


def _records() -> list[dict[str, object]]:
    """The raw records merged from FIRST to UNTIL (Shanghai days), read here without the bot's code."""
    out = []
    with gzip.open(REAL_DATA, "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            day = datetime.fromisoformat(str(record["merged_at"])).astimezone(ZONE).date()
            if FIRST <= day <= UNTIL:
                out.append(record)
    return out


def _touches(record: dict[str, object], folder: str) -> bool:
    files = record["files"]
    assert isinstance(files, list)
    return any(str(p).startswith(folder + "/") for f in files for p in (f.get("path"), f.get("previous_path")) if p)


def _preview(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flt: str, *, bots: str = "") -> dict[str, object]:
    config = tmp_path / "prhub.toml"
    config.write_text(f'default_repo = "{REPO}"\ntimezone = "Asia/Shanghai"\n{bots}', encoding="utf-8")
    monkeypatch.setenv("PRHUB_CONFIG", str(config))
    result = CliRunner().invoke(app, ["subscriptions", "preview", flt, "--source", f"jsonl:{REAL_DATA}",
                                      "--until", UNTIL.isoformat(), "--format", "json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert isinstance(found, dict)
    return found


def test_the_count_is_the_one_the_data_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = _records()
    wanted = sorted(int(str(r["number"])) for r in records if _touches(r, "verl/trainer")
                    and not _touches(r, "tests"))
    found = _preview(tmp_path, monkeypatch, "path:verl/trainer -path:tests")
    assert found["prs_read"] == len(records) == 137
    assert found["first"] == FIRST.isoformat()
    assert found["last"] == UNTIL.isoformat()
    assert sorted(found["numbers"]) == wanted  # type: ignore[type-var]
    assert found["alerts"] == len(wanted) > 10
    assert found["from_bots"] == 0
    assert found["bots_left_out"] == 0


def test_bots_are_counted_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = _records()
    authors: dict[str, int] = {}
    for r in records:
        if _touches(r, "verl/trainer"):
            authors[str(r["author"])] = authors.get(str(r["author"]), 0) + 1
    bot, theirs = max(authors.items(), key=lambda kv: kv[1])  # the busiest author of verl/trainer, called a bot
    everyone = sum(authors.values())
    config = f'bots = ["{bot}"]\n'
    left = _preview(tmp_path, monkeypatch, "path:verl/trainer", bots=config)
    assert (left["alerts"], left["bots_left_out"], left["from_bots"]) == (everyone - theirs, theirs, 0)
    named = _preview(tmp_path, monkeypatch, f"path:verl/trainer author:{bot}", bots=config)
    assert (named["alerts"], named["from_bots"], named["bots_left_out"]) == (theirs, theirs, 0)


def test_the_sentence_in_both_languages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "prhub.toml"
    config.write_text(f'default_repo = "{REPO}"\ntimezone = "Asia/Shanghai"\n', encoding="utf-8")
    monkeypatch.setenv("PRHUB_CONFIG", str(config))
    args = ["subscriptions", "preview", "path:verl/trainer", "--source", f"jsonl:{REAL_DATA}", "--until", "2026-04-19"]
    zh = CliRunner().invoke(app, args)
    assert zh.exit_code == 0, zh.output
    assert zh.stdout.startswith("过去四周（03-23 至 04-19，合并 137 个 PR）这个订阅会发出 ")
    assert "条提醒（其中 0 条来自机器人），例如 #" in zh.stdout
    en = CliRunner().invoke(app, [*args, "--lang", "en"])
    assert en.stdout.startswith("In the last four weeks (03-23 to 04-19, 137 PRs merged) this subscription would")
    bad = CliRunner().invoke(app, ["subscriptions", "preview", "colour:red", "--source", f"jsonl:{REAL_DATA}"])
    assert bad.exit_code == 1
    assert "错误" in bad.stderr
    assert "colour" in bad.stderr
    assert "/" + "work" not in bad.stderr
