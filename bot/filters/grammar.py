"""One filter grammar for chat, the slash command and the config file, in Chinese and English.

Close to the ``subscribe`` grammar of GitHub's own Slack app, plus what people type in chat.
:func:`parse_filter` reads the filter text; :func:`parse_subscription` reads a whole request
(``订阅 …`` / ``subscribe …`` / ``退订 …`` / ``退订全部``) with its repository.

Terms (``KEY`` is case-insensitive; Chinese key names work too)::

    npu                         a bare word is a label (``#npu`` too)
    label:npu   标签:npu  标签 npu
    path:verl/trainer/**        a glob as in the label rules (``**`` crosses folders); a literal
    路径 verl/trainer           path also covers everything below it; several: path:a/**,b/**
    path:@me   我负责的路径       the paths CODEOWNERS gives the subscriber's linked GitHub handle;
    path:@org/team  owner:@alice   or a named handle, team or email
    author:alice   作者 alice    GitHub login (``@`` and ``[bot]`` optional); author:@me = my PRs
    title:"fix hccl"  标题含 hccl  words of the title
    verdict:close_read  结论:精读  close_read / skim / skip (精读 浏览 跳过; a bare 精读 works)
    importance>=6  重要性 6 以上  also > < <= = , ranges 6..8 / 6-8, "importance:6" means >= 6;
    insight>=7   minutes<=15      insight 1–10, minutes (reading time; "minutes:15" means <= 15)
    -ci   -label:ci   -author:dependabot   排除 ci   不要 ci   except ci   not ci   without ci
    +label:npu                   GitHub's ``+`` prefix is accepted and means nothing more

Combining: values of one key are alternatives (OR), different keys must all hold (AND), an
exclusion always wins. Words and punctuation that join alternatives are ignored: ``和 与 及
以及 或 或者 跟 还有 and or & +`` ``, ， 、 ; |``. A value joined to a ``path``/``author``/
``title``/``verdict`` term by ``或``/``or``/``、`` or a comma without a blank
(``path:a/**,b/**``, ``作者 alice 或 bob``) has that key too; anything else bare is a label.
An exclusion word (``排除``, ``不要``, ``not``, ``except``, …) makes every term after it an
exclusion. ``全部``/``all``/``*`` alone means every PR. Filler (``的``, ``相关``, ``PR``) is ignored.

A key word may also follow its values, as people say it: ``rollout 标签``, ``npu 和 rollout 这两个标签``,
``the npu label``, ``npu and rollout labels``, ``verl/trainer 目录``, ``alice 作者``; alone (``标签``) it
still needs a value. A word with a ``/`` is a path after ``touching``/``under``/``in``/``changing``/
``动了``/``改了``/``涉及`` or before ``下面``/``里``/``目录下`` (``PRs touching verl/workers``,
``verl/workers 下面的改动``); alone it stays a label (``kind/bug``). ``alice 提的 PR`` is ``author:alice``.
Words that only frame a request are ignored: politeness and particles (``please``, ``pls``, ``for me``,
``帮我``, ``我们``, ``吧``, ``呗``, ``哈``, ``吗``), demonstratives (``这个``), ``about``, ``anything``,
``when … lands``, counts (``两个``); ``label: npu`` and ``作者是 alice`` read as ``label:npu``, ``作者 alice``.
Any other word is a label, checked against the known ones.

Errors are :class:`~bot.errors.FilterError` with a Chinese and an English message that names
what is known (the keys, the verdicts, the labels the repository uses).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError
from wcmatch import glob

from bot.errors import FilterError
from bot.filters.model import BOUND_LIMITS, ME, SCORE_KEYS, Bound, Filter, ScoreKey, Term, TermKey, is_owner
from bot.models import Language, RecommendationLevel

__all__ = ["GLOB_FLAGS", "RESERVED_WORDS", "SubscriptionCommand", "check_labels", "detect_language", "parse_filter",
           "parse_subscription", "subscription_action"]

GLOB_FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE
"""wcmatch flags of ``path`` globs: the same as the label rules (:mod:`bot.digest.labels`)."""

Action = Literal["subscribe", "unsubscribe", "unsubscribe_all"]

_KEYS: dict[str, str] = {
    **dict.fromkeys(("label", "labels", "tag", "tags", "标签"), "label"),
    **dict.fromkeys(("path", "paths", "file", "files", "dir", "dirs", "directory", "directories", "folder", "folders",
                     "路径", "目录", "文件", "文件夹"), "path"),
    **dict.fromkeys(("owner", "owners", "codeowner", "codeowners", "负责人"), "owner"),
    **dict.fromkeys(("author", "authors", "by", "user", "作者"), "author"),
    **dict.fromkeys(("title", "标题"), "title"),
    **dict.fromkeys(("verdict", "recommendation", "结论", "建议", "阅读建议"), "verdict"),
    **dict.fromkeys(("importance", "imp", "重要性", "重要度"), "importance"),
    **dict.fromkeys(("insight", "洞察", "洞察度"), "insight"),
    **dict.fromkeys(("minutes", "minute", "mins", "阅读时间", "阅读时长", "时长", "分钟"), "minutes"),
    **dict.fromkeys(("repo", "repository", "仓库"), "repo"),
}
_SPACE_KEYS = {"label", "labels", "tag", "tags", "标签", "path", "paths", "路径", "目录", "owner", "负责人", "author",
               "authors", "作者", "by", "title", "标题", "verdict", "结论"}
"""Key names that may also be followed by a blank and the value (``路径 verl/trainer/**``)."""
_POSTFIX_KEYS = {"label", "labels", "tag", "tags", "标签", "path", "paths", "dir", "dirs", "directory", "directories",
                 "folder", "folders", "路径", "目录", "文件夹", "author", "authors", "作者"}
"""Key names that may also follow their values (``rollout 标签``, ``the npu label``, ``verl/trainer 目录``)."""

_VERDICTS: dict[str, RecommendationLevel] = {
    **dict.fromkeys(("close_read", "close-read", "closeread", "close", "read", "精读", "值得精读", "细读", "必读"),
                    "close_read"),
    **dict.fromkeys(("skim", "浏览", "建议浏览", "略读", "泛读"), "skim"),
    **dict.fromkeys(("skip", "跳过", "可跳过", "不用读"), "skip"),
}
_BARE_VERDICTS = {w for w in _VERDICTS if re.search(r"[\u3400-\u9fff]", w)} | {"close_read"}
_EXCLUDE = {"排除", "not", "except", "excluding", "exclude", "without", "no", "minus", "but-not"}
_CONJ = {"和", "与", "及", "以及", "或", "或者", "跟", "还有", "and", "or", "plus", "&", "+"}
_END_EXCLUDE = {"以外", "之外", "以外的", "之外的"}
"""``除了 X 以外``: the exclusion that ``除了`` began ends here."""
_FILLER = {"的", "相关", "相关的", "有关", "有关的", "方面", "方面的", "pr", "prs", "pull", "request",
           "requests", "but", "only", "just", "只", "只要", "只看", "请", "帮我", "我想", "一下", "吧", "呢", "the",
           # words that only frame a request: politeness, particles, pronouns, demonstratives
           "please", "pls", "plz", "thanks", "thx", "any", "anything", "something", "stuff", "new",
           "about", "regarding", "concerning", "on", "in", "with", "touching", "involving", "when", "whenever",
           "for", "to", "lands", "land", "landed", "merged", "gets", "changes", "change",
           "帮我们", "给我", "给我们", "我们", "咱们", "呗", "呀", "哈", "啊", "哦", "喔", "嘛", "吗", "啦",
           "谢谢", "多谢",
           "这个", "这些", "这两个", "这几个", "那个", "该", "改动", "修改", "变更", "提交", "新", "新的",
           "这俩", "那俩", "俩", "都", "也", "part", "sub", "subs", "subscription", "subscriptions",
           "动静", "有动静", "变动", "有变动", "东西", "再合东西", "合东西"}
_ALL = {"全部", "所有", "一切", "全部的", "所有的", "all", "everything", "*", "任何"}

RESERVED_WORDS = frozenset({*_KEYS, *_VERDICTS, *_EXCLUDE, *_CONJ, *_FILLER, *_ALL, "以外", "之外", "以外的", "之外的"})
"""Words the grammar reads as something else than a label: a label spelled like one must be quoted."""

_COUNTED = re.compile(r"(?:这|那)?(?:[一两俩几三四五六七八九十]+|\d+)个")
"""``两个``, ``这三个``, ``3个`` (``npu 和 rollout 两个标签``): a count, not a label."""
_KEY_BLANK = re.compile(
    r"(?<![\w.-])(" + "|".join(sorted((re.escape(k) for k, v in _KEYS.items() if v not in (*SCORE_KEYS, "repo")),
                                      key=len, reverse=True)) + r"):\s+(?=\S)", re.IGNORECASE)
"""``label: npu``: a key, its colon and a blank before the value."""
_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_GLOB_CHARS = re.compile(r"[*?\[{]")
_REPO = r"[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9_]"
_REPO_FULL = re.compile(rf"^{_REPO}$")
_PATHLIKE = r"(?![@\"])[^\s\"@:,;、|()]*/[^\s\",;、|()]*"
"""A word with a ``/`` (``verl/workers``, ``recipe/``): a path once a word such as ``touching`` or ``下面`` says so."""

_SCORE_NAMES = "|".join(sorted((re.escape(k) for k, v in _KEYS.items() if v in SCORE_KEYS), key=len, reverse=True))
_AT_LEAST = r"at\s+least|no\s+less\s+than|不低于|不少于|不小于|至少|最少"
_AT_MOST = r"at\s+most|no\s+more\s+than|不高于|不超过|不大于|至多|最多"
_OVER = r"more\s+than|greater\s+than|over|above|大于|高于|超过|多于"
_UNDER = r"less\s+than|fewer\s+than|under|below|小于|低于|少于"
_CMP = re.compile(
    rf"(?<![A-Za-z0-9_/.:*-])(?P<sign>[-!])?(?P<key>{_SCORE_NAMES})\s*(?P<colon>:)?\s*"
    rf"(?P<op>>=|=>|<=|=<|==|>|<|=|{_AT_LEAST}|{_AT_MOST}|{_OVER}|{_UNDER})?\s*"
    r"(?P<a>\d+)(?:\s*(?:\.\.|-|–|~|到|至)\s*(?P<b>\d+))?(?:\s*(?:分钟|分|minutes|mins|min)(?!\s*[<>=:\d]))?\s*"
    r"(?P<suffix>及以上|或以上|以上|\+|及以下|或以下|以下|以内|之内|or\s+more|or\s+higher|and\s+up|or\s+less|or\s+lower)?(?![A-Za-z0-9_/*.])",
    re.IGNORECASE,
)
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\(\s*codeowners\s*\)", re.IGNORECASE), " "),
    (re.compile(r"(?:我|自己)(?:负责|拥有|维护)的?(?:路径|代码|目录|文件|模块|部分)?"), " path:@me "),
    (re.compile(r"我的(?:路径|代码|目录|模块)"), " path:@me "),
    (re.compile(r"(@[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)\s*(?:负责|拥有|维护)的?(?:路径|代码|目录|文件|模块|部分)?"),
     r" path:\1 "),
    (re.compile(r"我(?:提|发|写|创建|开)?的\s*(?:PRs?|pull\s+requests?)", re.IGNORECASE), " author:@me "),
    (re.compile(r"\b(?:paths?|code|files?|dirs?|areas?)\s+(?:that\s+)?I\s+own\b", re.IGNORECASE), " path:@me "),
    (re.compile(r"\bmy\s+(?:own\s+)?(?:paths|code|area|files|dirs|directories)\b", re.IGNORECASE), " path:@me "),
    (re.compile(r"\b(?:paths?|code|files?|dirs?)\s+owned\s+by\s+@?([A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)", re.IGNORECASE),
     r" path:@\1 "),
    (re.compile(r"\bmy\s+(?:own\s+)?(?:prs|pull\s+requests)\b", re.IGNORECASE), " author:@me "),
    (re.compile(r"\b(?:for|to)\s+(?:me|us|my\s+team|our\s+team)\b", re.IGNORECASE), " "),
    (re.compile(r"\b(?:when|whenever|if|once)\s+(?:an?|any|some)\b|\ban?\s+(?=(?:pr|pull\s+request|change)s?\b)|\b(?:is|are|gets?|got|was|were)\s+"
                r"(?:merged|landed)\b", re.IGNORECASE), " "),
    (re.compile(r"(作者|标签|路径|目录)\s*(?:是|为|叫)"), r" \1 "),
    (re.compile(r"(?<![\w@/.:-])@?([A-Za-z0-9][\w.-]*(?:\[bot\])?)\s*(?:提|发|写|开|创建|提交)的\s*"
                r"(?:PRs?|pull\s+requests?|代码|改动)?", re.IGNORECASE), r" author:\1 "),
    (re.compile(rf"\b(?:touch(?:es|ing)?|under|in|inside|within|below|chang(?:es|ed|ing)(?:\s+(?:to|in|under))?|"
                rf"modif(?:y|ies|ying)|edit(?:s|ing)?)\s+({_PATHLIKE})", re.IGNORECASE), r" path:\1 "),
    (re.compile(rf"(?:动了|改了|改动了?|修改了?|变更了?|碰了|涉及到?|涉及了)\s*({_PATHLIKE})"), r" path:\1 "),
    (re.compile(rf"(?<![\w/.:*-])({_PATHLIKE})\s*(?:这个|的)?\s*(?:目录|文件夹|路径)?\s*"
                r"(?:下面|下边|底下|里面|里边|之下|下|里|中)(?:的)?"), r" path:\1 "),
    # how a request that ends with its verb frames what it asks for: 以后 …有新 PR 合入(的时候)就通知我
    (re.compile(r"(?:以后|今后|之后|每当|只要|一旦|如果|要是)|(?:合入|合进来|合进|合并进来|合并(?!请求)|合了|进来|上线)(?:了|后|之后)?|"
                r"(?<![A-Za-z0-9_所没沒含具拥持只])有\s*(?:新的?)?\s*(?:更新|改动|变化|变动|动静)?"
                r"(?=PRs?(?![A-Za-z])|pull\s+requests?|合并请求|\s|$)", re.IGNORECASE), " "),
    (re.compile(r"(标题)\s*(?:含有|包含|含|里有|中有)\s*"), r" \1 "),
    (re.compile(r"\b(title)\s+(?:contains|has|includes|with|containing)\s+", re.IGNORECASE), r" \1 "),
    (re.compile(r"(?<![\w.])(\d+)\s*分钟\s*(?:以内|之内|以下)"), r" minutes<=\1 "),
    (re.compile(r"\b(?:under|within|at\s+most)\s+(\d+)\s*(?:minutes|mins|min)\b", re.IGNORECASE), r" minutes<=\1 "),
)
"""Phrases rewritten to terms before the comparisons are read."""
_SPLITS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:但是?|可是|并且|而且)?(?:不要|不含|不包括|不包含|排除|除了|除去|去掉|屏蔽|忽略|不看)"), " 排除 "),
    (re.compile(r"\bbut\s+not\b", re.IGNORECASE), " not "),
    (re.compile(r"(相关的?|有关的?|方面的?|以外的?|之外的?)"), r" \1 "),
    (re.compile(r"(?<=[\u3400-\u9fff])(?=[A-Za-z0-9@#+\-])|(?<=[A-Za-z0-9*_])(?=[\u3400-\u9fff])"), " "),
    (re.compile(r"(?<![\u3400-\u9fff])(以及|或者|还有|和|与|及|或|跟|的)(?![\u3400-\u9fff])"), r" \1 "),
    (re.compile(r"(这两个|这几个|这个|这些|那个|改动|修改|变更|提交)|(标签|目录|文件夹|路径|作者)(?!:)"), r" \1\2 "),
    (re.compile(r"(?<=\s)的(?=[\u3400-\u9fff])|(?<=[\u3400-\u9fff])的(?=\s|$)"), " 的 "),
)
"""Exclusion words and Chinese joining words glued to their neighbours, set apart after the comparisons."""
_SEPARATORS = ",;、|"


