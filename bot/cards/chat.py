"""The chat bot's short replies as Slack Block Kit messages, and their words (zh/en).

The digest and the PR answer have their own renderers (:mod:`bot.cards.slack`,
:mod:`bot.cards.pr`); this module draws what is left of a conversation:

* :func:`render_label_slack` — the label view of one label ("npu 标签"): a header
  ``npu · 2026 第 16 周 · 04-13 至 04-19``, a context line (repository, PR
  count) and one section per PR (linked title, level · minutes · source, the
  reason) with an "analyze" button; more than fit one message continue in
  further messages (for the thread);
* :func:`render_note_slack` — one line: "生成中…", subscription changes, errors;
* :func:`render_subscriptions_slack` — the list of subscriptions;
* :func:`render_help_slack` — what the bot understands.

:data:`CHAT` holds the words, so the Feishu cards can say the same. Every
message has a non-empty fallback ``text``, at most :data:`bot.cards.slack.MAX_BLOCKS`
blocks and sections of at most 3000 characters. PR text is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.cards import slack
from bot.cards._outline import SLACK, pr_ref
from bot.cards._view import pr_badges
from bot.cards.escape import one_line, slack_text
from bot.cards.i18n import digest_title, n_prs, phrases
from bot.models import Digest, DigestPR, Language


@dataclass(frozen=True, slots=True)
class ChatPhrases:
    """Fixed texts of the chat replies; ``{…}`` fields are filled with ``str.format``."""

    working: str
    label_title: str
    """``{label}``, ``{title}`` (the digest's title)."""
    label_meta: str
    """``{repo}``, ``{n_prs}``."""
    label_empty: str
    """``{label}``, ``{title}``."""
    subscribed: str
    """``{label}``, ``{repo}``."""
    already_subscribed: str
    unsubscribed: str
    not_subscribed: str
    unknown_label: str
    subscriptions_title: str
    no_subscriptions: str
    subscription_item: str
    """``{label}``, ``{repo}``."""
    help_title: str
    help_items: tuple[str, ...]
    help_commands: str
    help_repo: str
    """``{repo}``."""
    error: str
    """``{message}``."""
    already_in_thread: str
    no_more: str
    invite_for_rest: str
    """``{n}`` messages could not be sent."""


CHAT: dict[Language, ChatPhrases] = {
    "zh": ChatPhrases(
        working="生成中…",
        label_title="{label} · {title}",
        label_meta="仓库：{repo} · {n_prs}",
        label_empty="{title}没有带 {label} 标签的 PR。",
        subscribed="已订阅 {repo} 的 {label}：该标签的 PR 合并后会在这里提醒。",
        already_subscribed="已经订阅过 {repo} 的 {label}。",
        unsubscribed="已取消订阅 {repo} 的 {label}。",
        not_subscribed="没有订阅 {repo} 的 {label}，无需取消。",
        unknown_label="注意：{repo} 最近 {weeks} 周没有 PR 用过标签 {label}（以后出现时照样提醒）。已知标签：{known}",
        subscriptions_title="本会话的订阅",
        no_subscriptions="还没有订阅。发送“订阅 npu”或 `/prhub subscribe npu` 订阅一个标签。",
        subscription_item="{label}（{repo}）",
        help_title="我能做什么",
        help_items=(
            "`本周周报` / `上周周报` / `周报 2026-W16` — 周报",
            "`PR #6046 值得读吗` / `分析一下 owner/name#6046` — 一个 PR 值不值得读、从哪里读起",
            "`npu 标签` — 上周某个标签的 PR 和阅读建议",
            "`订阅 npu` / `取消订阅 npu` / `我的订阅` — 标签提醒",
        ),
        help_commands=(
            "斜杠命令：`/prhub digest [周]`、`/prhub pr N`、`/prhub label L`、`/prhub subscribe L`、"
            "`/prhub unsubscribe L`、`/prhub subscriptions`、`/prhub help`"
        ),
        help_repo="本频道默认仓库：{repo}（消息里写 `owner/name` 可换成别的仓库）",
        error="出错了：{message}",
        already_in_thread="完整内容已经在这条消息的话题里了。",
        no_more="这份周报只有这一条消息。",
        invite_for_rest=(
            "还有 {n} 条消息没能发出：把我邀请进本频道（`/invite @prhub`）后再发一次命令，后续内容会接在话题里。"
        ),
    ),
    "en": ChatPhrases(
        working="Working on it…",
        label_title="{label} · {title}",
        label_meta="Repository: {repo} · {n_prs}",
        label_empty="No PR with the {label} label in {title}.",
        subscribed="Subscribed to {label} in {repo}: merged PRs with that label will be announced here.",
        already_subscribed="Already subscribed to {label} in {repo}.",
        unsubscribed="Unsubscribed from {label} in {repo}.",
        not_subscribed="There was no subscription to {label} in {repo}.",
        unknown_label=("Note: no PR of {repo} used the label {label} in the last {weeks} weeks (it will still be "
                       "announced when one does). Known labels: {known}"),
        subscriptions_title="Subscriptions of this conversation",
        no_subscriptions="No subscriptions yet. Send “subscribe npu” or `/prhub subscribe npu` to add one.",
        subscription_item="{label} ({repo})",
        help_title="What I understand",
        help_items=(
            "`digest` / `weekly report last week` / `digest 2026-W16` — the weekly digest",
            "`is PR 6046 worth reading?` / `analyze owner/name#6046` — one PR: worth reading, where to start",
            "`label npu` — last week's PRs of one label with reading advice",
            "`subscribe npu` / `unsubscribe npu` / `my subscriptions` — label alerts",
        ),
        help_commands=(
            "Slash commands: `/prhub digest [week]`, `/prhub pr N`, `/prhub label L`, `/prhub subscribe L`, "
            "`/prhub unsubscribe L`, `/prhub subscriptions`, `/prhub help`"
        ),
        help_repo="This channel's repository: {repo} (name `owner/name` in a message for another one)",
        error="Sorry, that failed: {message}",
        already_in_thread="The rest is already in this message's thread.",
        no_more="This digest has no more messages.",
        invite_for_rest=(
            "{n} more messages could not be sent: invite me to this channel (`/invite @prhub`) and ask again, "
            "the rest will follow in a thread."
        ),
    ),
}


def chat_phrases(language: Language) -> ChatPhrases:
    """The chat texts of ``language``."""
    return CHAT[language]


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
        button = slack._button(analyze, slack.ACTION_ANALYZE_PR, f"{digest.repo}#{pr.number}")
        blocks += slack._sections(line, accessory=button)
    parts = slack._pack(blocks, reserved=head)
    fallback = slack_text(title)
    return [{"text": fallback, "blocks": [*head, *part]} for part in parts]


def render_subscriptions_slack(items: list[tuple[str, str]], language: Language) -> dict[str, Any]:
    """The subscriptions ``(repo, label)`` of a conversation as one message."""
    words = chat_phrases(language)
    if not items:
        return render_note_slack(words.no_subscriptions)
    lines = "\n".join(
        "• " + slack_text(words.subscription_item.format(label=label, repo=repo)) for repo, label in items
    )
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
