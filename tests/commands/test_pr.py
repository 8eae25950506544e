"""``prhub pr N``: the forms of N, the formats, one-line errors with exit code 1, a clean stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cards.card_checks import check_feishu, check_slack
from conftest import EXAMPLE, REAL_DATA, ROOT
from typer.testing import CliRunner

from bot.cli import app
from bot.commands.pr import parse_pr_ref
from bot.errors import PrhubError
from bot.models import DigestPR

runner = CliRunner()
SOURCE = ["--source", f"jsonl:{EXAMPLE}"]


@pytest.fixture(autouse=True)
def _verl_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRHUB_CONFIG", str(ROOT / "prhub.toml"))
    monkeypatch.delenv("PRHUB_LANGUAGE", raising=False)
    monkeypatch.delenv("PRHUB_TIMEZONE", raising=False)


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_markdown_answer_for_a_number() -> None:
    code, out, err = run("pr", "6046", *SOURCE)
    assert code == 0, err
    assert out.startswith("# PR #6046 · 值得精读\n")
    for part in ("结论：值得精读", "## 做了什么", "## 风险", "## 从哪里开始读", "## 关键点", "## 标签", "## 分析说明"):
        assert part in out
    assert "[#6046](https://github.com/verl-project/verl/pull/6046)" in out
    assert "合并于 2026-04-17" in out  # the configured zone, Asia/Shanghai
    summary = f"verl-project/verl #6046: close_read (heuristic) · config {ROOT / 'prhub.toml'}"
    assert err.strip().splitlines() == [summary]


@pytest.mark.parametrize("ref", ["#6046", " 6046 ", "https://github.com/verl-project/verl/pull/6046",
                                 "https://github.com/Verl-Project/VERL/pull/6046/files?w=1"])
def test_number_hash_and_url_forms_give_the_same_answer(ref: str) -> None:
    expected = run("pr", "6046", *SOURCE)[1]
    code, out, err = run("pr", ref, *SOURCE)
    assert code == 0, err
    assert out == expected


def test_url_from_another_repository_than_repo_is_an_error() -> None:
    code, out, err = run("pr", "https://github.com/o/n/pull/6046", *SOURCE, "--repo", "verl-project/verl",
                         "--lang", "en")
    assert code == 2
    assert out == ""
    assert err.strip() == "error: the URL names o/n but --repo says verl-project/verl"
    code, out, err = run("pr", "https://github.com/o/n/pull/6046", *SOURCE, "--repo", "verl-project/verl")
    assert err.strip() == "错误：地址里的仓库是 o/n，但 --repo 是 verl-project/verl"


def test_url_repository_unknown_to_the_source() -> None:
    code, out, err = run("pr", "https://github.com/o/n/pull/6046", *SOURCE, "--lang", "en")
    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error: unknown repository 'o/n'")


def test_unknown_number_is_one_line_exit_1_and_no_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.digest.service import DigestService

    async def no_analysis(*args: object, **kwargs: object) -> DigestPR:
        raise AssertionError("analysed a PR that does not exist")

    monkeypatch.setattr(DigestService, "pr", no_analysis)
    code, out, err = run("pr", "#99999", *SOURCE, "--lang", "en")
    assert code == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: PR #99999 not found in this source (")
    assert lines[0].endswith(")")


@pytest.mark.parametrize("ref", ["abc", "#", "0", "https://github.com/o/n/issues/1", "-5x"])
def test_unreadable_reference_is_one_line(ref: str) -> None:
    code, out, err = run("pr", *SOURCE, "--", ref)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("错误：")


def test_source_or_repo_is_required(no_config: Path) -> None:
    code, out, err = run("pr", "6046", "--lang", "en")
    assert (code, out) == (2, "")
    assert err.strip().startswith("error: --source or --repo is required: --source takes github")


def test_config_defaults_stand_in_for_source_and_repo(no_config: Path) -> None:
    """`default_source` / `default_repo` in prhub.toml are the CLI's defaults too."""
    (no_config / "prhub.toml").write_text(
        f'default_source = "jsonl:{EXAMPLE}"\ndefault_repo = "verl-project/verl"\n', encoding="utf-8")
    code, out, err = run("pr", "6046")
    assert code == 0, err
    assert "PR #6046" in out
    digest = CliRunner().invoke(app, ["digest", "--week", "2026-W16", "--format", "json"])
    assert digest.exit_code == 0, digest.stderr
    assert '"pr_count": 39' in digest.stdout


