"""The filter grammar, as a table: what people type (zh and en, every key, exclusions) -> the canonical
filter text; then errors, round trips (JSON, ``text()``, ``describe``) and whole subscription requests."""

from __future__ import annotations

import pytest

from bot.errors import FilterError
from bot.filters import Bound, Filter, Term, describe, parse_filter, parse_subscription, subscription_action

# (typed, canonical Filter.text())
TABLE: list[tuple[str, str]] = [
    # bare words are labels; zh and en joining words and punctuation
    ("npu", "label:npu"),
    ("NPU", "label:npu"),
    ("#npu", "label:npu"),
    ("npu rollout -ci", "label:npu label:rollout -label:ci"),
    ("npu 和 rollout", "label:npu label:rollout"),
    ("npu和rollout", "label:npu label:rollout"),
    ("npu 与 rollout 及 trainer", "label:npu label:rollout label:trainer"),
    ("npu 或者 rollout", "label:npu label:rollout"),
    ("a、b", "label:a label:b"),
    ("npu,rollout", "label:npu label:rollout"),
    ("npu，rollout；trainer", "label:npu label:rollout label:trainer"),
    ("npu, rollout", "label:npu label:rollout"),
    ("npu | rollout & trainer", "label:npu label:rollout label:trainer"),
    ("npu and rollout or trainer", "label:npu label:rollout label:trainer"),
    ("ｎｐｕ　ｒｏｌｌｏｕｔ", "label:npu label:rollout"),
    ("npu 相关的 PR", "label:npu"),
    ("npu - rollout", "label:npu label:rollout"),
    ("npu相关的PR", "label:npu"),
    ("kind/bug", "label:kind/bug"),
    ('"good first issue"', 'label:"good first issue"'),
    ('label:"priority:high"', "label:priority:high"),
    ('"all"', "label:all"),
    # label key, zh and en, several values
    ("label:npu", "label:npu"),
    ("labels:npu,rollout", "label:npu label:rollout"),
    ("标签:npu", "label:npu"),
    ("标签：npu", "label:npu"),
    ("标签 npu", "label:npu"),
    ("+label:npu", "label:npu"),
    # path
    ("path:verl/trainer/**", "path:verl/trainer/**"),
    ("path:/verl/trainer/", "path:verl/trainer/"),
    ("path:./verl/trainer", "path:verl/trainer"),
    ("路径:verl/trainer/**", "path:verl/trainer/**"),
    ("路径 verl/trainer/**", "path:verl/trainer/**"),
    ("路径verl/trainer", "path:verl/trainer"),
    ("path:a/**,b/**", "path:a/** path:b/**"),
    ("路径 a/** 或 b/**", "path:a/** path:b/**"),
    ("verl/trainer/**", "path:verl/trainer/**"),
    ("path:verl/{trainer,workers}/**", "path:verl/{trainer,workers}/**"),
    ('path:"docs/my notes/**"', 'path:"docs/my notes/**"'),
    ("file:setup.py", "path:setup.py"),
    # CODEOWNERS
    ("path:@me", "path:@me"),
    ("path:@Alice", "path:@alice"),
    ("path:@verl-project/Trainer-Team", "path:@verl-project/trainer-team"),
    ("owner:alice", "path:@alice"),
    ("owner:me", "path:@me"),
    ("我负责的路径", "path:@me"),
    ("我负责的代码", "path:@me"),
    ("@alice 负责的路径", "path:@alice"),
    ("my code", "path:@me"),
    ("paths I own", "path:@me"),
    ("code owned by @org/team", "path:@org/team"),
    # author
    ("author:dependabot", "author:dependabot"),
    ("author:@Alice", "author:alice"),
    ("author:dependabot[bot]", "author:dependabot"),
    ("作者:alice", "author:alice"),
    ("作者 alice 或 bob", "author:alice author:bob"),
    ("author:alice,bob", "author:alice author:bob"),
    ("by alice", "author:alice"),
    ("author:@me", "author:@me"),
    ("我的 PR", "author:@me"),
    ("my PRs", "author:@me"),
    # title
    ("title:hccl", "title:hccl"),
    ('title:"Fix  HCCL"', 'title:"fix hccl"'),
    ("标题:超时", "title:超时"),
    ("标题含 hccl", "title:hccl"),
    ('标题包含“fix hccl”', 'title:"fix hccl"'),
    ('title contains "fix hccl"', 'title:"fix hccl"'),
    # verdict
    ("verdict:close_read", "verdict:close_read"),
    ("verdict:close-read", "verdict:close_read"),
    ("verdict:skim,skip", "verdict:skim verdict:skip"),
    ("结论:精读", "verdict:close_read"),
    ("结论 值得精读 或 建议浏览", "verdict:close_read verdict:skim"),
    ("精读", "verdict:close_read"),
    ("close_read", "verdict:close_read"),
    ("npu 可跳过", "label:npu verdict:skip"),
    # comparisons
    ("importance>=6", "importance>=6"),
    ("importance:>=6", "importance>=6"),
    ("importance >= 6", "importance>=6"),
    ("importance≥6", "importance>=6"),
    ("importance>5", "importance>=6"),
    ("importance<4", "importance<=3"),
    ("importance=7", "importance=7"),
    ("importance:6", "importance>=6"),
    ("importance:6..8", "importance:6..8"),
    ("importance 6-8", "importance:6..8"),
    ("importance at least 6", "importance>=6"),
    ("importance 6 or more", "importance>=6"),
    ("importance>=6 importance<=8", "importance:6..8"),
    ("重要性>=6", "importance>=6"),
    ("重要性 ≥ 6", "importance>=6"),
    ("重要性 6 以上", "importance>=6"),
    ("重要性6分以上", "importance>=6"),
    ("重要性不低于 6", "importance>=6"),
    ("重要性 6 到 8", "importance:6..8"),
    ("insight>=7", "insight>=7"),
    ("洞察 ≥ 7", "insight>=7"),
    ("minutes<=15", "minutes<=15"),
    ("minutes:15", "minutes<=15"),
    ("阅读时间 ≤ 15 分钟", "minutes<=15"),
    ("10 分钟以内", "minutes<=10"),
    ("under 10 minutes", "minutes<=10"),
    # exclusions: -word, -key:value, words; an exclusion word covers what follows
    ("-ci", "-label:ci"),
    ("!ci", "-label:ci"),
    ("-label:ci", "-label:ci"),
    ("-ci,docs", "-label:ci -label:docs"),
    ("-author:dependabot", "-author:dependabot"),
    ("-path:docs/**", "-path:docs/**"),
    ("-title:wip", "-title:wip"),
    ("-verdict:skip", "-verdict:skip"),
    ("-path:@org/infra", "-path:@org/infra"),
    ("npu 排除 ci", "label:npu -label:ci"),
    ("npu，排除 ci", "label:npu -label:ci"),
    ("npu 不要 ci", "label:npu -label:ci"),
    ("npu不要ci", "label:npu -label:ci"),
    ("npu 但不要 ci 和 docs", "label:npu -label:ci -label:docs"),
    ("npu 不包括 ci", "label:npu -label:ci"),
    ("除了 ci 以外的 npu", "label:npu -label:ci"),
    ("npu except ci", "label:npu -label:ci"),
    ("npu but not ci", "label:npu -label:ci"),
    ("npu without ci or docs", "label:npu -label:ci -label:docs"),
    ("npu, no ci", "label:npu -label:ci"),
    ("排除 作者 dependabot", "-author:dependabot"),
    # the examples, whole
    ("label:npu path:verl/trainer/** -author:dependabot", "label:npu path:verl/trainer/** -author:dependabot"),
    ("label:megatron importance>=6", "label:megatron importance>=6"),
    ("path:verl/trainer/** -label:ci", "path:verl/trainer/** -label:ci"),
    # every PR
    ("", ""),
    ("全部", ""),
    ("all", ""),
    ("*", ""),
    ("-ci 全部", "-label:ci"),
]


