"""The chat bot's replies as Slack Block Kit messages and as Feishu cards (JSON 2.0).

The digest and the PR answer have their own renderers (:mod:`bot.cards.slack`,
:mod:`bot.cards.feishu`, :mod:`bot.cards.pr`); this module draws the rest of a conversation and
picks the renderer of each :mod:`bot.replies` reply:

* :func:`render_reply_slack` / :func:`render_reply_feishu` — any reply: the messages (cards) to
  post, the first as the answer and the rest in its thread;
* :func:`render_label_slack` / :func:`render_label_feishu` — the label view of one label ("npu 标签"):
  a header ``npu · 2026 第 16 周 · 04-13 至 04-19``, the repository and PR count, then one entry
  per PR (linked title, advice) with an "analyze" button; more than fit one message continue in
  further messages; the Feishu view ends with "订阅此标签";
* :func:`render_note_slack` / :func:`render_note_feishu` — one short text: "生成中…",
  subscription changes, errors;
* :func:`render_subscriptions_slack`, :func:`render_help_slack` — the list of subscriptions (each filter
  said back with :func:`bot.filters.describe`), the help;
* the person's replies: the GitHub link, the weekly digest turned on or off, "我的周报" (drawn by
  :mod:`bot.cards.personal`);
* :func:`render_full_report_feishu` — what 完整报告 posts under a Feishu digest card.

The words are :func:`bot.cards.i18n.chat_phrases`, so both platforms say the same. Every Slack
message has a non-empty fallback ``text``, at most :data:`bot.cards.slack.MAX_BLOCKS` blocks and
sections of at most 3000 characters; every Feishu card stays within
:data:`bot.cards.feishu.PACK_BYTES` bytes and :data:`bot.cards.feishu.MAX_ELEMENTS` elements. PR
text is escaped for each platform. Buttons carry the action ids of :mod:`bot.cards.actions`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from bot.cards import answers, slack
from bot.cards._outline import FEISHU, SLACK, pr_ref
from bot.cards._view import pr_badges
from bot.cards.actions import (
    ACTION_ANALYZE_PR,
    ACTION_KEEP_SUBSCRIPTION,
    ACTION_SUBSCRIBE_LABEL,
    ACTION_UNDO_SUBSCRIPTION,
)
from bot.cards.escape import feishu_text, one_line, slack_text
from bot.cards.extras import CardExtras
from bot.cards.feishu import (
    MAX_ELEMENTS,
    PACK_BYTES,
    Behavior,
    Body,
    Card,
    Element,
    Header,
    PlainText,
    render_feishu,
)
from bot.cards.i18n import chat_phrases, digest_title, level_name, n_prs, phrases, status_name
from bot.cards.personal import render_personal_feishu, render_personal_slack
from bot.cards.pr import render_pr_feishu, render_pr_slack
from bot.cards.slack import render_slack
from bot.filters import describe
from bot.models import Digest, DigestPR, Language
from bot.replies import (
    AnswerReply,
    ClarifyReply,
    CompareReply,
    DigestReply,
    EmptyWindowReply,
    ErrorReply,
    GitHubLinkReply,
    HelpReply,
    LabelReply,
    MergedReply,
    MyDigestReply,
    NoteReply,
    NoticeReply,
    PersonalDigestReply,
    PRReply,
    Reply,
    SubscriptionReply,
    SubscriptionsReply,
)
from bot.subscriptions import Subscription

__all__ = ["LABEL_BUTTONS", "person_text", "render_full_report_feishu", "render_help_slack", "render_label_feishu",
           "render_label_slack", "render_note_feishu", "render_note_slack", "render_reply_feishu",
           "render_reply_slack", "render_subscriptions_slack", "subscription_item", "subscription_text", "when_text"]

LABEL_BUTTONS = 10
""""分析此 PR" buttons on a Feishu label view (the PRs after these are listed without one)."""

Template = Literal["blue", "wathet", "red", "grey"]


def subscription_item(sub: Subscription, language: Language) -> str:
    """One subscription said back: ``npu 或 rollout，排除 ci（verl-project/verl）`` (unescaped)."""
    words = chat_phrases(language)
    line = words.subscription_item.format(filter=describe(sub.filter, language), repo=sub.repo)
    return line + (words.from_config if sub.from_config else "")


def subscription_text(reply: SubscriptionReply) -> str:
    """The lines of a subscription change (unescaped: the caller escapes for its platform)."""
    words = chat_phrases(reply.language)
    if reply.change == "refused":
        return reply.message
    if reply.change in ("unsubscribed_all", "nothing_to_unsubscribe"):
        head = words.unsubscribed_all.format(n=len(reply.removed)) if reply.change == "unsubscribed_all" \
            else words.nothing_to_unsubscribe
        lines = [head, *("• " + subscription_item(s, reply.language) for s in reply.removed)]
    else:
        sub = reply.subscription
        assert sub is not None
        template: str = getattr(words, reply.change)
        head = template.format(filter=describe(sub.filter, reply.language), repo=sub.repo)
        if reply.change == "subscribed":
            batch = words.subscribed_batch.format(minutes=reply.batch_minutes) if reply.batch_minutes else ""
            head += batch + ("。" if reply.language == "zh" else ".")
        lines = [head]
    if reply.message:
        lines.append(reply.message)
    if reply.preview and reply.subscription is not None:
        lines.append(reply.preview)
        lines.append(words.preview_adjust.format(filter=reply.subscription.filter.text()))
    return "\n".join(lines)


def when_text(spec: str, language: Language) -> str:
    """``mon 09:00`` -> ``周一 09:00`` / ``Monday 09:00`` (day lists and ranges too)."""
    days, _, clock = spec.partition(" ")
    names = dict(zip(("mon", "tue", "wed", "thu", "fri", "sat", "sun"), chat_phrases(language).days, strict=True))
    said = "、".join if language == "zh" else ", ".join
    parts = ["–".join(names.get(d, d) for d in part.split("-")) for part in days.split(",")]
    return f"{said(parts)} {clock}".strip()


def person_text(reply: GitHubLinkReply | PersonalDigestReply) -> str:
    """The lines answering the GitHub link or the weekly-digest switch (unescaped)."""
    words = chat_phrases(reply.language)
    lang = reply.language
    if isinstance(reply, GitHubLinkReply):
        lines = [words.github_linked.format(handle=reply.handle)]
        if reply.repo and reply.paths is not None:
            sep = "、" if lang == "zh" else ", "
            lines.append(words.github_paths.format(repo=reply.repo, file="CODEOWNERS", paths=sep.join(reply.paths))
                         if reply.paths else words.github_no_paths.format(repo=reply.repo, handle=reply.handle))
        return "\n".join(lines)
    when = when_text(reply.when, lang) if reply.when else ""
    match reply.change:
        case "on":
            if not reply.filters:
                return words.personal_on_all.format(when=when)
            sep = "；" if lang == "zh" else "; "
            return words.personal_on.format(when=when, filters=sep.join(subscription_item(s, lang)
                                                                         for s in reply.filters))
        case "already_on":
            return words.personal_already_on.format(when=when)
        case "off":
            return words.personal_off
        case "not_on":
            return words.personal_not_on
    return reply.message


# -- Slack ---------------------------------------------------------------------------------------


def render_reply_slack(reply: Reply, extras: CardExtras | None = None) -> list[dict[str, Any]]:
    """The Block Kit messages of ``reply`` (first = the answer, rest = its thread); a digest's card
    carries ``extras`` (its page link and charts, :mod:`bot.cards.extras`)."""
    match reply:
        case DigestReply(digest, notes, whole):
            messages = render_slack(digest, extras)
            return _with_notes_slack(messages if whole else messages[:1], notes)
        case PRReply(pr, repo, language, timezone, notes):
            return _with_notes_slack([render_pr_slack(pr, repo=repo, language=language, timezone=timezone)], notes)
        case LabelReply(digest, label, prs, notes):
            return _with_notes_slack(render_label_slack(digest, label, prs), notes)
        case CompareReply(comparison):
            return [answers.render_comparison_slack(comparison)]
        case AnswerReply(answer, phrasing, notes):
            return answers.render_answer_slack(answer, phrasing=phrasing, notes=notes)
        case MergedReply(digest, focus, notes):
            return answers.render_merged_slack(digest, focus, notes=notes)
        case EmptyWindowReply(window, repo, language, latest, _, notes):
            return [answers.render_empty_window_slack(window, repo=repo, language=language, latest=latest,
                                                      notes=notes)]
        case ClarifyReply(text) | NoteReply(text):
            return [render_note_slack(slack_text(text))]
        case SubscriptionReply():
            note = render_note_slack(slack_text(subscription_text(reply)))
            if reply.preview and reply.subscription is not None:  # 保留 / 撤销 under the preview
                words = chat_phrases(reply.language)
                value = f"{reply.subscription.repo}|{reply.subscription.filter.text()}"[:2000]
                note["blocks"].append({"type": "actions", "elements": [
                    slack._button(words.preview_keep, ACTION_KEEP_SUBSCRIPTION, value, primary=True),
                    slack._button(words.preview_undo, ACTION_UNDO_SUBSCRIPTION, value)]})
            return [note]
        case SubscriptionsReply(subs, language):
            return [render_subscriptions_slack(subs, language)]
        case GitHubLinkReply() | PersonalDigestReply():
            return [render_note_slack(slack_text(person_text(reply)))]
        case MyDigestReply(digests, language, message):
            messages = [m for pd in digests for m in render_personal_slack(pd)]
            if message or not messages:
                messages.append(render_note_slack(slack_text(message or chat_phrases(language).my_digest_empty)))
            return messages
        case HelpReply(language, repo, examples):
            if examples:
                return [answers.render_nearest_slack(examples, language)]
            return [render_help_slack(language, repo)]
        case NoticeReply(text, _):
            return [render_note_slack(slack_text(text))]
        case ErrorReply(message, language):
            return [render_note_slack(chat_phrases(language).error.format(message=slack_text(message)))]
    raise TypeError(f"unknown reply {reply!r}")  # pragma: no cover - the match is exhaustive


def _with_notes_slack(messages: list[dict[str, Any]], notes: tuple[str, ...]) -> list[dict[str, Any]]:
    """``messages`` with ``notes`` (unescaped lines: the window echo, "so far") as a context block under
    the first message's header."""
    lines = [n for n in notes if n.strip()]
    if not lines or not messages:
        return messages
    first = dict(messages[0])
    blocks = list(first.get("blocks") or [])
    at = 1 if blocks and blocks[0].get("type") == "header" else 0
    blocks.insert(at, slack._context([slack_text(line) for line in lines[:slack.CONTEXT_ELEMENTS]]))
    first["blocks"] = blocks[: slack.MAX_BLOCKS]
    return [first, *messages[1:]]