def detect_language(text: str) -> Language | None:
    """``zh`` when ``text`` holds Chinese, ``en`` when it holds Latin words, else ``None``."""
    if _CJK.search(text):
        return "zh"
    return "en" if _LATIN_WORD.search(text) else None


_TRADITIONAL = str.maketrans("訂閱關標籤註銷歸屬", "订阅关标签注销归属")
"""The traditional characters of the request words (``訂閱``, ``取消關注``, ``標籤``), read as the simplified ones."""


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_TRADITIONAL)
    for quote in "“”„‟「」『』":
        text = text.replace(quote, '"')
    return text.replace("≥", ">=").replace("≤", "<=").replace("⩾", ">=").replace("⩽", "<=")


def _score_token(m: re.Match[str]) -> str:
    key: ScoreKey = _KEYS[m["key"].lower()]  # type: ignore[assignment]
    a = int(m["a"])
    b = int(m["b"]) if m["b"] else None
    op = re.sub(r"\s+", " ", (m["op"] or "").lower())
    suffix = re.sub(r"\s+", " ", (m["suffix"] or "").lower())
    low: int | None
    high: int | None
    if b is not None:
        low, high = a, b
    elif suffix in ("及以上", "或以上", "以上", "+", "or more", "or higher", "and up") or op in (">=", "=>") or \
            re.fullmatch(_AT_LEAST, op):
        low, high = a, None
    elif suffix in ("及以下", "或以下", "以下", "以内", "之内", "or less", "or lower") or op in ("<=", "=<") or \
            re.fullmatch(_AT_MOST, op):
        low, high = None, a
    elif op == ">" or re.fullmatch(_OVER, op):
        low, high = a + 1, None
    elif op == "<" or re.fullmatch(_UNDER, op):
        low, high = None, a - 1
    elif op in ("=", "=="):
        low, high = a, a
    else:  # "importance:6", "重要性 6": at least; "minutes:15": at most
        low, high = (None, a) if key == "minutes" else (a, None)
    sign = m["sign"] or ""
    return f" {sign}{key}:{'' if low is None else low}..{'' if high is None else high} "