@pytest.mark.parametrize(("typed", "canonical"), TABLE)
def test_grammar_table(typed: str, canonical: str) -> None:
    flt = parse_filter(typed)
    assert flt.text() == canonical
    assert parse_filter(flt.text()) == flt  # the canonical text reads back
    assert Filter.model_validate_json(flt.model_dump_json()) == flt  # storable
    for language in ("zh", "en"):
        assert parse_filter(describe(flt, language)) == flt, describe(flt, language)  # said back, read back


ERRORS: list[tuple[str, str, str]] = [
    # (typed, a piece of the English message, a piece of the Chinese message)
    ("foo:bar", "unknown filter key foo:", "不认识的条件 foo:"),
    ("foo:bar", "known keys: label", "可用的条件：label"),
    ("priority:high", 'quote it: label:"priority:high"', "请加引号"),
    ("verdict:great", "use close_read, skim or skip", "close_read（精读）"),
    ("importance>=11", "importance takes a number 1-10", "1–10 的数字"),
    ("importance:high", "importance takes a number", "importance 后面要写"),
    ("importance>=8 importance<=3", "no PR can match", "互相矛盾"),
    ("-importance>=6", "cannot exclude a comparison", "不能排除"),
    ("不要 重要性>=6", "cannot exclude a comparison", "不能排除"),
    ('title:"fix', "a quote is not closed", "引号没有闭合"),
    ("label:", "the value is missing", "缺少值"),
    ("路径", "needs a value", "缺少值"),
    ("author label:npu", "needs a value", "缺少值"),
    ("@me", "ambiguous", "有歧义"),
    ("path:@", "expected @me, @handle", "应为 @me"),
    ("repo:a/b npu", "not a filter term here", "不能写在筛选条件里"),
]


