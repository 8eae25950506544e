"""The understanding table: how people ask, in Chinese and English, with the intent and window it must give.

Each row is (message, intent class, expected window, fields). The window is the *resolved* window
name at :data:`NOW` (Wednesday 2026-04-22 10:00 in Asia/Shanghai, the middle of 2026-W17), so the
table says which week a phrase means, not how the spec is spelled; ``None`` means the message names
no window (the door's default applies). Fields are compared one by one (``language`` included when
given). The phrasings go beyond the issue's examples: typos of spacing, full-width characters, mixed
Chinese and English, polite padding, emoji, traditional characters.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.digest.window import window_from_spec
from bot.understand import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    LabelIntent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PersonalDigestIntent,
    PRIntent,
    QuestionIntent,
    SmallTalkIntent,
    SubscribeIntent,
    UnsubscribeIntent,
    understand,
)

TZ = "Asia/Shanghai"
NOW = datetime(2026, 4, 22, 10, 0, tzinfo=ZoneInfo(TZ))
W17, W16, W15, W14 = "2026-W17", "2026-W16", "2026-W15", "2026-W14"
APRIL = "2026-04-01..2026-04-30"
MARCH = "2026-03-01..2026-03-31"
W16_DAYS = "2026-04-13..2026-04-19"
RECENT = "2026-03-30..2026-04-26"
"""最近 / lately (issue 26): four weeks, here through W17 (a chat answer takes the four weeks with data)."""

Row = tuple[str, type, str | None, dict[str, Any]]


def r(message: str, kind: type, window: str | None = None, **fields: Any) -> Row:
    return (message, kind, window, fields)


D, P, C, L, M, Q = DigestIntent, PRIntent, CompareIntent, LabelIntent, MergedIntent, QuestionIntent
H, S, U, LS, CL = HelpIntent, SubscribeIntent, UnsubscribeIntent, ListSubscriptionsIntent, ClarifyIntent

TABLE: list[Row] = [
    # -- digests, every usual way of naming the week ------------------------------------------------
    r("本周周报", D, W17, language="zh"),
    r("这周的周报", D, W17),
    r("这一周周报", D, W17),
    r("本星期的报告", D, W17),
    r("上周周报", D, W16, language="zh"),
    r("上周的周报", D, W16),
    r("上一周周报", D, W16),
    r("上个星期的周报", D, W16),
    r("上礼拜周报", D, W16),
    r("上 周 周报", D, W16),  # a space typed by mistake
    r("上上周周报", D, W15),
    r("上上个星期的周报", D, W15),
    r("两周前的周报", D, W15),
    r("三周前周报", D, W14),
    r("前两周的周报", D, "2026-04-06..2026-04-19"),
    r("最近两周的情况", D, "2026-04-09..2026-04-22"),
    r("近两周总结", D, "2026-04-09..2026-04-22"),
    r("过去7天的周报", D, "2026-04-16..2026-04-22"),
    r("第16周周报", D, W16),
    r("第 16 周 周报", D, W16),
    r("第十六周周报", D, W16),
    r("16周周报", D, W16),
    r("W16 周报", D, W16),
    r("w16周报", D, W16),
    r("周报 W16", D, W16),
    r("周报W16", D, W16),
    r("周报 2026-W16", D, W16, language="zh"),
    r("周报 2026w16", D, W16),
    r("2026年第16周周报", D, W16),
    r("2026 年第 16 周的周报", D, W16),
    r("周报 2026-W１６", D, W16),  # full-width digits
    r("周报　２０２６－Ｗ１６", D, W16),  # full-width everything, ideographic space
    r("W20 周报", D, "2025-W20"),  # week 20 has not begun in 2026: the latest one
    r("本月总结", D, APRIL),
    r("这个月的报告", D, APRIL),
    r("上个月的周报", D, MARCH),
    r("上月汇总", D, MARCH),
    r("4月的周报", D, APRIL),
    r("四月份的总结", D, APRIL),
    r("2026年4月的报告", D, APRIL),
    r("3月周报", D, MARCH),
    r("4月13日到19日的周报", D, W16_DAYS),
    r("4月13日至4月19日周报", D, W16_DAYS),
    r("4月13号到19号的周报", D, W16_DAYS),
    r("4/13-4/19 周报", D, W16_DAYS),
    r("周报 2026-04-13..2026-04-19", D, W16_DAYS),
    r("2026-04-13 到 2026-04-19 的周报", D, W16_DAYS),
    r("04-13 至 04-19 周报", D, W16_DAYS),  # as the bot's own card title writes it
    r("从4月13日到4月19日的总结", D, W16_DAYS),
    r("今天的情况", D, "2026-04-22..2026-04-22"),
    r("昨天有什么", D, "2026-04-21..2026-04-21"),
    r("上周有什么", D, W16),
    r("上周", D, W16),
    r("W16", D, W16, language=None),
    r("2026-W16", D, W16, language=None),
    r("周报", D, None, language="zh"),
    r("本周周报 verl-project/verl", D, W17, repo="verl-project/verl"),
    r("verl-project/verl 上周周报", D, W16, repo="verl-project/verl"),
    r("请问上周有哪些重点 PR？🙏", D, W16),
    r("麻烦发一下上周的周报，谢谢", D, W16),
    r("帮我看看本周周报吧", D, W17),
    r("上周重点PR", D, W16),
    r("上週週報", D, W16),  # traditional characters
    r("digest", D, None),
    r("weekly digest for last week", D, W16, language="en"),
    r("weekly report last week", D, W16, language="en"),
    r("last week's digest", D, W16),
    r("digest for the week before last", D, W15),
    r("digest 2 weeks ago", D, W15),
    r("this week's report", D, W17),
    r("digest for week 16", D, W16),
    r("digest W16", D, W16),
    r("digest for week 16 of 2026", D, W16),
    r("digest 2026-W16 for verl-project/verl", D, W16, repo="verl-project/verl"),
    r("summary of this month", D, APRIL),
    r("recap for last month", D, MARCH),
    r("April digest", D, APRIL),
    r("digest for April 2026", D, APRIL),
    r("digest April 13-19", D, W16_DAYS),
    r("digest from April 13 to April 19", D, W16_DAYS),
    r("last 7 days digest", D, "2026-04-16..2026-04-22"),
    r("digest for the past two weeks", D, "2026-04-09..2026-04-22"),
    r("what happened last week?", D, W16),
    r("top 5 PRs last week", D, W16),
    r("any good PRs last week?", D, W16),
    r("hey bot, can you send me last week's report please 🙏", D, W16),
    r("周报 last week", D, W16, language="zh"),  # mixed: Chinese words, so Chinese
    # -- one PR ---------------------------------------------------------------------------------------
    r("PR #6046 值得读吗", P, number=6046, question="worth", language="zh"),
    r("#6046 值得看吗", P, number=6046),
    r("6046 值得读吗", P, number=6046),
    r("分析一下 6046", P, number=6046),
    r("PR ＃６０４６ 值得读吗", P, number=6046),
    r("麻烦看下 PR6046 值得读吗", P, number=6046),
    r("pr6046值得精读吗", P, number=6046),
    r("PR 6046", P, number=6046, language=None),
    r("6046", P, number=6046, language=None),
    r("#6046", P, number=6046, language=None),
    r("6046这个PR讲了什么", P, number=6046, question="what"),
    r("6046 这个 PR 讲了什么", P, number=6046, question="what"),
    r("PR 6046 做了什么", P, number=6046, question="what"),
    r("#6046 是干什么的", P, number=6046, question="what"),
    r("6046 改了啥", P, number=6046, question="what"),
    r("请介绍一下 #6046", P, number=6046, question="what"),
    r("what does #6046 do", P, number=6046, question="what", language="en"),
    r("what does PR 6046 do?", P, number=6046, question="what"),
    r("explain pr 6046", P, number=6046, question="what"),
    r("summarize #6046 please", P, number=6046, question="what"),
    r("is PR 6046 worth reading", P, number=6046, question="worth", language="en"),
    r("is pr #6046 worth reading?", P, number=6046),
    r("should I read #6046?", P, number=6046, question="worth"),
    r("https://github.com/verl-project/verl/pull/6046", P, number=6046, repo="verl-project/verl"),
    r("看看 https://github.com/verl-project/verl/pull/6046 值得读吗", P, number=6046, repo="verl-project/verl"),
    r("verl-project/verl#6046", P, number=6046, repo="verl-project/verl"),
    r("看看verl-project/verl#6046讲了什么", P, number=6046, repo="verl-project/verl", question="what"),
    r("<https://github.com/verl-project/verl/pull/6046|#6046> worth it?", P, number=6046, repo="verl-project/verl"),
    r("PR #999999 值得读吗", P, number=999999),
    # -- several PRs: a comparison --------------------------------------------------------------------
    r("#6046 和 #6029 哪个更值得读", C, numbers=(6046, 6029), language="zh"),
    r("帮我看看 #6046 和 #6029 哪个更值得读", C, numbers=(6046, 6029)),
    r("对比 6046 6029", C, numbers=(6046, 6029)),
    r("对比一下6046和6029", C, numbers=(6046, 6029)),
    r("比较 #6046、#6029、#6001", C, numbers=(6046, 6029, 6001)),
    r("PR 6046 和 6029 哪个更值得读", C, numbers=(6046, 6029)),
    r("6046 还是 6029 先读哪个", C, numbers=(6046, 6029)),
    r("#6046 #6029", C, numbers=(6046, 6029)),
    r("6046 6029", C, numbers=(6046, 6029), language=None),
    r("compare 6046 and 6029", C, numbers=(6046, 6029), language="en"),
    r("compare #6046 with #6029", C, numbers=(6046, 6029)),
    r("6046 vs 6029", C, numbers=(6046, 6029)),
    r("which is better, 6046 or 6029?", C, numbers=(6046, 6029)),
    r("PRs 6046, 6029 and 6001: which first?", C, numbers=(6046, 6029, 6001)),
    r("#6046 和 #6046 哪个好", P, number=6046),  # the same PR twice is one PR
    # -- the label view of a window -------------------------------------------------------------------
    r("npu 标签", L, None, label="npu", language="zh"),
    r("npu标签", L, None, label="npu"),
    r("标签 fully_async", L, None, label="fully_async"),
    r("标签：npu", L, None, label="npu"),
    r("NPU 标签", L, None, label="npu"),
    r("npu 标签最近有什么", L, RECENT, label="npu"),
    r("npu 标签 W16", L, W16, label="npu"),
    r("W16 的 npu 标签", L, W16, label="npu"),
    r("上周 npu 标签的 PR", L, W16, label="npu"),
    r("本月 rollout 标签", L, APRIL, label="rollout"),
    r("上周 trainer 有哪些重点 PR", L, W16, label="trainer"),
    r("上周trainer有哪些重点PR", L, W16, label="trainer"),
    r("上周有哪些 trainer 的 PR", L, W16, label="trainer"),
    r("本周 megatron 的 PR 有哪些", L, W17, label="megatron"),
    r("上周 npu", L, W16, label="npu"),
    r("label npu", L, None, label="npu", language=None),
    r("label NPU in verl-project/verl", L, None, label="npu", repo="verl-project/verl"),
    r("label:npu last week", L, W16, label="npu"),
    r("npu label W16", L, W16, label="npu"),
    r("trainer PRs last week", L, W16, label="trainer", language="en"),
    r("rollout PRs this month", L, APRIL, label="rollout"),
    r("show me the npu PRs from last week", L, W16, label="npu"),
    r("key trainer PRs in W16", L, W16, label="trainer"),
    # -- merged PRs of a window -----------------------------------------------------------------------
    r("本月合并了哪些 PR", M, APRIL, language="zh"),
    r("本月合并了哪些PR？", M, APRIL),
    r("这个月都合了哪些 PR", M, APRIL),
    r("上周合入了哪些 PR", M, W16),
    r("W16 合并了什么", M, W16),
    r("since Monday 有哪些 PR 合并了", M, "2026-04-20..2026-04-22"),
    r("周一以来合并了哪些 PR", M, "2026-04-20..2026-04-22"),
    r("4月13日以来合并的 PR", M, "2026-04-13..2026-04-22"),
    r("what merged this month", M, APRIL, language="en"),
    r("what got merged last week?", M, W16),
    r("PRs merged since Monday", M, "2026-04-20..2026-04-22"),
    r("list PRs merged in April", M, APRIL),
    r("what landed in the last 7 days", M, "2026-04-16..2026-04-22"),
    r("show all PRs since April 13", M, "2026-04-13..2026-04-22"),
    r("merged PRs yesterday", M, "2026-04-21..2026-04-21"),
    # -- questions about the PRs of a window ----------------------------------------------------------
    r("哪些 PR 改了 rollout 的配置？", Q, None, terms=("rollout", "配置"), language="zh"),
    r("哪些PR改了rollout的配置", Q, None, terms=("rollout", "配置")),
    r("请问上周哪些 PR 改了 rollout 的配置？", Q, W16, terms=("rollout", "配置")),
    r("which PRs touched fully_async last week?", Q, W16, terms=("fully_async",), language="en"),
    r("Which PRs touched fully_async last week", Q, W16, terms=("fully_async",)),
    r("W16 有没有改 megatron 的 PR", Q, W16, terms=("megatron",)),
    r("W16有没有改megatron的PR", Q, W16, terms=("megatron",)),
    r("上周有没有 PR 动了 verl/trainer/config", Q, W16, terms=("verl/trainer/config",)),
    r("哪些 PR 修改了 ppo_trainer.yaml", Q, None, terms=("ppo_trainer.yaml",)),
    r("本月有哪些 PR 涉及 routed_experts", Q, APRIL, terms=("routed_experts",)),
    r("最近两周哪些 PR 和 sglang 有关", Q, "2026-04-09..2026-04-22", terms=("sglang",)),
    r("上周谁改了 docker 镜像", Q, W16, terms=("docker", "镜像")),
    r("哪些 PR 改了测试", Q, None, terms=("测试",)),
    r("帮我查一下 W16 哪些 PR 提到了 FP8", Q, W16, terms=("fp8",)),
    r("哪些 PR 改了 “agent loop”", Q, None, terms=("agent loop",)),
    r("which PRs changed the rollout config in W16?", Q, W16, terms=("rollout", "config")),
    r("any PRs about megatron this month?", Q, APRIL, terms=("megatron",)),
    r("did anyone touch verl/workers/rollout last week?", Q, W16, terms=("verl/workers/rollout",)),
    r("show me PRs that changed docker last month", Q, MARCH, terms=("docker",)),
    r("have any PRs touched the reward function since April 13?", Q, "2026-04-13..2026-04-22",
      terms=("reward",)),
    r("PRs that modified `compute_data_metrics` in W16", Q, W16, terms=("compute_data_metrics",)),
    r("npu 标签里哪些 PR 改了 docker", Q, None, terms=("docker",), label="npu"),
    # -- subscriptions: routed with the words as said (the core reads the filter, bot.filters) ---------
    r("订阅 npu", S, text="订阅 npu", language="zh"),
    r("订阅 verl-project/verl 的 npu", S, text="订阅 verl-project/verl 的 npu", repo="verl-project/verl"),
    r("取消订阅 npu", U, text="取消订阅 npu"),
    r("退订 npu", U, text="退订 npu"),
    r("subscribe npu", S, text="subscribe npu", language=None),
    r("subscribe to npu", S, text="subscribe to npu"),
    r("subscribe npu in owner/name", S, text="subscribe npu in owner/name", repo="owner/name"),
    r("unsubscribe npu", U, text="unsubscribe npu"),
    r("subscribe me to npu", S, text="subscribe me to npu", language="en"),
    r("订阅npu的PR", S, text="订阅npu的PR", language="zh"),
    r("取消我的 npu 订阅", U, text="取消我的 npu 订阅", language="zh"),
    r("订阅 npu rollout -ci", S, text="订阅 npu rollout -ci"),
    r("subscribe label:npu path:verl/trainer/** -author:dependabot", S, language=None),
    r("关注 npu", S, text="关注 npu"),
    r("退订全部", U, text="退订全部", language="zh"),
    r("unsubscribe all", U, text="unsubscribe all", language="en"),
    r("订阅", S, text="订阅"),  # the answer asks what to subscribe to
    r("我的 GitHub 是 alice", LinkGitHubIntent, handle="alice", language="zh"),
    r("my GitHub is @Alice-B", LinkGitHubIntent, handle="Alice-B", language="en"),
    r("每周给我发我的周报", PersonalDigestIntent, action="on", language="zh"),
    r("send me my weekly digest", PersonalDigestIntent, action="on", language="en"),
    r("不要再发我的周报了", PersonalDigestIntent, action="off"),
    r("stop my weekly digest", PersonalDigestIntent, action="off"),
    r("我的周报", PersonalDigestIntent, action="show"),
    r("my digest", PersonalDigestIntent, action="show"),
    r("我的订阅", LS, language="zh"),
    r("my subscriptions", LS),
    r("我订阅了什么", LS, language="zh"),
    r("我都订阅了哪些？", LS),
    r("我现在订阅了啥", LS),
    r("what am I subscribed to?", LS, language="en"),
    r("show my subscriptions", LS),
    # -- windows that cannot be read: a question back, never another week -----------------------------
    r("第60周周报", CL, said="第60周", problem="no_such_week", wanted="digest"),
    r("周报 2026-W54", CL, problem="no_such_week"),
    r("13月的周报", CL, problem="no_such_month"),
    r("4月31日的周报", CL, problem="no_such_date"),
    r("本周和上周的周报", CL, problem="several_windows"),
    r("W14-W16 周报", CL, problem="week_range"),
    r("npu 标签 第99周", CL, problem="no_such_week", wanted="label"),
    r("第70周合并了哪些 PR", CL, wanted="merged"),
    # -- help -------------------------------------------------------------------------------------------
    r("help", H),
    r("帮助", H, language="zh"),
    r("怎么用？", H),
    r("你能做什么", H),
    r("what can you do", H, language="en"),
    r("", H, language=None),
    r("你好", SmallTalkIntent, language="zh"),  # issue 26: small talk gets a friendly line
    # -- more of how people write it -----------------------------------------------------------------
    r("@prhub 本周周报", D, W17),
    r("上周周报呢？", D, W16),
    r("能给我上周的周报吗", D, W16),
    r("周报：上周", D, W16),
    r("给我来一份上周的 digest", D, W16, language="zh"),
    r("last week digest pls", D, W16),
    r("Digest Last Week", D, W16),
    r("DIGEST W16", D, W16, language=None),
    r("前三周的周报", D, "2026-03-30..2026-04-19"),
    r("近一个月的总结", D, "2026-03-24..2026-04-22"),
    r("past 30 days", D, "2026-03-24..2026-04-22"),
    r("last 2 weeks of PRs", D, "2026-04-09..2026-04-22"),
    r("PRs from the previous two weeks", D, "2026-04-06..2026-04-19"),
    r("4.13-4.19 周报", D, W16_DAYS),
    r("4月13日-19日", D, W16_DAYS),
    r("Apr 13–19 digest", D, W16_DAYS),
    r("13 April to 19 April", D, W16_DAYS),
    r("between April 13 and April 19", D, W16_DAYS),
    r("this week so far", D, W17),
    r("本周到目前为止合并了哪些PR", M, W17),
    r("这周目前合并了啥", M, W17),
    r("2026年合并了哪些PR", M, "2026-01-01..2026-12-31"),
    r("今年合并了多少 PR", M, "2026-01-01..2026-12-31"),
    r("最近30天合并的 PR", M, "2026-03-24..2026-04-22"),
    r("上周合并了多少个 PR", M, W16),
    r("上上周 npu 有哪些 PR", L, W15, label="npu"),
    r("rollout 这周有啥新 PR", L, W17, label="rollout"),
    r("what's new in rollout this week", L, W17, label="rollout"),
    r("anything on npu last week?", L, W16, label="npu"),
    r("PR 6046 和 PR 6029 对比一下", C, numbers=(6046, 6029)),
    r("6046 和 6029 有什么区别", C, numbers=(6046, 6029)),
    r("#6046 vs. #6029 vs. #6001", C, numbers=(6046, 6029, 6001)),
    r("compare verl-project/verl#6046 and verl-project/verl#6029", C, numbers=(6046, 6029), repo="verl-project/verl"),
    r("6046、6029 哪个先看", C, numbers=(6046, 6029)),
    r("fully_async 相关的 PR 有哪些", Q, None, terms=("fully_async",)),
    r("有哪些跟 fully_async 有关的 PR", Q, None, terms=("fully_async",)),
    r("上周关于 rollout 的 PR", Q, W16, terms=("rollout",)),
    r("上周rollout相关PR", Q, W16, terms=("rollout",)),
    r("PRs about rollout", Q, None, terms=("rollout",)),
    r("哪些 PR 加了新的测试", Q, None, terms=("测试",)),
    r("谁动了 megatron 的代码", Q, None, terms=("megatron",)),
    r("本周有没有升级依赖的 PR", Q, W17, terms=("依赖",)),
    r("上周有人改 ci 吗", Q, W16, terms=("ci",)),
    r("which PRs bumped dependencies this month", Q, APRIL, terms=("dependencies",)),
    r("did anything change in docs last week", Q, W16, terms=("docs",)),
    r("W16 有 PR 修了 OOM 吗", Q, W16, terms=("oom",)),
    r("哪个 PR 引入了 distillation", Q, None, terms=("distillation",)),
    r("哪些 PR 删除了 requirements.txt", Q, None, terms=("requirements.txt",)),
    r("最近有没有关于 checkpoint 的改动", Q, RECENT, terms=("checkpoint",)),
    r("订阅 npu 谢谢", S, text="订阅 npu 谢谢"),
    r("帮我订阅 npu", S, text="帮我订阅 npu"),
    r("取消订阅 rollout", U, text="取消订阅 rollout"),
    r("我订阅了些什么", LS),
    # -- and more, tried after the rules were written -----------------------------------------------
    r("能发下上周的周报不", D, W16),
    r("周报来一份", D, None),
    r("给我看看这周", D, W17),
    r("本周进展", D, W17),
    r("本周有什么值得看的", D, W17),
    r("本周有哪些值得精读的PR", D, W17),
    r("最近一周有啥重要的 PR", D, "2026-04-16..2026-04-22"),
    r("上周最重要的几个 PR 是哪些", D, W16),
    r("weekly summary please", D, None),
    r("can I get the digest for W15?", D, W15),
    r("send me this week's digest", D, W17),
    r("what's the report for 2026-W15", D, W15),
    r("give me a summary of April", D, APRIL),
    r("what happened in the last 3 days?", D, "2026-04-20..2026-04-22"),
    r("第15周", D, W15),
    r("2026年15周", D, W15),
    r("W 15", D, W15),
    r("Week 15", D, W15),
    r("wk 15 digest", D, W15),
    r("PRs merged today", M, "2026-04-22..2026-04-22"),
    r("show me everything merged this week", M, W17),
    r("#6046 怎么样", P, number=6046),
    r("帮我瞅瞅 6046 咋样", P, number=6046),
    r("看下这个 https://github.com/verl-project/verl/pull/6046", P, number=6046, repo="verl-project/verl"),
    r("6046 讲啥的", P, number=6046, question="what"),
    r("这个 PR 6046 干嘛的", P, number=6046, question="what"),
    r("tell me about #6046", P, number=6046, question="what"),
    r("what's #6046 about?", P, number=6046, question="what"),
    r("is #6046 a must-read?", P, number=6046, question="worth"),
    r("#6046 or #6029, which should I read first?", C, numbers=(6046, 6029)),
    r("哪个更重要：#6046 还是 #6029", C, numbers=(6046, 6029)),
    r("compare PRs 6046, 6029", C, numbers=(6046, 6029)),
    r("npu 这周有什么", L, W17, label="npu"),
    r("npu 上周的 PR", L, W16, label="npu"),
    r("megatron 标签最近", L, RECENT, label="megatron"),
    r("show megatron label for last week", L, W16, label="megatron"),
    r("trainer 模块上周的 PR", L, W16, label="trainer"),
    r("上周 rollout 方面的进展", L, W16, label="rollout"),
    r("哪些 PR 碰了 verl/workers/rollout？", Q, None, terms=("verl/workers/rollout",)),
    r("上周谁动了 fsdp", Q, W16, terms=("fsdp",)),
    r("哪些 PR 涉及 vllm 升级", Q, None, terms=("vllm",)),
    r("有 PR 提到 deepseek 吗", Q, None, terms=("deepseek",)),
    r("did any PR change the reward manager this week?", Q, W17, terms=("reward", "manager")),
    r("which PRs mention qwen3 in W16?", Q, W16, terms=("qwen3",)),
    r("any PRs touching megatron checkpointing last month?", Q, MARCH, terms=("megatron", "checkpointing")),
    r("what changed in rollout last week?", Q, W16, terms=("rollout",)),
    r("which PRs fixed OOM?", Q, None, terms=("oom",)),
    r("has anyone added tests for fully_async?", Q, None, terms=("tests", "fully_async")),
    r("我订阅了哪些标签", LS),
    r("看看我的订阅", LS),
    r("我都订了啥", LS),
    r("@_user_1 上周周报", D, W16),  # the Feishu mention placeholder
    r("<#C0123|dev> 本周周报", D, W17),  # a Slack channel link
    r("上周pr", D, W16),
    r("上周的pr有哪些", M, W16),
    r("上周合了啥", M, W16),
    r("最近合并的 PR", M, RECENT),
    r("最新的周报", D, None),
    r("last weeks digest", D, W16),
    r("Digest?", D, None),
    r("周报？？", D, None),
    r("【周报】上周", D, W16),
    r("上周 周报 谢谢啦～", D, W16),
    r("pr 6046 好不好读", P, number=6046),
    r("6046 要读吗", P, number=6046),
    r("哪个PR改了 grpo", Q, None, terms=("grpo",)),
    r("有哪些 PR 支持了 Qwen3.5", Q, None, terms=("qwen3.5",)),
    r("上个月有没有 PR 修改 docker 镜像", Q, MARCH, terms=("docker", "镜像")),
    r("哪些 PR 同时改了 trainer 和 rollout", Q, None, terms=("trainer", "rollout")),
    r("npu W16", L, W16, label="npu"),
    r("W16 npu", L, W16, label="npu"),
    r("对比一下 #6046 #6029 #6001 #5899", C, numbers=(6046, 6029, 6001, 5899)),
    r("what did we ship in April?", M, APRIL),
    r("what went in last week", M, W16),
    # -- phrasings a probe of unseen messages missed (2026-12) --------------------------------------
    r("第6046号PR讲的是什么", P, number=6046, question="what"),  # 号 after a number and before PR: its number
    r("5899 号 PR 值得看吗", P, number=5899, question="worth"),
    r("explain PR-6046", P, number=6046, question="what"),
    r("pls summarize pull/6029", P, number=6029, question="what"),
    r("PR 6046 是修什么bug的", P, number=6046, question="what"),
    r("#6029 解决了什么问题", P, number=6029, question="what"),
    r("tl;dr of pr 6046?", P, number=6046, question="what"),
    r("6046还是6029？", C, numbers=(6046, 6029)),  # numbers and list words only: a comparison
    r("6046, 6029 还是 6011", C, numbers=(6046, 6029, 6011)),
    r("6046/6029/6011 哪个先读", C, numbers=(6046, 6029, 6011)),
    r("昨天有PR合进主干吗", M, "2026-04-21..2026-04-21"),
    r("本周有啥合入 main 了", M, W17),
    r("上周谁合的PR最多", M, W16, focus="authors"),
    r("who's been most active this week?", M, W17, focus="authors"),
    r("我有订阅啥吗", LS),
    r("what alerts do i have", LS),
    r("list my subs", LS),
    r("github id 是 PeterSH6", LinkGitHubIntent, handle="PeterSH6"),
    r("send me my digest every monday", PersonalDigestIntent, action="on"),
    r("help me", H, asked=True),
    r("usage pls", H, asked=True),
    r("帮助一下", H, asked=True),
    r("有哪些命令？", H, asked=True),
    r("怎么用这个bot", H, asked=True),
    r("你能干啥", H, asked=True),
    r("你都会些啥呀", H, asked=True),
    r("上周我在休假，错过了啥", D, W16),
    r("whats new this week", D, W17),
    r("tldr of last week", D, W16),
    r("不用订阅 rollout 了", U),  # a "no need to subscribe" stops the alerts, never starts them
    r("rollout 的订阅取消掉吧", U),
    r("我不想再收到 rollout 的提醒了", U),
    r("don't need the npu alerts anymore", U),
    r("有 rollout 的新PR就通知我", S),  # the verb at the end, as Chinese says it
    r("把我的订阅全部取消", U),  # a removal, although it names 我的订阅
    r("清空我的订阅", U),
    r("alert me on any npu PR", S),  # a request from its first word, however it reads on
    r("subscribe to any PR touching rollout", S),
    r("sub me to npu pls", S),
    r("上礼拜总共进了几个PR", M, W16),
    r("周一以来都merge了些什么", M, "2026-04-20..2026-04-22"),
    r("W16 的贡献者排行", M, W16, focus="authors"),
    r("我关注了啥", LS),
    r("what changed in pr6059", P, number=6059, question="what"),
    r("这玩意儿咋用啊", H, asked=True),
    r("有使用文档吗？", H, asked=True),
    r("hey what are you able to do?", H, asked=True),
    r("what commands do u support", H, asked=True),
    r("我要上周的周报", D, W16),  # 我要 asks for it
    r("我要 npu 标签的 PR", L, label="npu"),
    r("周报 上上上周", D, W14),  # one week back for every 上
    r("上上上上周的周报", D, "2026-W13"),
    r("上上上个月的月报", D, "2026-01-01..2026-01-31"),
    r("the week of apr 6 digest", D, W15),  # the ISO week that holds the day, never one day
    r("4月13日那周的周报", D, W16),
    r("the week of apr 8 digest", D, W15),  # a Wednesday: its Monday-to-Sunday week
    r("monthly summary please", D, MARCH),  # a monthly report without a month: the last whole month
    r("月报", D, MARCH),
    r("digest for prev week", D, W16),
    r("本週摘要", D, W17),
    r("6140 是修哪个bug的？", P, number=6140, question="what"),
    r("我目前关注着哪些东西", LS),
    r("which alerts am i getting?", LS),
    r("drop all my subscriptions pls", U),
    r("这机器人咋用啊", H, asked=True),
    r("how do i use this bot", H, asked=True),
    r("whats new in moe this month", L, APRIL, label="moe"),  # the label is kept, not dropped for the digest
    r("news on fsdp this week", L, W17, label="fsdp"),
    r("看看 sglang 这个 label", L, label="sglang"),
    r("第5999号 PR 是干啥用的", P, number=5999, question="what"),
    r("这周谁最卷，合了最多PR 😂", M, W17, focus="authors"),
    r("turn off all my alerts", U),
    r("sglang 那个订阅退了吧", U),
    r("so what do u actually do", H, asked=True),
    r("how's fsdp doing lately", L, RECENT, label="fsdp"),
    r("how is the megatron work going this week", L, W17, label="megatron"),
    # -- who merged the most, and more questions about the week (phase 2) --------------------------
    r("谁贡献最多", M, None, focus="authors", language="zh"),
    r("本月谁贡献最多", M, APRIL, focus="authors"),
    r("上周谁合并的 PR 最多", M, W16, focus="authors"),
    r("PR数最多的人是谁", M, None, focus="authors"),
    r("W16 谁提交的最多", M, W16, focus="authors"),
    r("上个月的贡献者", M, MARCH, focus="authors"),
    r("who contributed the most last month", M, MARCH, focus="authors", language="en"),
    r("top contributors this month", M, APRIL, focus="authors"),
    r("who merged the most PRs in W16", M, W16, focus="authors"),
    r("谁的 PR 改了 rollout", Q, None, terms=("rollout",)),  # who changed X: the PRs that did
    r("谁改了 rollout", Q, None, terms=("rollout",)),
    r("上周有人修 fsdp 的 bug 吗", Q, W16, terms=("fsdp", "bug")),
    r("哪些 PR 修了 rollout", Q, None, terms=("rollout",)),
    r("上周一共合并了多少个 PR", M, W16),
    r("how many PRs merged last week", M, W16, language="en"),
    r("本周到目前为止合并了什么", M, W17),
    r("W16的trainer PR", L, W16, label="trainer"),
    r("看看 6046 跟 6029 哪个重要", C, numbers=(6046, 6029)),
    r("ｐｒ ６０４６", P, number=6046, language=None),
    r("help", H, language=None),  # one word: the channel's language
    r("what should I read from last week?", D, W16),
    r("最近有什么大的改动", D, RECENT),
    r("给我讲讲上周", D, W16),
    r("上周发生了什么", D, W16),
    r("rollout 最近怎么样", L, RECENT, label="rollout"),
    r("npu 这周怎么样", L, W17, label="npu"),
    r("讲讲 6046", P, number=6046, question="what"),
    # the classes of tuning9's misses (held_out3 until the fourth round of issue 26), said other ways
    r("第5939个PR是干嘛的", P, number=5939, question="what"),  # 第N个PR with three digits or more: a PR number
    r("5978号值得看不", P, number=5978),  # N号 with three digits or more: no day of a month
    r("5978号有没有坑", P, number=5978, question="risks"),
    r("13号的周报", D),  # two digits: a day, never PR #13
    r("3月的第三周周报", D, "2026-W11"),  # the K-th week of a month: the first holds the month's first day
    r("4.6-4.12 那段时间合了啥", M, "2026-04-06..2026-04-12"),  # 那段时间 points back at the dates
    r("what's been happening since tuesday", D, "2026-04-21..2026-04-22"),
    r("who's been landing things since march", M, "2026-03-01..2026-04-22", focus="authors"),
    r("fp8 的支持搞定了没", Q, terms=("fp8",)),  # colloquial change verbs: 搞定了没, 挪哪去了
    r("low precision 的文档挪哪去了", Q),
    r("绑定下我的 github：alice", LinkGitHubIntent, handle="alice"),
    r("这个咋用呀，有教程不", H, asked=True),
    r("recap of this sprint pls", CL),  # a sprint the bot cannot know: asked
    r("上个迭代合了哪些 PR", CL),
    r("megatron 的版本要求上周谁改过", Q, W16, terms=("megatron",)),  # 版本 of a thing named: that thing
    r("上周有没有升级版本的 PR", Q, W16, terms=("版本",)),  # 版本 alone: searched
    r("@小李 那个 PR 合进去了没", H, remark=True),  # whether the one addressed first has done it: said to them
    r("@小李 上周周报发一下", D, W16),  # a request beside a mention is still the bot's
]


def _check(text: str, kind: type, window: str | None, fields: dict[str, Any]) -> None:
    intent = understand(text)
    assert type(intent) is kind, f"{text!r} -> {intent}"
    for name, value in fields.items():
        assert getattr(intent, name) == value, f"{text!r}: {name} = {getattr(intent, name)!r}, not {value!r}"
    spec = getattr(intent, "window", None)
    if window is None:
        assert spec is None, f"{text!r} names no window, got {spec!r}"
    else:
        assert spec is not None, f"{text!r}: no window read"
        assert window_from_spec(spec, tz=TZ, now=NOW).name == window, f"{text!r}: {spec!r}"


@pytest.mark.parametrize(("text", "kind", "window", "fields"), TABLE, ids=[row[0] or "<empty>" for row in TABLE])
def test_understanding_table(text: str, kind: type, window: str | None, fields: dict[str, Any]) -> None:
    _check(text, kind, window, fields)


NEAR_MISSES: list[tuple[str, tuple[type, ...]]] = [
    # statements, chat and small talk: help (with the nearest examples), never an action or a week
    ("我上周请假了", (H,)),
    ("本周五开会", (H,)),
    ("2026年的计划", (H,)),
    ("1/2 of the team is out this week", (H,)),
    ("version 0.18.0 is out", (H,)),
    ("may I ask something", (H,)),
    ("let's march on", (H,)),
    ("the rollout went well", (H,)),
    ("which one do you prefer", (H,)),
    ("I changed my mind", (H,)),
    ("改天再说", (H,)),
    ("谢谢！", (SmallTalkIntent,)),
    ("ok", (SmallTalkIntent,)),
    ("👍", (SmallTalkIntent,)),
    ("哈哈", (SmallTalkIntent,)),
    ("最近怎么样", (SmallTalkIntent,)),
    ("有什么新东西", (H,)),
    ("what's up", (SmallTalkIntent,)),
    ("subscribe", (S,)),  # routed: the answer asks what to subscribe to
    ("本周值得关注的 PR 有哪些", (Q, D, H)),  # 关注 inside a sentence is no subscription
    ("what should I watch out for this week", (H, D, Q)),
    ("tell me about #6046", (P,)),
    ("npu", (H,)),  # one word: the help suggests "npu 标签"
    ("trainer", (H,)),
    ("PR 值得读吗", (H,)),  # no number
    ("the week 16 plan", (H,)),
    ("我在 4月 有空", (H,)),
    ("有哪些值得读的 PR", (D,)),
    ("can we talk may 3", (H, D)),  # a capitalised or dated month may be a window; never a question
    # questions about PRs, not subscriptions, although a subscription word occurs
    ("which PRs touched the subscribe logic last week?", (Q,)),
    ("哪些 PR 改了订阅 npu 的代码", (Q,)),
    # numbers that are counts, versions or dates, not PRs
    ("top 5 PRs last week", (D,)),
    ("上周合并了 30 个 PR 吗", (M,)),
    ("看看 上周 top 5", (D,)),
    ("bump vllm to 0.18", (H,)),
    ("W16 周报", (D,)),  # 16 is the week, not PR #16
    ("4/13-4/19 周报", (D,)),
    ("HTML &#60;b&#62; in a title", (H,)),  # a character reference is not PR #60
    ("我还是觉得 8 卡不够", (H,)),  # 还是 between words, not between PR numbers
    ("v1.2/1.3 哪个好", (H,)),  # versions listed with a slash are no PRs
    ("100/200 GPUs", (H,)),
    ("verl 的 github 是 volcengine/verl", (H,)),  # someone else's GitHub: no link of the asker
    ("help me with PR 6046", (P,)),  # a request about a PR, not the help
    # statements about one's own work and requests to the channel: PR and change words make no search
    ("为什么 rollout 的提醒不再发给我了", (H, Q)),  # a question about alerts changes no subscription
    ("记得周五提醒我开会", (H,)),
    ("晚点我把周报写完发邮件", (H,)),  # one's own weekly report, not the bot's digest
    ("我在写周报", (H,)),
    ("周报写完了", (H,)),
    ("今天要交周报", (H,)),
    ("我这周在搞 rollout 的重构，下周提 PR", (H,)),
    ("我下周提 PR", (H,)),
    ("昨天的组会改到周五了", (H,)),  # a change word with only a window, and no question
    ("我提了个 PR，麻烦 <@U0LISI> review 一下", (H,)),
    ("my pr got merged yesterday 🎉", (H,)),
    ("finally my pr got merged", (H,)),
    ("follow up: meeting moved to 3pm", (H,)),  # "follow up" is no "follow"
    ("周报我下午写完发群里", (H,)),
    ("the weekly sync is moved to thursday", (H,)),  # a weekly meeting is no weekly digest
    ("我们组的 PR 都合进去了，辛苦大家🎉", (H,)),
    ("<@U0ALICE> can you take a look at my pr when you have time", (H,)),
    ("<@U0ALICE> 你那个 PR 记得 rebase 一下", (H,)),
    ("我刚在周报里写了 #6046", (H,)),  # a PR number in a statement, no question about it
    ("我刚合了 #6046，值得读吗", (P,)),  # ... and with one
    ("watch out, main is broken", (H,)),
    ("提醒我下午三点开会", (H,)),  # a reminder of a meeting is no subscription
    ("绑定 github: lisi_dev", (H,)),  # no GitHub login has "_": never link a cut-off one
    ("我这周主要在搞 npu 的适配，进展还行", (H,)),  # one's own progress
    ("i subscribed to the newsletter yesterday", (H,)),
    ("who is on call this week?", (H,)),  # "on call" is no area
    ("我昨天提了 3 个 PR，都还没合", (H,)),
    ("我订阅了极客时间的专栏，挺好看的", (H,)),  # what one subscribed to elsewhere
    ("how's it going", (SmallTalkIntent,)),  # small talk, no area
    ("how are you doing", (SmallTalkIntent,)),
    ("can someone review my PR later", (H,)),
    ("could anyone take a look at the rollout PR", (H,)),
    ("I'll fix the rollout bug this week", (H,)),
    ("we need to refactor the trainer PRs next week", (H,)),
    ("i just merged a PR fixing fsdp", (H,)),
    ("我刚提了个 PR，麻烦大家 review 一下", (H,)),
    ("我们这周要把 rollout 的 bug 修掉", (H,)),
    ("我明天准备改一下 megatron 的 PR", (H,)),
    ("麻烦大家看下 fsdp 那个 PR", (H,)),
    # ... while questions and requests with the same words stay searches
    ("we changed rollout last week?", (Q,)),
    ("我想看 rollout 相关的 PR", (Q,)),
    ("I want PRs about rollout", (Q,)),
]


@pytest.mark.parametrize(("text", "allowed"), NEAR_MISSES, ids=[t for t, _ in NEAR_MISSES])
def test_near_misses_do_not_become_a_wrong_intent(text: str, allowed: tuple[type, ...]) -> None:
    intent = understand(text)
    assert isinstance(intent, allowed), f"{text!r} -> {intent}"