@dataclass(frozen=True, slots=True)
class _Token:
    raw: str
    join: Literal["space", "list", "tight"]
    """How the token is joined to the one before: blanks only, a list separator, or a comma without blanks."""


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(text)
    join: Literal["space", "list", "tight"] = "space"
    blank = True
    while i < n:
        c = text[i]
        if c.isspace():
            blank = True
            if join == "tight":
                join = "list"
            i += 1
            continue
        if c in _SEPARATORS:
            join = "tight" if c == "," and not blank else "list"
            blank = False
            i += 1
            continue
        start, depth = i, 0
        while i < n:
            c = text[i]
            if c == '"':
                end = text.find('"', i + 1)
                if end < 0:
                    raise FilterError(f"a quote is not closed: {text[start:].strip()}",
                                      zh=f"引号没有闭合：{text[start:].strip()}")
                i = end + 1
                continue
            depth += (c == "{") - (c == "}")
            if depth <= 0 and (c.isspace() or c in _SEPARATORS):
                break
            i += 1
        if join == "tight" and i < n and text[i].isspace():
            join = "list"  # "a, b": a comma followed by a blank is a list separator
        out.append(_Token(text[start:i], join))
        join, blank = "space", False
    return out


def _keys_help(zh: bool) -> str:
    if zh:
        return ("可用的条件：label（标签，直接写标签名也行）、"
                "path（路径 glob；path:@me 是 CODEOWNERS 中你负责的路径）、"
                "author（作者）、title（标题）、verdict（结论：close_read 精读 / skim 浏览 / skip 跳过）、"
                "importance（重要性 1–10，如 importance>=6）、insight（洞察 1–10）、minutes（阅读分钟数）；"
                "前面加 - 表示排除，如 -label:ci")
    return ("known keys: label (or just the label), path (a glob; path:@me = your paths in CODEOWNERS), author, "
            "title, verdict (close_read / skim / skip), importance (1-10, e.g. importance>=6), insight (1-10), "
            "minutes (reading time); a leading - excludes, e.g. -label:ci")


def _unknown_key(key: str, token: str) -> FilterError:
    hint_en = hint_zh = ""
    if not _CJK.search(key):
        hint_en = f' (a label with a colon? quote it: label:"{token.lstrip("+-!")}")'
        hint_zh = f'（如果这是带冒号的标签，请加引号：label:"{token.lstrip("+-!")}"）'
    return FilterError(f"unknown filter key {key}:{hint_en}; {_keys_help(False)}",
                       zh=f"不认识的条件 {key}:{hint_zh}；{_keys_help(True)}")


def _score_error(key: str, got: str) -> FilterError:
    low, high = BOUND_LIMITS[key]  # type: ignore[index]
    span_en = f"a number {low}-{high}" if key != "minutes" else "a number of minutes"
    span_zh = f"{low}–{high} 的数字" if key != "minutes" else "分钟数"
    return FilterError(
        f"{key} takes {span_en}, e.g. {key}>=6, {key}<=3, {key}:6..8 (got {got})",
        zh=f"{key} 后面要写{span_zh}，如 {key}>=6、{key}<=3、{key}:6..8（收到的是 {got}）")


