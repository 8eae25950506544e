"""The phrasing corpus read by the chat core (:mod:`corpus_check`), scored against each case's expected reading.

``tuning.toml``: 150 phrasings written by a helper who had not seen the rules, the set the rules were tuned
on; ``held_out.toml``: phrasings written the same way and never tuned on (read once, at the end of issue 26's
work; its floor is what that one reading scored). Each floor may only rise: a change that reads fewer cases
right fails here, naming them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from conftest import REPO, ROOT
from redis_support import redis_store

from bot.app import Services, build_services
from bot.config import Settings

from .corpus_check import TODAY, Outcome, Reader, load, score

DATA = ROOT / "tests" / "data" / "verl-prs-with-patches.jsonl.gz"
FLOORS = {
    "tuning": {"zh": 89, "en": 55, "all": 144},
    "held_out": {"zh": 30, "en": 19, "all": 49},
}
"""Cases read right, at least. Tuning: 144 of 150 when issue 26 was done (68 before it). Held out: 49 of 80
(zh 30 of 54, en 19 of 26) on its one reading at the end of issue 26 — the rules generalise far less than
the tuning score says; raise the floor as the reading improves, never lower it."""


@pytest.fixture
async def services(verl_settings: Settings) -> AsyncIterator[Services]:
    settings = verl_settings.model_copy(update={"default_source": f"jsonl:{DATA}", "default_repo": REPO,
                                                "language": "zh", "channels": {}})
    async with redis_store() as store:
        made = build_services(settings, store, clock=lambda: TODAY)
        yield made
        await made.aclose()


async def _read_all(services: Services, name: str) -> list[Outcome]:
    reader = Reader(services)
    return [await reader.read(case, i) for i, case in enumerate(load(name))]


@pytest.mark.parametrize("name", ["tuning", "held_out"])
async def test_the_corpus_is_read_right_at_least_as_often_as_before(services: Services, name: str) -> None:
    outcomes = await _read_all(services, name)
    got = score(outcomes)
    wrong = "\n".join(f"{o.case['text']!r} ({o.case['expect']}) -> {o.reading}: {'; '.join(o.problems)}"
                      for o in outcomes if not o.right)
    for key, floor in FLOORS[name].items():
        assert got[key][0] >= floor, f"{name} {key}: {got[key][0]}/{got[key][1]} right, below {floor}:\n{wrong}"
    assert got["all"][1] == len(outcomes) >= 60
