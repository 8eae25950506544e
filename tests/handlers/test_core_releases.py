"""Release questions in chat (issue 29), through the chat core both doors share, over a real tagged git repository
replaying verl 2026-W15/W16: "v0.7.1 改了啥" gives the release's digest with its notes (Slack and Feishu renderings),
"what's new since v0.7.0" the PRs merged after it, a PR answer says its release, and an unknown tag names the latest."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from fakes.git_repo import RepoBuilder
from release_support import REPO, release_records, tagged_repo

from bot.app import Services, build_services
from bot.cards.chat import render_reply_feishu, render_reply_slack
from bot.config import Settings
from bot.handlers.core import Conversation
from bot.handlers.intents import parse_command, parse_intent
from bot.replies import DigestReply, ErrorReply, PRReply
from bot.store import MemoryStore

NOW = datetime(2026, 4, 21, 2, 0, tzinfo=UTC)
CHANNEL = Conversation(platform="slack", channel="C1", user="U1")


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoBuilder, dict[str, int]]:
    return tagged_repo(tmp_path_factory.mktemp("verl") / "verl", release_records())


@pytest.fixture
def services(verl_settings: Settings, tagged: tuple[RepoBuilder, dict[str, int]]) -> Services:
    repo, _ = tagged
    bound = verl_settings.model_copy(update={"default_source": f"git:{repo.path}", "default_repo": REPO})
    return build_services(bound, MemoryStore(), clock=lambda: NOW)


async def _digest(services: Services, text: str) -> DigestReply:
    reply = await services.core.answer(parse_intent(text), CHANNEL)
    assert isinstance(reply, DigestReply), reply
    return reply


@pytest.mark.parametrize("said", ["v0.7.1 改了啥", "what changed in v0.7.1?", "v0.7.1 的发布说明"])
async def test_a_release_question_gets_the_release_digest(services: Services, said: str,
                                                          tagged: tuple[RepoBuilder, dict[str, int]]) -> None:
    repo, _ = tagged
    expected = {int(line.rsplit("(#", 1)[1].rstrip(")")) for line in
                repo.git("log", "--format=%s", "v0.7.0..v0.7.1").splitlines() if "(#" in line}
    reply = await _digest(services, said)
    digest = reply.digest
    assert (digest.release, digest.previous_release) == ("v0.7.1", "v0.7.0")
    assert {pr.number for pr in digest.prs} == expected
    slack = json.dumps(render_reply_slack(reply), ensure_ascii=False)
    feishu = json.dumps(render_reply_feishu(reply), ensure_ascii=False)
    zh = digest.language == "zh"
    for rendered in (slack, feishu):
        assert ("v0.7.1 发布说明" if zh else "v0.7.1 release notes") in rendered
        assert ("已发布于 v0.7.1" if zh else "released in v0.7.1") in rendered


async def test_since_a_release_and_the_slash_command(services: Services) -> None:
    since = await _digest(services, "what's new since v0.7.0")
    assert since.digest.language == "en"
    assert since.digest.release is None
    assert since.digest.previous_release == "v0.7.0"
    states = [pr.released_in for pr in since.digest.prs]
    assert (states.count("v0.7.1"), states.count(None)) == (24, 19)  # what v0.7.1 took, and what is not out yet
    reply = await services.core.answer(parse_command("digest v0.7.1"), CHANNEL)
    assert isinstance(reply, DigestReply)
    assert reply.digest.release == "v0.7.1"


async def test_a_pr_answer_says_its_release(services: Services, tagged: tuple[RepoBuilder, dict[str, int]]) -> None:
    _, placed = tagged
    reply = await services.core.answer(parse_intent(f"PR #{placed['v0.7.1']} 值得读吗"), CHANNEL)
    assert isinstance(reply, PRReply)
    assert "已发布于 v0.7.1" in json.dumps(render_reply_slack(reply), ensure_ascii=False)
    later = await services.core.answer(parse_intent(f"PR #{placed['nightly']} 值得读吗"), CHANNEL)
    assert "尚未发布" in json.dumps(render_reply_feishu(later), ensure_ascii=False)


async def test_an_unknown_release_names_the_latest(services: Services) -> None:
    reply = await services.core.answer(parse_intent("v0.9.0 改了啥"), CHANNEL)
    assert isinstance(reply, ErrorReply)
    assert "v0.9.0" in reply.message
    assert "v0.7.1" in reply.message
