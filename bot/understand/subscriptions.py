"""Subscription requests in chat and in the slash command: which intent a message is, never the filter itself.

The filter grammar is :mod:`bot.filters` (one grammar for chat, the slash command and the config
file). Here a message is only *routed*: a verb (:func:`bot.filters.subscription_action`, strict:
``关注`` / ``follow`` / ``提醒我`` count only at the start of a message) makes it a
:class:`SubscribeIntent` or :class:`UnsubscribeIntent` carrying the words as said; the core reads
them with the repository's aliases and labels and answers a filter that does not read in the
person's language. Also here, because they are about subscriptions too:

- ``我的订阅`` / ``my subscriptions`` — :class:`ListSubscriptionsIntent`;
- ``我的 GitHub 是 alice`` / ``my GitHub is alice`` — :class:`LinkGitHubIntent` (for ``path:@me``);
- ``每周给我发我的周报`` / ``send me my weekly digest`` (and ``不要再发我的周报`` / ``stop my weekly
  digest``, ``我的周报`` / ``my digest``) — :class:`PersonalDigestIntent`.

Every repetition is bounded, so no message makes a scan quadratic.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.errors import FilterError
from bot.filters import SubscriptionCommand, parse_subscription, subscription_action
from bot.models import Language
from bot.understand.intents import (
    Intent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    PersonalDigestAction,
    PersonalDigestIntent,
    SubscribeIntent,
    UnsubscribeIntent,
)
from bot.understand.lexicon import _PATH_HEADS
from bot.understand.subparts import part_request

__all__ = ["github_handle", "personal_digest_action", "read_request", "subscription_command", "subscription_intent"]

_LIST_SUBS = re.compile(r"(?<![A-Za-z])(?:which|what)\s+subscriptions?(?![A-Za-z])|订阅(?:了)?(?:有)?(?:哪些|什么|啥)|"
                        r"我(?:都)?订了(?:些|哪些)?(?:什么|啥)|"
                        r"(?<![A-Za-z])subscriptions?\s+(?:do\s+)?(?:i|we)\s+have(?![A-Za-z])|我的订阅|订阅列表|查看订阅|(?:我|我们)?(?:现在|目前|当前)的订阅|看(?:下|一下|"
                        r"看)?(?:我|我们)的?订阅|"
                        r"(?:my|list|show)\s+subscriptions?|^\s*subscriptions?\s*$", re.IGNORECASE)
_EXTEND = re.compile(r"把\s?(?P<add>[^。！？!?,，]{1,60}?)\s?也?(?:加到|加进|加入|放到|并到)(?:我们?)?(?:的|"
                     r"那个|这个)?\s?"
                     r"(?P<to>[^。！？!?,，]{1,60}?)\s?(?:的|那个|这个)?\s?订阅(?:里|中|里面)?|"
                     r"\badd\s+(?P<add2>[^.!?,]{1,60}?)\s+to\s+my\s+(?P<to2>[^.!?,]{1,60}?)\s+(?:subscription|alert)s?\b",
                     re.IGNORECASE)
"""``把 rollout 也加到我那个 npu 的订阅里`` / ``add rollout to my npu subscription``: one subscription widened."""
_HANDLE = r"@?(?P<handle>[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})(?![A-Za-z0-9_.-])"
"""A GitHub login: letters, digits and single hyphens inside, at most 39 characters."""
_GITHUB = r"(?:github|gh|git\s?hub)"
_LINK = (
    re.compile(rf"(?:我的|我)\s?{_GITHUB}\s?(?:账号|账户|帐号|用户名|用户|名字|id|handle|login)?\s?"
               rf"(?:是|为|叫|=|:|：)\s?{_HANDLE}", re.IGNORECASE),
    # the whole message: "github id 是 alice" (the asker's own, said without 我)
    re.compile(rf"^\s?{_GITHUB}\s?(?:账号|账户|帐号|用户名|用户|名字|id|handle|login)?\s?(?:是|为|叫|=|:|：)\s?{_HANDLE}"
               r"\s?[。.!！]?\s?$", re.IGNORECASE),
    re.compile(rf"(?:绑定|关联|设置|记住)(?:一下|下)?\s?(?:我的)?\s?{_GITHUB}\s?(?:账号|账户|帐号|用户名)?\s?(?:为|是|:|：)?\s?{_HANDLE}",
               re.IGNORECASE),
    re.compile(rf"我在\s?{_GITHUB}\s?(?:上)?(?:是|叫|的用户名是|的账号是)\s?{_HANDLE}", re.IGNORECASE),
    re.compile(rf"{_GITHUB}\s?上\s?(?:我|我的(?:名字|用户名|账号|id)?)\s?(?:是|叫)\s?{_HANDLE}", re.IGNORECASE),
    re.compile(rf"{_GITHUB}\s?(?:账号|账户|帐号|用户名|id|handle|login)\s?(?:是|为|叫|=|:|：)?\s?{_HANDLE}\s?(?:绑|关联|记|存)",
               re.IGNORECASE),
    re.compile(rf"\bmy\s+{_GITHUB}\s*(?:handle|user\s?name|user|login|account|id|name)?\s*(?:is|['’]s|=|:)\s*{_HANDLE}",
               re.IGNORECASE),
    re.compile(rf"\bi(?:'m|\s+am)\s+{_HANDLE}\s+on\s+{_GITHUB}\b", re.IGNORECASE),
    re.compile(rf"\buse\s+@?{_HANDLE}\s+(?:as|for)\s+my\s+{_GITHUB}", re.IGNORECASE),
    re.compile(rf"{_GITHUB}\s?(?:账号|账户|帐号|用户名|id)?\s?(?:绑定|关联|设置为|设为|改成|改为|绑)\s?(?:为|成|到)?\s?{_HANDLE}",
               re.IGNORECASE),
    re.compile(rf"\b(?:link|set|connect)\s+(?:my\s+)?{_GITHUB}\s*(?:handle|account|user\s?name|login)?\s*"
               rf"(?:to|as|=|:)?\s*{_HANDLE}", re.IGNORECASE),
)
_MINE = re.compile(r"(?:我的|个人|自己的|我自己的|(?:只)?(?:和|跟|与)我(?:自己)?(?:相关|有关)的)\s?"
                   r"(?:那个|那份|这份|一份)?\s?"
                   r"(?:专属)?(?:周报|週報|每周摘要|每周汇总)|(?:个人|"
                   r"自己)的?\s?(?:报告|總結|总结)|"
                   r"\bmy\s+(?:own\s+|personal\s+)?(?:weekly\s+)?(?:digest|summary|report)\b|"
                   r"\bpersonal\s+(?:weekly\s+)?(?:digest|summary|report|thing|one)\b|\bpersonal\s+weekly\b",
                   re.IGNORECASE)
_OFF = re.compile(r"不要再|别再|不用再|不要|别|不用|不再|停止|停掉|停发|取消|关闭|关掉|关了|先关|退订|"
                  r"停一下|停一停|暂停|先停|"
                  r"暂时不用|"
                  r"\b(?:stop|cancel|unsubscribe|disable|turn\s+off|no\s+more|don'?t|do\s+not|quit|pause|"
                  r"hold\s+off|skip|suspend)\b",
                  re.IGNORECASE)
_ON = re.compile(r"每周|每星期|每个?礼拜|定期|开启|打开|开通|开(?:个|一下|下)?\s*$|开(?=个人|我的)|订阅|以后|"
                 r"\b(?:every\s+week|each\s+week|weekly|subscribe|turn\s+on|enable|start|opt\s+in|"
                 r"every\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
                 re.IGNORECASE)
_TELL_ME = re.compile(r"(?<![A-Za-z])(?:tell|ping|notify|alert|message|dm|nudge|poke)\s+(?:me|us)|"
                      r"(?:give|send)\s+(?:me|us)\s+a\s+(?:shout|ping|heads[\s-]?up|nudge)|let\s+(?:me|us)\s+know|"
                      r"@\s?me(?![A-Za-z])", re.IGNORECASE)
_WHEN = re.compile(r"(?<![A-Za-z])(?:when|whenever|if|once|as\s+soon\s+as)\s+(?P<clause>[^,.;!?]{1,160})",
                   re.IGNORECASE)
_ALL_MINE = re.compile(r"(?<![A-Za-z])(?:remove|delete|clear|drop|cancel|stop)\s+all\s+(?:of\s+)?(?:my|our|the)\s+"
                       r"(?:subscriptions?|subs?|alerts?|notifications?)(?![A-Za-z])", re.IGNORECASE)
_WANT_ALERTS = re.compile(r"(?<![A-Za-z])(?:i|we)(?:\s+(?:want|would\s+(?:like|love)|wanna|need)|['’]d\s+(?:like|love))"
                          r"\s+(?:to\s+)?(?:(?:receive|get|have)\s+)?"
                          r"(?:the\s+)?(?:alerts?|notifications?|pings?)\s+(?:for|on|about|of)?\s*(?:prs?\s+)?"
                          r"(?:from|by|of|on|about|under|in)?", re.IGNORECASE)
_SEND = re.compile(r"发|推送|送|\b(?:send|deliver|email|post|dm)\b", re.IGNORECASE)
_WEEKLY = re.compile(r"每周|weekly", re.IGNORECASE)


def github_handle(text: str) -> str | None:
    """The GitHub login ``text`` links the asker to (``我的 GitHub 是 alice`` -> ``alice``), else ``None``."""
    for pattern in _LINK:
        if m := pattern.search(text):
            return m["handle"]
    return None


def personal_digest_action(text: str) -> PersonalDigestAction | None:
    """What ``text`` asks of the personal weekly digest: ``on`` (every week), ``off``, ``show`` (now), else ``None``.

    The message must name the person's own digest (``我的周报``, ``个人周报``, ``my (weekly) digest``,
    ``personal digest``); a stop word makes it ``off``; a word of every week (``每周``, ``weekly``,
    ``订阅``) beside it, or "send me my *weekly* digest", ``on``; else ``show``.
    """
    mine = _MINE.search(text)
    if mine is None:
        return None
    if _OFF.search(text):
        return "off"
    rest = text[: mine.start()] + " " + text[mine.end():]
    if _ON.search(rest) or (_WEEKLY.search(mine.group(0)) and _SEND.search(rest)):
        return "on"
    return "show"


def subscription_intent(text: str, language: Language | None) -> Intent | None:
    """The subscription change, listing, GitHub link or personal-digest request ``text`` (a normalised
    chat message) is, else ``None``."""
    if (action := personal_digest_action(text)) is not None:
        return PersonalDigestIntent(action, language=language)
    if (handle := github_handle(text)) is not None:
        return LinkGitHubIntent(handle, language=language)
    if (extend := _EXTEND.search(text)) is not None:
        add, to = extend["add"] or extend["add2"], extend["to"] or extend["to2"]
        return SubscribeIntent(repo=_repo(text), language=language, text=f"订阅 {to} {add}")
    verb = subscription_action(text)
    if _LIST_SUBS.search(text) and verb not in ("unsubscribe", "unsubscribe_all"):  # 把我的订阅全部取消: not a listing
        return ListSubscriptionsIntent(language=language)
    if _ALL_MINE.search(text):  # "remove all my subscription"
        return UnsubscribeIntent(repo=_repo(text), language=language, text="unsubscribe all")
    wants = _WANT_ALERTS.search(text) if verb is None else None
    when = _WHEN.search(text) if verb is None and _TELL_ME.search(text) else None
    # "I want to receive alerts for PRs from contributor-195"; "give me a shout when anything lands under docker/"
    values = _values(text[wants.end():]) if wants else _values(when.group("clause")) if when else []
    if values:
        return SubscribeIntent(repo=_repo(text), language=language, text="subscribe " + " ".join(values))
    part = part_request(text) if verb != "unsubscribe_all" else None
    if part is not None and part.action == "add" and verb != "unsubscribe":
        return SubscribeIntent(repo=_repo(text), language=language, text="subscribe " + " ".join(part.values),
                               add=True)
    if part is not None and part.action == "remove" and (verb is None or (verb == "unsubscribe" and not _reads_as(
            text, part.values))):
        return UnsubscribeIntent(repo=_repo(text), language=language, text=text, parts=part.values)
    if verb is None:
        return None
    kind = SubscribeIntent if verb == "subscribe" else UnsubscribeIntent
    return kind(repo=_repo(text), language=language, text=text)


_NOT_VALUES = frozenset({"prs", "pr", "me", "us", "the", "a", "an", "any", "anything", "something", "new", "please",
                         "pls", "lands", "land", "landed", "merges", "merged", "merge", "gets", "get", "is", "are",
                         "under", "in", "into", "to", "on", "touches", "touching", "changes", "changed", "change",
                         "someone", "anyone", "somebody", "there", "by", "from", "of", "files", "file", "folder",
                         "label", "labels", "with", "goes", "go", "ships", "shipped", "tell", "ping", "and", "or"})


def _values(clause: str) -> list[str]:
    """The filter values a clause names (labels, logins, paths), without the words around them."""
    return [v for v in re.findall(r"[A-Za-z0-9][A-Za-z0-9_./*-]{1,63}", clause) if v.lower() not in _NOT_VALUES]


def _reads_as(text: str, values: tuple[str, ...]) -> bool:
    """Whether the grammar reads ``text`` as a filter of just ``values`` (then it is kept as said)."""
    found = read_request(text)
    if found is None or found.filter is None:
        return False
    return {t.value.lower() for t in found.filter.include} == {v.lower() for v in values}


def subscription_command(command: str, rest: str, language: Language | None, repo: str | None = None) -> Intent:
    """``/prhub subscribe FILTER [owner/name]``, ``/prhub unsubscribe FILTER|all``, ``/prhub subscriptions``.

    Args:
        command: ``subscribe``, ``unsubscribe`` or ``subscriptions``.
        rest: the arguments as typed (the filter, a repository, ``all``).
        language: the language of the arguments.
        repo: a word of ``rest`` that reads as a repository (``owner/name``), if any.
    """
    if command == "subscriptions":
        return ListSubscriptionsIntent(language=language)
    text = f"{command} {rest}".strip()
    kind = SubscribeIntent if command == "subscribe" else UnsubscribeIntent
    return kind(repo=_repo(text, repo), language=language, text=text)


def _repo(text: str, hint: str | None = None) -> str | None:
    """The repository a request names (``hint``: a word that reads as one), when the request reads
    without the repository's labels; a folder of a repository (``docker/ascend``, ``verl/trainer``) is none."""
    found = read_request(text, hint)
    repo = found.repo if found is not None else None
    if repo and hint is None and repo.partition("/")[0].lower() in _PATH_HEADS:
        return None
    return repo


@lru_cache(maxsize=512)
def read_request(text: str, hint: str | None = None) -> SubscriptionCommand | None:
    """``text`` read as a request without the repository's aliases and labels (``hint``: a word that reads
    as its repository), or ``None`` when it does not read; kept, as the understanding asks twice."""
    try:
        return parse_subscription(text, known_repos=[hint] if hint else None)
    except FilterError:
        return None
