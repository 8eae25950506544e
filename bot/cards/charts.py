"""The digest's charts: PNG images for the chat cards, SVG for the page (matplotlib, Agg backend;
imported only when a chart is drawn).

:func:`render_charts` is a pure function of a :class:`~bot.models.Digest`:

* ``labels`` — the busiest labels of this window against their average over the previous
  windows (``Digest.week_over_week``; this window alone when there is no comparison);
* ``weekly`` — merged PRs per window over the last twelve (this one highlighted, the average of
  the previous ones as a dashed line); windows before the source's first record are left out
  and a note (:attr:`Chart.note`) says so, a window the source could not count in between is
  marked; only with week over week;
* ``verdicts`` — PRs per importance score (1–10), stacked by reading recommendation, with the
  key-PR bar.

Two media: ``card`` draws 960×504 px PNGs with their titles in the picture (what Slack and
Feishu show); ``page`` draws small SVGs (4 in wide, text 9.5 pt, so their text stays at least
11 px high on a 390 px phone and grows on a desktop) whose titles the page writes as captions,
with their text as text (``svg.fonttype: none``) in the page's own font stack ending in
``sans-serif``.

Colours are the Okabe–Ito palette (distinguishable with the common colour-vision
deficiencies), and every series also differs by hatching, so the charts survive greyscale
printing. Chinese text needs a CJK font: :func:`cjk_font` looks for one among the installed
fonts (Debian: ``fonts-noto-cjk``); without one a Chinese digest's charts are drawn with
English words (and :func:`render_charts` says so through ``warn``), never with empty boxes.
``fonts-noto-cjk`` installs one collection file (``NotoSansCJK-Regular.ttc``) holding the
Japanese, Korean, simplified and traditional Chinese faces; matplotlib (3.11) lists every face of
a collection under its own family name and draws from that face (``FontPath(path, face_index)``),
so ``Noto Sans CJK SC`` — the first family tried — gives the simplified Chinese glyph forms
(门, 关, 直 differ from the JP face that comes first in the file).
Each :class:`Chart` carries its alt text, a sentence with the numbers it shows.
"""

from __future__ import annotations

import io
import threading
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from bot.cards import _weekly
from bot.cards.i18n import is_week, level_name
from bot.models import Digest, Language, RecommendationLevel

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CJK_FAMILIES", "Chart", "Medium", "cjk_font", "render_charts"]

Medium = Literal["card", "page"]
"""``card``: PNG for Slack and Feishu; ``page``: SVG sized for the page (see the module docstring)."""

# Okabe & Ito (2008), "Color Universal Design".
BLUE = "#0072B2"
ORANGE = "#E69F00"
VERMILLION = "#D55E00"
SKY = "#56B4E9"
GREEN = "#009E73"
GREY = "#999999"
INK = "#222222"

LEVEL_STYLE: dict[RecommendationLevel, tuple[str, str]] = {
    "close_read": (VERMILLION, ""),
    "skim": (BLUE, "//"),
    "skip": (GREY, ".."),
}
PAGE_HATCH: dict[RecommendationLevel, str] = {"skip": "\\\\"}
"""The page's SVG draws ``skip`` hatched with lines: dots are hundreds of curves in SVG."""
_DRAWING = threading.Lock()
"""Held while charts are drawn: the bot draws in worker threads (pages, cards) and matplotlib's style
context is process-wide."""
MAX_LABELS = 10
PAGE_TICKS = 8
"""More windows than this on the page's weekly chart: ticks ``52``, ``01`` under an "ISO week" label (periods
turn their dates upright)."""
PAGE_LABELS = 8
"""The page's labels chart shows fewer labels (it stands beside the weekly chart; its table lists all)."""
WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.2, 120
"""The card PNGs: 960×504 px."""
PAGE_WIDTH_IN, PAGE_HEIGHT_IN, PAGE_FONT_PT = 4.0, 2.6, 9.5
"""The page SVGs: 384 CSS px wide (4 in at 96 px per in), every text 9.5 pt (12.7 px at that width)."""
PAGE_FONTS = ("PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC",
              "Segoe UI", "Helvetica Neue", "Arial", "DejaVu Sans")
