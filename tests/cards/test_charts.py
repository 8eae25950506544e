"""The charts: three PNGs for W16 with their numbers in the alt text, a real CJK font (no missing
glyph), colour-blind-safe colours, and no plotting import for the CLI's help."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings

import pytest
from page_support import ROOT, compared_w16
from PIL import Image

from bot.cards.charts import BLUE, ORANGE, VERMILLION, cjk_font, render_charts
from bot.config import Settings


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def test_w16_charts(verl_settings: Settings) -> None:
    if cjk_font() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("a CJK font is required in CI (scripts/test installs fonts-noto-cjk)")
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    digest = compared_w16(verl_settings)
    warned: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        charts = render_charts(digest, warn=warned.append)
    missing = [str(w.message) for w in caught if "missing from" in str(w.message) or "Glyph" in str(w.message)]
    assert missing == []
    assert warned == []
    assert [c.name for c in charts] == ["labels", "weekly", "verdicts"]
    by_name = {c.name: c for c in charts}
    assert "W16 39" in by_name["weekly"].alt
    assert "W15 27" in by_name["weekly"].alt
    # The example starts in W12: the seven weeks before are left out with a note, not drawn as stubs.
    assert "W11" not in by_name["weekly"].alt
    assert "无数据" not in by_name["weekly"].alt
    assert by_name["weekly"].note == "数据源最早的记录在 W12，之前的 7 周未画出"
    assert by_name["weekly"].alt.endswith("W16 39。数据源最早的记录在 W12，之前的 7 周未画出。")
    assert by_name["weekly"].title == "每周合并的 PR（最近 5 周）"
    assert "npu 本周 13，平均 8" in by_name["labels"].alt
    assert by_name["labels"].title == "标签：本周与前 4 周平均"
    for chart in charts:
        image = Image.open(io.BytesIO(chart.png)).convert("RGB")
        assert image.size == (960, 504)
        colours = {c for _, c in image.getcolors(maxcolors=1 << 20) or []}
        assert _rgb(BLUE) in colours or _rgb(VERMILLION) in colours or _rgb(ORANGE) in colours


def test_english_charts_and_an_empty_digest(verl_settings: Settings, empty_digest) -> None:  # type: ignore[no-untyped-def]
    digest = compared_w16(verl_settings, "en")
    charts = render_charts(digest)
    assert charts[0].title == "Labels: this week vs the previous 4 weeks on average"
    assert render_charts(empty_digest) == []


@pytest.mark.parametrize("args", [["--help"], ["digest", "--help"], ["serve", "--help"]])
def test_the_cli_help_imports_no_plotting_browser_or_pdf_library(args: list[str]) -> None:
    code = ("import sys; from bot.cli import app; from typer.testing import CliRunner; "
            f"r = CliRunner().invoke(app, {args!r}); assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('matplotlib', 'numpy', 'PIL', 'playwright', 'itsdangerous', 'starlette')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_chinese_text_is_drawn_with_the_simplified_chinese_face() -> None:
    """fonts-noto-cjk ships one collection with the JP face first; the charts must draw the SC face of it."""
    if cjk_font() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("a CJK font is required in CI (scripts/test installs fonts-noto-cjk)")
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    from matplotlib import font_manager, rcParams
    from matplotlib.figure import Figure

    from bot.cards.charts import _style

    def drawn(family: list[str] | None) -> bytes:
        figure = Figure(figsize=(1.2, 0.6), dpi=100)
        figure.text(0.05, 0.1, "门关直骨", fontsize=28, **({"family": family} if family else {}))
        out = io.BytesIO()
        figure.savefig(out, format="png")
        return Image.open(out).convert("L").tobytes()

    installed = {f.name for f in font_manager.fontManager.ttflist}
    with _style():
        families = list(rcParams["font.family"])
        found = font_manager.findfont(font_manager.FontProperties(family=families))
        ours, sc = drawn(None), drawn(["Noto Sans CJK SC"])
        jp = drawn(["Noto Sans CJK JP"]) if "Noto Sans CJK JP" in installed else None
    assert families[0] == "Noto Sans CJK SC"
    if str(found).endswith(".ttc"):  # a collection: the face index picks the region
        assert getattr(found, "face_index", None) == next(
            f.index for f in font_manager.fontManager.ttflist if f.name == "Noto Sans CJK SC")
    assert ours == sc
    if jp is not None:
        assert ours != jp  # 门, 关, 直, 骨 have other forms in the JP face