def _bound(key: ScoreKey, value: str) -> Bound:
    m = re.fullmatch(r"\s*(\d*)\s*\.\.\s*(\d*)\s*", value)
    if m is None or not (m[1] or m[2]):
        raise _score_error(key, repr(value))
    low = int(m[1]) if m[1] else None
    high = int(m[2]) if m[2] else None
    lo, hi = BOUND_LIMITS[key]
    for x in (low, high):
        if x is not None and not lo <= x <= hi:
            raise _score_error(key, str(x))
    if low is not None and high is not None and low > high:
        raise FilterError(f"{key} from {low} to {high} never matches",
                          zh=f"{key} 从 {low} 到 {high}，不会有任何 PR 符合")
    return Bound(key=key, low=low, high=high)


def _verdict(value: str) -> RecommendationLevel:
    found = _VERDICTS.get(value.strip().lower())
    if found is None:
        raise FilterError(f"unknown verdict {value!r}: use close_read, skim or skip",
                          zh=f"不认识的结论 {value!r}：可以写 close_read（精读）、skim（浏览）或 skip（跳过）")
    return found


def _check_path(value: str) -> str:
    if is_owner(value) or value.startswith("@"):
        if value.lower() in ("@me", "@我"):
            return ME
        if not is_owner(value):
            raise FilterError(f"path:{value}: expected @me, @handle, @org/team or a glob such as verl/trainer/**",
                              zh=f"path:{value}：应为 @me、@用户名、@组织/团队，或 verl/trainer/** 这样的路径")
        return value
    try:
        glob.compile(value.lstrip("/"), flags=GLOB_FLAGS)
    except (ValueError, re.error) as exc:
        raise FilterError(f"path:{value} is not a valid glob ({exc})",
                          zh=f"path:{value} 不是有效的路径模式（{exc}）") from exc
    return value


def _owner(value: str) -> str:
    text = value.strip()
    if text.lower() in ("me", "@me", "我", "@我", "自己"):
        return ME
    if "@" not in text:
        text = "@" + text
    return _check_path(text)


class _Reader:
    """Turns tokens into terms (see the module docstring for the rules)."""

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = {k.strip().lower(): v.strip().lower() for k, v in aliases.items()}
        self.include: list[Term] = []
        self.exclude: list[Term] = []
        self.bounds: list[Bound] = []
        self.negate_rest = False
        self.pending: tuple[str, bool] | None = None
        self.previous: tuple[str, bool] | None = None
        self.join: Literal["space", "list", "tight"] = "space"
        self.repo: str | None = None
        self.bare: list[tuple[str, bool, Term]] = []
        """The terms of the bare words just read (a key word after them gives them its key)."""
        self.before_key: list[tuple[str, bool, Term]] = []
        """``bare`` when the pending key word came: its values if nothing follows it (``rollout 标签``)."""

    def add(self, key: str, value: str, negated: bool, token: str, *, bare: bool = False) -> None:
        negated = negated or self.negate_rest
        given = value
        if not bare:
            self.bare = []
        if key in SCORE_KEYS:
            if negated:
                raise FilterError(f"cannot exclude a comparison on {key}; write the opposite, e.g. {key}<6",
                                  zh=f"{key} 的比较条件不能排除；请直接写相反的条件，如 {key}<6")
            self.bounds.append(_bound(key, value))
            self.previous = None
            return
        if key == "repo":
            if not _REPO_FULL.match(value.strip()):
                raise FilterError(f"repo:{value}: expected owner/name", zh=f"repo:{value}：仓库应写成 owner/name")
            self.repo = value.strip()
            return
        if not value.strip():
            raise FilterError(f"{token}: the value is missing", zh=f"{token}：缺少值")
        term_key: TermKey
        if key == "owner":
            term_key, value = "path", _owner(value)
        elif key == "path":
            term_key, value = "path", _check_path(value.strip())
        elif key == "verdict":
            term_key, value = "verdict", _verdict(value)
        elif key == "label":
            term_key = "label"
            plain = value.strip().lstrip("#").strip().lower()
            value = self.aliases.get(plain, plain)
        else:
            term_key = key  # type: ignore[assignment]
        try:
            term = Term(key=term_key, value=value)
            Filter(include=(term,))  # normalises and validates the value
        except (ValidationError, ValueError) as exc:
            raise FilterError(f"{token}: the value is missing or invalid", zh=f"{token}：值缺失或无效") from exc
        (self.exclude if negated else self.include).append(term)
        self.previous = (term_key, negated)
        if bare:
            self.bare.append((given, negated, term))

    def key_after(self) -> bool:
        """Give the pending key to the bare words before it (``rollout 标签``, ``verl/trainer 目录``); whether
        there were any."""
        if self.pending is None or not self.before_key:
            return False
        key, negated_key = self.pending
        group, self.before_key, self.pending = self.before_key, [], None
        negate_rest, self.negate_rest = self.negate_rest, False
        for raw, negated, term in group:
            (self.exclude if negated else self.include).remove(term)
            self.add(_KEYS[key], raw, negated or negated_key, f"{raw} {key}")
        self.negate_rest = negate_rest
        return True

    def read(self, token: _Token) -> None:
        raw = token.raw
        join, self.join = self.join, "space"
        join = token.join if token.join != "space" else join
        plain = raw.strip('"') if raw.startswith('"') and raw.endswith('"') and len(raw) > 1 else None
        lowered = raw.lower()
        if plain is None:
            if lowered in _CONJ:
                self.key_after()
                self.join = "list"
                return
            if lowered in _EXCLUDE:
                self.key_after()
                self.negate_rest = True
                return
            if lowered in _END_EXCLUDE:
                self.key_after()
                self.negate_rest = False
                self.previous = None
                return
            if lowered in _FILLER or lowered in _ALL or lowered in ("-", "+", "!", "—", "–", ":") or \
                    _COUNTED.fullmatch(lowered):
                return
        if self.pending is not None and self.before_key and (
                join != "space" or (plain is None and (lowered.lstrip("+-!") in _POSTFIX_KEYS
                                                       or _key_value(raw) is not None))):
            self.key_after()  # "rollout 标签, -ci", "rollout 标签 作者 alice": the key word ended its values
        if self.pending is not None:
            key, negated = self.pending
            self.pending = None
            self.before_key = []
            if plain is None and (lowered in _SPACE_KEYS or _key_value(raw) is not None):
                raise FilterError(f"{key} needs a value before {raw}", zh=f"{key} 后面缺少值（接着出现了 {raw}）")
            self.add(_KEYS[key], plain if plain is not None else raw, negated, f"{key} {raw}")
            return
        sign = ""
        body = raw
        if plain is None and raw[:1] in "+-!" and len(raw) > 1:
            sign, body = raw[0], raw[1:]
        negated = sign in ("-", "!")
        if plain is None and body.lower() in _POSTFIX_KEYS and self.bare and not negated:
            self.pending, self.before_key, self.bare = (body.lower(), False), self.bare, []
            if body.lower() not in _SPACE_KEYS:  # "labels", "folder": only ever after their values
                self.key_after()
            return
        if plain is None and body.lower() in _SPACE_KEYS:
            self.pending = (body.lower(), negated)
            return
        pair = _key_value(body) if plain is None else None
        if pair is not None:
            key, value = pair
            canonical = _KEYS.get(key.lower())
            if canonical is None:
                raise _unknown_key(key, raw)
            self.add(canonical, _unquote(value), negated, raw)
            return
        value = plain if plain is not None else _unquote(body)
        if not value.strip():
            return
        inherit = self.previous
        if inherit is not None and (join == "tight" or (join == "list" and inherit[0] != "label")):
            self.add(inherit[0], value, negated or inherit[1], raw)
            return
        if plain is not None:  # a quoted bare value is always a label: the escape for odd names
            self.add("label", value, negated, raw, bare=True)
            return
        if value.startswith("@"):
            raise FilterError(
                f"{value} alone is ambiguous: write path:{value} (paths CODEOWNERS gives {value}) "
                f"or author:{value} (PRs by {value})",
                zh=f"单独的 {value} 有歧义：path:{value} 表示 CODEOWNERS 中 {value} 负责的路径，"
                   f"author:{value} 表示 {value} 提的 PR")
        if value in _BARE_VERDICTS:
            self.add("verdict", value, negated, raw, bare=True)
        elif _GLOB_CHARS.search(value) or value.endswith("/"):
            self.add("path", value, negated, raw, bare=True)
        else:
            self.add("label", value, negated, raw, bare=True)