"""What a browser showing a page SVG may draw its text with (the page's own stack), before ``sans-serif``."""

CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN",
                "Noto Sans CJK JP", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "PingFang SC",
                "Microsoft YaHei", "SimHei")
"""CJK font families tried in order (the first installed one is used)."""


@dataclass(frozen=True, slots=True)
class Chart:
    """One chart: ``name`` (``labels``, ``weekly``, ``verdicts``; the PNG's file stem), its
    ``title`` and ``alt`` text in the drawn language, the picture (``png`` bytes for a card,
    ``svg`` bytes for the page; the other is empty) and a ``note`` on what it leaves out (or ``""``)."""

    name: str
    title: str
    alt: str
    png: bytes = b""
    svg: bytes = b""
    note: str = ""


@dataclass(frozen=True, slots=True)
class _Words:
    labels_title: str
    labels_title_alone: str
    this_window: str
    average: str
    labels_alt: str
    labels_alt_item: str
    weekly_title: str
    weekly_alt: str
    weekly_left_out: str
    iso_week: str
    no_data: str
    prs: str
    verdicts_title: str
    verdicts_alt: str
    importance: str
    key_bar: str
    sep: str


_WORDS: dict[Language, _Words] = {
    "zh": _Words(
        labels_title="标签：{this}与前 {n} {unit}平均",
        labels_title_alone="标签：{this} PR 数",
        this_window="{this}",
        average="前 {n} {unit}平均",
        labels_alt="标签 PR 数对比图。{items}。",
        labels_alt_item="{label} {this} {count}，平均 {average}",
        weekly_title="每{unit}合并的 PR（最近 {n} {unit}）",
        weekly_alt="每{unit}合并 PR 数柱状图：{items}。",
        weekly_left_out="数据源最早的记录在 {first}，之前的 {n} {unit}未画出",
        iso_week="ISO 周",
        no_data="无数据",
        prs="PR 数",
        verdicts_title="重要性与阅读建议分布",
        verdicts_alt="按重要性分布的 PR 数（按阅读建议分色）：{items}；重点 PR 线为重要性 ≥ {bar}。",
        importance="重要性",
        key_bar="重点 PR ≥ {bar}",
        sep="；",
    ),
    "en": _Words(
        labels_title="Labels: {this} vs the previous {n} {unit}s on average",
        labels_title_alone="Labels: PRs {this}",
        this_window="{this}",
        average="average of the previous {n} {unit}s",
        labels_alt="Bar chart of PRs per label. {items}.",
        labels_alt_item="{label} {count} {this}, average {average}",
        weekly_title="Merged PRs per {unit} (last {n})",
        weekly_alt="Bar chart of merged PRs per {unit}: {items}.",
        weekly_left_out="The source's first record is in {first}; the {n} {unit}s before are left out",
        iso_week="ISO week",
        no_data="n/a",
        prs="PRs",
        verdicts_title="Importance and reading advice",
        verdicts_alt="PRs per importance score, coloured by reading advice: {items}; the key-PR line is at "
                     "importance {bar}.",
        importance="importance",
        key_bar="key PRs ≥ {bar}",
        sep="; ",
    ),
}


_UNITS: dict[Language, tuple[tuple[str, str], tuple[str, str]]] = {
    "zh": (("本周", "周"), ("本期", "期")),
    "en": (("this week", "week"), ("this period", "period")),
}


def _words(language: Language, *, week: bool) -> _Words:
    """The chart words of ``language`` with "this week"/"week" (or "this period"/"period") filled in."""
    this, unit = _UNITS[language][0 if week else 1]
    base = _WORDS[language]
    filled = {name: getattr(base, name).replace("{this}", this).replace("{unit}", unit)
              for name in base.__dataclass_fields__}
    return _Words(**filled)


@lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The first installed family of :data:`CJK_FAMILIES`, or ``None`` (imports matplotlib)."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((family for family in CJK_FAMILIES if family in installed), None)


