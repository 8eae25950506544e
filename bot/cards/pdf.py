"""The full report as PDF: the HTML page (:mod:`bot.cards.html`) printed by headless Chromium.

:func:`render_pdf` writes the page to a temporary directory and runs the browser's own print
(``--print-to-pdf``, A4, the page's ``@media print`` rules, no header or footer) with a fresh
profile, no network services, no GPU and no sandbox (the page is ours and makes no request;
sandboxing needs privileges containers often lack). The browser is ``PRHUB_CHROMIUM`` when set,
else the first of ``chromium``, ``chromium-browser``, ``google-chrome`` on ``PATH`` (Debian:
``apt-get install chromium``; the Dockerfile installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.cards.charts import Chart
from bot.errors import RenderError
from bot.models import Digest

__all__ = ["BROWSER_FLAGS", "find_chromium", "print_pdf", "render_pdf"]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-extensions", "--mute-audio")
"""Flags of every headless Chromium prhub starts (a fresh ``--user-data-dir`` is added per run)."""
TIMEOUT_S = 120.0


def find_chromium() -> str:
    """The Chromium executable to print with.

    Raises:
        RenderError: ``PRHUB_CHROMIUM`` names no executable file, or none is on ``PATH``.
    """
    configured = os.environ.get("PRHUB_CHROMIUM", "").strip()
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise RenderError(f"PRHUB_CHROMIUM={configured!r} is not an executable browser")
        return found
    for name in CANDIDATES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise RenderError("--format pdf prints the page with Chromium, and none is installed "
                      "(Debian/Ubuntu: apt-get install chromium; or set PRHUB_CHROMIUM to a Chrome/Chromium binary)")


def print_pdf(html: str, *, chromium: str | None = None, timeout_s: float = TIMEOUT_S) -> bytes:
    """Print the HTML document ``html`` to PDF bytes with headless Chromium.

    Raises:
        RenderError: no browser (see :func:`find_chromium`), it failed or timed out, or it wrote no PDF.
    """
    browser = chromium or find_chromium()
    with tempfile.TemporaryDirectory(prefix="prhub-pdf-") as tmp:
        folder = Path(tmp)
        page, out = folder / "report.html", folder / "report.pdf"
        page.write_text(html, encoding="utf-8")
        command = [browser, *BROWSER_FLAGS, f"--user-data-dir={folder / 'profile'}", "--no-pdf-header-footer",
                   f"--print-to-pdf={out}", page.as_uri()]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise RenderError(f"Chromium did not print the PDF within {timeout_s:.0f} s") from exc
        except OSError as exc:
            raise RenderError(f"cannot run Chromium ({browser}): {exc.strerror}") from exc
        if done.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            raise RenderError(f"Chromium failed to print the PDF (exit {done.returncode}): {last}")
        return out.read_bytes()


def render_pdf(digest: Digest, *, charts: Sequence[Chart] | None = None,
               warn: Callable[[str], None] | None = None, chromium: str | None = None) -> bytes:
    """The digest's page (:func:`bot.cards.html.render_html`, charts drawn unless given, every collapsed
    section open) as PDF bytes.

    Raises:
        RenderError: as :func:`print_pdf`.
    """
    from bot.cards.html import render_html

    return print_pdf(render_html(digest, charts=charts, warn=warn, expanded=True), chromium=chromium)
