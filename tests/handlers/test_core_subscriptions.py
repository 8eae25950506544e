"""The chat core's subscriptions: the filter grammar from chat and the slash command, said back in words;
unknown labels refused with the known ones; unsubscribing an equal filter, and everything; who may change a
channel's; ``path:@me`` with a linked GitHub handle and CODEOWNERS; every change in the log."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import EXAMPLE
from fakes.git_repo import RepoBuilder

from bot.app import Services, build_services
from bot.cards.chat import render_reply_feishu, render_reply_slack, subscription_text
from bot.config import ConfiguredSubscription, Settings
from bot.filters import parse_filter
from bot.handlers.core import Conversation
from bot.handlers.intents import SubscribeIntent, parse_command, parse_intent
from bot.replies import GitHubLinkReply, SubscriptionReply, SubscriptionsReply
from bot.store import MemoryStore
from bot.subscriptions import Subscriber

REPO = "verl-project/verl"
NOW = datetime(2026, 4, 21, 2, 0, tzinfo=UTC)
CHANNEL = Conversation(platform="slack", channel="C1", user="U1")
DM = Conversation(platform="slack", channel="D1", user="U1")


def _services(settings: Settings, **update: object) -> Services:
    bound = settings.model_copy(update={"default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO, **update})
    return build_services(bound, MemoryStore(), clock=lambda: NOW)


@pytest.fixture
def services(verl_settings: Settings) -> Services:
    return _services(verl_settings)


async def _say(services: Services, text: str, where: Conversation = CHANNEL) -> SubscriptionReply:
    reply = await services.core.answer(parse_intent(text), where)
    assert isinstance(reply, SubscriptionReply), reply
    return reply


async def test_a_filter_is_stored_once_and_said_back(services: Services) -> None:
    reply = await _say(services, "订阅 npu rollout -ci")
    assert reply.change == "subscribed"
    assert reply.subscription is not None
    assert reply.subscription.filter == parse_filter("npu rollout -ci")
    text = subscription_text(reply)
    assert "已订阅 verl-project/verl：npu 或 rollout，排除 ci" in text
    assert "每 10 分钟最多一条消息" in text
    assert "npu 或 rollout，排除 ci" in str(render_reply_slack(reply)) + str(render_reply_feishu(reply))
    again = await _say(services, "订阅 rollout 和 npu 排除 ci")  # the same filter, typed otherwise
    assert again.change == "already_subscribed"
    [stored] = await services.subscriptions.of(CHANNEL.subscriber)
    assert stored.created_by == "U1"
    assert stored.created_at == NOW


@pytest.mark.parametrize(("said", "expected"), [
    ("subscribe me to npu", "label:npu"),  # the phrasings the first grammar misread
    ("订阅npu的PR", "label:npu"),
    ("subscribe label:npu path:verl/trainer/** -author:dependabot",
     "label:npu path:verl/trainer/** -author:dependabot"),
    ("subscribe verl-project/verl label:megatron importance>=6", "label:megatron importance>=6"),
    ("订阅 ascend", "label:npu"),  # the shipped alias
])
async def test_what_people_type_becomes_the_filter(services: Services, said: str, expected: str) -> None:
    reply = await _say(services, said)
    assert reply.change == "subscribed", reply.message
    assert reply.subscription is not None
    assert reply.subscription.filter.text() == expected


async def test_the_slash_command_reads_the_same_grammar(services: Services) -> None:
    reply = await services.core.answer(parse_command("subscribe npu -ci"), CHANNEL)
    assert isinstance(reply, SubscriptionReply)
    assert reply.change == "subscribed"
    assert reply.language == "zh"  # nothing but a command and labels: the channel's language
    assert "已订阅 verl-project/verl：npu" in subscription_text(reply)
    old_form = await services.core.answer(parse_command("subscribe trainer verl-project/verl"), CHANNEL)
    assert isinstance(old_form, SubscriptionReply)
    assert old_form.subscription is not None
    assert (old_form.subscription.repo, old_form.subscription.filter.text()) == (REPO, "label:trainer")
    removed = await services.core.answer(parse_command("unsubscribe all"), CHANNEL)
    assert isinstance(removed, SubscriptionReply)
    assert removed.change == "unsubscribed_all"
    assert len(removed.removed) == 2


async def test_an_unknown_label_or_key_is_refused_naming_what_is_known(services: Services) -> None:
    near = await _say(services, "订阅 rolout")  # issue 26: a near miss is corrected, and said
    assert near.change == "subscribed"
    assert near.subscription is not None
    assert near.subscription.filter.labels == ("rollout",)
    assert "按 rollout 理解了 rolout" in near.message
    reply = await _say(services, "订阅 zzqqx")
    assert reply.change == "refused"
    assert "不认识的标签 zzqqx" in reply.message
    assert "rollout" in reply.message  # the known ones are listed
    bare = await _say(services, "subscribe flavour:npu")  # no sentence: the channel's language (zh)
    assert bare.change == "refused"
    assert "不认识的条件 flavour:" in bare.message
    assert "可用的条件：label" in bare.message
    english = await _say(services, "please subscribe me to flavour:npu")
    assert english.change == "refused"
    assert "unknown filter key flavour:" in english.message
    assert "known keys: label" in english.message
    empty = await _say(services, "订阅")
    assert (empty.change, empty.message) == ("refused", "订阅什么？例如：订阅 npu rollout -ci，或 订阅 owner/name")
    assert [s.filter.text() for s in await services.subscriptions.of(CHANNEL.subscriber)] == ["label:rollout"]
    await _say(services, "退订 rollout")
    assert await services.subscriptions.of(CHANNEL.subscriber) == ()
    assert [c.action for c in await services.subscriptions.changes()] == ["subscribe", "unsubscribe"]  # nothing else


async def test_unsubscribe_an_equal_filter_or_everything(verl_settings: Settings) -> None:
    services = _services(verl_settings, allowed_repos=("other/repo",))
    for said in ("订阅 npu -ci", "订阅 trainer", "subscribe megatron in other/repo"):
        assert (await _say(services, said)).change == "subscribed"
    gone = await _say(services, "取消我的 npu -label:ci 订阅")  # the split verb, the other spelling of -ci
    assert gone.change == "unsubscribed"
    missing = await _say(services, "退订 npu")  # npu alone was never subscribed
    assert missing.change == "not_subscribed"
    assert "我的订阅" in subscription_text(missing)
    only_other = await _say(services, "unsubscribe all in other/repo")
    assert [s.repo for s in only_other.removed] == ["other/repo"]
    rest = await _say(services, "退订全部")
    assert rest.change == "unsubscribed_all"
    assert [s.filter.text() for s in rest.removed] == ["label:trainer"]
    assert "已取消本会话的全部 1 个订阅" in subscription_text(rest)
    nothing = await _say(services, "退订全部")
    assert nothing.change == "nothing_to_unsubscribe"


async def test_unsubscribing_reads_the_words_as_said_and_a_swapped_pair_of_letters(services: Services) -> None:
    who = CHANNEL.subscriber
    await services.subscriptions.add(who, REPO, parse_filter("label:ci"))
    await services.subscriptions.add(who, REPO, parse_filter("path:docs/**"))
    await services.subscriptions.add(who, REPO, parse_filter("megatron fsdp vllm"))
    gone = await _say(services, "退订 docs 那个")  # docs is an alias of the label doc, and the folder held
    assert gone.change == "unsubscribed"
    edited = await _say(services, "drop fdsp from my alerts")  # fdsp: fsdp with two letters swapped
    assert edited.change == "unsubscribed"
    assert sorted(s.filter.text() for s in await services.subscriptions.of(who)) == [
        "label:ci", "label:megatron label:vllm"]
    assert (await _say(services, "退订 dcoker")).change == "not_subscribed"  # no docker held: nothing taken
    await services.subscriptions.add(who, REPO, parse_filter("doc docker"))
    said = await _say(services, "文档那个不用推了")  # 文档: the label doc held, in the glossary's words
    assert said.change == "unsubscribed"
    assert "label:docker" in [s.filter.text() for s in await services.subscriptions.of(who)]


async def test_every_change_is_in_the_log(services: Services) -> None:
    await _say(services, "订阅 npu")
    await _say(services, "退订 npu", Conversation("slack", "C1", "U2"))
    log = await services.subscriptions.changes()
    assert [(c.by, c.action, c.subscriber, c.repo, c.filter) for c in log] == [
        ("U1", "subscribe", "slack:C1", REPO, "label:npu"),
        ("U2", "unsubscribe", "slack:C1", REPO, "label:npu"),
    ]
    assert all(c.at == NOW for c in log)


async def test_with_admins_only_they_change_a_channel_and_a_dm_stays_its_persons(verl_settings: Settings) -> None:
    services = _services(verl_settings, admins=("slack:UADMIN",))
    refused = await _say(services, "订阅 npu", Conversation("slack", "C1", "U1"))
    assert refused.change == "refused"
    assert "只有这个频道的管理员可以修改它的订阅" in refused.message
    assert "UADMIN" in refused.message
    english = await services.core.answer(parse_command("please unsubscribe me from everything"),
                                         Conversation("slack", "C1", "U1"))
    assert isinstance(english, SubscriptionReply)
    assert english.change == "refused"
    assert "Only this channel's admins" in english.message
    assert (await _say(services, "订阅 npu", Conversation("slack", "C1", "UADMIN"))).change == "subscribed"
    assert (await _say(services, "订阅 npu", DM)).change == "subscribed"  # a DM is its person's
    listed = await services.core.answer(parse_intent("我的订阅"), Conversation("slack", "C1", "U1"))
    assert isinstance(listed, SubscriptionsReply)  # anyone may look
    assert len(listed.subscriptions) == 1
    assert [c.by for c in await services.subscriptions.changes()] == ["UADMIN", "U1"]


async def test_a_channel_s_own_admins_replace_the_global_ones(verl_settings: Settings) -> None:
    from bot.config import ChannelConfig

    services = _services(verl_settings, admins=("slack:UADMIN",),
                         channels={"slack:C2": ChannelConfig(admins=("ULEAD",)), "slack:C3": ChannelConfig(admins=())})
    assert (await _say(services, "订阅 npu", Conversation("slack", "C2", "UADMIN"))).change == "refused"
    assert (await _say(services, "订阅 npu", Conversation("slack", "C2", "ULEAD"))).change == "subscribed"
    assert (await _say(services, "订阅 npu", Conversation("slack", "C3", "U9"))).change == "subscribed"


async def test_config_file_subscriptions_are_listed_and_changed_only_there(verl_settings: Settings) -> None:
    services = _services(verl_settings, subscriptions=(
        ConfiguredSubscription(subscriber="slack:C1", filter="path:verl/trainer/** -label:ci"),))
    listed = await services.core.answer(parse_intent("我的订阅"), CHANNEL)
    assert isinstance(listed, SubscriptionsReply)
    [configured] = listed.subscriptions
    assert configured.from_config
    assert "路径 verl/trainer/**，排除 ci（verl-project/verl）（配置文件）" in str(render_reply_slack(listed))
    again = await _say(services, "订阅 path:verl/trainer/** -ci")
    assert again.change == "already_subscribed"
    cannot = await _say(services, "退订 path:verl/trainer/** -ci")
    assert cannot.change == "not_subscribed"
    assert "配置文件" in cannot.message


async def test_path_me_needs_a_github_handle_and_codeowners(verl_settings: Settings, tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "clone")
    repo.write(".github/CODEOWNERS", "*  @core\n/verl/trainer/  @alice\n")
    repo.write("verl/trainer/ppo.py", "x = 1\n")
    repo.commit("first (#1)", NOW - timedelta(days=2))
    repo.git("remote", "add", "origin", "https://github.com/acme/rocket.git")
    services = _services(verl_settings, default_source=f"git:{repo.path}", default_repo="acme/rocket")
    core = services.core
    before = await _say(services, "订阅 path:@me", DM)
    assert before.change == "refused"
    assert "我的 GitHub 是 NAME" in before.message
    linked = await core.answer(parse_intent("我的 GitHub 是 alice"), DM)
    assert isinstance(linked, GitHubLinkReply)
    assert linked.paths == ("/verl/trainer/",)
    assert "/verl/trainer/" in str(render_reply_slack(linked))
    after = await _say(services, "subscribe path:@me", DM)
    assert after.change == "subscribed", after.message
    assert after.message == ""
    await core.answer(parse_intent("my GitHub is nobody"), Conversation("slack", "D2", "U2"))
    nobody = await _say(services, "subscribe path:@me", Conversation("slack", "D2", "U2"))
    assert nobody.change == "subscribed"
    # a bare command: the person's language (issue 26: they wrote English before), else the channel's
    assert "gives @nobody no paths yet" in nobody.message


async def test_a_snapshot_has_no_codeowners_and_the_person_is_told(services: Services) -> None:
    await services.core.answer(parse_intent("我的 GitHub 是 alice"), DM)
    reply = await _say(services, "订阅 path:@me", DM)
    assert reply.change == "refused"
    assert "看不到 CODEOWNERS" in reply.message
    assert "git:PATH" in reply.message
    assert await services.subscriptions.of(DM.subscriber) == ()


async def test_the_cards_subscribe_button_still_follows_one_label(services: Services) -> None:
    reply = await services.core.answer(SubscribeIntent("NPU", REPO), CHANNEL)
    assert isinstance(reply, SubscriptionReply)
    assert reply.change == "subscribed"
    assert [s.filter.text() for s in await services.subscriptions.of(Subscriber("slack", "C1"))] == ["label:npu"]


async def test_the_access_check_is_asked_before_a_subscription_is_stored(verl_settings: Settings) -> None:
    """The seam issue 14's check plugs into (may this channel see the repository, is a cap reached)."""
    from bot.errors import PrhubError

    asked: list[tuple[str, str, str]] = []

    class Guard:
        async def check_subscribe(self, who: Subscriber, user: str, repo: str) -> None:
            asked.append((who.key, user, repo))
            if repo == "secret/repo":
                raise PrhubError("this channel may not see secret/repo")

    bound = verl_settings.model_copy(update={"default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO})
    services = build_services(bound, MemoryStore(), clock=lambda: NOW, guard=Guard())
    assert (await _say(services, "订阅 npu")).change == "subscribed"
    refused = await _say(services, "subscribe npu in secret/repo")
    assert (refused.change, refused.message) == ("refused", "this channel may not see secret/repo")
    assert asked == [("slack:C1", "U1", REPO), ("slack:C1", "U1", "secret/repo")]
    assert [s.repo for s in await services.subscriptions.of(CHANNEL.subscriber)] == [REPO]


async def test_saving_says_what_it_would_have_sent(services: Services) -> None:
    """The preview on saving (issue 29): the count the data gives for the same filter and the last four weeks
    (the example file holds 2026-W16, inside them), on both platforms' replies; none when nothing is saved."""
    import json

    records = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    wanted = [r["number"] for r in records
              if any(str(f["path"]).startswith("verl/trainer/") for f in r["files"])]
    reply = await _say(services, "订阅 path:verl/trainer")
    assert reply.change == "subscribed"
    assert reply.preview.startswith(f"过去四周（03-25 至 04-21，合并 {len(records)} 个 PR）这个订阅会发出 "
                                    f"{len(wanted)} 条提醒（其中 0 条来自机器人），例如 #")
    for said in (subscription_text(reply), str(render_reply_slack(reply)), str(render_reply_feishu(reply))):
        assert f"会发出 {len(wanted)} 条提醒" in said
        assert "退订 path:verl/trainer" in said
    again = await _say(services, "订阅 path:verl/trainer")
    assert again.change == "already_subscribed"
    assert again.preview == ""
