"""Reading a chat message or a slash command into an intent (rules, Chinese and English).

:func:`understand` reads a mention or DM, :func:`understand_command` the text after
``/prhub``. Both return one of :mod:`bot.understand.intents`; nothing understood is a
:class:`~bot.understand.intents.HelpIntent` carrying the text (for the nearest examples).
They never raise.

Steps:

1. normalise (:func:`normalize`): the bot's own mention tokens removed, Unicode NFKC
   (full-width ``＃６０４６`` becomes ``#6046``), invisible format characters dropped,
   spaces collapsed, and the text cut at :data:`MAX_CHARS` — every later step is a
   linear scan with bounded patterns, so a 40,000-character message costs no more
   than a short one;
2. find the parts: the time window (:func:`bot.understand.windows.read_window`),
   PR references (URLs, ``owner/name#N``, ``#N``, ``PR N``, and bare numbers where
   the sentence is about PRs), the repository, a label (``npu 标签``, ``label npu``);
3. decide, most specific first: help, subscriptions (changes, listing, the GitHub link and the
   personal digest: :mod:`bot.understand.subscriptions`; the filter itself is read by the core),
   several PRs (a comparison), one PR ("worth
   reading?" or "what does it do?"), a question about the PRs of a window (a change
   verb and search words), a label view, the merged PRs of a window, a digest;
   a window that cannot be read turns the last four into a
   :class:`~bot.understand.intents.ClarifyIntent`. A statement about one's own work or a request
   to colleagues (``I'll fix the rollout bug this week``, ``我刚提了个 PR，麻烦大家 review``) and
   one's own 周报 (``周报写完了``) are no command: the help answers them.

Language (:func:`detect_language`): ``zh`` when the message holds Chinese, ``en``
when it holds English words beyond commands, labels, numbers, URLs and
repository names, else ``None`` (``PR 6046``, ``label npu``, ``/prhub subscribe npu``):
the channel's language applies.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace
from importlib import resources
from itertools import islice
from typing import Any

from bot.filters import opens_with_request, subscription_action
from bot.models import Language
from bot.understand import followup as fu
from bot.understand.concepts import Concepts, shipped_concepts
from bot.understand.followup import MAX_FOLLOW_UP
from bot.understand.intents import (
    MAX_COMPARED,
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    FollowUpIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PRIntent,
    PRQuestion,
    QuestionIntent,
    SmallTalkIntent,
)
from bot.understand.smalltalk import small_talk
from bot.understand.subscriptions import read_request, subscription_command, subscription_intent
from bot.understand.windows import WindowReading, read_windows

MAX_CHARS = 1_000
"""Characters of a message that are read; the rest is ignored (no question needs more)."""
MAX_TERMS = 6
"""Search words kept from one question."""
MAX_REFS = 24
"""PR references of each kind that are read (a comparison holds at most six)."""

_REPO = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9_.-]{0,99}[A-Za-z0-9_]"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_A = r"(?<![A-Za-z])"
_Z = r"(?![A-Za-z])"

_PR_URL = re.compile(rf"https?://[^\s/<>|]{{1,253}}/(?P<repo>{_REPO})/(?:pull|pulls|-/merge_requests)/"
                     r"(?P<n>[0-9]{1,7})(?![0-9])")
_URL = re.compile(r"https?://[^\s<>|]{1,2000}")
_MENTION = re.compile(r"<[@!#][A-Za-z0-9_|.-]{1,80}>|@_user_[0-9]{1,4}|<at [^>]{0,200}>[^<]{0,100}</at>")
"""Mentions of people, channels and groups (Slack ``<@U…>``, ``<!here>``, ``<#C…|name>``; Feishu
``@_user_1``, ``<at …>``): they are neither search words nor labels."""
_REPO_HASH = re.compile(rf"(?<![A-Za-z0-9_./-])(?P<repo>{_REPO})#(?P<n>[0-9]{{1,7}})(?![0-9])")
_HASH = re.compile(r"(?<![A-Za-z0-9&#])#\s?(?P<n>[0-9]{1,7})(?![0-9])")
_PR_WORD_NUMBER = re.compile(rf"{_A}(?:prs?|pull\s?requests?|pulls?|mrs?)\s?[#:：/-]?\s?(?P<n>[0-9]{{1,7}})(?![0-9])",
                             re.IGNORECASE)
"""``PR 6046``, ``PR#6046``, ``PR-6046``, ``pull/6046`` (a URL's path without its host)."""
_NUMBERED_PR = re.compile(r"(?:第\s?)?(?P<n>[0-9]{1,7})\s?[号號]\s?(?:pr|合并请求|合併請求)", re.IGNORECASE)
"""``第6046号PR``, ``6046 号 PR``: the number of a PR, not a count (``号`` alone is a day: ``13号``)."""
_NUMBER_LIST = re.compile(r"(?<![A-Za-z0-9_./#:+-])(?P<list>[0-9]{3,7}(?:/[0-9]{3,7}){1,5})(?![0-9A-Za-z_/%]|\.[0-9])")
"""``6046/6029/6011``: PR numbers of three digits or more listed with slashes (dates were read as windows first)."""
_ONLY_NUMBERS_GLUE = re.compile(r"[0-9\s#,，、/?？!！.。]|(?i:prs?|or|and|vs\.?)|还是|還是|和|与|與|或者?|跟")
"""What may stand between the numbers of a message that lists PRs only (``6046还是6029？``)."""
_BARE_NUMBER = re.compile(r"(?<![A-Za-z0-9_./#:+-])(?P<n>[0-9]{1,7})(?![0-9A-Za-z_/%]|\.[0-9])")
_COUNT_AFTER = re.compile(r"\s?(?:个|個|条|條|项|項|次|位|行|分钟|分鐘|天|周|週|月|年|号|號|日|%|"
                          r"(?i:prs|files?|lines?|days?|weeks?|months?|years?|mins?|minutes?|hours?|times|x\b))")
