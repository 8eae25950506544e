"""Label rules: title modules, path globs and words, keywords, aliases, and the real week 2026-W16."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import REPO

from bot.config import LabelRule, RepoConfig, Settings
from bot.digest.labels import OTHER, Labeler, count_labels, subject, title_modules, words
from bot.digest.window import week_window
from bot.models import FileChange, PullRequest
from bot.sources.jsonl import SnapshotSource


def pr(title: str, *paths: str, labels: tuple[str, ...] = (), lines: int = 10) -> PullRequest:
    return PullRequest(
        repo="o/r", number=1, title=title, merged_at=datetime(2026, 4, 14, tzinfo=UTC), labels=labels,
        files=tuple(FileChange(path=p, status="modified", additions=lines, deletions=0) for p in paths),
    )


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("[trainer, rollout] fix: x", ["trainer", "rollout"]),
        ("[5/n][trainer] feat: flowgrpo trainer", ["trainer"]),
        ("[BREAKING][fsdp, megatron] feat: dynamic batching", ["fsdp", "megatron"]),
        ("[fully_async]fix: no space", ["fully_async"]),
        ("[trainer,algo] feat: x", ["trainer", "algo"]),
        ("feat(api): add endpoint", ["api"]),
        ("fix(api, CLI)!: breaking", ["api", "cli"]),
        ("Revert \"[megatron] fix: Qwen3.5 LoRA (#5599)\"", []),
        ("plain title without modules", []),
        ("[WIP] [Doc] chore: x", ["doc"]),
    ],
)
def test_title_modules(title: str, expected: list[str]) -> None:
    assert title_modules(title) == expected


def test_words_split_paths_on_separators_and_case() -> None:
    assert words("verl/experimental/fully_async_policy/FullyAsyncRollouter.py") == [
        "verl", "experimental", "fully", "async", "policy", "fully", "async", "rollouter", "py"
    ]


def test_subject_drops_modules_and_type() -> None:
    assert subject("[5/n][trainer] feat: flowgrpo trainer") == "flowgrpo trainer"
    assert subject("feat(api)!: x") == "x"
    assert subject("no prefix") == "no prefix"


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("docs/advance/mtp.md", "doc"),
        ("README.md", "doc"),
        (".github/workflows/e2e.yml", "ci"),
        ("docker/Dockerfile.stable.vllm", "docker"),
        ("Dockerfile", "docker"),
        ("deploy/Dockerfile.gpu", "docker"),
        ("examples/grpo_trainer/run_qwen2_5_vl_7b_npu.sh", "npu"),
        ("docs/ascend_tutorial/quick_start.rst", "npu"),
        ("verl/trainer/main_ppo.py", "trainer"),
        ("verl/experimental/fully_async_policy/fully_async_rollouter.py", "rollout"),
        ("verl/models/mcore/patch.py", "megatron"),
    ],
)
def test_default_path_rules(default_settings: Settings, path: str, label: str) -> None:
    labeler = Labeler(default_settings.repo("o/r"))
    assert label in labeler.labels(pr("chore: something", path))


def test_nothing_matches_gives_other(default_settings: Settings) -> None:
    assert Labeler(default_settings.repo("o/r")).labels(pr("tidy up", "src/app/util.py")) == (OTHER,)


def test_github_labels_and_aliases_are_canonical(default_settings: Settings) -> None:
    labeler = Labeler(default_settings.repo("o/r"))
    assert labeler.labels(pr("[Docs, Ascend] chore: x", "a.py", labels=("Performance",)))[:3] == (
        "perf", "doc", "npu"
    )


def test_title_keyword_rule(default_settings: Settings) -> None:
    labeler = Labeler(default_settings.repo("o/r"))
    assert "npu" in labeler.labels(pr("add example script for NPU", "examples/run.sh"))
    # a word inside another word is not a keyword hit
    assert "ci" not in labeler.labels(pr("fix precision bug", "src/a.py"))


def test_path_rules_need_a_share_of_the_pr(default_settings: Settings) -> None:
    """A rename touching 20 files, one of them a Dockerfile, is not a docker PR."""
    labeler = Labeler(default_settings.repo("o/r"))
    paths = [f"src/mod{i}.py" for i in range(19)] + ["docker/Dockerfile"]
    assert "docker" not in labeler.labels(pr("rename project", *paths))
    assert "docker" in labeler.labels(pr("rename project", *paths[:2], "docker/Dockerfile"))


def test_repository_rules_add_to_defaults() -> None:
    config = Settings(repositories={"o/r": RepoConfig(
        label_rules=(LabelRule(label="fully_async", tokens=("fully_async",)),), aliases={"ascend": "hw"})})
    labeler = Labeler(config.repo("o/r"))
    labels = labeler.labels(pr("[ascend] fix: x", "verl/fully_async_policy/a.py", "docs/x.md"))
    assert labels == ("hw", "doc", "fully_async")


def test_real_week_labels_side_by_side(real_source: SnapshotSource, verl_settings: Settings) -> None:
    """2026-W16 with verl's prhub.toml, next to the reference report's counts.

    reference: trainer 18, rollout 13, npu 11, docker 5, fully_async 6, ci 9, doc 5, megatron 4;
    title modules alone: trainer 7, rollout 5.
    """
    prs = real_source.merged_prs(REPO, week_window(2026, 16, "Asia/Shanghai"))
    labeler = Labeler(verl_settings.repo(REPO))
    counts = count_labels(labeler.labels(p) for p in prs)
    modules = count_labels(tuple(labeler.canonical(m) for m in title_modules(p.title)) for p in prs)
    assert (modules["trainer"], modules["rollout"]) == (7, 5)
    assert {k: counts[k] for k in ("trainer", "rollout", "npu", "docker", "fully_async", "ci", "doc")} == {
        "trainer": 13, "rollout": 12, "npu": 14, "docker": 5, "fully_async": 6, "ci": 8, "doc": 5,
    }
    assert all(labeler.labels(p) for p in prs)
    by_number = {p.number: labeler.labels(p) for p in prs}
    assert {"fully_async", "rollout"} <= set(by_number[6046])
    assert {"fully_async", "rollout"} <= set(by_number[6029])