def _key_value(text: str) -> tuple[str, str] | None:
    """``(key, value)`` of ``key:value`` (the colon before any quote), else ``None``."""
    m = re.match(r'^([^\s:"]+):(.*)$', text, re.DOTALL)
    if m is None:
        return None
    return m[1], m[2]


def _unquote(value: str) -> str:
    return value.replace('"', "")


def _rewrite(text: str) -> str:
    text = _normalise(text)
    parts = text.split('"')
    if len(parts) % 2 == 0:
        raise FilterError(f"a quote is not closed: {text.strip()}", zh=f"引号没有闭合：{text.strip()}")
    for i in range(0, len(parts), 2):
        part = _KEY_BLANK.sub(r"\1:", parts[i] + ("\"" if i + 1 < len(parts) else ""))
        part = part[:-1] if i + 1 < len(parts) else part
        for pattern, repl in _PHRASES:
            part = pattern.sub(repl, part)
        part = _CMP.sub(_score_token, part)
        for pattern, repl in _SPLITS:
            part = pattern.sub(repl, part)
        parts[i] = part
    return '"'.join(parts)


def _read(text: str, aliases: Mapping[str, str]) -> _Reader:
    reader = _Reader(aliases)
    for token in _tokens(_rewrite(text)):
        reader.read(token)
    reader.key_after()
    if reader.pending is not None:
        key = reader.pending[0]
        raise FilterError(f"{key} needs a value, e.g. {key} verl/trainer/**" if _KEYS[key] == "path"
                          else f"{key} needs a value", zh=f"{key} 后面缺少值")
    return reader


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def join_split_labels(text: str, known_labels: Collection[str]) -> str:
    """``text`` with two neighbouring plain words joined into the label they spell apart (``fully async`` →
    ``fully_async``, ``one step off`` → ``one_step_off``), where the joined form is a known label and none of the
    words is a label of its own; anything else is left as written."""
    known = {label.strip().lower() for label in known_labels}
    words = text.split(" ")
    out: list[str] = []
    i = 0
    while i < len(words):
        for width in (3, 2):
            part = words[i:i + width]
            if len(part) == width and all(_PLAIN.fullmatch(w) for w in part) \
                    and not any(w.lower() in known for w in part):
                joined = next((j for sep in ("_", "-") if (j := sep.join(w.lower() for w in part)) in known), None)
                if joined is not None:
                    out.append(joined)
                    i += width
                    break
        else:
            out.append(words[i])
            i += 1
    return " ".join(out)


def parse_filter(text: str, *, aliases: Mapping[str, str] | None = None,
                 known_labels: Collection[str] | None = None) -> Filter:
    """Read a filter (the text after ``订阅`` / ``subscribe``, or a config file's ``filter``).

    Args:
        text: the filter text (see the module docstring); empty, ``全部`` or ``all`` gives
            the filter of every PR.
        aliases: the repository's label aliases (``RepoConfig.aliases``: ``ascend`` -> ``npu``),
            applied to label values.
        known_labels: the labels the repository uses (canonical); when given, a label outside
            them is an error that names the closest ones. ``None`` accepts any label.

    Returns:
        The canonical :class:`Filter`.

    Raises:
        FilterError: an unknown key, a bad value (verdict, number, glob, unclosed quote), an
            exclusion of a comparison, a key without its value, an unknown label, a ``repo:``
            (the repository is not part of a filter: use :func:`parse_subscription`).
    """
    if known_labels is not None:
        text = join_split_labels(text, known_labels)
    reader = _read(text, aliases or {})
    if reader.repo is not None:
        raise FilterError(f"repo:{reader.repo} is not a filter term here; give the repository separately",
                          zh=f"repo:{reader.repo} 不能写在筛选条件里；请单独指定仓库")
    try:
        result = Filter(include=tuple(reader.include), exclude=tuple(reader.exclude), bounds=tuple(reader.bounds))
    except ValidationError as exc:  # two bounds on one score that cannot both hold
        first = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise FilterError(f"{first}: no PR can match", zh=f"{first}：这些条件互相矛盾，不会有任何 PR 符合") from exc
    if known_labels is not None:
        check_labels(result, known_labels)
    return result


def check_labels(flt: Filter, known_labels: Collection[str]) -> None:
    """Raise when ``flt`` names a label outside ``known_labels``.

    Raises:
        FilterError: the message names the unknown labels, the closest known ones and (up to
            30 of) the known labels.
    """
    known = sorted({label.strip().lower() for label in known_labels})
    unknown = [label for label in flt.labels if label not in known]
    if not unknown:
        return
    close = list(dict.fromkeys(c for label in unknown for c in difflib.get_close_matches(label, known, n=3)))
    shown = ", ".join(known[:30]) + (" …" if len(known) > 30 else "")
    shown_zh = "、".join(known[:30]) + (" …" if len(known) > 30 else "")
    names = ", ".join(unknown)
    hint_en = f" Did you mean {' or '.join(close)}?" if close else ""
    hint_zh = f"你是不是想写 {' 或 '.join(close)}？" if close else ""
    raise FilterError(f"unknown label {names}.{hint_en} Labels of this repository: {shown or '(none yet)'}",
                      zh=f"不认识的标签 {'、'.join(unknown)}。{hint_zh}这个仓库的标签有：{shown_zh or '（暂无）'}")


@dataclass(frozen=True, slots=True)
class SubscriptionCommand:
    """A subscription request read from chat or a slash command.

    ``action``: ``subscribe``, ``unsubscribe`` (of the subscription with this filter) or
    ``unsubscribe_all``; ``repo`` when the request names one (``None``: the channel's);
    ``filter`` is ``None`` for ``unsubscribe_all``; ``language`` of the request, ``None``
    when it tells nothing.
    """

    action: Action
    repo: str | None
    filter: Filter | None
    language: Language | None


_POLITE = (r"^(?:\s*(?:请你|请|麻烦你|麻烦|帮我|帮忙|帮|给我|我想要|我想|我要|想|能不能|能否|可以|可否|"
           r"please|pls|can\s+you|could\s+you|would\s+you|kindly|hey|hi|ok|okay|bot|also|and)[\s,，:：]*)*")
