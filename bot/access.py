"""Who may see and subscribe to what: the check the chat core runs before a subscription is stored.

A conversation sees the repositories it is bound to plus the config's allow-lists
(:meth:`bot.channels.Channels.visible`; a DM or an unbound channel: ``default_repo`` and the
lists). :class:`AccessGuard` is the :class:`~bot.subscriptions.SubscribeGuard` of the bot
(:mod:`bot.app` plugs it into the core): a subscription is refused when the repository is not
visible to the conversation, when the conversation holds ``max_subscriptions_per_channel``
subscriptions or names ``max_subscribed_repos_per_channel`` repositories already (each one is
polled every alerts interval), or when the person made ``max_subscriptions_per_person`` across
conversations. Subscriptions of the config file count for none of the caps.
"""

from __future__ import annotations

from bot.channels import Channels
from bot.config import Settings
from bot.errors import AccessError
from bot.subscriptions import Subscriber, Subscriptions

__all__ = ["AccessGuard"]


class AccessGuard:
    """The bot's :class:`~bot.subscriptions.SubscribeGuard` (see the module docstring).

    Args:
        settings: the caps (``max_subscriptions_per_channel``, ``max_subscribed_repos_per_channel``,
            ``max_subscriptions_per_person``).
        channels: what each conversation may see.
        subscriptions: the stored subscriptions, counted.
    """

    def __init__(self, settings: Settings, channels: Channels, subscriptions: Subscriptions) -> None:
        self._settings = settings
        self._channels = channels
        self._subscriptions = subscriptions

    async def check_subscribe(self, who: Subscriber, user: str, repo: str) -> None:
        """Return when ``user`` may subscribe ``who`` to ``repo``.

        Raises:
            AccessError: the repository is not visible there, or a cap is reached (zh + en, one line).
            StoreUnavailableError: the subscriptions cannot be counted (Redis is down).
        """
        self._channels.resolve_visible(who.key, repo)
        settings = self._settings
        mine = await self._subscriptions.of(who, stored_only=True)
        if len(mine) >= settings.max_subscriptions_per_channel:
            cap = settings.max_subscriptions_per_channel
            raise AccessError(f"This conversation has {cap} subscriptions, the most it may hold; "
                              "unsubscribe from one first.",
                              zh=f"这个会话已有 {cap} 个订阅，达到上限；请先取消一个。")
        repos = {s.repo.lower() for s in mine}
        if repo.lower() not in repos and len(repos) >= settings.max_subscribed_repos_per_channel:
            cap = settings.max_subscribed_repos_per_channel
            raise AccessError(f"This conversation's subscriptions already name {cap} repositories, the most "
                              "they may; unsubscribe from one first.",
                              zh=f"这个会话的订阅已涉及 {cap} 个仓库，达到上限；请先取消一个仓库的订阅。")
        made = 0
        for subs in (await self._subscriptions.all()).values():
            made += sum(1 for s in subs if not s.from_config and s.created_by == user)
        if made >= settings.max_subscriptions_per_person:
            cap = settings.max_subscriptions_per_person
            raise AccessError(f"You have made {cap} subscriptions, the most one person may; "
                              "unsubscribe from one first.",
                              zh=f"你已创建 {cap} 个订阅，达到每人上限；请先取消一个。")