def render_charts(digest: Digest, *, warn: Callable[[str], None] | None = None,
                  names: Collection[str] | None = None, medium: Medium = "card") -> list[Chart]:
    """Draw the digest's charts (see the module docstring).

    Args:
        digest: the digest; an empty one gives no chart.
        warn: told once, in English, when a Chinese digest's charts fall back to English words.
        names: draw only these charts (e.g. a card's :data:`bot.cards.extras.CARD_CHARTS`); default all.
        medium: ``card`` (PNG, :attr:`Chart.png`) or ``page`` (SVG, :attr:`Chart.svg`).

    Returns:
        ``labels`` and ``verdicts``, with ``weekly`` between them when the digest has week over week
        (those of ``names`` only, in that order).
    """
    if not digest.prs:
        return []
    wanted = set(names) if names is not None else {"labels", "weekly", "verdicts"}
    language = digest.language
    if language == "zh" and cjk_font() is None:
        language = "en"
        if warn is not None:
            warn("no CJK font is installed (Debian: apt-get install fonts-noto-cjk); the charts use English words")
    words = _words(language, week=is_week(digest.window))
    charts = []
    with _DRAWING, _style(medium):  # rc_context changes matplotlib's global settings: one drawing at a time
        if "labels" in wanted:
            charts.append(_labels_chart(digest, words, medium))
        if ("weekly" in wanted and digest.week_over_week is not None
                and "counts" not in digest.week_over_week.unavailable):
            charts.append(_weekly_chart(digest, words, medium))
        if "verdicts" in wanted:
            charts.append(_verdicts_chart(digest, words, language, medium))
    return charts


def _style(medium: Medium = "card") -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    cjk = cjk_font()
    families: list[str] = [f for f in (cjk, "DejaVu Sans") if f]
    settings: Any = {  # matplotlib types the keys as literals; these are checked by matplotlib itself
        "font.family": families, "font.size": 10, "axes.edgecolor": "#888888", "axes.labelcolor": INK,
        "text.color": INK, "xtick.color": INK, "ytick.color": INK, "axes.spines.top": False,
        "axes.spines.right": False, "hatch.color": "white", "hatch.linewidth": 0.8, "svg.fonttype": "none",
        "svg.hashsalt": "prhub",  # the same SVG for the same digest (clip-path ids)
    }
    if medium == "page":
        # Measured with the first installed family; a browser without it falls back along the page's stack.
        settings.update({"font.family": [*([cjk] if cjk else []), "sans-serif"],
                         "font.sans-serif": [*([cjk] if cjk else []), *PAGE_FONTS], "font.size": PAGE_FONT_PT,
                         "axes.titlesize": PAGE_FONT_PT, "legend.fontsize": PAGE_FONT_PT,
                         "xtick.labelsize": PAGE_FONT_PT, "ytick.labelsize": PAGE_FONT_PT,
                         "legend.handlelength": 1.4, "legend.columnspacing": 1.0})
    return matplotlib.rc_context(settings)


def _figure(medium: Medium, height_in: float = PAGE_HEIGHT_IN) -> Figure:
    from matplotlib.figure import Figure

    if medium == "page":
        return Figure(figsize=(PAGE_WIDTH_IN, height_in), dpi=96, layout="constrained")
    return Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, layout="constrained")


def _label_size(medium: Medium) -> float:
    """Bar labels and notes: 9 pt on a card, the page's one size on the page."""
    return PAGE_FONT_PT if medium == "page" else 9


def _title(axes: Any, title: str, medium: Medium, note: str = "") -> None:
    """A card's title in the picture (its note on the right); the page writes both as the caption."""
    if medium == "card":
        axes.set_title(title, loc="left", fontsize=12)
        if note:
            axes.set_title(note, loc="right", fontsize=9, color="#666666")