def render_note_slack(text: str) -> dict[str, Any]:
    """One short message ``{"text", "blocks"}``; ``text`` is ours or already escaped mrkdwn."""
    line = text.strip() or "…"
    return {"text": one_line(line)[:300], "blocks": slack._sections(line)}


def render_label_slack(digest: Digest, label: str, prs: tuple[DigestPR, ...]) -> list[dict[str, Any]]:
    """The label view of ``label`` in ``digest`` (see the module docstring).

    Args:
        digest: the digest the view comes from (its window, language, repository).
        label: the label, as the digest spells it.
        prs: the PRs of the label, in the order to show (most important first).

    Returns:
        One or more messages ``{"text", "blocks"}``: post the first, the rest in its thread.
    """
    words = chat_phrases(digest.language)
    title = words.label_title.format(label=label, title=digest_title(digest))
    head: list[slack.Block] = [
        slack._header(_short(title, slack.HEADER_TEXT)),
        slack._context([slack_text(words.label_meta.format(repo=digest.repo, n_prs=n_prs(len(prs),
                                                                                              digest.language)))]),
    ]
    if not prs:
        empty = words.label_empty.format(label=label, title=digest_title(digest))
        return [{"text": slack_text(empty), "blocks": [*head, *slack._sections(slack_text(empty))]}]
    analyze = phrases(digest.language).analyze_button
    blocks: list[slack.Block] = []
    for pr in prs:
        line = f"{pr_ref(pr, SLACK)} — {SLACK.italic(slack_text(pr_badges(pr, digest)))}"
        if pr.analysis is not None and pr.analysis.recommendation.reason.strip():
            line += "\n" + slack_text(pr.analysis.recommendation.reason)
        button = slack._button(analyze, ACTION_ANALYZE_PR, f"{digest.repo}#{pr.number}")
        blocks += slack._sections(line, accessory=button)
    parts = slack._pack(blocks, reserved=head)
    fallback = slack_text(title)
    return [{"text": fallback, "blocks": [*head, *part]} for part in parts]


