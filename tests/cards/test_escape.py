"""Escaping of PR text and safe splitting."""

from __future__ import annotations

import json
import re

import pytest

from bot.cards.escape import (
    ENTITY,
    feishu_text,
    md_cell,
    md_line,
    md_paragraphs,
    md_text,
    one_line,
    safe_url,
    slack_mrkdwn,
    slack_text,
    split_text,
    utf16_len,
)
from bot.models import Digest

FAMILY = "👩‍👩‍👧"  # three people joined by ZWJ: one user-perceived character, five code points
FLAG = "🇨🇳"  # two regional indicators
THUMBS = "👍🏽"  # emoji + skin tone modifier
HEART = "❤️"  # heart + variation selector 16
E_ACUTE = "e\u0301"  # e + combining acute accent


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<!channel>", "&lt;!channel&gt;"),
        ("<@U123>", "&lt;@U123&gt;"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("<https://evil.example|click>", "&lt;https://evil.example|click&gt;"),
        ("&lt;!here&gt;", "&amp;lt;!here&amp;gt;"),
        ("训练器 🚀 *bold*", "训练器 🚀 *bold*"),
    ],
)
def test_slack_text_makes_control_sequences_inert(raw: str, escaped: str) -> None:
    assert slack_text(raw) == escaped


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ('<at user_id="all">所有人</at>', '&#60;at user_id="all"&#62;所有人&#60;/at&#62;'),
        ("<at id=all></at>", "&#60;at id=all&#62;&#60;/at&#62;"),
        ("<font color=red>x</font>", "&#60;font color=red&#62;x&#60;/font&#62;"),
        ("a < b && c > d", "a &#60; b && c &#62; d"),
        ("&#60;at id=all&#62;", "&#38;#60;at id=all&#38;#62;"),
        ("&lt;at&gt; & more", "&#38;lt;at&#38;gt; & more"),
        ("**bold** [link](https://github.com/x) `code` # h", "**bold** [link](https://github.com/x) `code` # h"),
        ("[link](https://x) [run](javascript:alert(1))", "link run"),
    ],
)
def test_feishu_text_escapes_tags_and_entities_but_keeps_markdown(raw: str, escaped: str) -> None:
    assert feishu_text(raw) == escaped
    assert "<" not in feishu_text(raw)
    assert "\\" not in feishu_text(raw)


def test_markdown_text_cannot_open_html_or_blocks() -> None:
    assert md_text("<!-- hide the rest") == "&lt;!-- hide the rest"
    assert md_text("<details><summary>x") == "&lt;details>&lt;summary>x"
    assert md_text("a < b and 3<4") == "a < b and 3<4"
    assert md_line("```python\nimport os") == "\\```python import os"
    assert md_line("# heading") == "\\# heading"
    assert md_line("###### six") == "\\###### six"
    assert md_line("#6046 is a PR") == "#6046 is a PR"
    assert md_line("> quote") == "\\> quote"
    assert md_paragraphs("one\nline\n\n```\n\n# two") == "one line\n\n\\```\n\n\\# two"


def test_markdown_cell_stays_in_its_cell() -> None:
    cell = md_cell("a | b\nsecond | line\r\n<b>bold</b>")
    assert "\n" not in cell
    assert "\r" not in cell
    assert re.search(r"(?<!\\)\|", cell) is None
    assert cell == "a \\| b second \\| line &lt;b>bold&lt;/b>"


def test_one_line_folds_breaks() -> None:
    assert one_line("  a\n\n  b\r\nc\u2028d ") == "a b c d"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/o/r/pull/1", "https://github.com/o/r/pull/1"),
        ("https://x.example/a|b>c<d (e)", "https://x.example/a%7Cb%3Ec%3Cd%20%28e%29"),
        ("javascript:alert(1)", None),
        ("ftp://x", None),
        ("", None),
    ],
)
def test_safe_url(url: str, expected: str | None) -> None:
    assert safe_url(url) == expected


