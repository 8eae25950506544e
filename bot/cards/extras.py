"""What a posted digest card carries besides the digest: the link to its page and its uploaded charts.

The renderers (:func:`bot.cards.slack.render_slack`, :func:`bot.cards.feishu.render_feishu`,
:func:`bot.cards.feishu.render_feishu_webhook` and the chat replies of :mod:`bot.cards.chat`) take
an optional :class:`CardExtras`; the deliverers (:mod:`bot.delivery`) make it before a post: the
page is kept and its signed link made (:mod:`bot.web`), the charts drawn
(:func:`bot.cards.charts.render_charts`) and uploaded to the platform, which gives each a
reference (:class:`CardImage`). Without extras a card is what it always was: its 完整报告 button
posts the rest of the digest into the card's thread.

With a ``page_url`` the 完整报告 button opens the page (a link button) and the digest is the card
alone — the full report, the label view and the charts are on the page. Each image is shown in
the card (Slack: an ``image`` block with ``slack_file``; Feishu: an ``img`` element with
``img_key``), after the card's sections and before its buttons.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CARD_CHARTS", "NO_EXTRAS", "CardExtras", "CardImage"]

CARD_CHARTS = ("labels", "weekly")
"""The charts a card shows (:class:`bot.cards.charts.Chart` names, in this order): which labels moved
against their average, and merged PRs per week. The page shows every chart."""


@dataclass(frozen=True, slots=True)
class CardImage:
    """One uploaded chart.

    Attributes:
        ref: the platform's reference: a Slack file id (``F…``) or a Feishu ``image_key`` (``img_v…``).
        name: the chart's name (``labels``, ``weekly``).
        title: shown with the picture (in the digest's language).
        alt: the picture's text alternative, with its numbers.
    """

    ref: str
    name: str
    title: str
    alt: str


@dataclass(frozen=True, slots=True)
class CardExtras:
    """The page link (``None``: no public URL configured) and the uploaded charts of one card."""

    page_url: str | None = None
    images: tuple[CardImage, ...] = ()

    def without_images(self) -> CardExtras:
        """The same link, no picture (a card whose pictures a platform refused)."""
        return CardExtras(page_url=self.page_url)


NO_EXTRAS = CardExtras()