def render_subscriptions_slack(subs: tuple[Subscription, ...], language: Language) -> dict[str, Any]:
    """The subscriptions of a conversation as one message, each filter said back."""
    words = chat_phrases(language)
    if not subs:
        return render_note_slack(words.no_subscriptions)
    lines = "\n".join("• " + slack_text(subscription_item(s, language)) for s in subs)
    return {
        "text": words.subscriptions_title,
        "blocks": slack._sections(f"{SLACK.bold(words.subscriptions_title)}\n{lines}"),
    }


def render_help_slack(language: Language, repo: str | None) -> dict[str, Any]:
    """The help card: what the bot understands, the slash commands and the channel's repository."""
    words = chat_phrases(language)
    body = "\n".join(f"• {item}" for item in words.help_items)
    text = f"{SLACK.bold(words.help_title)}\n{body}\n\n{words.help_commands}"
    if repo:
        text += "\n" + words.help_repo.format(repo=slack_text(repo))
    return {"text": words.help_title, "blocks": slack._sections(text)}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- Feishu --------------------------------------------------------------------------------------


def render_reply_feishu(reply: Reply, extras: CardExtras | None = None) -> list[dict[str, Any]]:
    """The cards answering ``reply``: send the first as the reply, the rest in the same thread; a digest's
    first card carries ``extras`` (its page link and charts, :mod:`bot.cards.extras`)."""
    match reply:
        case DigestReply(digest=digest, notes=notes, whole=whole):
            cards = render_feishu(digest, extras)  # the first card, then (whole) the rest continue in the thread
            return _with_notes_feishu(cards if whole else cards[:1], notes)
        case PRReply(pr=pr, repo=repo, language=lang, timezone=tz, notes=notes):
            return _with_notes_feishu([render_pr_feishu(pr, repo=repo, language=lang, timezone=tz)], notes)
        case LabelReply(digest=digest, label=label, prs=prs, notes=notes):
            return _with_notes_feishu(render_label_feishu(digest, label, prs), notes)
        case CompareReply(comparison=comparison):
            return [answers.render_comparison_feishu(comparison)]
        case AnswerReply(answer=answer, phrasing=phrasing, notes=notes):
            return answers.render_answer_feishu(answer, phrasing=phrasing, notes=notes)
        case MergedReply(digest=digest, focus=focus, notes=notes):
            return answers.render_merged_feishu(digest, focus, notes=notes)
        case EmptyWindowReply(window=window, repo=repo, language=lang, latest=latest, notes=notes):
            return [answers.render_empty_window_feishu(window, repo=repo, language=lang, latest=latest, notes=notes)]
        case ClarifyReply(text=text) | NoteReply(text=text):
            return [render_note_feishu("prhub", feishu_text(text))]
        case SubscriptionReply(language=lang):
            template: Template = "red" if reply.change == "refused" else "blue"
            card = render_note_feishu(chat_phrases(lang).subscriptions_title, feishu_text(subscription_text(reply)),
                                      template=template)
            if reply.preview and reply.subscription is not None:  # 保留 / 撤销 under the preview
                words = chat_phrases(lang)
                value = {"repo": reply.subscription.repo, "filter": reply.subscription.filter.text(), "lang": lang}
                card["body"]["elements"] += [
                    _button(words.preview_keep, {"action": ACTION_KEEP_SUBSCRIPTION, **value}, primary=True),
                    _button(words.preview_undo, {"action": ACTION_UNDO_SUBSCRIPTION, **value})]
            return [card]
        case SubscriptionsReply(subscriptions=subs, language=lang):
            words = chat_phrases(lang)
            lines = [f"- {feishu_text(subscription_item(s, lang))}" for s in subs]
            return [render_note_feishu(words.subscriptions_title,
                                       "\n".join(lines) or feishu_text(words.no_subscriptions))]
        case GitHubLinkReply(language=lang) | PersonalDigestReply(language=lang):
            return [render_note_feishu("prhub", feishu_text(person_text(reply)))]
        case MyDigestReply(digests=digests, language=lang, message=message):
            cards = [c for pd in digests for c in render_personal_feishu(pd)]
            if message or not cards:
                cards.append(render_note_feishu("prhub", feishu_text(message or chat_phrases(lang).my_digest_empty)))
            return cards
        case HelpReply(language=lang, repo=repo, examples=examples) if examples:
            return [answers.render_nearest_feishu(examples, lang)]
        case HelpReply(language=lang, repo=repo):
            words = chat_phrases(lang)
            body = "\n".join(f"- {feishu_text(item)}" for item in words.help_items)
            if repo:
                body += "\n\n" + feishu_text(words.help_repo.format(repo=repo))
            return [render_note_feishu(words.help_title, body)]
        case NoticeReply(text=text):
            return [render_note_feishu("prhub", feishu_text(text), template="wathet")]
        case ErrorReply(message=message, language=lang):
            words = chat_phrases(lang)
            return [render_note_feishu("prhub", feishu_text(words.error.format(message=message)), template="red")]
    raise TypeError(f"unknown reply {reply!r}")  # pragma: no cover - the match is exhaustive


