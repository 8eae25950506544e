"""The commands' shared helpers (bot/commands/common.py)."""

from __future__ import annotations

import signal

import pytest

from bot.commands.common import run


class _NoRepr:
    """A result that counts how often its ``repr`` is built (a digest's would be every PR and card text)."""

    built = 0

    def __repr__(self) -> str:
        _NoRepr.built += 1
        return "<result>"


async def _answer() -> _NoRepr:
    return _NoRepr()


def test_run_hands_back_the_result_without_building_its_repr() -> None:
    # asyncio.run restores the SIGINT handler through signal.getsignal, which formats the repr of the handler
    # it installed — bound to the main task, and so to the task's result (CPython 3.11–3.13).
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # so asyncio.run installs its own
    _NoRepr.built = 0
    result = run(_answer())
    assert isinstance(result, _NoRepr)
    assert _NoRepr.built == 0


def test_run_raises_what_the_coroutine_raises() -> None:
    async def fails() -> None:
        raise ValueError("no such week")

    with pytest.raises(ValueError, match="no such week"):
        run(fails())