_LIST_GLUE = re.compile(r"^\s{0,3}(?:和|与|與|跟|及|以及|、|,|，|;|；|and|&|vs\.?|versus|or|还是|還是|/|对比|或)?"
                        r"\s{0,3}#?$", re.IGNORECASE)
_BARE_REPO = re.compile(rf"(?<![A-Za-z0-9_./#:-])(?P<repo>{_REPO})(?![A-Za-z0-9_#/])")
_REPO_MARKER = re.compile(r"(?:\b(?:in|of|for|from|repo|repository)\s{1,3}|仓库\s?|项目\s?|在\s?)$", re.IGNORECASE)

_WORDS: dict[str, dict[str, Any]] = tomllib.loads(
    resources.files("bot").joinpath("defaults/words.toml").read_text(encoding="utf-8"))


def _vocabulary(section: str, *, prefix: str = "", suffix: str = "") -> re.Pattern[str]:
    """One section of ``bot/defaults/words.toml`` as a pattern: the Chinese phrases (longest
    first) or the English fragments as whole words, each between ``prefix`` and ``suffix``."""
    words = _WORDS[section]
    zh = sorted(words.get("zh", []), key=len, reverse=True)
    parts = [re.escape(w) for w in zh]
    if words.get("en"):
        parts.append(rf"{_A}(?:{'|'.join(words['en'])}){_Z}")
    return re.compile(f"{prefix}(?:{'|'.join(parts)}){suffix}", re.IGNORECASE)


_HELP = _vocabulary("help", prefix=r"^(?:请问|请|麻烦|please\s|pls\s|hey\s|hi\s|so\s)?\s?",
                    suffix=r"(?:\s?(?:一下|一下吧|吧|呀|啊|呢|嘛|吗|嗎|me|pls|please|plz))?$")
"""The whole message asks for help: the words of ``[help]`` alone, with polite padding (``请``, ``一下``, ``pls``)."""
_LIST_SUBS_MORE = _vocabulary("list_subscriptions")
_COMPARE = _vocabulary("compare")
_WHAT = _vocabulary("what")
_WORTH = _vocabulary("worth")
_ANALYZE = _vocabulary("analyze")
_LOOK = _vocabulary("look")
_PR_WORD = _vocabulary("pr_word")
_DIGEST = _vocabulary("digest")
_MERGED = _vocabulary("merged")
_LISTING = _vocabulary("listing")
_KEY = _vocabulary("key")
_CHANGE = _vocabulary("change")
_OPENER = _vocabulary("opener")
_WHO = _vocabulary("who")
_ZH_STOP_RE = re.compile("|".join(re.escape(w) for w in sorted(_WORDS["stop"]["zh"].split(), key=len, reverse=True)),
                         re.IGNORECASE)
_EN_STOP = frozenset(_WORDS["stop"]["en"].split())
_ZH_STOP = frozenset(_WORDS["stop"]["zh"].split())

_LABEL_ZH = re.compile(r"(?<![A-Za-z0-9_.+-])(?P<a>[A-Za-z0-9][A-Za-z0-9_.+-]{0,63})\s?(?:这个|這個|的)?\s?"
                       r"(?:标签|標籤|label|模块|模塊)|"
                       r"(?:标签|標籤)\s?(?:为|是|:|：)?\s?(?P<b>[A-Za-z0-9][A-Za-z0-9_.+-]{0,63})", re.IGNORECASE)
_LABEL_EN = re.compile(rf"{_A}labels?\s?[:=]?\s?(?P<a>[A-Za-z0-9][A-Za-z0-9_.+-]{{0,63}})|"
                       rf"(?P<b>[A-Za-z0-9][A-Za-z0-9_.+-]{{0,63}})\s(?:label|area|module){_Z}", re.IGNORECASE)
_LABEL_LIKE = re.compile(r"[a-z][a-z0-9_.+-]{0,40}")
_AREA = re.compile(rf"{_A}(?:in|for|on|about|of)\s(?:the\s)?"
                   r"(?!(?:call|duty|leave|vacation|holiday|it|board|track|time|site|hold|fire)(?![A-Za-z]))"
                   rf"(?P<a>[A-Za-z][A-Za-z0-9_.+-]{{0,40}}){_Z}|"
                   r"(?P<b>[A-Za-z][A-Za-z0-9_.+-]{0,40})\s{0,12}的?\s?(?:最近|近来|近期)?\s?(?:周报|週報|动态|動態|进展|"
                   r"進展|情况|情況|方面|怎么样|怎樣|怎样|咋样|如何|近况)|"
                   rf"{_A}how(?:['’]s|\sis|\sare)\s(?:the\s)?(?P<c>[A-Za-z][A-Za-z0-9_.+-]{{0,40}})\s(?:work\s)?"
                   r"(?:doing|going|looking|coming\salong)(?![A-Za-z])",
                   re.IGNORECASE)