"""Politeness before a verb (``请帮我``, ``please``, ``can you``)."""
_OBJECT_EN = r"(?:\s+(?:me|us|this\s+(?:channel|chat|conversation|group)|the\s+(?:channel|chat|team)|here))?"
_TO_EN = r"(?:\s+(?:to|for|on|about|of))?"
_NO_QUESTION = r"\A(?!.{0,400}(?:为什么|为啥|怎么|有没有|有沒有|是否|哪些|[?？]|吗\s*$))"
"""From the start of a request that asks no question (``为什么 npu 的提醒不发了`` changes nothing): the guard of the
verbs whose words stand before them."""
_VERBS: tuple[tuple[Action, bool, re.Pattern[str]], ...] = (
    # (action, only at the start of the request, pattern); the first that matches decides
    ("unsubscribe_all", False, re.compile(
        r"(?:全部退订|退订全部|退订所有|全部取消订阅|取消全部订阅|取消所有订阅|取消订阅全部|取消订阅所有|全部取消关注|取消全部关注|"
        r"\bunsubscribe" + _OBJECT_EN + r"(?:\s+from)?\s+(?:all|everything)\b|\bunsubscribe-all\b|"
        r"\bstop\s+all\s+(?:the\s+)?(?:alerts|notifications)\b|"
        r"(?:所有|全部)的?(?:订阅|提醒|通知)(?:都|全)?(?:给)?(?:取消|退掉|删掉|删除|去掉|关掉|关闭|停掉)|"
        r"(?:我的|我们的|本频道的|这个频道的)?(?:订阅|提醒)(?:都|全都|全部|全)(?:给)?(?:取消|退掉|删掉|删除|去掉|关掉|关闭|停掉|清空|"
        r"不要了|不用了|停了)|"
        r"\b(?:cancel|remove|drop|clear|delete|stop)\s+(?:all|everything)\s+(?:that\s+)?(?:i|we)(?:['’]ve|\s+have)?\s+"
        r"(?:subscribed|signed\s+up|followed)\b|"
        r"清空(?:一下)?(?:我的|我们的|本频道的|这个频道的|所有|全部)?的?(?:订阅|提醒)|"
        r"(?:把)?(?:我的|我们的)?(?:所有|全部)的?订阅(?:都|全)?(?:退了|退掉|清掉|删了)|订阅(?:全|都)(?:清掉|删了|退了|清空)|"
        r"(?:把)?(?:我|我们)的?(?:所有|全部)的?(?:订阅|提醒|通知)(?:都|全)?(?:给我)?(?:退了|退掉|清掉|删了|删掉|取消掉?|关了|关掉)|"
        r"\b(?:drop|remove|delete|clear|cancel)\s+(?:all\s+)?(?:of\s+)?(?:my|our|the)\s+(?:subscriptions|subs|alerts)\b|"
        r"\b(?:drop|remove|delete|clear|cancel)\s+all\s+(?:my\s+|our\s+|the\s+)?(?:subscriptions|subs|alerts)\b|"
        r"\b(?:turn\s+off|stop|mute|disable)\s+all\s+(?:of\s+)?(?:my\s+|our\s+|the\s+)(?:alerts|notifications|subscriptions)\b|"
        r"(?:关掉|关闭|停掉)(?:所有|全部)的?(?:订阅|提醒|通知)|"
        r"(?:别|不要|不用)再?(?:给我们?)?(?:发|推)任何(?:提醒|通知|消息)|"
        r"\A(?:全部|全都|统统|所有的?)(?:都)?(?:给我)?(?:退掉|退了|退订|取消掉?)(?:吧|了)?[^A-Za-z0-9]{0,10}\Z|"
        r"\A\s*(?:全部|都|全)?清空(?:吧|了|掉|一下)?\s*[。.!！]?\s*\Z|"
        # "别给我推了 都关掉吧": every alert stopped, no value named
        r"\A(?=[^A-Za-z0-9]{0,40}(?:推|提醒|通知|订阅))[^A-Za-z0-9。！？!?]{0,40}?(?:都|全都|全部|统统|一律)(?:给我)?"
        r"(?:关掉|关了|停掉|停了|取消掉?|退掉|退了)[^A-Za-z0-9]{0,8}\Z)", re.IGNORECASE)),
    ("unsubscribe", False, re.compile(
        r"(?:取消订阅|退订|不再订阅|取消关注|\bunsub(?:scribe)?" + _OBJECT_EN + r"(?:\s+from)?\b|\bunfollow\b|"
                                                                  r"\bunwatch\b|"
        r"\bstop\s+(?:following|watching|tracking)\b)",
        re.IGNORECASE)),
    ("unsubscribe", False, re.compile(  # 取消我的 npu 订阅, 取消对 npu 的订阅, (把) npu 的订阅取消(掉)
        r"取消(?:掉)?(?:我们的|我的|本频道的|这个频道的|频道的|群里的|对)?(?P<body>[^。！？!?]{0,200}?)\s*的?\s*订阅|"
        r"\A把?(?P<body2>[^。！？!?]{0,200}?)\s*(?:的|那个|这个)?\s*订阅\s*(?:都|全|也|给)?(?:帮我|给我|请)?\s*"
        r"(?:取消|退掉|退了|删掉|删除|删了|删一下|删下|去掉|拿掉|撤掉|撤了|撤销|关掉|不要了)"
        r"(?:掉)?")),
    ("unsubscribe", False, re.compile(  # npu 的提醒关掉吧, 不要再推 npu 的了
        _NO_QUESTION + r"(?P<body>[^。！？!?]{1,200}?)\s*的?\s*(?:提醒|通知|推送)[^。！？!?]{0,12}?"
        r"(?:都|也|先)?(?:关掉|关了|关闭|停掉|停了|取消掉?)|"
        r"\A(?:不要再|别再|不用再|不再)(?:推|推送|发)(?P<body2>[^。！？!?]{1,200}?)\s*(?:的)?(?:提醒|通知|消息|PR)?\s*了?\s*$")),
    ("unsubscribe", False, re.compile(  # 不用订阅 npu 了, 别再关注 npu
        r"(?:不用|不要|别|不想|无需|不必|不需要|不再)再?(?:订阅|关注)")),
    ("unsubscribe", False, re.compile(  # 不想再收到 npu 的提醒, npu 不用再通知我了, don't need the npu alerts anymore
        r"(?:不想|不要|不用|别|不再)再?(?:收到|接收|接到|看到)(?P<body>[^。！？!?]{0,200}?)\s*的?\s*(?:提醒|通知|消息|推送)|"
        + _NO_QUESTION + r"(?P<body2>[^。！？!?]{1,200}?)\s*的?\s*(?:提醒|通知|消息|推送)?\s*(?:就)?"
        r"(?:不用再|不要再|别再|不再|不用|不要|别)"
        r"(?:提醒|通知|推送|发)(?:给)?(?:我们|我)?|"
        r"\b(?:(?:i|we)\s+)?(?:don['’]?t|do\s+not|no\s+longer)\s+(?:need|want)\s+(?:the\s+|any\s+)?(?:more\s+)?"
        r"(?P<body3>[^.!?]{1,200}?)\s+(?:alerts?|notifications?|pings?)\b|"
        r"\b(?:turn\s+off|stop|mute|disable)\s+(?:the\s+|my\s+|our\s+)?(?P<body4>[^.!?]{1,200}?)\s+(?:alerts?|notifications?)\b",
        re.IGNORECASE)),
    ("unsubscribe", True, re.compile(
        r"(?:不要再提醒(?:我们|我)?|别再提醒(?:我们|我)?|不用再提醒(?:我们|我)?|不再提醒(?:我们|我)?|停止提醒|取消提醒|"
        r"\bstop\s+(?:the\s+)?(?:alerts?|alerting|notifications?|notifying)(?:\s+(?:me|us))?" + _TO_EN + r"\b|"
        r"\bno\s+more\s+(?:alerts?|notifications?)" + _TO_EN + r"\b|\bmute\b)", re.IGNORECASE)),
    ("unsubscribe", False, re.compile(  # 把 npu 去掉, X 的别推了, 不想收 X 的了, drop the X part
        _NO_QUESTION + r"\A把?\s?(?P<body>[^。！？!?,，]{1,60}?)\s*(?:的|那个|这个)?\s*(?:订阅|提醒)?\s*(?:也)?"
        r"(?:去掉|删掉|删了|拿掉|取消掉|别推了?|不用推了?|不要推了?|别再推了?|别发了|不用发了)(?![A-Za-z0-9])|"
        + _NO_QUESTION + r"\A(?:我)?不想(?:再)?收(?:到)?\s?(?P<body2>[^。！？!?,，]{1,60}?)\s*的?\s*(?:了|提醒|"
                         r"通知|消息|推送)|"
        r"\A(?:please\s+)?(?:drop|remove|delete)\s+(?:the\s+|my\s+)?(?P<body3>[^.!?,]{1,60}?)(?:\s+part)?(?:\s+from\s+"
        r"(?:my|the)\s+(?:subscriptions?|subs|alerts))?\s*(?=[,.!?]|$)",
        re.IGNORECASE)),
    ("subscribe", False, re.compile(  # not 我订阅了…: what one did (a newsletter), no request
        r"(?:订阅(?!了)|\bsubscribe" + _OBJECT_EN + _TO_EN + r"\b)", re.IGNORECASE)),
    ("subscribe", False, re.compile(  # the verb at the end, as Chinese puts it: 有 npu 的新 PR 就通知我
        _NO_QUESTION + r"(?=.{0,400}(?:PR|pr|合入|合进|合并|合了|合(?!适|理|作|同|格|法)|标签|目录|路径|作者|变动|改|/|"
                       r"[A-Za-z0-9_]\.(?:py|ya?ml|toml|sh)))"
        r"(?P<body>(?:(?!(?<![A-Za-z0-9_-])#?[0-9]{3})[^。！？!?]){1,200}?)\s*"
        r"(?:的时候|时|就|的话|后)?\s*(?:都|请|麻烦)?\s*(?:记得|记着|务必|要)?\s*"
        r"(?:(?:提醒|通知|告诉|叫|喊|@|ping|推给|推送给|发给)\s*(?:一下|下)?\s*(?:我们|我)|"
        r"(?:跟|和)\s*(?:我们|我)\s*(?:说|讲|吱|知会|打(?:个)?招呼))(?:一下|一声|下)?\s*[吧呀啊哈呗。.!！~～]*"
        r"(?:\s[^。！？!?]{1,24})?$", re.IGNORECASE)),
    ("subscribe", False, re.compile(  # when contributor-012 merges a PR, tell me
        r"\A(?:when(?:ever)?|if|once)\s+(?P<body>[^.!?,]{1,80}?)\s+(?:merges?|lands?|ships?|gets\s+(?:a\s+)?prs?\s+merged)"
        r"(?:\s+(?:a|any|an?y?)\s+(?:new\s+)?(?:prs?|pull\s+requests?|change))?[\s,]{0,3}(?:please\s+)?"
        r"(?:tell|ping|notify|alert|let)\s+(?:me|us)(?:\s+know)?\s*[.!]*$", re.IGNORECASE)),
    ("subscribe", True, re.compile(
        r"(?:关注|盯着|盯住|盯一下|盯下|跟进|留意|提醒我们|提醒我(?!\s*(?:下午|上午|中午|晚上|早上|明天|今天|后天|待会|等下|[0-9一二三四五六七八九十两]+\s*点|开会|吃饭))|"
        r"通知我们|通知我|\bfollow\b(?![\s-]*up\b)|\bwatch\b(?!\s+out\b)|\bsub\b(?:\s+(?:me|us))?(?=\s)|"
        r"\b(?:alert|notify|ping)\s+(?:me|us)" + _TO_EN + r"(?:\s+when)?\b|\bkeep\s+(?:me|us)\s+posted\s+on\b|"
        r"\b(?:set\s+up|create|add|make)\s+(?:an?\s+|some\s+)?(?:alerts?|notifications?|subscriptions?)\s+(?:for|on|about)\b)",
        re.IGNORECASE)),
)
"""The verbs of a request. ``订阅``/``退订``/``subscribe``/``unsubscribe`` may stand anywhere (words before
them are ignored); the looser ones (``关注``, ``提醒我``, ``follow``, ``watch``, ``alert me``, ``stop alerts``)
only at the start, since in the middle of a sentence they rarely ask for a subscription (``值得关注的 PR``).
A negated subscription is a cancellation (``不用订阅 npu 了``, ``npu 的订阅取消掉``, ``不想再收到 npu 的提醒``,
``npu 不用再通知我了``, ``don't need the npu alerts``, ``stop the npu alerts``), checked before ``订阅``. A
request may end with its verb, as Chinese puts it (``有 npu 的新 PR 就通知我``), when it speaks of PRs, a key
word or a path, is no question (``为什么…``, ``？``) and names no PR number (one PR is not a subscription)."""
_LEAD_FILLER = re.compile(
    r"^(?:\s*(?:一下|一个|下|上|我们的|我的|本频道的|这个频道的|频道的|对|的|盯着|盯住|盯一下|盯下|跟进|留意|"
    r"(?i:an?|any)(?=\s))\s*)+")