def test_split_prefers_paragraphs_then_lines_then_words() -> None:
    text = "aaaa aaaa\n\nbbbb bbbb\ncccc cccc"
    assert split_text(text, 12) == ["aaaa aaaa", "bbbb bbbb", "cccc cccc"]
    assert split_text("one two three four", 9) == ["one two", "three", "four"]


def test_split_keeps_short_text_and_drops_blank() -> None:
    assert split_text("  short  ", 100) == ["short"]
    assert split_text(" \n ", 100) == []
    with pytest.raises(ValueError, match="at least 8"):
        split_text("x", 7)


@pytest.mark.parametrize("unit", [FAMILY, FLAG, THUMBS, HEART, E_ACUTE, "训", "😀"])
@pytest.mark.parametrize("offset", range(8))
def test_split_never_cuts_a_character_in_half(unit: str, offset: int) -> None:
    text = "x" * offset + unit * 12
    chunks = split_text(text, 10)
    assert "".join(chunks) == text
    assert all(len(chunk) <= 10 for chunk in chunks)
    for chunk in chunks[1:]:
        assert chunk.startswith(unit), (unit, chunks)


def test_split_in_utf16_units_counts_astral_characters_twice() -> None:
    text = "😀" * 20
    chunks = split_text(text, 9, measure=utf16_len)
    assert all(utf16_len(chunk) <= 9 for chunk in chunks)
    assert [len(chunk) for chunk in chunks] == [4, 4, 4, 4, 4]


@pytest.mark.parametrize("offset", range(12))
def test_split_never_cuts_an_entity(offset: int) -> None:
    text = "x" * offset + "&amp;&#60;&gt;" * 6
    chunks = split_text(text, 10, atomic=ENTITY)
    assert "".join(chunks) == text
    for chunk in chunks:
        leftover = ENTITY.sub("", chunk).replace("x", "")
        assert leftover == "", chunks


def test_split_never_cuts_a_link_at_its_inner_space() -> None:
    link = re.compile(r"<[^<>]*>")
    text = "word " * 3 + "<https://x.example/1|#1 title here> tail"
    for limit in range(36, 60):  # the link is 36 long; shorter limits must cut it
        for chunk in split_text(text, limit, atomic=link):
            assert chunk.count("<") == chunk.count(">"), (limit, chunk)


def test_split_preserves_every_character_of_mixed_text() -> None:
    unit = "训练器🚀改进 émoji👩‍👩‍👧 flag🇨🇳 text &amp; more\n"
    text = unit * 300
    for limit in (50, 333, 3000):
        chunks = split_text(text, limit, measure=utf16_len)
        assert all(0 < utf16_len(c) <= limit for c in chunks)
        assert _squash("".join(chunks)) == _squash(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("**`_dump_generations` is called but never defined.** then",
     "*`_dump_generations` is called but never defined.* then"),
    ("## Summary", "*Summary*"),
    ("see [the docs](https://github.com/a?b=1) now", "see <https://github.com/a?b=1|the docs> now"),
    ("see [the docs](https://x.org/a?b=1) now", "see the docs now"),  # another host: its label, as text
    ("[plain](http://github.com/a)", "plain"),  # not https
    ("[evil](javascript:alert(1))", "[evil](javascript:alert(1))"),  # only http(s) links become links
    ("<!channel> **hi**", "&lt;!channel&gt; *hi*"),
    ("~~old~~ new", "~old~ new"),
    ("`**kept**` as code", "`**kept**` as code"),
    ("__init__.py and __main__", "__init__.py and __main__"),
    ("a ** b ** c", "a ** b ** c"),
])
def test_github_markdown_becomes_slack_mrkdwn(text: str, expected: str) -> None:
    assert slack_mrkdwn(text) == expected


def test_no_stray_asterisks_in_the_slack_digest(w16_digest: Digest) -> None:
    from bot.cards.slack import render_slack

    shown = json.dumps(render_slack(w16_digest), ensure_ascii=False)
    outside_code = re.sub(r"`[^`]*`", "", shown)
    assert "**" not in outside_code