_QUOTED = re.compile(r"[\"“”'‘’`「『](?P<t>[^\"“”'‘’`「」『』\n]{1,60})[\"“”'‘’`」』]")
_PUNCT_EDGE = ".,;:!?()[]{}<>\"'“”‘’`。，；：！？（）【】「」《》、…~～*"


def normalize(text: str, bot_mentions: Sequence[str] = ()) -> str:
    """``text`` without the bot's own mention tokens, NFKC-normalised, invisible format characters
    (zero-width, bidi overrides) removed, spaces collapsed, cut at :data:`MAX_CHARS` characters."""
    for mention in bot_mentions:
        if mention:
            text = text.replace(mention, " ")
    text = unicodedata.normalize("NFKC", text[: MAX_CHARS * 4])
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())[:MAX_CHARS]


def detect_language(text: str, ignore: Iterable[str] = ()) -> Language | None:
    """``zh`` if ``text`` holds Chinese; ``en`` if it holds English words other than commands,
    the words in ``ignore`` (the message's label), numbers, week names, URLs, paths and
    repository names; else ``None`` (the caller's default applies)."""
    if _CJK.search(text):
        return "zh"
    if " " not in text.strip() and not text.strip().isdigit():
        return None  # one word ("npu", "hello") tells nothing about the language
    skip = {w.lower() for w in ignore} | _COMMAND_WORDS
    said: list[str] = []
    for token in _URL.sub(" ", text).split():
        if any(ch.isdigit() for ch in token) or "/" in token or token.startswith("#"):
            continue
        for word in re.findall(r"[A-Za-z]{2,}", token):
            if word.lower() not in skip:
                return "en"
            said.append(word.lower())
    if len(said) >= 2 and any(w in _SENTENCE_WORDS for w in said) and said[0] not in _COMMANDS:
        return "en"  # "fsdp PRs in W34": an English sentence of labels and dates
    return None


_SENTENCE_WORDS = frozenset({"in", "of", "for", "from", "the", "on", "to", "since", "this", "last"})
"""Words that make a sentence of labels and dates English (a command's arguments stay the channel's)."""
_COMMAND_WORDS = frozenset({"pr", "prs", "label", "labels", "digest", "subscribe", "unsubscribe", "subscriptions",
                            "subscription", "help", "ask", "merged", "this", "last", "to", "from", "in",
                            "on", "for", "of", "the"})


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (offsets stay valid)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


class _Reading:
    """The parts of one message: window, PR references, repository, label, and the rest."""

    def __init__(self, text: str) -> None:
        self.text = text
        text = _blank(text, [(m.start(), m.end()) for m in islice(_MENTION.finditer(text), 100)])
        self.text = text
        self.window: WindowReading | None
        self.window, self.window_spans = read_windows(text)
        outside = _blank(text, self.window_spans)
        self.refs: list[tuple[int, str | None, tuple[int, int]]] = []
        self.repo: str | None = None
        self._find_refs(outside)
        taken = [span for _, _, span in self.refs] + self.window_spans
        rest = _blank(text, taken)
        urls = [(m.start(), m.end()) for m in _URL.finditer(rest)]
        rest = _blank(rest, urls)
        self.path_like: list[str] = []
        for m in islice(_BARE_REPO.finditer(rest), MAX_REFS):
            marked = _REPO_MARKER.search(rest, max(0, m.start() - 12), m.start()) is not None
            if not marked and len(m["repo"]) == 3:
                continue  # "w/c", "w/o", "n/a", "i/o": an abbreviation, neither a repository nor a path
            if self.repo is None and (marked or not self._looks_like_path(m["repo"])):
                self.repo = m["repo"]
                rest = _blank(rest, [(m.start(), m.end())])
            else:
                self.path_like.append(m["repo"])
        self.rest = rest

    @staticmethod
    def _looks_like_path(name: str) -> bool:
        """``verl/trainer`` is more likely a path of the repository than a repository: a name
        whose first part is also a common source directory or whose second part has a file suffix."""
        owner, _, repo = name.partition("/")
        return "." in repo.rstrip(".") or owner.lower() in _PATH_HEADS

    def _find_refs(self, text: str) -> None:
        used: list[tuple[int, int]] = []
        for pattern in (_PR_URL, _REPO_HASH):
            for m in pattern.finditer(text):
                self.refs.append((int(m["n"]), m["repo"], (m.start(), m.end())))
                used.append((m.start(), m.end()))
                self.repo = self.repo or m["repo"]
        text = _blank(text, used)
        text = _blank(text, [(m.start(), m.end()) for m in _URL.finditer(text)])
        explicit = [m for p in (_HASH, _PR_WORD_NUMBER, _NUMBERED_PR) for m in islice(p.finditer(text), MAX_REFS)]
        for m in explicit:
            self.refs.append((int(m["n"]), None, (m.start(), m.end())))
        text = _blank(text, [(m.start(), m.end()) for m in explicit])
        bare = [m for m in islice(_BARE_NUMBER.finditer(text), MAX_REFS) if not _COUNT_AFTER.match(text, m.end())]
        listed = list(islice(_NUMBER_LIST.finditer(text), MAX_REFS))
        if listed and (_COMPARE.search(self.text) or not _ONLY_NUMBERS_GLUE.sub("", _blank(text, [
                (m.start(), m.end()) for m in listed])).strip()):
            for m in listed:
                at = m.start()
                for number in m["list"].split("/"):
                    self.refs.append((int(number), None, (at, at + len(number))))
                    at += len(number) + 1
        if not bare:
            self.refs.sort(key=lambda r: r[2][0])
            return
        context_compare = _COMPARE.search(self.text) is not None
        context_pr = bool(_WHAT.search(self.text) or _WORTH.search(self.text) or _ANALYZE.search(self.text)
                          or fu.RISKS.search(self.text) or fu.START.search(self.text))
        context_look = _LOOK.search(self.text) is not None
        only_numbers = not _ONLY_NUMBERS_GLUE.sub("", text).strip()
        pr_words = [(w.start(), w.end()) for w in islice(_PR_WORD.finditer(self.text), MAX_REFS)]
        for m in bare:
            near_pr_word = any(abs(s - m.end()) <= 6 or abs(m.start() - e) <= 6 for s, e in pr_words)
            looked_at = context_look and len(m["n"]) >= 3  # "看看 上周 top 5" is no PR #5
            if context_compare or only_numbers or self._joined(m) or (
                    len(bare) == 1 and (context_pr or near_pr_word or looked_at)):
                self.refs.append((int(m["n"]), None, (m.start(), m.end())))
                self.refs.sort(key=lambda r: r[2][0])

    def _joined(self, m: re.Match[str]) -> bool:
        """Whether bare number ``m`` is listed next to a PR reference (``PR 6046 和 6029``)."""
        for _, _, (start, end) in self.refs:
            if end <= m.start() and m.start() - end <= 8 and _LIST_GLUE.match(self.text[end:m.start()]):
                return True
            if m.end() <= start and start - m.end() <= 8 and _LIST_GLUE.match(self.text[m.end():start]):
                return True
        return False

    def numbers(self) -> list[int]:
        seen: list[int] = []
        for number, _, _ in self.refs:
            if number > 0 and number not in seen:
                seen.append(number)
        return seen[:MAX_COMPARED]