_TRAIL_FILLER = re.compile(
    r"(?:\s*(?:吧|呢|了|啊|呀|哦|喔|嘛|呗|哈|啦|吗|谢谢|多谢|thanks|thank\s+you|thx|please|pls|plz|[,，.。!！~～]|"
    r"[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]))+\s*$",
    re.IGNORECASE)
_HERE = re.compile(r"\b(?:in|for|to|on)\s+(?:this|the)\s+(?:channel|chat|conversation|group)\b|"
                   r"(?:在|给|到)?(?:这个|本|此)(?:频道|群聊|群|会话)(?:里面|里|中)?", re.IGNORECASE)
""""in this channel" / "在本频道": where the request was made anyway."""
_LEADING_REPO = re.compile(rf"^\s*(?P<repo>{_REPO})(?:\s*的)?(?=\s|$|[,;、|])")
_IN_REPO = re.compile(
    rf"(?:\b(?:in|on|for|of|from|at)\s+|在\s*)(?P<repo>{_REPO})(?:\s*(?:里|中|上|里面))?(?=\s|$|[,;、|])",
    re.IGNORECASE)
_PATH_BEFORE_IN = re.compile(r"\b(?:prs?|pull\s+requests?|changes?|files?|code|something|anything|stuff|lands?|landed|"
                             r"merged|merges?)\s*$", re.IGNORECASE)
"""Words before ``in owner/name`` that say it is a folder (``PRs in verl/workers``) unless it is a known repository."""
_REPO_KEY = re.compile(rf"(?<![\w-])(?:repo|repository|仓库):(?P<repo>{_REPO})(?=\s|$|[,;、|])", re.IGNORECASE)


