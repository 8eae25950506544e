"""Golden snapshots of the three renderers, reviewed like code.

Regenerate after an intended change with ``PRHUB_UPDATE_GOLDEN=1 pytest tests/cards/test_golden.py``
and read the diff before committing it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.cards.feishu import render_feishu
from bot.cards.markdown import render_markdown
from bot.cards.slack import render_slack
from bot.models import Digest
from cards.card_digests import make_digest

GOLDEN = Path(__file__).parent / "golden"


def _json(value: list[dict[str, Any]]) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


CASES: dict[str, tuple[Callable[[Digest], str], Callable[[], Digest]]] = {
    "markdown-zh.md": (render_markdown, lambda: make_digest(n_prs=12, pending=(2,))),
    "markdown-en.md": (render_markdown, lambda: make_digest(n_prs=12, pending=(2,), language="en")),
    "slack-zh.json": (lambda d: _json(render_slack(d)), lambda: make_digest(n_prs=12, pending=(2,))),
    "feishu-zh.json": (lambda d: _json(render_feishu(d)), lambda: make_digest(n_prs=12, pending=(2,))),
    "slack-hostile-en.json": (
        lambda d: _json(render_slack(d)),
        lambda: make_digest(n_prs=6, hostile=True, language="en"),
    ),
    "feishu-hostile-en.json": (
        lambda d: _json(render_feishu(d)),
        lambda: make_digest(n_prs=6, hostile=True, language="en"),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    render, build = CASES[name]
    actual = render(build())
    path = GOLDEN / name
    if os.environ.get("PRHUB_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with PRHUB_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8")