_PATH_HEADS = frozenset({"src", "lib", "tests", "test", "docs", "doc", "examples", "example", "scripts", "script",
                         "configs", "config", "verl", "recipe", "docker", "ci", ".github", "bot", "torchtitan",
                         "openrlhf", "models", "model", "utils", "tools", "benchmarks", "bench", "csrc", "include",
                         "python", "trainer", "workers", "experimental", "third_party"})


def _terms(rest: str, label: str | None = None) -> list[str]:
    """The search words of a question: quoted phrases, identifiers and paths, and the Chinese
    words left after the function words are taken out."""
    found: list[str] = []
    for m in _QUOTED.finditer(rest):
        found.append(m["t"].strip())
    rest = _blank(rest, [(m.start(), m.end()) for m in _QUOTED.finditer(rest)])
    for token in re.findall(r"(?<![A-Za-z0-9_])\.?[A-Za-z0-9_][A-Za-z0-9_./+-]{0,99}", rest):
        word = token.strip(_PUNCT_EDGE).removesuffix("'s").lower()
        if len(word) < 2 or word in _EN_STOP or word.isdigit() or (label and word == label):
            continue
        found.append(word)
    found.extend(_chinese_terms(rest))
    out: list[str] = []
    for term in found:
        term = term.rstrip(_PUNCT_EDGE).lstrip(_PUNCT_EDGE.replace(".", "")) if "/" in term else term.strip(_PUNCT_EDGE)
        if term and term.lower() not in (t.lower() for t in out):
            out.append(term)
    return out[:MAX_TERMS]


def _chinese_terms(rest: str) -> list[str]:
    """The Chinese search words of ``rest``: its runs of Chinese (function phrases blanked) cut into words
    by the segmenter (:mod:`bot.understand.tokens`), without stop words and filler (``逻辑``, ``东西``)."""
    zh = _function_words_blanked(re.sub(r"[A-Za-z0-9_./+-]+", " ", rest))
    runs = re.findall(r"[\u3400-\u9fff\uf900-\ufaff]{2,40}", zh)
    if not runs:
        return []
    from bot.understand.tokens import chinese_words

    out: list[str] = []
    for run in runs:
        out.extend(w for w in chinese_words(run) if w not in _ZH_STOP and not _ZH_STOP_RE.fullmatch(w))
    return out


_COUNTED = re.compile(r"[一二两兩三四五六七八九十几幾0-9]{1,3}\s?(?:个|個|条|條|项|項|位|次)")
_LABEL_IN = re.compile(r"(?<![A-Za-z0-9_./-])(?P<l>[A-Za-z][A-Za-z0-9_.+-]{0,40})\s?(?:标签|標籤)?\s?(?:里面|里|"
                       r"下面|下|中)\s?"
                       r"(?:有)?(?:哪些|哪个|什么|啥)")
_BY_LABEL = re.compile(r"按\s?(?:标签|標籤|label)\s?(?:看|查看|显示|列)")
_HOW_TO = re.compile(r"(?:怎么|怎样|如何|咋)\s?(?:才能)?\s?(?:订阅|退订|取消订阅|关注)|"
                     r"(?<![A-Za-z])how\s+(?:do|can|should)\s+(?:i|we)\s+(?:un)?subscribe|(?<![A-Za-z])how\s+to\s+(?:un)?subscribe",
                     re.IGNORECASE)
"""A question about how to subscribe (``怎么订阅某个目录啊``): the help, not a subscription."""


def _concepts() -> Concepts:
    return shipped_concepts()


def _function_words_blanked(text: str) -> str:
    """``text`` with the phrases of every vocabulary section (compare, what, digest, change …,
    longest first) and counted nouns (``两个``) blanked, so the stop list cannot split a word
    like 对比 into 对 + 比."""
    return _FUNCTION_RE.sub(lambda m: " " * len(m.group(0)), _COUNTED.sub(lambda m: " " * len(m.group(0)), text))


