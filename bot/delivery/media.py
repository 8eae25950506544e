"""What a digest card carries besides the digest (:class:`~bot.cards.extras.CardExtras`): made here,
once per post, for every deliverer.

:class:`CardMedia` (built by :mod:`bot.app` and given to each deliverer) makes a card's extras:

- the page link — ``link(digest)`` keeps the digest for its page and returns the signed URL
  (:class:`bot.web.pages.DigestPages` and :class:`bot.web.links.PageLinks`; ``None`` without
  ``PRHUB_PUBLIC_URL``);
- the charts — :func:`bot.cards.charts.render_charts` draws the card's charts
  (:data:`~bot.cards.extras.CARD_CHARTS`, in a worker thread: matplotlib is imported only then)
  and the deliverer's ``upload`` puts them on its platform (Slack files, Feishu images), which gives
  each a reference for the card. ``PRHUB_CHARTS=false`` turns this off.

Nothing here fails a post: a link that cannot be made, a chart that cannot be drawn or an upload
the platform refuses is logged (WARNING) and the card goes out whole, without it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from bot.cards.extras import CARD_CHARTS, NO_EXTRAS, CardExtras, CardImage
from bot.errors import PrhubError
from bot.models import Digest
from bot.store import redis_errors

if TYPE_CHECKING:
    from bot.cards.charts import Chart

__all__ = ["CardMedia", "PageLinker", "Upload"]

log = logging.getLogger(__name__)

PageLinker = Callable[[Digest], Awaitable[str | None]]
"""Keeps a digest for its page and returns the page's signed URL (``None``: no public URL)."""
Upload = Callable[[Sequence["Chart"]], Awaitable[tuple[CardImage, ...]]]
"""Uploads charts to a platform; raises :class:`~bot.errors.DeliveryError` when it refuses."""


class CardMedia:
    """Makes the extras of digest cards (see the module docstring).

    Args:
        link: the page linker (``None``: cards keep their 完整报告 callback).
        charts: whether cards carry charts.
        names: which charts a card shows.
    """

    def __init__(self, *, link: PageLinker | None = None, charts: bool = True,
                 names: Sequence[str] = CARD_CHARTS) -> None:
        self._link = link
        self._charts = charts
        self._names = tuple(names)

    @property
    def links_pages(self) -> bool:
        """Whether cards link to pages."""
        return self._link is not None

    async def extras(self, digest: Digest, upload: Upload | None) -> CardExtras:
        """The page link of ``digest`` and its charts uploaded with ``upload`` (``None``: the platform
        cannot take pictures, e.g. a custom-bot webhook). Never raises for a store, chart or platform
        failure (logged)."""
        page_url = await self._page_url(digest)
        images: tuple[CardImage, ...] = ()
        if self._charts and upload is not None and digest.prs:
            charts = await self._draw(digest)
            if charts:
                try:
                    images = await upload(charts)
                except PrhubError as exc:
                    log.warning("charts of %s %s not uploaded, the card goes without them: %s",
                                digest.repo, digest.window.name, exc)
                except Exception as exc:  # whatever else an SDK raises: the picture is not worth the card
                    log.warning("charts of %s %s not uploaded (%s: %s), the card goes without them",
                                digest.repo, digest.window.name, type(exc).__name__, exc, exc_info=True)
        if page_url is None and not images:
            return NO_EXTRAS
        return CardExtras(page_url=page_url, images=images)

    async def _page_url(self, digest: Digest) -> str | None:
        if self._link is None or not digest.prs:
            return None
        failures: tuple[type[Exception], ...] = (PrhubError, *redis_errors())
        try:
            return await self._link(digest)
        except failures as exc:
            log.warning("no page link for %s %s (完整报告 posts into the thread instead): %s",
                        digest.repo, digest.window.name, exc)
            return None

    async def _draw(self, digest: Digest) -> list[Chart]:
        from bot.cards.charts import render_charts  # imports matplotlib: only when a card gets charts

        try:
            return await asyncio.to_thread(render_charts, digest, names=self._names, warn=log.warning)
        except Exception:  # a plotting failure must not cost the digest its card
            log.exception("charts of %s %s could not be drawn", digest.repo, digest.window.name)
            return []
