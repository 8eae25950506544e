"""The digest's words, read as a reader would: golden texts of two judged weeks in both languages, and the measures
of ``bench/eval_prose.py`` on them (nothing pasted from descriptions, the reader's language, highlights that name
what changed and why, chat replies of one screen, no internals in chat).

The goldens are verl 2026-W16 (descriptions, a busy week) and axolotl 2026-W11 (squash commits without
descriptions). Regenerate after an intended change with ``PRHUB_UPDATE_GOLDEN=1 pytest tests/digest/test_words.py``
and read the diff.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden_words"
WEEKS = ("verl-2026-W16", "axolotl-2026-W11")
LANGUAGES = ("zh", "en")


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_prose", ROOT / "bench" / "eval_prose.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


@pytest.fixture(scope="module")
def built(bench: ModuleType) -> dict[tuple[str, str], tuple[Any, list[Any]]]:
    out = {}
    for week in WEEKS:
        table = tomllib.loads((ROOT / "tests" / "data" / "judged" / f"{week}.toml").read_text(encoding="utf-8"))
        for language in LANGUAGES:
            out[week, language] = asyncio.run(bench._digest(table, ROOT / "tests" / "data", language))
    return out


def words_text(digest: Any) -> str:
    """The digest's words as a reader reads them, section by section."""
    parts = [f"# {digest.repo} {digest.window.name} ({digest.language})", "", "## Headline", "", digest.headline, "",
             "## Executive summary", "", digest.executive_summary, "", "## Highlights", "",
             *(f"- {h}" for h in digest.highlights), "", "## Key changes", "", *(f"- {k}" for k in digest.key_changes),
             "", "## Suggestions", "", *(f"- {s}" for s in digest.suggestions)]
    return "\n".join(parts) + "\n"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("week", WEEKS)
def test_golden_words(built: dict[tuple[str, str], tuple[Any, list[Any]]], week: str, language: str) -> None:
    digest, _ = built[week, language]
    actual = words_text(digest)
    path = GOLDEN / f"{week}-{language}.md"
    if os.environ.get("PRHUB_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with PRHUB_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("week", WEEKS)
def test_words_are_a_readers(bench: ModuleType, built: dict[tuple[str, str], tuple[Any, list[Any]]], week: str,
                             language: str) -> None:
    digest, prs = built[week, language]
    figures = bench.measure(digest, prs)
    assert figures["copy"] <= 0.05, figures["copied_lines"]
    if language == "zh":
        assert figures["foreign"] <= 0.10
    assert figures["names"] >= 0.80
    assert figures["card_chars"] <= 2500
    assert figures["feishu_chars"] <= 2500
    assert figures["pr_max_chars"] <= 1200
    assert figures["internals"] == []


def test_the_verl_week_s_threads_are_named(built: dict[tuple[str, str], tuple[Any, list[Any]]]) -> None:
    """verl 2026-W16: the synchronous PPO trainer work, the routed-experts fixes in fully-async rollout, the
    organisation rename and the NPU and CI work, each with its PRs."""
    summary = built["verl-2026-W16", "en"][0].executive_summary
    opening = summary.split(". ", 1)[0]
    for thread in ("`main_ppo_sync.py`", "routed_experts on partial rollout resume", "volcengine -> verl", "npu",
                   "ci"):
        assert thread in opening, thread
    sentences = summary.split(". ")
    sync = next(s for s in sentences if s.startswith("The trainer work on `main_ppo_sync.py`"))
    assert all(f"#{n}" in sync for n in (5969, 6016, 5997, 6039))
    fixes = next(s for s in sentences if "routed_experts" in s and "#6029" in s)
    assert "#6046" in fixes
    assert any("#6053" in s for s in sentences)
    zh = built["verl-2026-W16", "zh"][0].executive_summary
    assert zh.startswith("本周的主线是：")


def test_advice_names_a_pr_and_its_fact(built: dict[tuple[str, str], tuple[Any, list[Any]]]) -> None:
    for (_week, language), (digest, _prs) in built.items():
        default = "没有突出的风险" if language == "zh" else "No notable risks"
        for line in digest.suggestions:
            if default in line:
                continue
            assert line.startswith("#"), line
            assert "`" in line or "#" in line[1:], line  # the fact: a name, a file or the other PR


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_chat_card_of_long_words_stays_one_screen(bench: ModuleType,
                                                    built: dict[tuple[str, str], tuple[Any, list[Any]]],
                                                    language: str) -> None:
    """Titles and highlights far longer than any judged week's: whole highlights (beyond three) and key PRs are
    left to the full report (never a line cut) until the chat card holds ≤ 2,500 characters, and its key-PR
    heading counts what it shows."""
    digest, _ = built["verl-2026-W16", language]
    long_title = "refactor the rollout worker's weight synchronisation " * 5  # 265 characters
    prs = tuple(pr.model_copy(update={"title": f"{pr.title} {long_title}"}) for pr in digest.prs)
    highlights = tuple(f"{h} {'and the same again at length; ' * 6}" for h in digest.highlights)
    heavy = digest.model_copy(update={"prs": prs, "highlights": highlights})
    sizes = bench.chat_sizes(heavy)
    assert sizes["card_chars"] <= 2500, sizes
    assert sizes["feishu_chars"] <= 2500, sizes
    from bot.cards._outline import SLACK, card_outline

    sections = {s.key: s for s in card_outline(heavy, SLACK, chat=True)}
    shown = len(sections["top_key_prs"].items)
    assert 1 <= shown < min(5, len(heavy.key_prs))
    assert f"{shown}" in sections["top_key_prs"].title
    assert f"{len(heavy.key_prs)}" in sections["top_key_prs"].title
    assert all(long_title.strip() in item for item in sections["top_key_prs"].items)  # whole, never cut
