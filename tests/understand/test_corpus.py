"""The phrasing corpus read by the chat core (:mod:`corpus_check`), scored against each case's expected reading.

``tuning.toml``: 150 phrasings written by a helper who had not seen the rules (issue 26's first round was tuned
on them); ``tuning2.toml``: 160 phrasings by eight imagined people, written the same way, scored once before the
second round (79 of 160 right by the first round's rules) and tuned on after; ``audit.toml``: the invented
examples of the audit of the first held-out set (classes of misses); ``held_out.toml``: the first held-out set —
an auditor has read it, so it is measured, never tuned on, and no longer a clean held-out figure;
``held_out2.toml``: a fresh held-out set, read once at the end of the second round (the third round read both
held-out sets' misses by class and tuned on them); ``tuning3.toml``: 110 phrasings by ten imagined people,
written before the third round and scored once before it; ``tuning4.toml``: 85 more, written mid-round as a
check of what the round generalises to; ``tuning5.toml`` (80), ``tuning6.toml`` (67) and ``tuning7.toml`` (60):
a second, third and fourth such check; ``tuning8.toml`` (40): written after every other change of the round;
``tuning9.toml``: 100 phrasings (66 Chinese) written for the end of the third round by a helper who read only
FORMAT.md and vocab.txt, held out once as ``held_out3.toml`` (79 by the second round's rules, 85 by the third's:
zh 55/66, en 30/34), then read by class and tuned on in the fourth round; ``held_out4.toml``: 100 more (66
Chinese) written the same way during the fourth round, scored once after it (97: zh 63/66, en 34/34 — and 97 on
the third round's rules too: it is an easier set than held_out3, not a measure of the fourth round's gain). Its
misses were then read once through the doors, and one class fixed (a label's words said apart): 98, no longer a
held-out figure; its texts are never shown.
Each floor may only rise: a change that reads fewer cases right fails here, naming them (never a held-out set's
texts).
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
    "tuning": {"zh": 90, "en": 59, "all": 149},
    "tuning2": {"zh": 112, "en": 45, "all": 157},
    "audit": {"zh": 21, "en": 17, "all": 38},
    "held_out": {"zh": 54, "en": 25, "all": 79},
    "held_out2": {"zh": 65, "en": 25, "all": 90},
    "tuning3": {"zh": 70, "en": 40, "all": 110},
    "tuning4": {"zh": 56, "en": 29, "all": 85},
    "tuning5": {"zh": 53, "en": 27, "all": 80},
    "tuning6": {"zh": 49, "en": 18, "all": 67},
    "tuning7": {"zh": 39, "en": 18, "all": 57},
    "tuning8": {"zh": 29, "en": 11, "all": 40},
    "tuning9": {"zh": 65, "en": 34, "all": 99},
    "held_out4": {"zh": 64, "en": 34, "all": 98},
}
"""Cases read right, at least. Tuning: 68 of 150 before issue 26, 144 after its first round, 147 after the second.
Tuning2: 79 of 160 by the first round's rules (83 with the harness comparing what the person sees), 154 after the
second, 156 after the third. Held out (measured only in the first two rounds): 49 of 80 after the first round
(53 with the fairer harness), 73 after the second. Held out 2 (fresh, read once at the end of the second round):
70 of 90 (zh 50 of 65, en 20 of 25). In the third round both held-out sets were read for the classes of their
misses and tuned on with the rest (79 and 88 after it): neither is a held-out figure any more. Tuning3 (110
fresh phrasings written before the third round): 77 of 110 before it, 110 after. Tuning4 (85 more, written
mid-round as a check): 64 of 85 when written, 85 after. Tuning5 (80 more, a second check): 51 of 80 when
written, 78 after. Tuning6 (67 more, a third check): 52 of 67 when written, 67 after. Tuning7 (60 more, a fourth check):
49 of 60 when written, 57 after. Tuning8 (40, written last): 33 of 40 on the round's rules when written — and 33
on the second round's rules too — 39 after. Fourth round (held_out3 read by class and renamed tuning9): tuning9
85 -> 99 of 100, tuning 148 -> 149, tuning2 156 -> 157, tuning5 78 -> 80, tuning8 39 -> 40, held_out2 88 -> 90, no
set lower. Raise a floor as the reading improves, never lower it."""


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


@pytest.mark.parametrize("name", list(FLOORS))
async def test_the_corpus_is_read_right_at_least_as_often_as_before(services: Services, name: str) -> None:
    outcomes = await _read_all(services, name)
    got = score(outcomes)
    shown = not name.startswith("held_out")  # a held-out set's texts are never printed
    wrong = "\n".join(f"{o.case['text']!r} ({o.case['expect']}) -> {o.reading}: {'; '.join(o.problems)}"
                      for o in outcomes if not o.right and shown)
    for key, floor in FLOORS[name].items():
        assert got[key][0] >= floor, f"{name} {key}: {got[key][0]}/{got[key][1]} right, below {floor}:\n{wrong}"
    assert got["all"][1] == len(outcomes) >= (30 if name in ("audit", "tuning8") else 60)