_FUNCTION_RE = re.compile("|".join(re.escape(w) for w in sorted(
    {w for name, section in _WORDS.items() if name != "stop" for w in section.get("zh", [])}, key=len, reverse=True)))


def _leftover(rest: str, *, stop: bool = True) -> int:
    """How many words of ``rest`` are not function words: English words (outside the stop list,
    unless ``stop`` is false) plus the Chinese characters the stop phrases leave (``我上周请假了``
    leaves 假: it is not a bare window)."""
    words = [w for w in re.findall(r"[A-Za-z0-9_][A-Za-z0-9_./+-]{0,99}", rest)
             if not (stop and w.strip(_PUNCT_EDGE).lower() in _EN_STOP) and not w.isdigit()]
    zh = _ZH_STOP_RE.sub(" ", _function_words_blanked(re.sub(r"[A-Za-z0-9_./+-]+", " ", rest)))
    return len(words) + len(_CJK.findall(zh))


def _label(text: str) -> tuple[str, tuple[int, int]] | None:
    for pattern in (_LABEL_ZH, _LABEL_EN):
        for m in pattern.finditer(text):
            word = (m["a"] or m["b"]).lower()
            if word in _EN_STOP or word.isdigit():
                continue
            return word, m.span()
    return None


_STATEMENT = re.compile(
    r"^(?:(?:ok|so|and|also|btw|fyi)[,，]?\s+)?(?:i['’]ll|we['’]ll|i\s+will|we\s+will|i['’]m\s+going\s+to|we['’]re\s+going\s+to|"
    r"i\s+(?:have|need|want)\s+to|we\s+(?:have|need|want)\s+to|i\s+just|we\s+just|let['’]?s|"
    r"(?:can|could|would|will)\s+(?:someone|somebody|anyone|anybody|you\s+guys|y['’]?all)|(?:someone|somebody)\s+(?:should|must|please|pls))"
    r"(?![A-Za-z])|\b(?:my|our)\s+(?:prs?|pull\s+requests?|patch(?:es)?|changes?)\s+(?:got|was|were|is|are|has\s+been|"
    r"have\s+been|finally)\b|\b(?:look\s+at|review|check|approve|merge|rebase)\s+my\s+(?:prs?|pull\s+requests?|patch(?:es)?|changes?)\b|"
    r"^(?:晚点|等下|待会儿?|回头|明天|今天|下周|这周|本周)?\s?(?:我们?|咱们?|我这边|我们这边)(?:组|这边)?\s?"
    r"(?:这周|本周|今天|明天|下周|马上|等下|待会儿?|回头|晚点|昨天|前天|刚才|今早|上午|下午)?\s?(?:主要|一直|也|都|还)?\s?"
    r"(?:要把|得把|要去|得去|会|准备|打算|计划|刚|刚刚|正在|在搞|在弄|在做|在写|在改|还在|已经|把|又?(?:提|发|开|交)了?)|"
    r"麻烦大家|请大家|大家帮忙|辛苦大家|大家辛苦|辛苦了|你(?:那个|这个|那|的)\s?(?:pr|合并请求)",
    re.IGNORECASE)
"""A statement about one's own work or a request to the others in the channel (``I'll fix the rollout bug this
week``, ``can someone review my PR later``, ``我刚提了个 PR，麻烦大家 review 一下``): its PR and change words make
no search."""
_MONTHLY = re.compile(r"月报|月報|月度总结|月度報告|月度报告|(?<![A-Za-z])monthly(?![A-Za-z])", re.IGNORECASE)
_QUESTION_END = re.compile(r"[?？]|[吗嗎呢么麼]\s?[.!。！~～]*$|没有?\s?[.!。！~～]*$|"
                           r"^\s?(?:did|has|have|was|were|is|are|does|do|any)(?![A-Za-z])", re.IGNORECASE)
"""A question's form, for a change word whose only context is a window (``上周有人改 ci 吗``; not
``昨天的会改到周五了``)."""
_OWN_REPORT = re.compile(r"(?:写|交|填|提交|补|发邮件)(?:完|好)?了?\s?(?:的)?(?:周报|週報|月报|日报)|"
                         r"(?:周报|週報|月报|日报)[^。！？!?#]{0,8}?(?:还没|没)?(?:写|交|填|提交|补)(?:完|好)?(?:了|吗|没)?|"
                         r"进展(?:还行|还可以|一般|不错|顺利|挺好|很慢|不大)|"
                         r"^(?:i|we)\s+(?:subscribed|signed\s+up|read|saw|wrote|sent|finished)(?![A-Za-z])",
                         re.IGNORECASE)
"""One's own report, progress or reading (``周报写完了``, ``今天要交周报``, ``进展还行``, ``i subscribed to the
newsletter``): no request for the bot's digest."""


def _is_question_shaped(text: str) -> bool:
    return bool(_OPENER.search(text) and (_PR_WORD.search(text) or _CHANGE.search(text)))


