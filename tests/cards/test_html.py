"""The HTML page against the Markdown report of the same digest: same headings in the same
order, same numbers; self-contained; PR text inert (checked here on the markup, and in
``test_page_browser.py`` in a real browser)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from page_support import compared_w16

from bot.cards.charts import Chart
from bot.cards.html import render_html
from bot.cards.markdown import render_markdown
from bot.config import Settings
from bot.models import Digest

HOSTILE_TITLE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
HOSTILE_URL = "javascript:window.pwned=3"


class _Page(HTMLParser):
    """Headings (level, text) outside the footer and the page-only list of every PR, text of each
    ``li``/``tr`` by section id (a ``details`` with an id counts as a section), and every tag with
    its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str]] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.items: dict[str, list[str]] = {}
        self.rows: list[str] = []
        self._section: list[str] = []
        self._heading: list[str] | None = None
        self._item: list[str] | None = None
        self._row: list[str] | None = None
        self._footer = False
        self._level = 0
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("section", "details"):
            self._section.append(dict(attrs).get("id") or (self._section[-1] if self._section else ""))
        elif tag == "footer":
            self._footer = True
        elif tag in ("h1", "h2", "h3") and not self._footer and "all-prs" not in self._section:
            self._heading, self._level = [], int(tag[1])
        elif tag == "li" and self._section:
            self._item = []
        elif tag == "tr" and self._section and self._section[-1] == "key-prs":
            self._row = []
        elif tag == "script":
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag in ("section", "details") and self._section:
            self._section.pop()
        elif tag in ("h1", "h2", "h3") and self._heading is not None:
            self.headings.append((self._level, "".join(self._heading).strip()))
            self._heading = None
        elif tag == "li" and self._item is not None:
            self.items.setdefault(self._section[-1], []).append(" ".join("".join(self._item).split()))
            self._item = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(" ".join("".join(self._row).split()))
            self._row = None
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
        for buffer in (self._heading, self._item, self._row):
            if buffer is not None:
                buffer.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _md_headings(markdown: str) -> list[tuple[int, str]]:
    return [(len(m[1]), m[2].strip()) for m in re.finditer(r"^(#{1,3}) (.+)$", markdown, re.M)]


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"#(\d+)", text)]