def _with_notes_feishu(cards: list[dict[str, Any]], notes: tuple[str, ...]) -> list[dict[str, Any]]:
    """``cards`` with ``notes`` (unescaped lines) as a small markdown element at the top of the first card."""
    lines = [n for n in notes if n.strip()]
    if not lines or not cards:
        return cards
    first = dict(cards[0])
    body = dict(first.get("body") or {})
    element = Element(tag="markdown", content="<br>".join(FEISHU.text(line) for line in lines))
    element["text_size"] = "notation"
    body["elements"] = [element, *(body.get("elements") or [])][:MAX_ELEMENTS]
    first["body"] = body
    return [first, *cards[1:]]


def render_full_report_feishu(digest: Digest) -> list[dict[str, Any]]:
    """What "完整报告" posts under the first card: the digest's remaining cards (or the only one)."""
    cards = render_feishu(digest)
    return cards[1:] or cards


def render_label_feishu(digest: Digest, label: str, prs: tuple[DigestPR, ...]) -> list[dict[str, Any]]:
    """The label view: one line per PR (linked number, title, advice), most important first.

    The first :data:`LABEL_BUTTONS` PRs get an "分析此 PR" button; the last card
    ends with "订阅此标签". More PRs than one card holds continue in more cards.
    """
    lang = digest.language
    words = chat_phrases(lang)
    title = words.label_title.format(label=label, title=digest_title(digest))
    meta = _md(feishu_text(words.label_meta.format(repo=digest.repo, n_prs=n_prs(len(prs), lang))))
    subscribe = _button(phrases(lang).subscribe_placeholder,
                        {"action": ACTION_SUBSCRIBE_LABEL, "repo": digest.repo, "label": label, "lang": lang},
                        primary=True)
    if not prs:
        empty = words.label_empty.format(label=label, title=digest_title(digest))
        return [_card(title, [meta, _md(feishu_text(empty)), subscribe])]
    elements: list[Element] = []
    for index, pr in enumerate(prs):
        advice = level_name(pr.analysis.recommendation.level, lang) if pr.analysis else status_name("pending", lang)
        elements.append(_md(f"**[#{pr.number}]({pr.url})** {feishu_text(pr.title)} · {advice}"))
        if index < LABEL_BUTTONS:
            value = {"action": ACTION_ANALYZE_PR, "repo": digest.repo, "number": str(pr.number), "lang": lang}
            elements.append(_button(phrases(lang).analyze_button, value))
    parts = _pack([meta, *elements], reserve=subscribe)
    parts[-1].append(subscribe)
    cards = [_card(title, parts[0])]
    for number, part in enumerate(parts[1:], 2):
        cards.append(_card(title + phrases(lang).continued.format(part=number, total=len(parts)), part,
                           template="wathet"))
    return cards