def understand(text: str, *, bot_mentions: Sequence[str] = ()) -> Intent:
    """Understand one chat message.

    Args:
        text: the message as received (mentions, full-width characters, any length).
        bot_mentions: the bot's own mention tokens to remove (``<@U0BOT>`` on Slack,
            the ``@_user_N`` placeholder the bot was given on Feishu).

    Returns:
        One intent (:data:`bot.understand.intents.Intent`); :class:`HelpIntent` with the
        text when nothing matches. Never raises.
    """
    clean = normalize(text, bot_mentions)
    if not clean:
        return HelpIntent()
    if _HELP.match(clean.strip(_PUNCT_EDGE + " ")) or _HELP.match(clean):
        return HelpIntent(language=detect_language(clean), said=clean, asked=True)
    if _LIST_SUBS_MORE.search(clean) and subscription_action(clean) not in ("unsubscribe", "unsubscribe_all"):
        return ListSubscriptionsIntent(language=detect_language(clean))
    if _HOW_TO.search(clean):
        return HelpIntent(language=detect_language(clean), said=clean, asked=True)
    if (kind := small_talk(clean)) is not None:
        return SmallTalkIntent(kind, language=_small_talk_language(clean))
    if (not _is_question_shaped(clean) or opens_with_request(clean)) and (
            found := subscription_intent(clean, None)) is not None:
        return _with_language(found, detect_language(clean, _request_words(found)))
    reading = _Reading(clean)
    if (follow := _follow_up(reading)) is not None:
        return follow
    return _decide(reading)


def _small_talk_language(text: str) -> Language | None:
    if _CJK.search(text):
        return "zh"
    return "en" if re.search(r"[A-Za-z]{2,}", text) else None


_FOLLOW_UP_FRAME = re.compile(r"这个\s?pr|這個\s?pr|那个\s?pr|那個\s?pr|(?<![A-Za-z])(?:this|that|"
                              r"the)\s+pr(?![A-Za-z])|"
                              r"(?<![A-Za-z])(?:them|it|those|these|ones?)(?![A-Za-z])|那个|那個|这个|這個|的|"
                              r"仔细看|细看|细读|精读|好好看|看看|看下|看|读|大吗|大不大|高吗|多吗|"
                              r"(?<![A-Za-z])(?:for|from|to|in|of|the|show|me|list|pls|please|same|again|too)(?![A-Za-z])",
                              re.IGNORECASE)


def _follow_up(r: _Reading) -> FollowUpIntent | None:
    """The follow-up ``r`` is (:mod:`bot.understand.followup`), or ``None`` when it says enough by itself: a
    message that asks with words of its own (a PR or change word, ``哪些``, ``标签``, a digest word) is read
    as it is."""
    text = r.text.strip()
    if len(text) > MAX_FOLLOW_UP:
        return None
    if fu.ENGLISH.match(text) or fu.CHINESE.match(text):
        return FollowUpIntent(language="en" if fu.ENGLISH.match(text) else "zh", text=text)
    strong = bool(fu.LEAD.match(text) or _TRAIL_NE.search(text) or fu.ONLY.match(text))
    numbers = r.numbers()
    outside = r.rest
    if not numbers and strong:  # 跟 5939 比呢: a bare number is a PR here
        bare = [m for m in islice(_BARE_NUMBER.finditer(outside), 2) if len(m["n"]) >= 3]
        if len(bare) == 1:
            numbers = [int(bare[0]["n"])]
            outside = _blank(outside, [bare[0].span()])
    question = fu.question_of(outside)
    shift = -1 if fu.BEFORE.search(outside) else 1 if fu.AFTER.search(outside) else None
    nth = fu.nth_of(outside)
    pr_ref = _PR_REF.search(outside) is not None
    rest = outside
    for pattern in (_PR_REF, *fu.follow_up_words(), _FOLLOW_UP_FRAME, _ASK_FRAME):
        rest = pattern.sub(lambda m: " " * len(m.group(0)), rest)
    compare = fu.COMPARE.search(outside) is not None
    labelled = _label(rest)
    asks = (_PR_WORD.search(rest) or _CHANGE.search(rest) or _OPENER.search(rest) or _DIGEST.search(rest)
            or _MERGED.search(rest) or _WHO.search(rest) or _HELP.search(rest.strip()) or _KEY.search(rest)
            or _LISTING.search(rest))
    if asks or (labelled is not None and not strong):
        return None
    if labelled is not None:
        rest = _blank(rest, [labelled[1]])
    terms = _terms(rest)
    label = labelled[0] if labelled else (terms[0] if len(terms) == 1 and _LABEL_LIKE.fullmatch(terms[0])
                                          and strong else None)
    if label is not None and not labelled:
        terms = []
    window = r.window.spec if r.window is not None and r.window.problem is None else None
    said = r.window.said if r.window is not None else None
    lang = detect_language(text, [label] if label else terms)
    base = FollowUpIntent(language=lang, said=said, text=text)
    if len(numbers) == 1:
        explicit = _WHAT.search(r.text) or _WORTH.search(r.text) or _ANALYZE.search(r.text) or question
        if strong and not terms and window is None and not (r.refs and r.refs[0][1]) and (
                compare or not explicit or fu.LEAD.match(text)):
            return replace(base, number=numbers[0], question=question, compare=compare)
        return None
    if numbers:
        return None
    if question is not None and window is None and (not terms or nth is not None or pr_ref):
        picked = tuple(terms) or ((label,) if label and pr_ref else ())
        return replace(base, question=question, nth=nth, terms=picked)
    if terms:
        return None
    if shift is not None and window is None:
        return replace(base, shift=-1 if shift < 0 else 1, label=label)
    if compare and len(text) <= 30:
        return replace(base, compare=True)
    if pr_ref and window is None and label is None:
        return replace(base, question="worth")  # 帮我看看这个 PR
    if (window is not None or label is not None) and strong:
        narrow = fu.ONLY.match(text) is not None and label is not None
        return replace(base, window=window, label=label, narrow=narrow)
    return None