def _find_verb(text: str, *, strict: bool = False) -> tuple[Action, str] | None:
    """The action of ``text`` and the words that say what (after the verb, or inside a split verb
    such as ``取消 … 订阅``); ``None`` without a verb. ``strict``: the looser verbs count only at
    the start (as in chat); otherwise anywhere."""
    text = _without_politeness(text)
    for action, at_start, pattern in _VERBS:
        found = pattern.match(text) if at_start and strict else pattern.search(text)
        if found is None:
            continue
        body = next((g for name, g in found.groupdict().items() if name.startswith("body") and g is not None), None)
        rest = body if body is not None else text[found.end():]
        if body is None and not _trim(rest).strip() and found.start() > 0:  # "npu 和 docker 的都订阅": before it
            rest = re.sub(r"(?:的)?\s*(?:都|也|全|全部|一起|统统)?\s*$", "", text[: found.start()])
        return action, rest
    return None


_POLITE_RE = re.compile(_POLITE, re.IGNORECASE)


def _without_politeness(text: str) -> str:
    """``text`` from its first word after the politeness (``请帮我``, ``please``, ``can you``)."""
    start = _POLITE_RE.match(text)
    return text[start.end():] if start else text


def subscription_action(text: str, *, strict: bool = True) -> Action | None:
    """Whether ``text`` asks to subscribe, unsubscribe or unsubscribe from everything (``None``: no verb).

    ``strict`` (what the chat understanding uses): ``关注``, ``提醒我``, ``follow``, ``watch``, ``alert
    me``, ``stop alerts`` count only at the start of the message; ``订阅``, ``退订``, ``subscribe``,
    ``unsubscribe`` anywhere.
    """
    found = _find_verb(_normalise(text).strip(), strict=strict)
    return found[0] if found is not None else None


def opens_with_request(text: str) -> bool:
    """Whether ``text`` begins with a subscription verb (after politeness: ``请帮我订阅 …``, ``alert me on any npu
    PR``): a request then, however much of it reads like a question about PRs."""
    text = _without_politeness(_normalise(text).strip())
    return any(pattern.match(text) is not None for _, _, pattern in _VERBS)


def _trim(rest: str) -> str:
    rest = _HERE.sub(" ", rest)
    rest = _LEAD_FILLER.sub("", rest)
    while True:
        rest = _TRAIL_FILLER.sub("", rest)
        last = rest.split()[-1] if rest.split() else ""
        # a question mark ends the sentence ("订阅 ci 标签？"), unless the last word is a glob or a key:value
        if not last.endswith("?") or re.search(r"[/:*\[{]", last):
            return rest
        rest = rest[:-1]


def parse_subscription(text: str, *, aliases: Mapping[str, str] | None = None,
                       known_labels: Collection[str] | None = None,
                       known_repos: Collection[str] | None = None) -> SubscriptionCommand:
    """Read a whole subscription request: verb, repository and filter.

    Verbs: ``订阅 关注 提醒我 subscribe (me/us) (to) follow watch alert me``; ``取消订阅 退订 不再订阅
    取消关注 不要再提醒 unsubscribe (me) (from) unfollow stop alerts (for)``, and the split ``取消(我的) …
    (的)订阅`` / ``(把) … 的订阅取消``, the negations ``不用订阅 不想再收到 … 的提醒 … 不用再通知我 don't need
    … alerts stop/turn off … alerts``; the verb at the end (``有 npu 的新 PR 就通知我``, see :data:`_VERBS`);
    ``退订全部 全部退订 取消所有订阅 把所有订阅都取消 关掉所有提醒 unsubscribe all`` (also a
    ``退订``/``unsubscribe`` whose filter is only ``全部``/``all``). Words before the verb
    (``请帮我``) are ignored, and so are ``一下``, ``我的``, ``in this channel`` / ``在本频道`` and
    trailing particles and punctuation (``吧``, ``了``, ``吗``, ``thanks``, ``？``; a ``?`` stays in a glob or a
    ``key:value``). The repository: ``owner/name`` right after the verb
    (``订阅 verl-project/verl 的 npu``, ``subscribe owner/name label:megatron``), ``repo:owner/name``,
    or ``in owner/name`` / ``在 owner/name 里`` anywhere. With ``known_repos``, a leading
    ``owner/name`` that is none of them is read as a label (``kind/bug``), and one of them anywhere
    is the repository (``subscribe npu owner/name``, the slash command's first form); an ``in owner/name``
    after ``PRs``/``changes``/``lands`` that is none of them is a folder (``PRs in verl/workers``).

    Args:
        text: the message or the slash command's text (mentions already removed).
        aliases, known_labels: as :func:`parse_filter`.
        known_repos: the repositories the asker can mean, or ``None`` (any ``owner/name``).

    Raises:
        FilterError: no verb, nothing to subscribe to, or the filter does not read
            (see :func:`parse_filter`).
    """
    clean = _normalise(text).strip()
    language = detect_language(clean)
    repo: str | None = None
    wanted = {r.lower() for r in known_repos} if known_repos is not None else None
    for pattern in (_REPO_KEY, _IN_REPO):
        if named := pattern.search(clean):
            if pattern is _IN_REPO and wanted is not None and named["repo"].lower() not in wanted and \
                    _PATH_BEFORE_IN.search(clean[: named.start()]):
                break  # "PRs in verl/workers": a folder, when no repository of that name is known
            repo = named["repo"]
            clean = clean[: named.start()] + " " + clean[named.end():]
            break
    verb = _find_verb(clean)
    if verb is None:
        raise FilterError("say subscribe, unsubscribe or unsubscribe all, e.g. subscribe npu -ci",
                          zh="请说 订阅、退订 或 退订全部，例如：订阅 npu -ci")
    action: Action = verb[0]
    rest = _trim(verb[1])
    lead = _LEADING_REPO.match(rest) if repo is None else None
    if lead is not None and (wanted is None or lead["repo"].lower() in wanted):
        repo = lead["repo"]
        rest = rest[lead.end():]
    if repo is None and wanted:  # "subscribe npu owner/name": a known repository anywhere among the words
        for token in re.finditer(rf"(?<![\w/.:\"-]){_REPO}(?![\w/.:\"-])", rest):
            if token.group(0).lower() in wanted:
                repo = token.group(0)
                rest = rest[: token.start()] + " " + rest[token.end():]
                break
    words = [w for w in re.split(r"[\s,;、|]+", rest) if w]
    if action == "unsubscribe" and words and all(w.lower() in _ALL for w in words):
        action = "unsubscribe_all"
    if action == "unsubscribe_all":
        return SubscriptionCommand(action, repo, None, language)
    said_all = any(w.lower() in _ALL for w in words)
    flt = parse_filter(rest, aliases=aliases, known_labels=known_labels)
    if flt.is_everything and repo is None and not said_all:
        if action == "subscribe":
            raise FilterError("subscribe to what? e.g. subscribe npu rollout -ci, or subscribe owner/name",
                              zh="订阅什么？例如：订阅 npu rollout -ci，或 订阅 owner/name")
        raise FilterError("unsubscribe from what? e.g. unsubscribe npu, or unsubscribe all",
                          zh="退订什么？例如：退订 npu，或 退订全部")
    return SubscriptionCommand(action, repo, flt, language)