def _chart(name: str, title: str, alt: str, figure: Figure, medium: Medium, note: str = "") -> Chart:
    """The :class:`Chart` of a drawn figure: PNG bytes for a card, SVG bytes for the page."""
    if medium == "page":
        return Chart(name=name, title=title, alt=alt, svg=_svg(figure), note=note)
    return Chart(name=name, title=title, alt=alt, png=_png(figure), note=note)


def _integers(axis: Any) -> None:
    """Ticks at whole numbers only (counts of PRs)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _png(figure: Figure) -> bytes:
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI, facecolor="white", metadata={"Software": None})
    return out.getvalue()


def _svg(figure: Figure) -> bytes:
    out = io.BytesIO()
    figure.savefig(out, format="svg", facecolor="white", metadata={"Date": None, "Creator": None})
    return out.getvalue()


def _labels_chart(digest: Digest, words: _Words, medium: Medium) -> Chart:
    wow = digest.week_over_week
    compared = wow is not None and "labels" not in wow.unavailable and wow.average_windows > 0
    n = wow.average_windows if wow is not None else 0
    most = PAGE_LABELS if medium == "page" else MAX_LABELS
    if compared and wow is not None:
        rows = sorted(wow.labels, key=lambda c: (-max(c.count, c.average or 0), c.name))[:most]
        data = [(c.name, c.count, c.average) for c in rows]
    else:
        data = [(t.label, t.count, None) for t in digest.trends[:most]]
    data.reverse()  # barh draws bottom-up; the busiest label goes on top
    figure = _figure(medium, 0.9 + (0.27 if compared else 0.2) * max(len(data), 3))
    axes = figure.subplots()
    positions = list(range(len(data)))
    height = 0.38 if compared else 0.6
    counts = [count for _, count, _ in data]
    offset = height / 2 if compared else 0.0
    bars = axes.barh([p + offset for p in positions], counts, height=height, color=BLUE,
                     label=words.this_window)
    axes.bar_label(bars, padding=2, fontsize=_label_size(medium))
    if compared:
        averages = [average or 0 for _, _, average in data]
        means = axes.barh([p - offset for p in positions], averages, height=height, color=ORANGE, hatch="//",
                          label=words.average.format(n=n))
        axes.bar_label(means, labels=[_weekly.number(a) for a in averages], padding=2, fontsize=_label_size(medium))
        figure.legend(loc="outside lower center", ncols=2, frameon=False)
        title = words.labels_title.format(n=n)
    else:
        title = words.labels_title_alone
    axes.set_yticks(positions, [label for label, _, _ in data])
    axes.set_xlabel(words.prs)
    axes.margins(x=0.12)  # room for the bar labels
    _integers(axes.xaxis)
    _title(axes, title, medium)
    items = words.sep.join(
        words.labels_alt_item.format(label=label, count=count,
                                     average=_weekly.number(average) if average is not None else "-")
        for label, count, average in reversed(data)
    )
    return _chart("labels", title, words.labels_alt.format(items=items), figure, medium)


def _weekly_chart(digest: Digest, words: _Words, medium: Medium) -> Chart:
    wow = digest.week_over_week
    assert wow is not None
    history = list(wow.history)
    note = ""
    if wow.gap == "not_covered":  # the weeks before the source's first record: left out, not drawn as stubs
        first = next((i for i, w in enumerate(history) if w.pr_count is not None), len(history) - 1)
        if first:
            note = words.weekly_left_out.format(first=_tick(history[first].name, history[first].start, digest),
                                                n=first)
            history = history[first:]
    names = [_tick(w.name, w.start, digest) for w in history]
    values = [w.pr_count for w in history]
    figure = _figure(medium)
    axes = figure.subplots()
    colours = [VERMILLION if i == len(history) - 1 else SKY for i in range(len(history))]
    hatches = ["" if i == len(history) - 1 else "//" for i in range(len(history))]
    bars = axes.bar(range(len(history)), [v or 0 for v in values], color=colours, width=0.7)
    for bar, hatch in zip(bars, hatches, strict=True):
        bar.set_hatch(hatch)
    axes.bar_label(bars, labels=[str(v) if v is not None else "" for v in values], padding=2,
                   fontsize=_label_size(medium))
    for i, value in enumerate(values):
        if value is None:
            axes.annotate(words.no_data, (i, 0), xytext=(0, 3), textcoords="offset points", ha="center",
                          fontsize=_label_size(medium) - 1 if medium == "card" else PAGE_FONT_PT,
                          color="#666666", rotation=90, va="bottom")
    if wow.prs.average is not None:
        axes.axhline(wow.prs.average, color=ORANGE, linestyle="--", linewidth=1.5,
                     label=words.average.format(n=wow.average_windows) + f" {_weekly.number(wow.prs.average)}")
        figure.legend(loc="outside lower center", frameon=False)
    crowded = medium == "page" and len(history) > PAGE_TICKS  # the page's chart is 4 in wide
    if crowded and is_week(digest.window):
        axes.set_xticks(range(len(history)), [n.removeprefix("W") for n in names])
        axes.set_xlabel(words.iso_week)
    else:
        axes.set_xticks(range(len(history)), names, rotation=90 if crowded else 0)
    axes.set_ylabel(words.prs)
    axes.margins(y=0.12)
    _integers(axes.yaxis)
    title = words.weekly_title.format(n=len(history))
    _title(axes, title, medium, note)
    items = words.sep.join(f"{name} {value if value is not None else words.no_data}"
                           for name, value in zip(names, values, strict=True))
    alt = words.weekly_alt.format(items=items)
    if note:
        alt += f"{note}。" if words.sep == "；" else f" {note}."
    return _chart("weekly", title, alt, figure, medium, note)


def _tick(name: str, start: datetime, digest: Digest) -> str:
    """``W16`` for an ISO week, else the period's first day ``04-13``."""
    if is_week(digest.window) and "-W" in name:
        return name.split("-", 1)[1]
    return start.astimezone(ZoneInfo(digest.window.timezone)).strftime("%m-%d")