def test_json_format_is_the_digest_pr_model() -> None:
    code, out, _ = run("pr", "5951", *SOURCE, "--format", "json")
    assert code == 0
    item = DigestPR.model_validate_json(out)
    assert item.number == 5951
    assert item.analysis is not None
    assert item.analysis.risks


def test_same_analysis_as_the_week_digest() -> None:
    code, out, _ = run("digest", *SOURCE, "--repo", "verl-project/verl", "--week", "2026-W16", "--format", "json")
    assert code == 0
    digest_entry = next(p for p in json.loads(out)["prs"] if p["number"] == 6029)
    code, out, _ = run("pr", "6029", *SOURCE, "--format", "json")
    assert code == 0
    assert json.loads(out) == digest_entry


def test_slack_and_feishu_formats(caplog: pytest.LogCaptureFixture) -> None:
    code, out, _ = run("pr", "5951", *SOURCE, "--format", "slack", "--lang", "en")
    assert code == 0
    message = json.loads(out)
    check_slack([message], caplog)
    assert message["blocks"][0]["text"]["text"] == "PR #5951 · worth a close read"
    code, out, _ = run("pr", "5951", *SOURCE, "--format", "feishu")
    assert code == 0
    card = json.loads(out)
    check_feishu([card])
    assert card["header"]["title"]["content"] == "PR #5951 · 值得精读"


def test_english_answer() -> None:
    code, out, _ = run("pr", "6029", *SOURCE, "--lang", "en")
    assert code == 0
    assert out.startswith("# PR #6029 · worth a close read\n")
    assert "## Where to start" in out


def test_full_snapshot_and_a_revert() -> None:
    code, out, err = run("pr", "7173", "--source", f"jsonl:{REAL_DATA}")
    assert code == 0, err
    assert "回滚" in out
    assert "#5599" in out


def test_out_file_keeps_stdout_empty(tmp_path: Path) -> None:
    target = tmp_path / "answer.md"
    code, out, err = run("pr", "6046", *SOURCE, "--out", str(target))
    assert code == 0
    assert out == ""
    assert target.read_text(encoding="utf-8").startswith("# PR #6046")
    assert err.startswith(f"wrote {target} · verl-project/verl #6046")


def test_out_file_that_cannot_be_written(tmp_path: Path) -> None:
    code, out, err = run("pr", "6046", *SOURCE, "--out", str(tmp_path / "missing" / "a.md"))
    assert (code, out) == (1, "")
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("错误：无法写入 ")


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("6046", (None, 6046)),
        ("#6046", (None, 6046)),
        ("https://github.com/verl-project/verl/pull/6046", ("verl-project/verl", 6046)),
        ("http://git.example.com/team/app/-/merge_requests/12#note_3", ("team/app", 12)),
    ],
)
def test_parse_pr_ref(ref: str, expected: tuple[str | None, int]) -> None:
    assert parse_pr_ref(ref) == expected


def test_parse_pr_ref_rejects_garbage() -> None:
    with pytest.raises(PrhubError, match="expected a number"):
        parse_pr_ref("PR six thousand")


def test_reference_sample_is_the_real_output() -> None:
    """The reference's `prhub pr` sample (docs/reference.md) is exactly what the command prints (so it cannot go
    stale)."""
    readme = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    section = readme[readme.index("### `prhub pr`"):]
    command = "prhub pr 6046 --source jsonl:examples/verl-2026-W16.jsonl"
    assert command in section
    sample = section[section.index("````markdown\n") + len("````markdown\n"):section.index("````\n", 20)]
    code, out, _ = run("pr", "6046", *SOURCE)
    assert code == 0
    assert out == sample
