"""``prhub digest … --post TARGET``: the digest posted to an incoming webhook, without a bot or Redis.

Targets::

    slack-webhook:https://hooks.slack.com/services/T…/B…/…     a Slack incoming webhook (Block Kit messages)
    feishu-webhook:https://open.feishu.cn/open-apis/bot/v2/hook/…   a Feishu / Lark custom group-bot webhook,
                                                                signed with PRHUB_FEISHU_WEBHOOK_SECRET when set
    feishu-webhook:NAME                                          a [feishu_webhooks.NAME] of the config (its url
                                                                and secret)

Slack gets :func:`bot.cards.slack.render_slack`'s messages one after another (a webhook cannot thread; link
buttons kept, callback buttons dropped: :func:`bot.delivery.slack_webhook.webhook_messages`); Feishu gets
:func:`bot.cards.feishu.render_feishu_webhook`'s cards, each within the webhook's 20 KB, through the bot's
own webhook sender (:func:`bot.delivery.webhook.push_cards`, signature and rate-limit waits included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.models import Digest

__all__ = ["PostTarget", "parse_targets", "post_digest"]

KINDS = ("slack-webhook", "feishu-webhook")


@dataclass(frozen=True, slots=True)
class PostTarget:
    """One ``--post``: ``kind`` (``slack-webhook`` / ``feishu-webhook``), the webhook ``url`` and its signing
    ``secret`` (Feishu; ``None``: unsigned); ``shown``: how messages name it (never the URL, which is a secret)."""

    kind: str
    url: str
    secret: str | None
    shown: str


def parse_targets(values: list[str], settings: Settings) -> list[PostTarget]:
    """The ``--post`` values read.

    Raises:
        UsageError: an unknown kind, a URL that is not http(s), or a webhook name the config lacks (both
            languages; the URL itself is never repeated).
    """
    out: list[PostTarget] = []
    for value in values:
        kind, sep, rest = value.strip().partition(":")
        kind, rest = kind.strip().lower(), rest.strip()
        if not sep or kind not in KINDS or not rest:
            raise UsageError(f"--post {kind or value!r}…: expected slack-webhook:URL, feishu-webhook:URL or "
                             "feishu-webhook:NAME",
                             zh=f"--post {kind or value!r}… 无法识别：应为 slack-webhook:URL、feishu-webhook:URL "
                                "或 feishu-webhook:NAME")
        if rest.startswith(("http://", "https://")):
            secret = settings.feishu_webhook_secret if kind == "feishu-webhook" else None
            out.append(PostTarget(kind, rest, secret.get_secret_value() if secret else None, kind))
            continue
        if kind == "slack-webhook":
            raise UsageError("--post slack-webhook: takes the webhook's URL (https://hooks.slack.com/services/…)",
                             zh="--post slack-webhook: 后面应是 webhook 的 URL（https://hooks.slack.com/services/…）")
        hook = settings.feishu_webhooks.get(rest)
        if hook is None:
            known = ", ".join(sorted(settings.feishu_webhooks)) or "none"
            raise UsageError(f"--post feishu-webhook:{rest}: no [feishu_webhooks.{rest}] in the config "
                             f"(configured: {known})",
                             zh=f"--post feishu-webhook:{rest}：配置里没有 [feishu_webhooks.{rest}]（已配置：{known}）")
        out.append(PostTarget(kind, hook.url, hook.secret.get_secret_value() if hook.secret else None,
                              f"feishu-webhook:{rest}"))
    return out


async def post_digest(digest: Digest, targets: list[PostTarget]) -> list[str]:
    """Post ``digest`` to every target, in order; one line per target (``posted 3 messages to slack-webhook``).

    Raises:
        DeliveryError: a webhook refused a message or could not be reached (the ones before were posted).
    """
    import httpx

    from bot.cards.feishu import render_feishu_webhook
    from bot.cards.slack import render_slack
    from bot.delivery.slack_webhook import post_messages, webhook_messages
    from bot.delivery.webhook import push_cards

    lines: list[str] = []
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
        for target in targets:
            if target.kind == "slack-webhook":
                count = await post_messages(target.url, webhook_messages(render_slack(digest)), http=http)
            else:
                cards = render_feishu_webhook(digest)
                await push_cards(target.url, target.secret, cards, http=http)
                count = len(cards)
            lines.append(f"posted {count} message{'' if count == 1 else 's'} to {target.shown}")
    return lines