def _verdicts_chart(digest: Digest, words: _Words, language: Language, medium: Medium) -> Chart:
    counts: dict[RecommendationLevel, Counter[int]] = {level: Counter() for level in LEVEL_STYLE}
    for pr in digest.prs:
        if pr.analysis is not None:
            counts[pr.analysis.recommendation.level][pr.analysis.importance] += 1
    scores = list(range(1, 11))
    figure = _figure(medium)
    axes = figure.subplots()
    bottom = [0] * len(scores)
    for level, (colour, hatch) in LEVEL_STYLE.items():
        hatch = PAGE_HATCH.get(level, hatch) if medium == "page" else hatch
        heights = [counts[level][s] for s in scores]
        axes.bar(scores, heights, bottom=bottom, color=colour, hatch=hatch, width=0.7,
                 label=level_name(level, language))
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    bar = digest.stats.key_pr_bar
    axes.axvline(bar - 0.5, color=INK, linestyle=":", linewidth=1.2)
    top = max(bottom or [1]) or 1
    axes.set_ylim(0, top * 1.18)  # room for the key-PR note above the bars
    axes.annotate(words.key_bar.format(bar=bar), (bar - 0.45, top * 1.16), fontsize=_label_size(medium), va="top",
                  ha="left" if bar <= 7 else "right", xytext=(0 if bar <= 7 else -6, 0), textcoords="offset points")
    axes.set_xticks(scores)
    axes.set_xlim(0.4, 10.6)
    axes.set_xlabel(words.importance)
    axes.set_ylabel(words.prs)
    _integers(axes.yaxis)
    figure.legend(loc="outside lower center", ncols=3, frameon=False)
    _title(axes, words.verdicts_title, medium)
    sep = words.sep
    items = sep.join(
        f"{level_name(level, language)} " + ", ".join(f"{s}:{counts[level][s]}" for s in scores if counts[level][s])
        for level in LEVEL_STYLE if sum(counts[level].values())
    )
    alt = words.verdicts_alt.format(items=items or "-", bar=bar)
    return _chart("verdicts", words.verdicts_title, alt, figure, medium)
