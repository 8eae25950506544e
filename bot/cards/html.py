"""The full digest as one self-contained web page (the report behind the card's 完整报告 button).

:func:`render_html` is a pure function ``Digest -> str``: one HTML document with its CSS, its
one small script and its charts (SVG ``data:`` images) inline, so it opens from a file, a chat
attachment or a server without any network. Layout, with the same headings as the Markdown
report::

    contents    a table of contents, sticky (a side column on a wide screen, a bar on top of a
                narrow one), with a "jump to PR" box
    header      brand, <title>, headline, meta line, analysis line
    本周亮点 · 风险观察 · 周环比 (lines, two charts, the label changes table, collapsed)
    完整周报    1. 执行摘要 (beside the importance chart) … 6. 后续建议 (3. the busiest labels open, the
                rest collapsed; 4. collapsed, as the risks at the top; 5. the key-PR table, sortable)
    标签视图    per label, each PR with its reading advice (collapsed, with its counts)
    全部 PR     every PR's details — verdict, scores, summary, key points, risks with evidence,
                where to start, the GitHub link — each at ``#pr-<number>`` (collapsed)
    分析尚未完成的 PR (only when some analysis is pending) · notes (analysis, coverage, LLM usage)

Every ``#N`` on the page links to that PR's entry (a collapsed section opens when a link or the
jump box leads into it). The key-PR table sizes its columns by their content: risks are short
chips, one a line, their full text on hover and in the PR's entry; on a phone each row is a card
(number, verdict and minutes, title, scores, key points, chips). Printing (and :mod:`bot.cards.pdf`)
opens every collapsed section, repeats the table's header on each page and never splits a row.

The templates are Jinja2 files in ``bot/cards/templates/`` rendered with autoescaping. Text from
the digest is Markdown rendered and sanitised (:mod:`bot.cards.html_text`: a few inline tags,
raw HTML shown as text, links only to ``https`` GitHub targets, no image); PR links are only
made of http(s) URLs (:func:`~bot.cards.escape.safe_url`); and a Content-Security-Policy allows no
script but the page's own (by hash), no style but its own, images only from ``data:`` and no
request at all, so text such as ``<script>`` or ``<img onerror=…>`` stays inert text.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import jinja2

from bot.cards._page_view import PAGE_WORDS, view_model
from bot.cards.charts import Chart
from bot.models import Digest

__all__ = ["PAGE_WORDS", "layout_version", "render_html"]

_TEMPLATES = Path(__file__).with_name("templates")


def render_html(digest: Digest, *, charts: Sequence[Chart] | None = None,
                warn: Callable[[str], None] | None = None, expanded: bool = False) -> str:
    """Render ``digest`` as one self-contained HTML page in ``digest.language``.

    Args:
        digest: the digest to render; not modified.
        charts: the charts to embed; ``None`` draws them for the page (:func:`bot.cards.charts.render_charts`
            with ``medium="page"``, which imports matplotlib), an empty sequence leaves them out.
        warn: passed to the chart renderer (e.g. no CJK font installed).
        expanded: write every collapsible section open (the PDF; a browser's print opens them itself).

    Returns:
        The page, ``<!doctype html>`` first and ending with a newline; UTF-8 when encoded.
    """
    if charts is None:
        from bot.cards.charts import render_charts

        charts = render_charts(digest, warn=warn, medium="page")
    env = _environment()
    script = env.get_template("page.js").render()
    style = env.get_template("page.css").render()
    page = env.get_template("report.html.j2").render(
        view=view_model(digest, charts, expanded=expanded), script=script, style=style,
        script_hash=_csp_hash(script), style_hash=_csp_hash(style),
    )
    return page.rstrip("\n") + "\n"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
    )


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


@lru_cache(maxsize=1)
def layout_version() -> str:
    """A short hash of the page's templates, script, style and view code: a kept page rendered with
    another layout is rendered again (:meth:`bot.web.pages.DigestPages.html`)."""
    digest = hashlib.sha256()
    for path in sorted(_TEMPLATES.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for module in ("_page_view.py", "html_text.py", "charts.py"):
        digest.update(Path(__file__).with_name(module).read_bytes())
    return digest.hexdigest()[:12]
