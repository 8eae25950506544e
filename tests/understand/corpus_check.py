"""The phrasing corpus (tests/understand/corpus/*.toml, format in corpus/FORMAT.md) read by the bot and
compared with each case's ``expect``.

A case is played as a person would: its earlier ``thread`` messages first (each read and kept as the
thread's last request), its ``subscribed`` filters stored, then its ``text``. The reading compared is the
chat core's: :func:`bot.handlers.intents.parse_intent`, then :meth:`Conversations.resolve` (follow-ups
against the thread) and the reply language (:meth:`Conversations.language`); labels and search words are
compared as the answer reads them against the data's vocabulary (near misses corrected, concept words
standing for their concept); subscription changes are made for real and the stored filters compared.

Used by tests/understand/test_corpus.py and bench/bench_understand.py.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.app import Services
from bot.digest.window import window_from_spec
from bot.errors import WindowError
from bot.filters import Filter, parse_filter
from bot.handlers.core import Conversation
from bot.handlers.intents import (  # type: ignore[attr-defined]
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PersonalDigestIntent,
    PRIntent,
    QuestionIntent,
    SubscribeIntent,
    UnsubscribeIntent,
    parse_intent,
)

try:
    from bot.handlers.intents import SmallTalkIntent
except ImportError:  # before issue 26
    SmallTalkIntent = HelpIntent  # type: ignore[assignment,misc]
from bot.replies import SubscriptionReply
from bot.subscriptions import Subscriber

try:
    from bot.understand.vocabulary import Vocabulary
except ImportError:  # measuring a build before issue 26 (bench): words are compared as read
    Vocabulary = None  # type: ignore[assignment,misc]

CORPUS = Path(__file__).resolve().parent / "corpus"
TZ = "Asia/Shanghai"
TODAY = datetime(2026, 4, 20, 10, 0, tzinfo=ZoneInfo(TZ))
"""'Today' of the corpus: Monday 2026-04-20 (last week = 2026-W16)."""
REPO = "verl-project/verl"


def load(name: str) -> list[dict[str, Any]]:
    """The cases of ``corpus/<name>.toml``."""
    with (CORPUS / f"{name}.toml").open("rb") as f:
        return list(tomllib.load(f)["case"])


@dataclass
class Outcome:
    """One case read: right or not, and why not."""

    case: dict[str, Any]
    reading: str
    language: str
    problems: list[str] = field(default_factory=list)

    @property
    def right(self) -> bool:
        return not self.problems


def _window(spec: str | None) -> str | None:
    """The days a window spec covers up to 'today' (what the person would see: no PR is merged after today, so
    ``month-0`` and ``*-04-01..`` are one window), ``recent`` as itself, ``None`` for the default."""
    if spec is None:
        return None
    if spec == "recent":
        return "recent"
    try:
        window = window_from_spec(spec, tz=TZ, now=TODAY)
    except WindowError:
        return f"?{spec}"
    end = min(window.end, TODAY.replace(hour=0, minute=0) + timedelta(days=1))
    return f"{window.start.date()}..{end.date()}"


_SUFFIXES = ("ations", "ation", "ing", "ions", "ion", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """``word`` without a common English suffix (``saving``, ``saves``, ``save`` → ``sav``): word forms compare
    equal, as the search matches them."""
    lower = word.lower()
    for suffix in _SUFFIXES:
        if lower.endswith(suffix) and len(lower) - len(suffix) >= 4:
            return lower[: -len(suffix)]
    return lower


_PATH_END = re.compile(r"/\*\*$|/$")


def _terms_of(text: str) -> set[tuple[str, str]]:
    """``label:npu OR label:rollout`` as ``{("label", "npu"), ("label", "rollout")}`` (paths without ``/**``)."""
    flt = parse_filter(text.replace(" OR ", " "))
    return _filter_terms(flt)


def _filter_terms(flt: Filter) -> set[tuple[str, str]]:
    found = set()
    for term in (*flt.include, *flt.exclude):
        value = _PATH_END.sub("", term.value) if term.key == "path" else term.value
        found.add((term.key, value.lower()))
    return found


class Reader:
    """Reads cases with one set of services (the chat core on verl's data, 'today' = 2026-04-20)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.core = services.core
        self._vocab: Any = None

    async def vocabulary(self) -> Any:
        if Vocabulary is None:
            return _AsRead()
        if self._vocab is None:
            answers = self.core.answers
            source, repo = self.core.channels.resolve_visible("slack:DCORPUS", None)
            latest = await answers.latest(source, repo)
            self._vocab = await answers.data_words.vocabulary(source, repo, latest[0] if latest else None)
        return self._vocab

    async def read(self, case: dict[str, Any], index: int) -> Outcome:
        threaded = "thread" in Conversation.__dataclass_fields__
        conversation = Conversation("slack", f"DCORPUS{index}", f"UCORPUS{index}",
                                    **({"thread": f"T{index}"} if threaded else {}))  # type: ignore[arg-type]
        who = Subscriber("slack", conversation.channel)
        for text in case.get("subscribed", ()):
            await self.services.subscriptions.add(who, REPO, parse_filter(text.replace(" OR ", " ")))
        talk = getattr(self.core, "conversations", None)
        if talk is None:  # before issue 26: no thread memory, the channel's language
            resolved = parse_intent(case["text"])
            language = self.core.language(resolved, conversation)
        else:
            for text in case.get("thread", ()):
                await talk.resolve(parse_intent(text), conversation)
            resolved = await talk.resolve(parse_intent(case["text"]), conversation)
            language = await talk.language(resolved, conversation)
        outcome = Outcome(case, _describe(resolved), language)
        own = parse_intent(case["text"]).language
        bare = own is None and not case.get("thread")  # a bare command: the channel's language is as right
        if language != case["lang"] and not bare:
            outcome.problems.append(f"language {language}, not {case['lang']}")
        await self._compare(case, resolved, conversation, who, outcome)
        return outcome

    async def _compare(self, case: dict[str, Any], got: Intent, conversation: Conversation, who: Subscriber,
                       outcome: Outcome) -> None:
        expect = case["expect"]
        wrong = outcome.problems.append
        want_window = _window(case.get("window"))
        vocab = await self.vocabulary()
        if isinstance(got, LabelIntent) and got.loose and vocab.resolve_label(got.label).how == "unknown" and (
                not vocab.knows(got.label) or got.label == REPO.rsplit("/", 1)[-1]):
            got = DigestIntent(week=got.window, language=got.language)  # what the answer draws: the digest
        if expect in ("digest", "label", "question", "merged", "authors"):
            kinds = {"digest": DigestIntent, "label": LabelIntent, "question": QuestionIntent,
                     "merged": MergedIntent, "authors": MergedIntent}
            vocab = await self.vocabulary()
            # what the person sees: a search for the label word is the label view, a label view of a
            # question's one label word is that search
            if expect in ("label", "question") and isinstance(got, LabelIntent | QuestionIntent) \
                    and _same_view(got, case, vocab):
                if _window(got.window) != want_window:
                    wrong(f"window {got.window!r}, not {case.get('window')!r}")
                return
            if not isinstance(got, kinds[expect]):
                wrong(f"read as {type(got).__name__}, not {expect}")
                return
            if isinstance(got, MergedIntent) and (got.focus == "authors") != (expect == "authors"):
                wrong(f"focus {got.focus}")
            if _window(got.window) != want_window:
                wrong(f"window {got.window!r}, not {case.get('window')!r}")
            if expect == "label" or (expect == "question" and case.get("label")):
                label = getattr(got, "label", None)
                read = vocab.resolve_label(label).value if label else None
                if read != case.get("label"):
                    wrong(f"label {label!r} (read {read!r}), not {case.get('label')!r}")
            if expect == "question":
                assert isinstance(got, QuestionIntent)
                self._terms(got.terms, case.get("terms", []), vocab, wrong)
            return
        if expect == "pr":
            if not isinstance(got, PRIntent):
                wrong(f"read as {type(got).__name__}, not a PR")
            elif got.number != case["pr"] or _asked(got.question) != _asked(case.get("question", "worth")):
                wrong(f"PR #{got.number} {got.question}, not #{case['pr']} {case.get('question', 'worth')}")
            return
        if expect == "compare":
            if not isinstance(got, CompareIntent) or set(got.numbers) != set(case["prs"]):
                wrong(f"read as {outcome.reading}, not a comparison of {case['prs']}")
            return
        simple = {"list_subscriptions": ListSubscriptionsIntent, "smalltalk": SmallTalkIntent,
                  "personal_digest": PersonalDigestIntent, "link_github": LinkGitHubIntent}
        if expect in simple:
            if not isinstance(got, simple[expect]):
                wrong(f"read as {type(got).__name__}, not {expect}")
            elif isinstance(got, PersonalDigestIntent) and got.action != case.get("action"):
                wrong(f"action {got.action}, not {case.get('action')}")
            elif isinstance(got, LinkGitHubIntent) and got.handle.lower() != case["handle"].lower():
                wrong(f"handle {got.handle}")
            return
        if expect == "help":
            if not (isinstance(got, HelpIntent) and got.asked):
                wrong(f"read as {outcome.reading}, not the help")
            return
        if expect == "none":
            if not (isinstance(got, SmallTalkIntent) or (isinstance(got, HelpIntent) and not got.asked)):
                wrong(f"read as {outcome.reading}, not a remark")
            return
        before = {s.field: _filter_terms(s.filter) for s in await self.services.subscriptions.of(who)}
        reply = None
        if isinstance(got, SubscribeIntent | UnsubscribeIntent):
            reply = await self.core.answer(got, conversation)
        after = [_filter_terms(s.filter) for s in await self.services.subscriptions.of(who)]
        if expect == "clarify":
            asked = isinstance(got, ClarifyIntent) or (
                isinstance(reply, SubscriptionReply) and reply.change in ("refused", "not_subscribed")
                and sorted(map(sorted, before.values())) == sorted(map(sorted, after)))
            if not asked:
                wrong(f"read as {outcome.reading}, not asked back")
            return
        if expect == "subscribe":
            if not isinstance(got, SubscribeIntent):
                wrong(f"read as {type(got).__name__}, not a subscription")
            elif _terms_of(case["filter"]) not in after:
                wrong(f"subscriptions {after}, not {case['filter']} ({getattr(reply, 'message', '')})")
            return
        if expect == "unsubscribe_all":
            if not isinstance(got, UnsubscribeIntent) or after:
                wrong(f"read as {outcome.reading}; left {after}")
            return
        if expect == "unsubscribe":
            if not isinstance(got, UnsubscribeIntent):
                wrong(f"read as {type(got).__name__}, not an unsubscription")
                return
            removed = _terms_of(case["filter"])
            if any(removed <= terms for terms in after):
                wrong(f"still subscribed: {after} ({getattr(reply, 'message', '')})")
            if case.get("after") and _terms_of(case["after"]) not in after:
                wrong(f"left {after}, not {case['after']}")

    @staticmethod
    def _terms(got: tuple[str, ...], want: list[str], vocab: Any, wrong: Any) -> None:
        """Every expected word searched (equal, or the same concept), and no other word the data knows."""
        concepts = vocab.concepts
        read = [vocab.resolve(t) for t in got]

        def same(a: str, b: str) -> bool:
            a, b = a.lower(), b.lower()
            if a == b or a.replace("_", " ") == b.replace("_", " ") or stem(a) == stem(b):
                return True
            ca = concepts.find(a) if concepts else None
            cb = concepts.find(b) if concepts else None
            return ca is not None and (ca is cb or b in ca.search or b == ca.name)

        values = [r.value or r.said for r in read]

        def searched(w: str) -> bool:  # a phrase ("kv cache") is searched as its words, or as itself
            return any(same(v, w) for v in values) or all(any(same(v, p) for v in values) for p in w.split())

        parts = [p for w in want for p in (w, *w.split())]
        missing = [w for w in want if not searched(w)]
        extra = [r.said for r, v in zip(read, values, strict=True)
                 if not any(same(v, w) for w in parts) and r.how != "unknown"]
        if missing or extra:
            wrong(f"terms {list(got)}, not {want}")


def _asked(question: str) -> str:
    """``worth`` and ``what`` draw the same analysis: one answer; risks and start are their own."""
    return "analysis" if question in ("worth", "what") else question


def _label_words(got: Any, vocab: Any) -> set[str]:
    """The label and search words of a label view or question, as the answer reads them."""
    words = {vocab.resolve_label(got.label).value} if getattr(got, "label", None) else set()
    concepts = vocab.concepts
    for term in getattr(got, "terms", ()):
        read = vocab.resolve(term)
        if read.how != "unknown":
            concept = concepts.find(read.value or term) if concepts else None  # a concept is searched by its words
            words.update(concept.search[:1] if concept and concept.search else [(read.value or term).lower()])
    return {w for w in words if w}


def _same_view(got: Any, case: dict[str, Any], vocab: Any) -> bool:
    """Whether ``got`` shows what ``case`` expects although its kind differs: a search for exactly the expected
    label's word (its results are the label's PRs), or the label view when the question searches only its label."""
    if case["expect"] == "label":
        return isinstance(got, QuestionIntent) and _label_words(got, vocab) == {case.get("label")}
    want = {w.lower() for w in case.get("terms", [])} | ({case["label"]} if case.get("label") else set())
    if isinstance(got, LabelIntent):
        read = vocab.resolve_label(got.label)
        if read.how == "unknown" and vocab.knows(got.label):  # the label view answers a data word by its search
            return [vocab.resolve(t).value for t in case.get("terms", [])] == [got.label] and not case.get("label")
        return want == _label_words(got, vocab)
    return case.get("label") is not None and not got.label and _label_words(got, vocab) == want


class _AsRead:
    """A vocabulary that knows nothing (a build before issue 26): every word is read as written."""

    concepts = None

    @staticmethod
    def resolve_label(label: str) -> Any:
        return _Word(label, label.lower(), "exact")

    @staticmethod
    def resolve(word: str) -> Any:
        return _Word(word, word.lower(), "exact")


@dataclass
class _Word:
    said: str
    value: str | None
    how: str


def _describe(intent: Intent) -> str:
    fields = {k: v for k, v in vars(intent).items() if v not in (None, "", (), False) and k not in ("said", "text")}
    return f"{type(intent).__name__}({', '.join(f'{k}={v!r}' for k, v in fields.items())})"


def score(outcomes: list[Outcome]) -> dict[str, tuple[int, int]]:
    """``{"zh": (right, total), "en": …, "all": …}``."""
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for outcome in outcomes:
        for key in (outcome.case["lang"], "all"):
            total[key] += 1
            right[key] += outcome.right
    return {k: (right[k], total[k]) for k in ("zh", "en", "all")}


DOOR_CASES = (
    "上周的周抱发一下", "W15 digest pls", "#5939 值得看吗？", "6046 有什么风险不", "where do i start reading #5978",
    "看下上周 npu 标签都有啥", "rollout label view for W16", "谁改了 megatron 的 checkpoint 逻辑",
    "上周有没有破坏兼容性的改动", "上周合了哪些 PR", "上周谁合的 PR 最多", "对比一下 #6029 和 #6046",
    "帮我订阅下 npu 和 rollout 这俩标签", "unsubscribe me from rollout", "以后 contributor-012 合了 PR 提醒我一下",
    "谢谢！", "thx 👍", "hi", "有啥风险", "and #6029?", "那 npu 的呢", "the week before that?", "第二个有啥风险",
    "what am i subscribed to",
)
"""The cases also played through the real Slack and Feishu doors (tests/handlers/*/test_corpus_doors.py)."""
DOOR_CASES_2 = (
    "麻烦帮我整理一下上周合入的PR周报，我周一例会要用，谢谢", "好的，那同样的时间范围里 rollout 标签的情况也麻烦看一下",
    "明白了。如果我们把这个改动合进内部分支，有没有什么潜在风险需要留意？", "感谢，整理得非常清楚，帮大忙了🙏",
    "fsdp 那边我们暂时不太关注了，麻烦帮我把它去掉，megatron 的继续保留就好", "取消定阅 veomni", "我的訂閱有哪些",
    "rollout 和 megatron 先都停掉 只看 npu", "npu 这块上周进展怎么样", "5989 从哪看", "sglang 的呢",
    "bot 你这回复也太慢了吧", "Where I should begin to read the #6006?", "What are the difference with #5997?",
    "就是那个上周的那个贡献最多的那些人是谁啊",
)
"""The cases of tuning2 (eight imagined people) also played through the doors: politeness around a request,
thread memory, traditional characters, homophones, subscriptions by part, scopes, complaints."""


DOOR_CASES_3 = (
    "订阅megatorn", "PR 五九八九 讲的是什么", "换成 rollout 看看", "same but for docker", "ci 那个太吵了 不要了",
    "发布前那周的周报",
    "上周的zhoubao", "dingyue npu", "npu 和 docker 的都订上",
)
"""The cases of the third round's sets (tuning3, tuning5, tuning6) also played through the doors: a near-miss label,
a number in Chinese digits, follow-ups said other ways, a stop cue beside a complaint, an event asked back,
words typed in pinyin, values before the verb."""


def door_cases() -> list[dict[str, Any]]:
    """The tuning cases of :data:`DOOR_CASES`, the tuning2 cases of :data:`DOOR_CASES_2` and the third round's of
    :data:`DOOR_CASES_3`."""
    by_text = {c["text"]: c for c in load("tuning")}
    by_text_2 = {c["text"]: c for c in load("tuning2")}
    by_text_3 = {c["text"]: c for name in ("tuning3", "tuning5", "tuning6") for c in load(name)}
    return ([by_text[t] for t in DOOR_CASES] + [by_text_2[t] for t in DOOR_CASES_2]
            + [by_text_3[t] for t in DOOR_CASES_3])


_CJK = re.compile(r"[\u3400-\u9fff]")


def door_problems(case: dict[str, Any], shown: str) -> list[str]:
    """What is wrong with the reply a door drew for ``case`` (``shown``: all it posted, as JSON text): its
    language, and a word that says it answered what was asked."""
    problems = []
    if case["lang"] == "zh" and not _CJK.search(shown):
        problems.append("not in Chinese")
    if case["lang"] == "en" and _CJK.search(shown):
        problems.append("not in English")
    expect = case["expect"]
    marks: tuple[str, ...] = ()
    if expect == "pr":
        question = case.get("question", "worth")
        pr = f"#{case['pr']}"
        marks = {"risks": (f"{pr} 的风险", f"Risks of {pr}", f"{pr} 的分析没有列出风险",
                           f"analysis of {pr} lists no risks"),
                 "start": (f"{pr} 从这里开始读", f"Start reading {pr}", f"{pr} 没有给出阅读起点",
                           f"{pr} names no starting point")}.get(question, (f"PR {pr}",))
    elif expect == "label":
        marks = (f"{case['label']} ·",)
    elif expect == "question":
        marks = ("相关的 PR", "PRs about")
    elif expect == "compare":
        marks = ("先读", "first")
    elif expect == "merged":
        marks = ("合并的 PR", "merged")
    elif expect == "authors":
        marks = ("贡献者", "contributors")
    elif expect == "digest":
        marks = ("周报", "Weekly", "digest", "没有合并的 PR", "No PRs were merged")
    elif expect == "smalltalk":
        marks = ("不客气", "welcome", "你好", "Hi!", "谢谢", "Thanks", "抱歉", "Sorry")
    elif expect == "subscribe":
        marks = ("已订阅", "Subscribed")
    elif expect == "unsubscribe":
        marks = ("之前", "Before", "已退订", "已取消订阅", "Unsubscribed")
    elif expect == "list_subscriptions":
        marks = ("订阅", "subscri")
    if marks and not any(m in shown for m in marks):
        problems.append(f"none of {marks} shown")
    return problems