def render_note_feishu(title: str, markdown: str, *, template: Template = "blue") -> dict[str, Any]:
    """A one-element card: ``title`` (plain text) over ``markdown`` (already escaped)."""
    return _card(title, [_md(markdown or "…")], template=template)


def _pack(elements: list[Element], *, reserve: Element) -> list[list[Element]]:
    """``elements`` in order, in groups within the card budgets (``reserve`` fits in the last)."""
    limit = PACK_BYTES - _size(reserve)
    parts: list[list[Element]] = [[]]
    used = 0
    for element in elements:
        size = _size(element)
        if parts[-1] and (used + size > limit or len(parts[-1]) >= MAX_ELEMENTS - 1):
            parts.append([])
            used = 0
        parts[-1].append(element)
        used += size
    return parts


def _size(element: Element) -> int:
    return len(json.dumps(element, ensure_ascii=False).encode()) + 2


def _md(content: str) -> Element:
    return Element(tag="markdown", content=content)


def _button(text: str, value: dict[str, str], *, primary: bool = False) -> Element:
    return Element(tag="button", text=PlainText(tag="plain_text", content=text),
                   type="primary" if primary else "default",
                   behaviors=[Behavior(type="callback", value=value)])


def _card(title: str, elements: list[Element], *, template: Template = "blue") -> dict[str, Any]:
    card = Card(
        schema="2.0",
        config={"update_multi": True, "width_mode": "fill", "summary": {"content": title}},
        header=Header(title=PlainText(tag="plain_text", content=title), template="blue"),
        body=Body(elements=elements),
    )
    result: dict[str, Any] = dict(card)
    result["header"] = {**card["header"], "template": template}
    return result
