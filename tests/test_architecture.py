"""Imports run one way: the import contracts of ``pyproject.toml`` (import-linter) hold on the tree, break on
a deliberate function-level violation, and no module imports itself through a circle (grimp's graph).

The rules (docs/development.md "目录结构"): the core (config, models, errors, store, claims, subscriptions, channels,
replies, digest/, cards/, sources/) imports no door and no platform SDK; ``handlers/`` and
``scheduler/`` import neither each other nor ``commands/``/``cli``/``app``; the chat core imports no
platform module; Slack and Feishu do not import each other; no cycle at any depth.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from conftest import ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, *, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)} if pythonpath is not None else dict(os.environ)
    return subprocess.run([str(LINT_IMPORTS), "--no-logo", "--no-cache", "--config", str(cwd / "pyproject.toml")],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_contracts_hold() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(("module", "imported"), [
    ("bot/digest/service.py", "bot.handlers.core"),  # the core reaching a door
    ("bot/scheduler/alerts.py", "bot.handlers.slack.actions"),  # a door reaching the other door
    ("bot/handlers/core.py", "bot.delivery.slack"),  # the chat core reaching a platform
])
def test_a_function_level_violation_breaks_them(tmp_path: Path, module: str, imported: str) -> None:
    """A copy of the package with one import inside a function body: grimp sees it, a contract breaks."""
    shutil.copytree(ROOT / "bot", tmp_path / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text(encoding="utf-8")
                      + f"\n\ndef _deliberate_violation() -> None:\n    import {imported}  # noqa: F401\n",
                      encoding="utf-8")
    result = _lint(tmp_path, pythonpath=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout
    assert imported in result.stdout


def test_no_module_imports_itself_through_a_circle() -> None:
    """Cycles between any two modules, a package's ``__init__`` and its own modules included (which the
    sibling contract does not see), counting function-level imports."""
    graph = grimp.build_graph("bot", cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert cycles == []


def test_the_documented_layout_names_every_module_and_package() -> None:
    """docs/development.md "目录结构" shows the tree as it is: every top-level module and package of bot/ is named."""
    readme = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    layout = readme[readme.index("## 目录结构"):]
    layout = layout[: layout.index("```", layout.index("```") + 3)]
    names = sorted(p.stem if p.is_file() else p.name for p in (ROOT / "bot").iterdir()
                   if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and p.name != "__pycache__"))
    missing = [n for n in names if f"{n}/" not in layout and f"{n}.py" not in layout and f" {n}," not in layout]
    assert len(names) > 15
    assert missing == []
