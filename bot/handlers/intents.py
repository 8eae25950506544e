"""What a person asks the bot, in Chinese or English: shared by every platform.

``parse_intent(text)`` reads a chat message (a mention, a DM); ``parse_command(args)``
reads the text after a slash command (``/prhub digest 2026-W16``). Both return one
of the frozen intent classes below; anything not understood is a :class:`HelpIntent`.

Normalisation first: Unicode NFKC (full-width digits and ``＃`` become ASCII, the
ideographic space U+3000 and the no-break space U+00A0 become spaces), then the
bot's own mention tokens are removed (other mentions stay, they may be the subject).

Recognised forms (see ``tests/handlers/test_intents.py`` for the full table):

- digest — ``本周周报``, ``上周周报``, ``周报 2026-W16``, ``digest``, ``weekly report last week``;
  a digest request without a week has ``week=None`` and means the last complete
  week, as ``prhub digest`` does;
- PR question — ``PR #6046 值得读吗``, ``#6046 值得看吗``, ``分析一下 6046``,
  ``is PR 6046 worth reading``, a PR URL, ``owner/name#6046``;
- label view — ``npu 标签``, ``label npu``;
- subscriptions — ``订阅 npu``, ``订阅 verl-project/verl 的 npu``, ``取消订阅 npu``,
  ``我的订阅``, ``subscribe npu``, ``subscribe npu in owner/name``, ``unsubscribe npu``,
  ``my subscriptions``;
- help — ``help``, ``帮助``, and everything else.

``language`` is ``zh`` when the message holds Chinese, ``en`` when it holds only
Latin words, ``None`` when it tells nothing (digits only): the caller's default applies.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from bot.models import Language


@dataclass(frozen=True)
class DigestIntent:
    """A digest request; ``week`` is ``this``, ``last``, ``YYYY-Www`` or ``None`` (= last complete week)."""

    week: str | None = None
    repo: str | None = None
    language: Language | None = None


@dataclass(frozen=True)
class PRIntent:
    """"Is PR #N worth reading?" — ``repo`` when the message names one (URL or ``owner/name#N``)."""

    number: int
    repo: str | None = None
    language: Language | None = None


@dataclass(frozen=True)
class LabelIntent:
    """The per-label view of the current digest for ``label``."""

    label: str
    repo: str | None = None
    language: Language | None = None


@dataclass(frozen=True)
class SubscribeIntent:
    """Alert the asker (or the channel) when a PR with ``label`` is merged."""

    label: str
    repo: str | None = None
    language: Language | None = None


@dataclass(frozen=True)
class UnsubscribeIntent:
    """Stop the alerts for ``label``."""

    label: str
    repo: str | None = None
    language: Language | None = None


@dataclass(frozen=True)
class ListSubscriptionsIntent:
    """List the asker's subscriptions."""

    language: Language | None = None


@dataclass(frozen=True)
class HelpIntent:
    """Anything the bot does not understand: answer with the help card."""

    language: Language | None = None


Intent = (
    DigestIntent | PRIntent | LabelIntent | SubscribeIntent | UnsubscribeIntent | ListSubscriptionsIntent | HelpIntent
)

_REPO = r"[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9_]"
_LABEL = r"[A-Za-z0-9][\w.+-]*"
_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

_PR_URL = re.compile(rf"https?://[^\s/]+/(?P<repo>{_REPO})/(?:pull|pulls|-/merge_requests)/(?P<n>\d+)")
_REPO_HASH = re.compile(rf"(?<![\w/])(?P<repo>{_REPO})#(?P<n>\d+)\b")
_PR_WORD = re.compile(r"\b(?:pr|pull\s+request|pull)\s*#?\s*(?P<n>\d+)\b", re.IGNORECASE)
_HASH = re.compile(r"(?<![\w&])#(?P<n>\d+)\b")
_ANALYZE = re.compile(r"(?:分析(?:一下)?|解读|analy[sz]e)\s*(?:pr\s*)?#?\s*(?P<n>\d+)\b", re.IGNORECASE)
_WORTH_NUMBER = re.compile(
    r"\b(?P<n>\d{1,7})\b.*(?:值得|要不要|需要读|worth|read)|(?:worth|值得).*\b(?P<m>\d{1,7})\b", re.IGNORECASE
)

_ISO_WEEK = re.compile(r"\b(?P<y>\d{4})\s*-?\s*[Ww]\s*(?P<w>\d{1,2})\b")
_CN_WEEK = re.compile(r"(?P<y>\d{4})\s*年?\s*第\s*(?P<w>\d{1,2})\s*周")
_THIS_WEEK = re.compile(r"本周|这周|這週|this\s+week", re.IGNORECASE)
_LAST_WEEK = re.compile(r"上周|上週|last\s+week|previous\s+week", re.IGNORECASE)
_DIGEST_WORD = re.compile(r"周报|週報|周报告|weekly|digest|report|summary|总结", re.IGNORECASE)

_LIST_SUBS = re.compile(r"我的订阅|订阅列表|查看订阅|(?:my|list|show)\s+subscriptions?|^\s*subscriptions?\s*$",
                        re.IGNORECASE)
_UNSUB_ZH = re.compile(rf"(?:取消订阅|退订)\s*(?:(?P<repo>{_REPO})\s*(?:的)?\s*)?(?P<label>{_LABEL})")
_SUB_ZH = re.compile(rf"订阅\s*(?:(?P<repo>{_REPO})\s*(?:的)?\s*)?(?P<label>{_LABEL})")
_UNSUB_EN = re.compile(rf"\bunsubscribe\s+(?:from\s+)?(?P<label>{_LABEL})(?:\s+(?:in|on|for|of)\s+(?P<repo>{_REPO}))?",
                       re.IGNORECASE)
_SUB_EN = re.compile(rf"\bsubscribe\s+(?:to\s+)?(?P<label>{_LABEL})(?:\s+(?:in|on|for|of)\s+(?P<repo>{_REPO}))?",
                     re.IGNORECASE)
_LABEL_ZH = re.compile(rf"(?P<label>{_LABEL})\s*标签|标签\s*(?P<label2>{_LABEL})")
_LABEL_EN = re.compile(rf"\blabel\s+(?P<label>{_LABEL})\b|\b(?P<label2>{_LABEL})\s+label\b", re.IGNORECASE)
_HELP = re.compile(r"^\s*(?:help|帮助|\?|？)\s*$", re.IGNORECASE)
_BARE_REPO = re.compile(rf"(?<![\w/#:])(?P<repo>{_REPO})(?![\w/#])")


def normalize(text: str, bot_mentions: Sequence[str] = ()) -> str:
    """NFKC-normalised ``text`` without the bot's own mention tokens, spaces collapsed."""
    for mention in bot_mentions:
        if mention:
            text = text.replace(mention, " ")
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", " ", text).strip()


def detect_language(text: str) -> Language | None:
    """``zh`` if ``text`` holds Chinese, ``en`` if it holds Latin words outside URLs,
    repository names and week names, else ``None``."""
    if _CJK.search(text):
        return "zh"
    rest = _BARE_REPO.sub(" ", _REPO_HASH.sub(" ", re.sub(r"https?://\S+", " ", text)))
    rest = _ISO_WEEK.sub(" ", rest)
    return "en" if _LATIN_WORD.search(rest) else None


def _week(text: str) -> str | None:
    if m := _ISO_WEEK.search(text) or _CN_WEEK.search(text):
        return f"{m['y']}-W{int(m['w']):02d}"
    if _LAST_WEEK.search(text):
        return "last"
    if _THIS_WEEK.search(text):
        return "this"
    return None


def _repo_outside_urls(text: str) -> str | None:
    m = _BARE_REPO.search(_PR_URL.sub(" ", text))
    return m["repo"] if m else None


def _pr(text: str, lang: Language | None) -> PRIntent | None:
    if m := _PR_URL.search(text) or _REPO_HASH.search(text):
        return PRIntent(number=int(m["n"]), repo=m["repo"], language=lang)
    for pattern in (_PR_WORD, _ANALYZE, _HASH):
        if m := pattern.search(text):
            return PRIntent(number=int(m["n"]), repo=_repo_outside_urls(text), language=lang)
    if (m := _WORTH_NUMBER.search(text)) and not _ISO_WEEK.search(text):
        return PRIntent(number=int(m["n"] or m["m"]), repo=_repo_outside_urls(text), language=lang)
    return None


def _subscription(text: str, lang: Language | None) -> Intent | None:
    if _LIST_SUBS.search(text):
        return ListSubscriptionsIntent(language=lang)
    for pattern, kind in ((_UNSUB_ZH, UnsubscribeIntent), (_UNSUB_EN, UnsubscribeIntent),
                          (_SUB_ZH, SubscribeIntent), (_SUB_EN, SubscribeIntent)):
        if m := pattern.search(text):
            return kind(label=m["label"].lower(), repo=m["repo"], language=lang)
    return None


def parse_intent(text: str, *, bot_mentions: Sequence[str] = ()) -> Intent:
    """Understand one chat message.

    Args:
        text: the message as received (may hold mentions, full-width characters).
        bot_mentions: the bot's own mention tokens to remove (``<@U0BOT>`` on Slack,
            the ``@_user_N`` placeholder the bot was given on Feishu).

    Returns:
        One intent; :class:`HelpIntent` when nothing matches. Never raises.
    """
    clean = normalize(text, bot_mentions)
    lang = detect_language(clean)
    if not clean or _HELP.match(clean):
        return HelpIntent(language=lang)
    if found := _subscription(clean, lang):
        return found
    if found_pr := _pr(clean, lang):
        return found_pr
    if _DIGEST_WORD.search(clean) or _THIS_WEEK.search(clean) or _LAST_WEEK.search(clean):
        return DigestIntent(week=_week(clean), repo=_repo_outside_urls(clean), language=lang)
    if m := _LABEL_ZH.search(clean) or _LABEL_EN.search(clean):
        return LabelIntent(label=(m["label"] or m["label2"]).lower(), repo=_repo_outside_urls(clean), language=lang)
    return HelpIntent(language=lang)


_COMMANDS = {"digest", "pr", "label", "subscribe", "unsubscribe", "subscriptions", "help"}


def parse_command(args: str) -> Intent:
    """Understand the text after a slash command (``/prhub <args>``).

    ``digest [WEEK] [owner/name]``, ``pr N|#N|URL``, ``label L [owner/name]``,
    ``subscribe L [owner/name]``, ``unsubscribe L [owner/name]``, ``subscriptions``,
    ``help``; any other text is read as a chat message (:func:`parse_intent`).
    """
    clean = normalize(args)
    head, _, rest = clean.partition(" ")
    command = head.lower()
    if command not in _COMMANDS:
        return parse_intent(clean)
    lang = detect_language(rest)
    repo = _repo_outside_urls(rest)
    words = [w for w in rest.split() if w != repo]
    if command == "digest":
        return DigestIntent(week=_week(rest), repo=repo, language=lang)
    if command == "pr":
        return _pr(f"pr {rest}" if rest.strip().isdigit() else rest, lang) or HelpIntent(language=lang)
    if command == "subscriptions":
        return ListSubscriptionsIntent(language=lang)
    if command == "help" or not words:
        return HelpIntent(language=lang)
    label = words[0].lower()
    if command == "label":
        return LabelIntent(label=label, repo=repo, language=lang)
    if command == "subscribe":
        return SubscribeIntent(label=label, repo=repo, language=lang)
    return UnsubscribeIntent(label=label, repo=repo, language=lang)