def _plain(markdown_line: str) -> str:
    """A Markdown list item as text: links, bold and code marks dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown_line)
    return " ".join(text.replace("**", "").replace("`", "").split())


@pytest.fixture(scope="module")
def w16(verl_settings: Settings) -> Digest:
    return compared_w16(verl_settings)


@pytest.fixture(scope="module")
def w16_html(w16: Digest) -> str:
    return render_html(w16)


def test_headings_are_the_markdown_reports(w16: Digest, w16_html: str) -> None:
    markdown = render_markdown(w16)
    page = _parse(w16_html)
    assert page.headings == _md_headings(markdown)
    titles = [text for _, text in page.headings]
    for needed in ("本周亮点", "风险观察", "周环比", "完整周报", "1. 执行摘要", "2. 本周重点变化", "3. 模块与主题趋势",
                   "4. 风险观察", "5. 重点 PR 速览", "6. 后续建议", "标签视图", "npu（13）"):
        assert needed in titles


def test_numbers_match_the_markdown_report(w16: Digest, w16_html: str) -> None:
    markdown = render_markdown(w16)
    page = _parse(w16_html)
    section = {title: body for title, body in re.findall(r"^## (.+?)\n\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)}
    # Risk observations: the same PR numbers per risk, in order.
    md_risks = [line for line in section["风险观察"].splitlines() if line.startswith("- ")]
    assert [_numbers(line) for line in md_risks] == [_numbers(item) for item in page.items["risks"]]
    assert [r.count for r in w16.risk_rollup] == [int(re.search(r"(\d+) 个 PR", i)[1])  # type: ignore[index]
                                                  for i in page.items["risks"]]
    # Week over week: the same lines, word for word.
    md_weekly = [_plain(line[2:]) for line in section["周环比"].splitlines() if line.startswith("- ")]
    assert page.items["week-over-week"] == md_weekly
    assert "本周 39 个 PR：上周 27 个（+12），前 4 周平均 31.3 个（+7.7）" in page.items["week-over-week"]
    # The key-PR table: every key PR, in the report's order.
    table = re.findall(r"^\| \[#(\d+)\]", markdown, re.M)
    rows = [row for row in page.rows if row.startswith("#")]
    assert [int(n) for n in table] == [_numbers(row)[0] for row in rows] == list(w16.key_prs)
    # Trends: the same label counts and hot files.
    md_trends = [_plain(line[2:]) for line in markdown.split("### 3. ", 1)[1].split("### 4.", 1)[0].splitlines()
                 if line.startswith("- ")]
    assert [" ".join(t.split()) for t in page.items["trends"]] == md_trends
    # Label view: each label's PRs in the same order.
    md_groups = re.findall(r"^### (.+?)\n\n(.*?)(?=^#|\Z)", markdown.split("## 标签视图", 1)[1], re.M | re.S)
    html_groups = w16_html.split('id="label-view"', 1)[1].split('id="all-prs"', 1)[0].split("<h3>")[1:]
    assert len(md_groups) == len(html_groups) == len(w16.label_view)
    for (title, body), chunk in zip(md_groups, html_groups, strict=True):
        assert chunk.startswith(title)
        md_prs = [_numbers(line)[0] for line in body.splitlines() if line.startswith("- ")]
        assert md_prs == [int(n) for n in re.findall(r'<li><a href="#pr-(\d+)">#\d+</a>', chunk)]
    # Meta line and headline.
    assert f"来源 PR：39 · 重点 PR：{w16.stats.key_pr_count}" in w16_html
    assert w16.headline in w16_html


def test_the_page_is_self_contained(w16_html: str) -> None:
    page = _parse(w16_html)
    for tag, attrs in page.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            if value is None or (tag == "a" and name == "href"):
                continue
            assert value.startswith(("data:", "#")), f"<{tag} {name}={value[:60]}> would load from elsewhere"
    assert not [a for t, a in page.tags if t in ("link",) and a.get("rel") == "stylesheet"]
    images = [a for t, a in page.tags if t == "img"]
    assert len(images) == 3
    assert all(a.get("alt") for a in images)
    assert "default-src 'none'" in w16_html
    assert "img-src data:" in w16_html
    assert len(page.scripts) == 1
    assert "sortable" in page.scripts[0]


def test_pr_text_is_escaped_and_links_are_http_only(w16: Digest) -> None:
    first, second = w16.prs[0], w16.prs[1]
    assert first.analysis is not None
    hostile_analysis = first.analysis.model_copy(update={
        "summary": HOSTILE_TITLE, "key_points": (HOSTILE_TITLE,),
        "recommendation": first.analysis.recommendation.model_copy(update={"reason": HOSTILE_TITLE}),
    })
    prs = list(w16.prs)
    prs[0] = first.model_copy(update={"title": HOSTILE_TITLE, "labels": ("<b>npu</b>",), "url": HOSTILE_URL,
                                      "analysis": hostile_analysis})
    prs[1] = second.model_copy(update={"url": "https://github.com/x/y/pull/1\" onmouseover=\"x"})
    hostile = w16.model_copy(update={"prs": tuple(prs), "highlights": (HOSTILE_TITLE, *w16.highlights),
                                     "headline": HOSTILE_TITLE})
    html = render_html(hostile, charts=())
    assert "<script>window" not in html
    assert "<img src=x" not in html
    assert "<b>npu" not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert "javascript:" not in html
    assert 'onmouseover="x' not in html
    assert html.count("<script>") == 1


def test_an_empty_digest_renders_a_short_page(empty_digest: Digest) -> None:
    html = render_html(empty_digest, charts=[])
    assert "本周期内没有合并的 PR。" in html
    assert "<table" not in html


def test_charts_are_embedded_with_their_alt_text(w16: Digest) -> None:
    chart = Chart(name="labels", title="标签", alt="alt <text> & more", png=b"\x89PNG fake")
    html = render_html(w16, charts=[chart])
    assert 'alt="alt &lt;text&gt; &amp; more"' in html
    assert "data:image/png;base64,iVBORyBmYWtl" in html


def test_every_pr_number_leads_to_its_entry_and_the_entry_to_github(w16: Digest, w16_html: str) -> None:
    page = _parse(w16_html)
    ids = {a["id"] for _, a in page.tags if a.get("id")}
    inner = [a["href"] for t, a in page.tags if t == "a" and (a.get("href") or "").startswith("#")]
    assert inner
    assert not [h for h in inner if h[1:] not in ids], "a link to an anchor the page does not have"
    assert {f"pr-{pr.number}" for pr in w16.prs} <= ids
    github = [a for t, a in page.tags if t == "a" and (a.get("href") or "").startswith("https://github.com/")]
    assert len([a for a in github if "/pull/" in (a.get("href") or "")]) >= len(w16.prs)
    assert all(a.get("rel") == "noopener noreferrer" for a in github)


def test_markdown_of_descriptions_is_rendered_and_text_stays_inert(w16: Digest) -> None:
    first = w16.prs[0]
    assert first.analysis is not None
    analysis = first.analysis.model_copy(update={
        "summary": "Fixes **`_dump_generations`** — see [docs](https://github.com/x/y/blob/main/a.md), "
                   "[evil](javascript:alert(1)), ![img](https://evil.test/x.png) and <img src=x onerror=alert(1)>",
        "key_points": ("calls `self._dump()` *twice*", "the **cut bold…"),
    })
    digest = w16.model_copy(update={"prs": (first.model_copy(update={"analysis": analysis}), *w16.prs[1:]),
                                    "highlights": (f"#{first.number} does `x` and **y**", *w16.highlights)})
    html = render_html(digest, charts=())
    assert f'<li><a href="#pr-{first.number}" rel="noopener noreferrer">#{first.number}</a> does <code>x</code> ' \
           "and <strong>y</strong></li>" in html
    assert "<strong><code>_dump_generations</code></strong>" in html
    assert '<a href="https://github.com/x/y/blob/main/a.md" rel="noopener noreferrer">docs</a>' in html
    assert "javascript:" not in html
    assert "evil.test" not in html  # the image shows its alt text only
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<li>calls <code>self._dump()</code> <em>twice</em></li>" in html
    assert "<li>the cut bold…</li>" in html
