"""The parts of one message (:class:`_Reading`): its window (:mod:`bot.understand.windows`), PR references
(URLs, ``owner/name#N``, ``#N``, ``PR N``, bare numbers where the sentence is about PRs), repository and
path-like words, and the rest, blanked where a part was taken (offsets stay valid).
"""

from __future__ import annotations

import re
from itertools import islice

from bot.understand import followup as fu
from bot.understand.intents import (
    MAX_COMPARED,
)
from bot.understand.lexicon import (
    _A,
    _ANALYZE,
    _COMPARE,
    _LOOK,
    _PATH_HEADS,
    _PR_WORD,
    _REPO,
    _URL,
    _WHAT,
    _WORTH,
    MAX_REFS,
    _blank,
)
from bot.understand.windows import WindowReading, read_windows

_PR_URL = re.compile(rf"https?://[^\s/<>|]{{1,253}}/(?P<repo>{_REPO})/(?:pull|pulls|-/merge_requests)/"
                     r"(?P<n>[0-9]{1,7})(?![0-9])")
_MENTION = re.compile(r"<[@!#][A-Za-z0-9_|.-]{1,80}>|@_user_[0-9]{1,4}|<at [^>]{0,200}>[^<]{0,100}</at>")
"""Mentions of people, channels and groups (Slack ``<@U…>``, ``<!here>``, ``<#C…|name>``; Feishu
``@_user_1``, ``<at …>``): they are neither search words nor labels."""
_REPO_HASH = re.compile(rf"(?<![A-Za-z0-9_./-])(?P<repo>{_REPO})#(?P<n>[0-9]{{1,7}})(?![0-9])")
_HASH = re.compile(r"(?<![A-Za-z0-9&#])#\s?(?P<n>[0-9]{1,7})(?![0-9])")
_PR_WORD_NUMBER = re.compile(rf"{_A}(?:prs?|pull\s?requests?|pulls?|mrs?)\s?[#:：/-]?\s?(?P<n>[0-9]{{1,7}})(?![0-9])",
                             re.IGNORECASE)
"""``PR 6046``, ``PR#6046``, ``PR-6046``, ``pull/6046`` (a URL's path without its host)."""
_NUMBERED_PR = re.compile(r"(?:第\s?)?(?P<n>[0-9]{1,7})\s?[号號]\s?(?:pr|合并请求|合併請求)|"
                          r"第\s?(?P<nth>[0-9]{3,7})\s?[个個]\s?(?:pr|合并请求|合併請求)|"
                          r"(?<![0-9A-Za-z_./#-])(?P<no>[0-9]{3,7})\s?[号號](?![0-9])", re.IGNORECASE)
"""``第6046号PR``, ``6046 号 PR``, ``第6053个PR`` and ``6039号`` (three digits or more: no day of a month): the
number of a PR, not a count (``号`` alone after one or two digits is a day: ``13号``; ``第2个PR`` is the second one
of a list)."""
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
            self.refs.append((int(m["n"] or m["nth"] or m["no"] if m.re is _NUMBERED_PR else m["n"]), None,
                              (m.start(), m.end())))
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
