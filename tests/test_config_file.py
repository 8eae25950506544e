"""prhub.toml's keys checked at every level with their line (bot/config_file.py), `prhub config check` / `init`, and
`--config FILE` honoured by every command (each reads that file: a bad one stops each with its line)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from bot.cli import app
from bot.config import check_config, load_settings
from bot.config_file import key_lines, locate
from bot.errors import ConfigError

TYPOS = '''timezon = "Asia/Shanghai"
language = "zh"

[repositories."verl-project/verl"]
key_pr_bar = 6
core_paths = [
    "a/**",   # a comment with ] and = in it
    "b",
]
aliases = { ascend = "npu" }
notes = """a multi-line string
[channels.fake] = 1
"""

[[repositories."verl-project/verl".label_rules]]
label = "a"

[[repositories."verl-project/verl".label_rules]]
lable = "b"

[channels."slack:C1"]
repo = "o/n"
psuh = "mon 10:00"

[[subscriptions]]
subscriber = "slack:C1"
filtr = "npu"

[defaults]
key_pr_barr = 7

[feishu_webhooks.team]
url = "https://open.feishu.cn/open-apis/bot/v2/hook/x"
secrt = "s"
'''


def test_key_lines_reads_tables_arrays_dotted_keys_and_skips_values_that_span_lines() -> None:
    lines = key_lines(TYPOS)
    assert lines[("timezon",)] == 1
    assert lines[("repositories", "verl-project/verl")] == 4
    assert lines[("repositories", "verl-project/verl", "aliases")] == 10
    assert lines[("repositories", "verl-project/verl", "notes")] == 11
    assert ("channels", "fake") not in lines  # inside the multi-line string
    assert lines[("repositories", "verl-project/verl", "label_rules", 0, "label")] == 16
    assert lines[("repositories", "verl-project/verl", "label_rules", 1, "lable")] == 19
    assert lines[("channels", "slack:C1", "psuh")] == 23
    assert lines[("subscriptions", 0, "filtr")] == 27
    assert locate(lines, ("repositories", "verl-project/verl", "aliases", "ascend")) == (
        ("repositories", "verl-project/verl", "aliases"), 10)  # an inline table's keys sit on its line
    assert key_lines('a.b = 1\n[x]\n"quoted key" = 2\n') == {("a",): 1, ("a", "b"): 1, ("x",): 2,
                                                               ("x", "quoted key"): 3}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_unknown_keys_at_every_level_are_named_with_their_line(tmp_path: Path, language: str) -> None:
    path = tmp_path / "prhub.toml"
    path.write_text(TYPOS.replace('notes = """a multi-line string\n[channels.fake] = 1\n"""\n', ""),
                    encoding="utf-8")
    lines = [p.render(path, language) for p in check_config(path)]
    if language == "en":
        assert lines == [
            f"{path}:1: unknown key 'timezon' (did you mean 'timezone'?)",
            f"{path}:15: repositories.\"verl-project/verl\".label_rules[1].label: field required",
            f"{path}:16: unknown key 'lable' in repositories.\"verl-project/verl\".label_rules[1] (did you mean "
            "'label'?)",
            f"{path}:20: unknown key 'psuh' in channels.\"slack:C1\" (did you mean 'push'?)",
            f"{path}:24: unknown key 'filtr' in subscriptions[0] (did you mean 'filter'?)",
            f"{path}:27: unknown key 'key_pr_barr' in defaults (did you mean 'key_pr_bar'?)",
            f"{path}:31: unknown key 'secrt' in feishu_webhooks.team (did you mean 'secret'?)",
        ]
    else:
        assert lines[0] == f"{path}:1：没有 'timezon' 这个键（是不是 'timezone'？）"
        assert f"{path}:24：subscriptions[0] 里没有 'filtr' 这个键（是不是 'filter'？）" in lines
    numbers = [int(line.split(":", 2)[1].split("：")[0]) for line in lines]
    assert numbers == sorted(numbers)


def test_a_command_stops_at_the_first_problem_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "prhub.toml"
    path.write_text('language = "en"\ntimezon = "UTC"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(config=path)
    assert str(caught.value) == f"{path}:2: unknown key 'timezon' (did you mean 'timezone'?)"
    assert caught.value.message("zh") == f"{path}:2：没有 'timezon' 这个键（是不是 'timezone'？）"
    path.write_text('[channels."slack:C1"]\npush = "someday"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r":2: channels\.\"slack:C1\"\.push: "):
        load_settings(config=path)
    path.write_text('timezone = "UTC\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r":1: not valid TOML: .* at column \d+$"):
        load_settings(config=path)


def test_config_check_and_init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    made = runner.invoke(app, ["config", "init", "--repo", "acme/rocket", "--channel", "slack:C0123", "--lang", "en"])
    assert made.exit_code == 0, made.stderr
    assert made.stderr.startswith("wrote prhub.toml: repositories acme/rocket; 1 channel(s) bound, 1 with a weekly "
                                  "push; default_repo acme/rocket")
    settings = load_settings(config=tmp_path / "prhub.toml")
    assert settings.channel("slack:C0123").repo == "acme/rocket"
    again = runner.invoke(app, ["config", "init", "--repo", "acme/rocket", "--lang", "en"])
    assert again.exit_code == 2
    assert again.stderr.strip() == "error: prhub.toml exists: nothing written (--force overwrites it)"
    ok = runner.invoke(app, ["config", "check", "--lang", "en"])
    assert ok.exit_code == 0
    assert ok.stdout.startswith("prhub.toml: ok — repositories acme/rocket")
    (tmp_path / "prhub.toml").write_text('timezon = "UTC"\n[channels."slack:C1"]\npsuh = "mon 10:00"\n',
                                         encoding="utf-8")
    bad = runner.invoke(app, ["config", "check", "--lang", "en"])
    assert bad.exit_code == 1
    assert bad.stderr.splitlines() == [
        "error: prhub.toml:1: unknown key 'timezon' (did you mean 'timezone'?)",
        "error: prhub.toml:3: unknown key 'psuh' in channels.\"slack:C1\" (did you mean 'push'?)"]
    shipped = runner.invoke(app, ["config", "check", "--config", str(ROOT / "prhub.toml"), "--lang", "en"])
    assert shipped.exit_code == 0, shipped.stderr


@pytest.mark.parametrize("command", [
    ["digest", "--source", "jsonl:x.jsonl"], ["pr", "1", "--source", "jsonl:x.jsonl"],
    ["export", "--source", "jsonl:x.jsonl"], ["serve"], ["push", "--channel", "slack:C1"], ["alerts", "--once"],
    ["subscriptions"], ["subscriptions", "import", "x.json"], ["subscriptions", "log"], ["worker"],
    ["worker", "--status"], ["config", "check"],
])
def test_every_command_reads_the_file_config_names(command: list[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command reads --config FILE (and PRHUB_CONFIG): a file with a typo stops it with that file's line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prhub.toml").write_text('language = "en"\n', encoding="utf-8")  # the file it must NOT read
    named = tmp_path / "team.toml"
    named.write_text('language = "en"\n\n[repositories."o/n"]\ncore_path = ["src/**"]\n', encoding="utf-8")
    expected = f"error: {named}:4: unknown key 'core_path' in repositories.\"o/n\" (did you mean 'core_paths'?)"
    result = CliRunner().invoke(app, [*command, "--config", str(named)])
    assert result.exit_code == 1, result.stderr
    assert result.stderr.strip() == expected
    monkeypatch.setenv("PRHUB_CONFIG", str(named))
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 1
    assert result.stderr.strip() == expected
