"""PR questions in a channel that follows several repositories (issue 29): a number only one of them has is answered
from it; a number both have is asked back, naming both; "verl 的 #N" / "torchtitan #N" picks one; access stays per
repository (a repository the channel does not follow is still refused)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import REAL_DATA, ROOT

from bot.app import Services, build_services
from bot.config import ChannelConfig, ChannelRepo, Settings
from bot.handlers.core import Conversation
from bot.handlers.intents import parse_intent
from bot.replies import ClarifyReply, ErrorReply, PRReply
from bot.store import MemoryStore

VERL, TITAN = "verl-project/verl", "pytorch/torchtitan"
CHANNEL = Conversation(platform="slack", channel="C0TEAM", user="U1")
BOTH, ONLY_VERL, ONLY_TITAN = 1639, 7488, 1641  # numbers in both files, in verl's alone, in torchtitan's alone


@pytest.fixture
def services(verl_settings: Settings) -> Services:
    repos = (ChannelRepo(repo=VERL, source=f"jsonl:{REAL_DATA}"),
             ChannelRepo(repo=TITAN, source=f"jsonl:{ROOT / 'tests' / 'data' / 'torchtitan.jsonl.gz'}"))
    bound = verl_settings.model_copy(update={"channels": {"slack:C0TEAM": ChannelConfig(repos=repos)},
                                             "default_repo": None})
    return build_services(bound, MemoryStore(), clock=lambda: datetime(2026, 8, 24, tzinfo=UTC))


async def _ask(services: Services, text: str) -> object:
    return await services.core.answer(parse_intent(text), CHANNEL)


async def test_a_number_one_repository_has_is_answered_from_it(services: Services) -> None:
    for number, repo in ((ONLY_VERL, VERL), (ONLY_TITAN, TITAN)):
        reply = await _ask(services, f"PR #{number} 值得读吗")
        assert isinstance(reply, PRReply), reply
        assert (reply.repo, reply.pr.number) == (repo, number)


async def test_a_number_both_have_is_asked_back_and_a_name_picks_one(services: Services) -> None:
    back = await _ask(services, f"#{BOTH} 值得读吗")
    assert isinstance(back, ClarifyReply)
    assert back.text == (f"#{BOTH} 在 {VERL}、{TITAN} 里都有。请说是哪一个，例如“verl 的 #{BOTH}”或"
                         f"“torchtitan 的 #{BOTH}”。")
    for said, repo in ((f"verl 的 #{BOTH} 值得读吗", VERL), (f"what does torchtitan PR {BOTH} do", TITAN)):
        reply = await _ask(services, said)
        assert isinstance(reply, PRReply), reply
        assert reply.repo == repo


async def test_access_stays_per_repository(services: Services) -> None:
    reply = await _ask(services, "OpenRLHF/OpenRLHF#100 值得读吗")
    assert isinstance(reply, ErrorReply)
    assert VERL in reply.message
