"""The buttons of the bot's cards: one table of action ids, shared by the renderers and the handlers.

==========================  ========================================  =======================================
action id                   Slack ``value``                           Feishu callback ``value``
==========================  ========================================  =======================================
``prhub_full_report``       ``owner/name|window`` (完整报告)           ``{"action", "repo", "window"}``
``prhub_analyze_pr``        ``owner/name#number`` (分析此 PR)          ``{"action", "repo", "number", "lang"}``
``prhub_subscribe_label``   a select; each option's value is a label  ``{"action", "repo", "label", "lang"}``
``prhub_open_page``         ``owner/name|window`` (完整报告 as a link  — (an ``open_url`` button, no callback)
                            to the page; only acknowledged)
``prhub_keep_subscription`` ``owner/name|filter`` (保留: the preview   ``{"action", "repo", "filter", "lang"}``
                            of a new subscription is fine)
``prhub_undo_subscription`` ``owner/name|filter`` (撤销: remove it     ``{"action", "repo", "filter", "lang"}``
                            again, to subscribe otherwise)
==========================  ========================================  =======================================

``window`` is :attr:`bot.models.Window.name` (``2026-W16`` or ``2026-04-13..2026-04-19``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["ACTIONS", "ACTION_ANALYZE_PR", "ACTION_FULL_REPORT", "ACTION_KEEP_SUBSCRIPTION", "ACTION_OPEN_PAGE",
           "ACTION_OPEN_WINDOW", "ACTION_SUBSCRIBE_LABEL", "ACTION_UNDO_SUBSCRIPTION"]

ACTION_FULL_REPORT: Final = "prhub_full_report"
"""Post the rest of the digest in the card's thread, once per thread."""
ACTION_ANALYZE_PR: Final = "prhub_analyze_pr"
"""Post one PR's analysis in the card's thread, once per thread and PR."""
ACTION_SUBSCRIBE_LABEL: Final = "prhub_subscribe_label"
"""Subscribe the conversation to a label of the card's repository."""
ACTION_OPEN_WINDOW: Final = "prhub_open_window"
"""Post the digest of the window the button names (an empty window's "查看 2026-W34")."""

ACTION_OPEN_PAGE: Final = "prhub_open_page"
"""完整报告 as a link to the digest's page (Slack reports the press of a URL button; nothing to do)."""

ACTION_KEEP_SUBSCRIPTION: Final = "prhub_keep_subscription"
"""The preview of a new subscription (what it would have sent in four weeks) is fine: said back, nothing changes."""
ACTION_UNDO_SUBSCRIPTION: Final = "prhub_undo_subscription"
"""The preview shows too many (or too few) alerts: the new subscription is removed again."""

ACTIONS: Final = (ACTION_FULL_REPORT, ACTION_ANALYZE_PR, ACTION_SUBSCRIBE_LABEL, ACTION_OPEN_WINDOW, ACTION_OPEN_PAGE,
                  ACTION_KEEP_SUBSCRIPTION, ACTION_UNDO_SUBSCRIPTION)