_TRAIL_NE = re.compile(r"(?:呢|咧|嘞)\s*[?？!！。.~～]*$")
_ASK_FRAME = re.compile(r"有啥|有什么|有什麼|有没有|有沒有|是不是|会不会|什么|什麼|啥|吗|嗎|嘛|么|不$|大吗|"
                        r"(?<![A-Za-z])(?:any|are\s+there|what\s+are\s+the|is\s+it|are\s+they)(?![A-Za-z])",
                        re.IGNORECASE)
_PR_REF = re.compile(r"(?:这个|這個|那个|那個)\s?(?:pr|PR)|(?<![A-Za-z])(?:this|that|the)\s+pr(?![A-Za-z])|的\s?(?:pr|"
                     r"PR)",
                     re.IGNORECASE)


def _with_language(intent: Intent, language: Language | None) -> Intent:
    return replace(intent, language=language)


def _request_words(intent: Intent) -> list[str]:
    """Words of a subscription request that tell nothing of the language: the values of its filter
    (labels, paths, authors) and the GitHub handle, so ``subscribe npu rollout`` takes the channel's
    language while ``subscribe me to npu`` is English."""
    if isinstance(intent, LinkGitHubIntent):
        return [intent.handle]
    text = getattr(intent, "text", "")
    found = read_request(text, getattr(intent, "repo", None))
    if found is None:
        return re.findall(r"[A-Za-z][A-Za-z0-9_.+-]*", text.split(" ", 1)[1]) if " " in text else []
    flt = found.filter
    if flt is None:
        return []
    keys = ["label", "labels", "path", "paths", "author", "title", "verdict", "importance", "insight", "minutes",
            "owner", "repo"]
    return keys + [w for t in (*flt.include, *flt.exclude) for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", t.value)]


def _decide(r: _Reading) -> Intent:
    text = r.text
    numbers = r.numbers()
    if len(numbers) >= 2:
        return CompareIntent(tuple(numbers), repo=r.repo, language=detect_language(text))
    statement = _STATEMENT.search(text) is not None
    if numbers and statement and not (_QUESTION_END.search(text) or _WHAT.search(text) or _WORTH.search(text)
                                      or _ANALYZE.search(text)):
        return HelpIntent(language=detect_language(text), said=text)  # 我刚在周报里写了 #6046: no question
    if numbers:
        question: PRQuestion = "start" if fu.START.search(text) else "risks" if fu.RISKS.search(text) else \
            "what" if _WHAT.search(text) and not _WORTH.search(text) else "worth"
        return PRIntent(numbers[0], repo=r.repo, language=detect_language(text), question=question)
    window, said = (r.window.spec, r.window.said) if r.window else (None, None)
    labelled = _label(r.rest)
    rest = _blank(r.rest, [labelled[1]]) if labelled else r.rest
    label = labelled[0] if labelled else None
    terms = _terms(rest, label) + [p for p in r.path_like if p.lower() not in _EN_STOP]
    terms = terms[:MAX_TERMS]
    concept = any(_concepts().find(t) is not None for t in terms)
    change = _CHANGE.search(rest) is not None or concept
    about_prs = _PR_WORD.search(rest) is not None
    if label is None and len(terms) > 1 and (inside := _LABEL_IN.search(rest)) is not None \
            and inside["l"].lower() in terms:  # 上周 fully_async 里有哪些是修 bug 的: a label and a question in it
        label = inside["l"].lower()
        terms = [t for t in terms if t != label]
    lang = detect_language(text, [label] if label else [])
    single_label = len(terms) == 1 and _LABEL_LIKE.fullmatch(terms[0]) is not None
    intent: Intent | None = None
    asked = bool(_DIGEST.search(rest) or _OPENER.search(rest) or _LOOK.search(rest))
    who = _WHO.search(rest)
    if who is not None and not _terms(_blank(rest, [who.span()]), label):
        # "谁贡献最多", "本月谁合并的 PR 最多", "top contributors last month"
        intent = MergedIntent(window, repo=r.repo, language=lang, said=said, focus="authors")
    elif label is not None:
        if change and terms:
            intent = QuestionIntent(tuple(terms), window=window, label=label, repo=r.repo, language=lang, said=said,
                                    text=text)
        else:
            intent = LabelIntent(label, repo=r.repo, language=lang, window=window, said=said)
    elif change and terms and (about_prs or _OPENER.search(rest) or _QUESTION_END.search(text) or (
            concept and r.window is not None)):
        # "哪些 PR 改了 rollout 的配置", "which PRs touched fully_async last week", "W16 有没有改 megatron 的 PR"
        intent = QuestionIntent(tuple(terms), window=window, repo=r.repo, language=lang, said=said, text=text)
    elif terms and about_prs and not _DIGEST.search(rest):
        if single_label:  # "上周 trainer 有哪些重点 PR", "trainer PRs last week"
            intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window,
                                 said=said)
        else:
            intent = QuestionIntent(tuple(terms), window=window, repo=r.repo, language=lang, said=said, text=text)
    elif terms and single_label and r.window is not None and not _DIGEST.search(rest) \
            and _leftover(rest, stop=False) == 1:
        # "上周 npu", "npu W16": a label and a window, nothing else
        intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window, said=said)
    elif single_label and any((m["a"] or m["b"] or m["c"]).lower() == terms[0] and (m["c"] or asked)
                              for m in _AREA.finditer(rest)):
        # "what's new in rollout this week", "npu 的动态", "rollout 最近怎么样", "how's fsdp doing lately"
        intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window, said=said)
    elif terms and _BY_LABEL.search(text) and single_label:  # vllm 相关的 上上周 按标签看下
        intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window, said=said)
    elif terms and r.window is not None and _QUESTION_END.search(text) and not _DIGEST.search(rest) \
            and not statement and any(re.search(r"[0-9_./]", t) for t in terms):  # fp8 stuff in wk16?
        intent = QuestionIntent(tuple(terms), window=window, repo=r.repo, language=lang, said=said, text=text)
    elif not terms and not _DIGEST.search(rest) and (
            _MERGED.search(rest) or (about_prs and _LISTING.search(rest) and not _KEY.search(rest))):
        # "本月合并了哪些 PR", "what merged this month", "list PRs since Monday"
        intent = MergedIntent(window, repo=r.repo, language=lang, said=said)
    elif _DIGEST.search(rest) or (r.window is not None and not _leftover(rest)) or (
            _KEY.search(rest) and about_prs and (r.window is not None or _LISTING.search(rest))):
        monthly = _MONTHLY.search(rest) if window is None else None
        # a monthly report without a month: the last whole month, as a weekly one is the last whole week
        intent = DigestIntent(week="month-1" if monthly else window, repo=r.repo, language=lang,
                              said=monthly.group(0) if monthly else said)
    if intent is None or (isinstance(intent, DigestIntent) and _OWN_REPORT.search(text)) or (
            statement and not isinstance(intent, DigestIntent)):
        return HelpIntent(language=lang, said=text)
    if r.window is not None and r.window.problem is not None:
        wanted = {DigestIntent: "digest", LabelIntent: "label", MergedIntent: "merged",
                  QuestionIntent: "question"}[type(intent)]
        return ClarifyIntent(r.window.said, r.window.problem, wanted, language=lang)  # type: ignore[arg-type]
    return intent


