"""The mechanisms of issue 26's second round, one by one (pure functions, no I/O): the canonical spelling
(:mod:`bot.understand.canon`), the message's shape (:mod:`bot.understand.shape`), subscriptions by part
(:mod:`bot.understand.subparts`), search words by part of speech (:mod:`bot.understand.tokens`) and what a
request in a thread inherits (:mod:`bot.understand.inherit`)."""

from __future__ import annotations

from collections import Counter

import pytest

from bot.understand import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    LabelIntent,
    MergedIntent,
    PRIntent,
    QuestionIntent,
    SubscribeIntent,
    UnsubscribeIntent,
    understand,
)
from bot.understand.canon import canonical
from bot.understand.followup import Remembered
from bot.understand.inherit import inherit
from bot.understand.shape import asks_capability, feedback, remark, without_courtesy
from bot.understand.subparts import PartRequest, part_request
from bot.understand.tokens import chinese_words
from bot.understand.vocabulary import Vocabulary


@pytest.mark.parametrize(("said", "read"), [
    ("我的訂閱有哪些", "我的订阅有哪些"),  # traditional characters
    ("那它有什麼風險", "那它有什么风险"),
    ("取消定阅 veomni", "取消订阅 veomni"),  # homophones of the bot's verbs, by pinyin
    ("订悦 sglang", "订阅 sglang"),
    ("npu 的退丁了吧", "npu 的退订了吧"),
    ("上周的周抱发一下", "上周的周报发一下"),
    ("麻烦直接帮我订上吧", "麻烦直接帮我订阅吧"),
    ("我的gihtub是 li", "我的github是 li"),  # one swap or edit from the bot's English words
    ("ckpt chnages lately", "ckpt changes lately"),
    ("I changed my mind", "I changed my mind"),  # another form of a word is no typo
    ("label labels merge", "label labels merge"),
    ("预订会议室", "预订会议室"),  # a word that only shares a character stays
])
def test_one_spelling_before_any_rule(said: str, read: str) -> None:
    assert canonical(said) == read


@pytest.mark.parametrize(("text", "is_remark"), [
    ("各位，上周的周报我已经转到部门群里了，大家有空可以重点看看 npu 那几个改动", True),
    ("@王哥 我昨天说的那个 bug 好像就是 #5899 修的 我回头拉下最新的试试", True),
    ("@Lukas I think #5961 is the fix for your vllm preprocessor issue, can you try?", True),
    ("fyi the W16 digest mentions #6053 rename, it will break your imports from volcengine", True),
    ("我先去吃饭了 上周 digest 回来再看", True),
    ("<@U0ALICE> PR #6046 值得读吗", False),  # a mention alone asks nothing of anyone
    ("我想订阅一下 megatron 和 fsdp 这两个标签", False),  # what the speaker wants of the bot
    ("麻烦帮我整理一下上周合入的PR周报，我周一例会要用，谢谢", False),
])
def test_remarks_to_colleagues_by_their_shape(text: str, is_remark: bool) -> None:
    assert remark(text) is is_remark


def test_feedback_capability_and_courtesy() -> None:
    assert feedback("感谢，整理得非常清楚，帮大忙了🙏") == "thanks"
    assert feedback("bot 你这回复也太慢了吧") == "complaint"
    assert feedback("Thank you very much, is very helpful") == "thanks"
    assert feedback("麻烦发一下上周的周报，谢谢") is None  # a request with thanks is the request
    assert asks_capability("不好意思打扰一下，请问这个机器人都支持哪些功能？")
    assert asks_capability("what's this bot good for")
    assert not asks_capability("你能帮我看看上周的周报吗")
    assert without_courtesy("明白了。如果合进内部分支有风险吗") == "如果合进内部分支有风险吗"
    assert without_courtesy("不对不对我说的不是这个我要的是三月份的") == "我要的是三月份的"
    assert without_courtesy("好的 上周周报") == "上周周报"


@pytest.mark.parametrize(("text", "part"), [
    ("rollout 和 megatron 先都停掉 只看 npu", PartRequest("remove", ("rollout", "megatron"))),
    ("那个npu的我不想要了就是npu的那个提醒你给我去掉吧rollout的留着", PartRequest("remove", ("npu",))),
    ("please stop the alerts of contributor-048, keep the other", PartRequest("remove", ("contributor-048",))),
    ("drop the author part, keep the folder", PartRequest("remove", ("kind:author",))),
    ("npu 的不用了 只留目录那个", PartRequest("remove", ("npu",))),
    ("再加个 trtllm", PartRequest("add", ("trtllm",))),
    ("also throw in sglang", PartRequest("add", ("sglang",))),
    ("上周 npu 有什么", None),  # no cue of a subscription
])
def test_each_value_takes_the_cue_of_its_clause(text: str, part: PartRequest | None) -> None:
    assert part_request(text) == part


