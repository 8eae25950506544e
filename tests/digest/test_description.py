"""Reading PR descriptions: what tools and templates add is removed before a summary sentence is
chosen (real bodies from tests/data/torchtitan.jsonl.gz, and bodies written here)."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

import pytest

from bot.digest.description import parse_description, repeats_title, strip_boilerplate

DATA = Path(__file__).parents[1] / "data"


@cache
def _torchtitan() -> dict[int, dict[str, str]]:
    with gzip.open(DATA / "torchtitan.jsonl.gz", "rt", encoding="utf-8") as lines:
        return {r["number"]: r for r in map(json.loads, lines)}


def _first(number: int) -> str | None:
    record = _torchtitan()[number]
    return parse_description(record["body"], record["title"]).first_paragraph


def test_a_ghstack_body_has_no_summary() -> None:
    assert "Stack from [ghstack]" in _torchtitan()[1695]["body"]
    assert _first(1695) is None


def test_html_images_across_lines_are_not_text() -> None:
    assert "<img width" in _torchtitan()[1792]["body"]
    first = _first(1792)
    assert first == "As #1789 mentioned, make the 16B default toml config safe for 80GB H100 as well."


def test_a_summary_label_is_not_content() -> None:
    first = _first(1776)
    assert first is not None
    assert first.startswith("This PR aims to refactor how TorchTitan build the attention masks")


def test_a_paragraph_that_repeats_the_title_is_skipped() -> None:
    record = _torchtitan()[1529]
    assert record["body"].startswith("As titled, this pr adds support for simplefsdp+ep.")
    first = _first(1529)
    assert first is not None
    assert first.startswith("The following results are benchmarks on 8 H100.")
    # without the title the description cannot tell, and keeps what it says after the lead-in
    assert parse_description(record["body"]).first_paragraph == "this pr adds support for simplefsdp+ep."


def test_nested_details_blocks_are_not_text() -> None:
    record = _torchtitan()[2167]  # dependabot: a changelog and its commands folded in nested <details>
    assert record["body"].count("<details>") >= 2
    description = parse_description(record["body"], record["title"])
    assert description.first_paragraph is not None
    assert description.first_paragraph.startswith("Bumps the github-actions group with 1 update")
    assert not any("Changelog" in p or "details>" in p or "Co-authored-by" in p for p in description.paragraphs)


BODY = """Stack from [ghstack](https://github.com/ezyang/ghstack) (oldest at
bottom):
* #101
* __->__ #102

Fixes #99

Summary: Moves the loader's resume position into the checkpoint, so a resumed run
does not read the first shard again.

<img width="800" alt="loss"
src="https://example.com/loss.png"
/>

Test Plan:
ran the resume test 20 times

- [x] I ran the linter

🤖 Generated with [Claude Code](https://claude.com/claude-code)

Co-authored-by: Someone <someone@example.com>
Signed-off-by: Another <another@example.com>
Differential Revision: D123
"""


def test_boilerplate_is_removed_before_a_sentence_is_chosen() -> None:
    description = parse_description(BODY, "Keep the loader position across resume")
    assert description.paragraphs == (
        "Moves the loader's resume position into the checkpoint, so a resumed run does not read the first "
        "shard again.",
    )
    assert description.has_test_notes
    cleaned = strip_boilerplate(BODY)
    for gone in ("ghstack", "#101", "Co-authored-by", "Signed-off-by", "Differential Revision", "Generated with"):
        assert gone not in cleaned


@pytest.mark.parametrize(
    ("text", "title", "repeats"),
    [
        ("As titled, this pr adds support for simplefsdp+ep.", "add support for simplefsdp+ep", True),
        ("support storage sharding EP Shard(0) EFSDP Shard(1)",
         "[DistMuon] support storage sharding of EP Shard(0) EFSDP Shard(1)", True),
        ("Fix the loader.", "[data] fix: the loader", True),
        ("Fixes a crash when every sample is aborted: the metrics now return NaN.",
         "return NaN for empty tensors in compute_data_metrics", False),
    ],
)
def test_repeats_title(text: str, title: str, repeats: bool) -> None:
    assert repeats_title(text, title) is repeats


def test_a_bold_line_is_a_heading() -> None:
    body = ("**TL;DR**\n\nThe CLI loses most of its options; configs are written in Python.\n\n**Implementation**\n\n"
            "A new package holds the configs the tests use.\n\n- it is installed with the library\n")
    description = parse_description(body, "Add configs for full training runs")
    assert description.sections == ("TL;DR", "Implementation")
    assert description.first_paragraph == "The CLI loses most of its options; configs are written in Python."
    assert description.design_points == ("A new package holds the configs the tests use.",
                                         "it is installed with the library")


def test_a_table_is_neither_prose_nor_what_follows_its_announcement() -> None:
    """GitHub tables are tables: no cell text becomes a summary, and the paragraph that announces one ends
    there instead of taking the next, unrelated paragraph along (which then read twice)."""
    body = ("This PR adds FP16 training support. The implementation includes:\n\n| Component | Precision |\n"
            "|---|---|\n| Actor | float16 |\n\nA new script shows end-to-end FP16 training on one node.\n")
    d = parse_description(body)
    assert d.paragraphs == ("This PR adds FP16 training support. The implementation includes.",
                            "A new script shows end-to-end FP16 training on one node.")
    assert parse_description("对比如下：\n\n| a | b |\n|---|---|\n| 1 | 2 |\n").paragraphs == ()
    assert parse_description("本次改动涉及的文件汇总如下，供评审参考：\n\n| 文件 | 说明 |\n|---|---|\n| a.py | 新增 |\n"
                             ).paragraphs == ("本次改动涉及的文件汇总如下，供评审参考。",)


def test_the_ascii_shortcuts_find_what_the_patterns_find() -> None:
    """Letters and title words of ASCII text are found without the regexes (for speed): the same ones."""
    from bot.digest import description as module

    text = "".join(map(chr, range(128))) * 2 + " Fix_the 2nd BUG-fixes, v1.2 (#12) for THE loader's  tests\n"
    assert module._letters(text) == len(module._NOT_LETTERS.sub("", text))
    assert module._title_words(text) == [w for w in module._TITLE_WORD.findall(text.lower())
                                         if w not in module._FILLER]
