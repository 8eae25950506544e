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
from collections.abc import Sequence
from dataclasses import replace

from bot.filters import opens_with_request, subscription_action
from bot.models import Language
from bot.understand.canon import canonical
from bot.understand.decide import (
    _decide,
    _follow_up,
    _is_question_shaped,
)
from bot.understand.intents import (
    MAX_COMPARED,
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PRIntent,
    PRQuestion,
    SmallTalkIntent,
)
from bot.understand.lexicon import (
    _CJK,
    _COMMANDS,
    _HELP,
    _HOW_TO,
    _LIST_SUBS_MORE,
    _PUNCT_EDGE,
    _WHAT,
    _blank,
    detect_language,
    normalize,
)
from bot.understand.nearest import read_by_nearest
from bot.understand.parts import (
    _Reading,
)
from bot.understand.releases import release_request, release_tag
from bot.understand.shape import asks_capability, feedback, remark, without_courtesy
from bot.understand.smalltalk import small_talk
from bot.understand.subscriptions import read_request, subscription_command, subscription_intent


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
    said = canonical(normalize(text, bot_mentions))
    if not said:
        return HelpIntent()
    if _HELP.match(said.strip(_PUNCT_EDGE + " ")) or _HELP.match(said) or asks_capability(said):
        return HelpIntent(language=detect_language(said), said=said, asked=True)
    if (kind := small_talk(said)) is not None:
        return SmallTalkIntent(kind, language=_small_talk_language(said))
    clean = without_courtesy(said)
    lang = detect_language(said)
    if _LIST_SUBS_MORE.search(clean) and subscription_action(clean) not in ("unsubscribe", "unsubscribe_all"):
        return ListSubscriptionsIntent(language=lang)
    if _HOW_TO.search(clean):
        return HelpIntent(language=lang, said=clean, asked=True)
    if (asked := release_request(clean)) is not None:  # "v0.7.1 改了啥", "since v0.7.0" (issue 29)
        return DigestIntent(week=f"{asked[0]}:{asked[1]}", repo=_Reading(clean).repo, language=lang, said=clean)
    if (not _is_question_shaped(clean) or opens_with_request(clean)) and (
            found := subscription_intent(clean, None)) is not None:
        return _with_language(found, detect_language(clean, _request_words(found)))
    if remark(clean):
        return HelpIntent(language=lang, said=said, remark=True)  # said to colleagues, or about oneself
    if (kind := feedback(clean)) is not None:
        return SmallTalkIntent(kind, language=_small_talk_language(said))
    reading = _Reading(clean)
    if (follow := _follow_up(reading)) is not None:
        return follow
    decided = _decide(reading)
    if isinstance(decided, HelpIntent) and not decided.remark and not decided.asked:
        return read_by_nearest(clean) or decided  # the request of the nearest phrasing people used
    return decided


def _small_talk_language(text: str) -> Language | None:
    if _CJK.search(text):
        return "zh"
    return "en" if re.search(r"[A-Za-z]{2,}", text) else None


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
    if command == "digest" and (tag := release_tag(rest)) is not None:  # /prhub digest v0.7.1
        kind = "since" if release_request(rest) == ("since", tag) else "release"
        return DigestIntent(week=f"{kind}:{tag}", repo=reading.repo, language=lang, said=rest)
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