@pytest.mark.parametrize(("typed", "en", "zh"), ERRORS)
def test_errors_name_what_is_known(typed: str, en: str, zh: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse_filter(typed)
    assert en in str(caught.value)
    assert en in caught.value.message("en")
    assert zh in caught.value.message("zh")


def test_unknown_labels_name_the_closest_and_the_known_ones() -> None:
    known = ["npu", "rollout", "trainer", "ci", "doc"]
    assert parse_filter("npu -ci", known_labels=known).text() == "label:npu -label:ci"
    with pytest.raises(FilterError) as caught:
        parse_filter("rolout -ci", known_labels=known)
    error = caught.value
    assert "unknown label rolout" in str(error)
    assert "Did you mean rollout?" in str(error)
    assert "Labels of this repository: ci, doc, npu, rollout, trainer" in str(error)
    assert "不认识的标签 rolout" in error.message("zh")
    assert "你是不是想写 rollout" in error.message("zh")
    with pytest.raises(FilterError, match="unknown label zzz"):
        parse_filter("npu -zzz", known_labels=known)  # a mistyped exclusion is caught too


def test_aliases_rename_labels() -> None:
    assert parse_filter("ascend -docs", aliases={"ascend": "npu", "docs": "doc"}).text() == "label:npu -label:doc"
    assert parse_filter("Ascend", aliases={"ASCEND": "NPU"}, known_labels=["npu"]).text() == "label:npu"


def test_the_same_filter_is_equal_however_typed() -> None:
    forms = ["npu rollout -ci", "rollout 和 npu 排除 ci", "label:rollout,npu -label:ci", "-ci npu、rollout、npu",
             "subscribe-like NPU ROLLOUT -CI".removeprefix("subscribe-like ")]
    parsed = {parse_filter(f) for f in forms}
    assert len(parsed) == 1
    flt = parsed.pop()
    assert hash(flt) == hash(parse_filter("npu rollout -ci"))
    assert flt == Filter(include=(Term(key="label", value="ROLLOUT"), Term(key="label", value="npu")),
                         exclude=(Term(key="label", value="ci"),))


def test_described_in_both_languages() -> None:
    flt = parse_filter("npu rollout -ci")
    assert describe(flt, "zh") == "npu 或 rollout，排除 ci"
    assert describe(flt, "en") == "npu or rollout, except ci"
    full = parse_filter("label:megatron path:@me path:verl/trainer/** -author:dependabot importance>=6 "
                        "verdict:close_read")
    assert describe(full, "zh") == ("megatron，路径 verl/trainer/** 或 我负责的路径（CODEOWNERS），结论 值得精读，"
                                    "重要性 ≥ 6，排除 作者 dependabot")
    assert describe(full, "en") == ("megatron, path verl/trainer/** or paths I own (CODEOWNERS), verdict close_read, "
                                    "importance ≥ 6, except author dependabot")
    assert describe(Filter(), "zh") == "全部 PR"
    assert describe(Filter(), "en") == "all PRs"


def test_bounds_are_validated_in_the_model_too() -> None:
    with pytest.raises(ValueError, match="never matches"):
        Filter(bounds=(Bound(key="importance", low=8), Bound(key="importance", high=3)))
    with pytest.raises(ValueError, match="verdict"):
        Filter(include=(Term(key="verdict", value="maybe"),))


SUBSCRIPTIONS: list[tuple[str, str, str | None, str | None, str]] = [
    # (typed, action, repo, filter text or None, language)
    ("订阅 npu rollout -ci", "subscribe", None, "label:npu label:rollout -label:ci", "zh"),
    ("订阅 npu 和 rollout", "subscribe", None, "label:npu label:rollout", "zh"),
    ("订阅 a、b", "subscribe", None, "label:a label:b", "zh"),
    ("订阅 npu,rollout", "subscribe", None, "label:npu label:rollout", "zh"),
    ("请帮我订阅npu和rollout", "subscribe", None, "label:npu label:rollout", "zh"),
    ("关注 npu", "subscribe", None, "label:npu", "zh"),
    ("订阅 verl-project/verl 的 npu", "subscribe", "verl-project/verl", "label:npu", "zh"),
    ("订阅 verl-project/verl", "subscribe", "verl-project/verl", "", "zh"),
    ("订阅全部", "subscribe", None, "", "zh"),
    ("在 owner/name 里订阅 npu", "subscribe", "owner/name", "label:npu", "zh"),
    ("订阅 path:@me", "subscribe", None, "path:@me", "zh"),
    ("订阅我负责的代码，不要 ci", "subscribe", None, "path:@me -label:ci", "zh"),
    ("subscribe label:npu path:verl/trainer/** -author:dependabot", "subscribe", None,
     "label:npu path:verl/trainer/** -author:dependabot", "en"),
    ("subscribe owner/name label:megatron importance>=6", "subscribe", "owner/name", "label:megatron importance>=6",
     "en"),
    ("subscribe to npu in owner/name", "subscribe", "owner/name", "label:npu", "en"),
    ("subscribe repo:owner/name npu", "subscribe", "owner/name", "label:npu", "en"),
    ("subscribe verdict:close_read", "subscribe", None, "verdict:close_read", "en"),
    ("subscribe path:@me", "subscribe", None, "path:@me", "en"),
    ("/prhub subscribe npu", "subscribe", None, "label:npu", "en"),
    ("follow my code", "subscribe", None, "path:@me", "en"),
    ("退订 npu", "unsubscribe", None, "label:npu", "zh"),
    ("取消订阅 npu rollout -ci", "unsubscribe", None, "label:npu label:rollout -label:ci", "zh"),
    ("unsubscribe from npu in owner/name", "unsubscribe", "owner/name", "label:npu", "en"),
    ("退订全部", "unsubscribe_all", None, None, "zh"),
    ("全部退订", "unsubscribe_all", None, None, "zh"),
    ("取消所有订阅", "unsubscribe_all", None, None, "zh"),
    ("退订 全部", "unsubscribe_all", None, None, "zh"),
    ("unsubscribe all", "unsubscribe_all", None, None, "en"),
    ("unsubscribe everything", "unsubscribe_all", None, None, "en"),
    ("unsubscribe all in owner/name", "unsubscribe_all", "owner/name", None, "en"),
    # the phrasings the first grammar misread: an object before "to", glued 的PR, a verb split around the filter
    ("subscribe me to npu", "subscribe", None, "label:npu", "en"),
    ("subscribe us to npu and rollout", "subscribe", None, "label:npu label:rollout", "en"),
    ("subscribe this channel to npu -ci", "subscribe", None, "label:npu -label:ci", "en"),
    ("please subscribe me to path:verl/trainer/** in owner/name", "subscribe", "owner/name",
     "path:verl/trainer/**", "en"),
    ("订阅npu的PR", "subscribe", None, "label:npu", "zh"),
    ("帮我订阅一下 npu 吧", "subscribe", None, "label:npu", "zh"),
    ("在本频道订阅 rollout", "subscribe", None, "label:rollout", "zh"),
    ("提醒我 npu 的 PR", "subscribe", None, "label:npu", "zh"),
    ("alert me about megatron", "subscribe", None, "label:megatron", "en"),
    ("取消我的 npu 订阅", "unsubscribe", None, "label:npu", "zh"),
    ("取消对 npu 和 rollout 的订阅", "unsubscribe", None, "label:npu label:rollout", "zh"),
    ("把 npu 的订阅取消掉", "unsubscribe", None, "label:npu", "zh"),
    ("别再提醒 npu 了", "unsubscribe", None, "label:npu", "zh"),
    ("stop alerts for npu", "unsubscribe", None, "label:npu", "en"),
    ("unsubscribe me from npu", "unsubscribe", None, "label:npu", "en"),
    ("取消我的全部订阅", "unsubscribe_all", None, None, "zh"),
    ("unsubscribe me from everything", "unsubscribe_all", None, None, "en"),
]


@pytest.mark.parametrize(("typed", "action", "repo", "text", "language"), SUBSCRIPTIONS)
def test_subscription_requests(typed: str, action: str, repo: str | None, text: str | None, language: str) -> None:
    command = parse_subscription(typed)
    assert command.action == action
    assert command.repo == repo
    assert (command.filter.text() if command.filter is not None else None) == text
    assert command.language == language


@pytest.mark.parametrize(("typed", "action"), [
    ("订阅 npu", "subscribe"), ("请帮我关注 npu", "subscribe"), ("watch npu", "subscribe"),
    ("取消我的 npu 订阅", "unsubscribe"), ("stop alerts for npu", "unsubscribe"), ("退订全部", "unsubscribe_all"),
    # the looser verbs in the middle of a sentence are not requests
    ("本周值得关注的 PR 有哪些", None), ("what should I watch out for this week", None),
    ("上周哪些 PR 需要提醒我注意", None), ("hello npu", None),
])
def test_the_action_of_a_chat_message(typed: str, action: str | None) -> None:
    assert subscription_action(typed) == action


def test_known_repos_tell_a_repository_from_a_slashed_label() -> None:
    assert parse_subscription("订阅 kind/bug", known_repos=["verl-project/verl"]).filter == parse_filter("kind/bug")
    assert parse_subscription("订阅 kind/bug", known_repos=["verl-project/verl"]).repo is None
    named = parse_subscription("订阅 Verl-Project/verl npu", known_repos=["verl-project/verl"])
    assert named.repo == "Verl-Project/verl"


@pytest.mark.parametrize(("typed", "en", "zh"), [
    ("订阅", "subscribe to what?", "订阅什么？"),
    ("unsubscribe", "unsubscribe from what?", "退订什么？"),
    ("hello npu", "say subscribe, unsubscribe or unsubscribe all", "请说 订阅、退订 或 退订全部"),
    ("订阅 foo:bar", "unknown filter key foo:", "不认识的条件 foo:"),
])
def test_subscription_errors(typed: str, en: str, zh: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse_subscription(typed)
    assert en in str(caught.value)
    assert zh in caught.value.message("zh")


# Natural requests as people write them in chat, read against a repository's labels (as the handlers do).
KNOWN = ["rollout", "megatron", "npu", "ci", "fsdp", "sglang", "recipe", "trainer"]
REPOS = ["verl-project/verl"]

NATURAL: list[tuple[str, str]] = [
    # a key word after its values (the usual Chinese order, and "the X label")
    ("订阅 rollout 标签", "label:rollout"),
    ("订阅一下 rollout 标签吧", "label:rollout"),
    ("关注 sglang 标签", "label:sglang"),
    ("订阅 rollout 这个标签", "label:rollout"),
    ("订阅 rollout 的标签", "label:rollout"),
    ("关注一下 sglang 标签的 PR", "label:sglang"),
    ("提醒我 rollout 标签的 PR", "label:rollout"),
    ("订阅 npu 和 rollout 标签", "label:npu label:rollout"),
    ("订阅 npu、rollout 这两个标签", "label:npu label:rollout"),
    ("订阅 npu 标签 和 rollout 标签", "label:npu label:rollout"),
    ("订阅 “npu” 标签", "label:npu"),
    ("订阅 rollout 标签，不要 ci", "label:rollout -label:ci"),
    ("订阅 npu，不要 ci 标签", "label:npu -label:ci"),
    ("订阅 不要 ci 标签", "-label:ci"),
    ("订阅 rollout 标签 作者 alice", "label:rollout author:alice"),
    ("subscribe me to the rollout label pls", "label:rollout"),
    ("subscribe to npu label", "label:npu"),
    ("subscribe to the npu and rollout labels", "label:npu label:rollout"),
    ("watch the megatron label please", "label:megatron"),
    ("follow the fsdp tag", "label:fsdp"),
    ("subscribe to the npu label except ci", "label:npu -label:ci"),
    ("订阅 verl/trainer 目录", "path:verl/trainer"),
    ("订阅 verl/trainer 这个目录", "path:verl/trainer"),
    ("订阅 verl/trainer 路径", "path:verl/trainer"),
    ("订阅 verl/trainer 和 verl/workers 目录", "path:verl/trainer path:verl/workers"),
    ("订阅 verl/trainer 目录，不要 ci 标签", "path:verl/trainer -label:ci"),
    ("订阅 alice 作者", "author:alice"),
    ("订阅 alice 和 bob 作者", "author:alice author:bob"),
    # words that only frame the request: politeness, particles, pronouns, trailing punctuation
    ("@_user_3 我们订阅下 ci 标签？", "label:ci"),
    ("pls watch megatron for me", "label:megatron"),
    ("follow sglang for us", "label:sglang"),
    ("watch for rollout please", "label:rollout"),
    ("给我订阅一下 fsdp 呗", "label:fsdp"),
    ("订阅 npu 哈", "label:npu"),
    ("帮我订阅 megatron 标签，谢谢！", "label:megatron"),
    ("可以订阅 npu 标签吗？", "label:npu"),
    ("能帮我订阅 megatron 吗?", "label:megatron"),
    ("订阅 rollout 相关的 PR 吗？", "label:rollout"),
    ("订阅 npu???", "label:npu"),
    ("订阅 megatron 的 PR 给我们", "label:megatron"),
    ("subscribe to anything about rollout.", "label:rollout"),
    ("notify me about fsdp", "label:fsdp"),
    ("subscribe to PRs touching npu", "label:npu"),
    # a word with a "/" after touching / under / in / changing / 动了, or before 下面 / 里 / 目录下
    ("alert me on prs touching verl/workers", "path:verl/workers"),
    ("notify us when something lands in recipe/", "path:recipe/"),
    ("subscribe me to PRs touching verl/trainer", "path:verl/trainer"),
    ("subscribe to prs under verl/trainer/", "path:verl/trainer/"),
    ("subscribe to PRs in verl/workers", "path:verl/workers"),
    ("watch changes to verl/trainer", "path:verl/trainer"),
    ("subscribe to PRs changing verl/trainer", "path:verl/trainer"),
    ("subscribe to PRs under verl/trainer except ci", "path:verl/trainer -label:ci"),
    ("订阅 verl/trainer 目录下的 PR", "path:verl/trainer"),
    ("订阅 verl/workers 下面的改动", "path:verl/workers"),
    ("关注 verl/workers 里的改动", "path:verl/workers"),
    ("订阅动了 verl/workers 的 PR", "path:verl/workers"),
    ("提醒我 改了 verl/trainer 的 PR", "path:verl/trainer"),
    # counts, "key is", "key: value", plural keys, "when a … is merged"
    ("请帮我关注 megatron 和 fsdp 两个标签", "label:fsdp label:megatron"),
    ("订阅作者是 alice 的 PR", "author:alice"),
    ("subscribe to label: npu", "label:npu"),
    ('subscribe to label: "npu"', "label:npu"),
    ("subscribe to labels npu, rollout", "label:npu label:rollout"),
    ("notify me whenever a megatron pr is merged", "label:megatron"),
    ("notify me when a pr is merged in verl/trainer", "path:verl/trainer"),
    # an author before 提的 / 写的
    ("订阅 alice 提的 PR", "author:alice"),
    ("订阅 dependabot[bot] 提的 PR", "author:dependabot"),
    # a ? in a glob or a key:value is kept
    ("订阅 path:verl/trainer?", "path:verl/trainer?"),
    ("订阅 path:verl/?.py", "path:verl/?.py"),
]


@pytest.mark.parametrize(("typed", "canonical"), NATURAL)
def test_natural_requests(typed: str, canonical: str) -> None:
    command = parse_subscription(typed, known_labels=KNOWN, known_repos=REPOS)
    assert command.action == "subscribe"
    assert command.repo is None
    assert command.filter is not None
    assert command.filter.text() == canonical


@pytest.mark.parametrize(("typed", "en", "zh"), [
    # a key word with no value before or after it still needs one
    ("订阅 标签", "标签 needs a value", "标签 后面缺少值"),
    ("subscribe to the label", "label needs a value", "label 后面缺少值"),
    ("订阅 目录", "目录 needs a value", "目录 后面缺少值"),
    # an unknown label is refused with the known ones, however it is framed
    ("订阅 nosuchlabel", "unknown label nosuchlabel", "不认识的标签 nosuchlabel"),
    ("订阅 nosuchlabel 标签", "unknown label nosuchlabel", "不认识的标签 nosuchlabel"),
    ("订阅 rollout 标签 nosuchlabel", "unknown label nosuchlabel", "不认识的标签 nosuchlabel"),
    ("subscribe me to the nosuchlabel label pls", "unknown label nosuchlabel", "不认识的标签 nosuchlabel"),
    ("订阅 nosuchlabel 吧？", "unknown label nosuchlabel", "不认识的标签 nosuchlabel"),
    ("订阅 rolout 标签", "Did you mean rollout?", "你是不是想写 rollout"),
    ("订阅 kind/bug", "unknown label kind/bug", "不认识的标签 kind/bug"),  # a bare word with / stays a label
    # a framing word alone is nothing to subscribe to
    ("subscribe to something", "subscribe to what?", "订阅什么？"),
    ("订阅 这个标签", "标签 needs a value", "标签 后面缺少值"),
])
def test_natural_requests_that_stay_errors(typed: str, en: str, zh: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse_subscription(typed, known_labels=KNOWN, known_repos=REPOS)
    assert en in caught.value.message("en")
    assert zh in caught.value.message("zh")
    if "unknown label" in en:
        assert "Labels of this repository: ci, fsdp, megatron, npu" in caught.value.message("en")


def test_in_owner_name_is_still_the_repository() -> None:
    assert parse_subscription("subscribe to npu in verl-project/verl", known_repos=REPOS).repo == "verl-project/verl"
    assert parse_subscription("subscribe to PRs in verl-project/verl", known_repos=REPOS).repo == "verl-project/verl"
    assert parse_subscription("subscribe npu in other/repo", known_repos=REPOS).repo == "other/repo"  # the guard says
    assert parse_subscription("subscribe to PRs in owner/name").repo == "owner/name"  # any repository without a list


@pytest.mark.parametrize(("typed", "canonical"), [
    ("npu 标签", "label:npu"),
    ("the npu label", "label:npu"),
    ("verl/trainer 目录", "path:verl/trainer"),
    ("PRs touching verl/workers", "path:verl/workers"),
    ("alice 作者", "author:alice"),
])
def test_key_words_after_values_in_a_config_filter_too(typed: str, canonical: str) -> None:
    assert parse_filter(typed).text() == canonical


def _readme_section() -> str:
    from pathlib import Path
    text = (Path(__file__).parents[2] / "docs" / "user-guide.md").read_text(encoding="utf-8")
    start = text.index("## Subscriptions and alerts / 订阅与提醒")
    return text[start: text.index("\n## ", start + 1)]


def test_the_user_guide_subscription_examples_read() -> None:
    import re
    section = _readme_section()
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    requests = [part.strip() for line in block.splitlines() for part in re.split(r"\s{2,}", line)[0].split(" / ")]
    assert "订阅一下 rollout 标签吧" in requests
    for request in requests:
        assert parse_subscription(request).action in ("subscribe", "unsubscribe", "unsubscribe_all"), request
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| 条件")]
    forms = [form for row in rows for form in re.findall(r"`([^`]+)`", row.split("|")[2])]
    assert "npu 标签" in forms
    for form in forms:
        parse_filter(form)


# How people stop alerts, and ask for them with the verb at the end (Chinese order): each is the
# change it says, never a subscription to what the person wants gone.
SAID_OTHERWISE = [
    ("不用订阅 rollout 了", "unsubscribe", "label:rollout"),
    ("别再关注 ci 了", "unsubscribe", "label:ci"),
    ("不想订阅 npu", "unsubscribe", "label:npu"),
    ("rollout 的订阅取消掉吧", "unsubscribe", "label:rollout"),
    ("npu 的订阅也删掉", "unsubscribe", "label:npu"),
    ("我不想再收到 rollout 的提醒了", "unsubscribe", "label:rollout"),
    ("不要再收到 megatron 的通知", "unsubscribe", "label:megatron"),
    ("rollout 不用再通知我了", "unsubscribe", "label:rollout"),
    ("fsdp 的提醒别再发了", "unsubscribe", "label:fsdp"),
    ("don't need the npu alerts anymore", "unsubscribe", "label:npu"),
    ("I no longer want megatron alerts", "unsubscribe", "label:megatron"),
    ("stop the npu alerts", "unsubscribe", "label:npu"),
    ("turn off the rollout notifications", "unsubscribe", "label:rollout"),
    ("把所有订阅都取消", "unsubscribe_all", None),
    ("所有提醒都关掉", "unsubscribe_all", None),
    ("关掉所有提醒", "unsubscribe_all", None),
    ("把我的订阅全部取消", "unsubscribe_all", None),
    ("我的订阅全部取消", "unsubscribe_all", None),
    ("清空订阅", "unsubscribe_all", None),
    ("清空一下本频道的订阅", "unsubscribe_all", None),
    ("alert me when a sglang pr lands", "subscribe", "label:sglang"),
    ("watch any PR with npu", "subscribe", "label:npu"),
    ("sub me to npu pls", "subscribe", "label:npu"),
    ("sub recipe", "subscribe", "label:recipe"),
    ("訂閱 sglang 標籤", "subscribe", "label:sglang"),  # traditional characters
    ("取消關注 sglang", "unsubscribe", "label:sglang"),
    ("npu的提醒关掉吧", "unsubscribe", "label:npu"),
    ("不要再推 ci 的了", "unsubscribe", "label:ci"),
    ("把我所有的订阅都退了", "unsubscribe_all", None),
    ("订阅全清掉", "unsubscribe_all", None),
    ("remove all my subscriptions", "unsubscribe_all", None),
    ("turn off all my alerts", "unsubscribe_all", None),
    ("npu 订阅不要了", "unsubscribe", "label:npu"),
    ("订阅 trainer，谢谢🙏", "subscribe", "label:trainer"),  # a closing emoji is no label
    ("有 rollout 的新PR就通知我", "subscribe", "label:rollout"),
    ("以后 verl/trainer 下面有PR合入提醒我", "subscribe", "path:verl/trainer"),
    ("rollout 有新 PR 合进来的时候 @ 我一下", "subscribe", "label:rollout"),
    ("npu 的 PR 合入后提醒我", "subscribe", "label:npu"),
    ("npu 标签有更新就提醒我", "subscribe", "label:npu"),
]


@pytest.mark.parametrize(("typed", "action", "canonical"), SAID_OTHERWISE)
def test_unsubscribing_and_the_verb_at_the_end(typed: str, action: str, canonical: str | None) -> None:
    command = parse_subscription(typed, known_labels=KNOWN, known_repos=REPOS)
    assert command.action == action
    assert (command.filter.text() if command.filter is not None else None) == canonical


@pytest.mark.parametrize("typed", [
    "为什么 rollout 的提醒不再发给我了",  # a question about alerts changes nothing
    "rollout 的提醒怎么不发了？",
    "6046 合了就通知我",  # one PR: no subscription names PRs
    "记得周五提醒我开会",  # nothing about PRs
    "明天提醒我",
    "follow up: meeting moved to 3pm",  # "follow up" is no request to follow
    "follow-up on the rollout bug",
    "watch out, main is broken",
    "提醒我下午三点开会",
    "npu 的提醒怎么关掉?",  # how to: a question
])
def test_questions_and_reminders_are_no_subscription_change(typed: str) -> None:
    assert subscription_action(typed) is None


def test_a_label_written_apart_is_joined_only_when_it_is_one_label() -> None:
    """"fully async" is the label fully_async (said with a space in chat); "npu rollout" stays two labels; a word
    that is a label of its own is never swallowed."""
    from bot.filters.grammar import join_split_labels

    assert join_split_labels("fully async", ["fully_async", "async"]) == "fully async"  # async is a label
    known = ["fully_async", "npu", "rollout", "one_step_off"]
    assert parse_filter("fully async", known_labels=known).labels == ("fully_async",)
    assert parse_filter("one step off", known_labels=known).labels == ("one_step_off",)
    assert set(parse_filter("npu rollout", known_labels=known).labels) == {"npu", "rollout"}


def test_a_chat_subscription_to_a_label_said_apart_keeps_that_label() -> None:
    """In chat the filter's words arrive as label terms ("fully", "async"): the words of one label said apart are
    that label, and nothing is dropped; words that spell no label are still dropped and named."""
    from bot.handlers.subedit import fit_labels

    known = ["fully_async", "npu", "one_step_off"]
    fitted = fit_labels(parse_filter("fully async npu"), known, None, "zh")
    assert fitted.filter.labels == ("fully_async", "npu")
    assert fitted.dropped == ()
    fitted = fit_labels(parse_filter("async zebra"), known, None, "en")
    assert fitted.dropped == ("async", "zebra")