_COMMANDS = {"digest", "pr", "label", "subscribe", "unsubscribe", "subscriptions", "help", "compare", "ask",
             "merged"}


def understand_command(args: str) -> Intent:
    """Understand the text after a slash command (``/prhub <args>``).

    ``digest [WINDOW] [owner/name]`` (``this``, ``last`` or any window words), ``pr N|#N|URL``
    (several numbers: a comparison), ``compare N M …``, ``label L [WINDOW] [owner/name]``,
    ``merged [WINDOW]``, ``ask QUESTION``, ``subscribe L [owner/name]``,
    ``unsubscribe L [owner/name]``, ``subscriptions``, ``help``; any other text is read
    as a chat message (:func:`understand`). Never raises.
    """
    clean = normalize(args)
    head, _, rest = clean.partition(" ")
    command = head.lower()
    if command not in _COMMANDS:
        return understand(clean) if clean else HelpIntent()
    if command == "ask":
        found = understand(rest)
        return found if not isinstance(found, HelpIntent) else HelpIntent(found.language, said=rest)
    if command == "help":
        return HelpIntent(language=detect_language(rest), said=rest, asked=True)
    reading = _Reading(rest)
    words = [w for w in rest.split() if w != reading.repo]
    lang = detect_language(rest, words[:1] if command in ("label", "subscribe", "unsubscribe") else [])
    if command in ("subscribe", "unsubscribe", "subscriptions"):
        found = subscription_command(command, rest, lang, reading.repo)
        return _with_language(found, detect_language(rest, _request_words(found)))
    window, said = _command_window(rest, reading)
    if command in ("pr", "compare"):
        numbers = [n for n, _, _ in reading.refs] or [int(w.lstrip("#")) for w in words if w.lstrip("#").isdigit()]
        unique = list(dict.fromkeys(n for n in numbers if n > 0))[:MAX_COMPARED]
        repo = reading.repo or next((repo for _, repo, _ in reading.refs if repo), None)
        if len(unique) >= 2:
            return CompareIntent(tuple(unique), repo=repo, language=lang)
        if unique:
            question: PRQuestion = "what" if _WHAT.search(rest) else "worth"
            return PRIntent(unique[0], repo=repo, language=lang, question=question)
        return HelpIntent(language=lang, said=clean)
    if reading.window is not None and reading.window.problem is not None:
        wanted = "label" if command == "label" else "merged" if command == "merged" else "digest"
        return ClarifyIntent(reading.window.said, reading.window.problem, wanted, language=lang)  # type: ignore[arg-type]
    if command == "digest":
        return DigestIntent(week=window, repo=reading.repo, language=lang, said=said)
    if command == "merged":
        return MergedIntent(window, repo=reading.repo, language=lang, said=said)
    label_words = [w for w in _blank(rest, reading.window_spans).split() if w != reading.repo]
    if not label_words:
        return HelpIntent(language=lang, said=clean)
    return LabelIntent(label_words[0].lower(), repo=reading.repo, language=lang, window=window, said=said)


def _command_window(rest: str, reading: _Reading) -> tuple[str | None, str | None]:
    """The window of a command's arguments: the bare keywords ``this`` / ``last`` (as ``--week``
    takes them), else the window words."""
    for word in rest.split():
        if word.lower() in ("this", "last") and reading.window is None:
            return word.lower(), word
    if reading.window is None or reading.window.problem is not None:
        return None, None
    return reading.window.spec, reading.window.said