def test_search_words_are_nouns_and_words_the_dictionary_does_not_know() -> None:
    words = chinese_words("想了解一下就是别的蒸馏相关代码权重提前评估")
    assert "权重" in words
    assert not {"版本", "功能", "整体"} & set(chinese_words("升级版本的功能整体评估"))  # generic nouns are filler
    assert not {"了解", "就是", "别的", "提前"} & set(words)
    assert "蒸馏" in chinese_words("别的蒸馏相关", keep=["蒸馏"])  # a concept word always stays


def test_a_request_in_a_thread_takes_what_it_leaves_unsaid() -> None:
    month = Remembered("label", window="month-0", label="trainer")
    assert inherit(LabelIntent("rollout"), month) == LabelIntent("rollout", window="month-0")
    assert inherit(LabelIntent("rollout", window="last"), month) == LabelIntent("rollout", window="last")
    assert inherit(MergedIntent(focus="authors"), month) == MergedIntent("month-0", focus="authors")
    pr = Remembered("pr", number=6053)
    asked = understand("影响 import 吗")
    assert isinstance(asked, QuestionIntent)
    assert inherit(asked, pr) == PRIntent(6053, language="zh", question="risks")
    assert inherit(understand("What are the difference with #5997?"), pr) == CompareIntent((6053, 5997),
                                                                                           language="en")
    event = understand("Give me the PRs of that week")
    assert isinstance(event, ClarifyIntent)
    assert event.problem == "unknown_ref"
    assert inherit(event, Remembered("digest", window="*-W14")) == MergedIntent("*-W14", language="en")
    assert inherit(DigestIntent(), None) == DigestIntent()


@pytest.mark.parametrize("text", ["这个标签也帮我订上", "subscribe me to that label", "把它订阅一下", "退订这个标签"])
def test_a_subscription_pointing_at_the_thread_s_label_takes_it(text: str) -> None:
    asked = understand(text)
    assert isinstance(asked, SubscribeIntent | UnsubscribeIntent), asked
    made = inherit(asked, Remembered("label", window="recent", label="fully_async"))
    assert type(made) is type(asked)
    assert (made.label, made.text) == ("fully_async", "")
    assert inherit(asked, Remembered("digest", window="last")) == asked  # no label in the thread: as said
    named = understand("这个也订上：npu")
    assert inherit(named, Remembered("label", label="fully_async")) == named  # a value of its own wins


@pytest.mark.parametrize(("text", "kind"), [
    ("把这周几个 sglang 的 PR 比一比", ClarifyIntent),  # PRs named only by topic
    ("上次 oncall 轮换那周的周报", ClarifyIntent),  # a time known only outside the chat
    ("就是那个上周的那个贡献最多的那些人是谁啊", MergedIntent),
    ("npu 这块上周进展怎么样", LabelIntent),
    ("你都会些啥", HelpIntent),
])
def test_classes_of_the_audit(text: str, kind: type) -> None:
    assert type(understand(text)) is kind


def test_numbers_said_in_chinese_digits_or_typed_with_a_letter_o_are_pr_numbers() -> None:
    assert canonical("六零二九 风险大不大") == "6029 风险大不大"
    assert canonical("#6O46 从哪看起") == "#6046 从哪看起"
    assert canonical("一二 个") == "一二 个"  # two characters are no number said digit by digit
    assert understand("PR 五九八九 讲的是什么") == PRIntent(5989, language="zh", question="what")


def test_words_written_apart_join_only_into_an_identifier_of_the_data() -> None:
    vocab = Vocabulary(labels={"fully_async", "vllm", "rollout"}, words=Counter({"routed_experts": 3,
                                                                               "vllm_rollout": 5}))
    assert vocab.joined(("fully", "async", "bug")) == ("fully_async", "bug")
    assert vocab.joined(("routed", "experts")) == ("routed_experts",)
    assert vocab.joined(("vllm", "rollout")) == ("vllm", "rollout")  # two labels stay two
    assert vocab.joined(("flash", "attention")) == ("flash", "attention")  # nothing the data writes


def test_a_message_the_rules_do_not_read_takes_the_request_of_the_nearest_phrasings() -> None:
    from bot.understand.nearest import nearest_kind, read_by_nearest

    found = nearest_kind("我现在订着哪些呀")
    assert found is not None
    assert found[0] == "list_subscriptions"
    assert read_by_nearest("上周仓库里都在忙些啥呢") == DigestIntent(week="last", language="zh")
    assert read_by_nearest("zzz qqq") is None  # nothing near
    # a guess never changes a subscription, and a remark is never guessed at
    assert not isinstance(read_by_nearest("把 ci 的订阅都清掉算了吧"), (SubscribeIntent, UnsubscribeIntent))
    remark_ = understand("我先去吃饭了 回头再看")
    assert isinstance(remark_, HelpIntent)
    assert remark_.remark
