"""Digest pages kept in Redis and served under signed links (a Starlette route to mount).

- :class:`DigestPages` keeps digests in a :class:`~bot.store.Store` (Redis in the bot, so any
  replica can serve any page): :meth:`~DigestPages.put` stores a digest and returns its page id
  (a content hash, so the same digest keeps its id), also remembered as the latest page of its
  repository, window and language (:meth:`~DigestPages.latest`, :meth:`~DigestPages.known` —
  the digests already built that week over week can reuse); :meth:`~DigestPages.html` renders
  the page once (:func:`bot.cards.html.render_html`, in a worker thread) and keeps the HTML.
- :func:`page_routes` gives ``GET /pages/{token}``: a valid link answers the page
  (``text/html``, with the page's Content-Security-Policy also as a header, ``no-referrer`` and
  ``private`` caching); a missing, tampered or expired signature answers 403 with a plain
  one-line message, a valid link to a digest no longer kept answers 404.

Keys: ``prhub:page:{id}`` (the digest JSON), ``prhub:page:html:{layout}:{id}`` (the page as rendered
by this version of the layout, :func:`bot.cards.html.layout_version`: a deploy that changes the page
renders kept digests again instead of serving the old page), and
``prhub:page:latest:{repo}:{window}:{lang}`` (an id); all expire after ``ttl_s``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bot.models import Digest, Language
from bot.store import Store, cache_key, digest_of
from bot.web.links import DEFAULT_TTL_S, BadLink, PageLinks

if TYPE_CHECKING:  # Starlette is imported by page_routes only: a CLI digest keeps digests without it
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

log = logging.getLogger(__name__)

__all__ = ["MESSAGES", "DigestPages", "page_routes"]

PAGE_ID_CHARS = 32

MESSAGES = {
    "unsigned": "403 Forbidden: this page link is not signed. Ask prhub for the report again to get a valid link. "
                "/ 链接没有签名，请重新向 prhub 索取周报链接。",
    "tampered": "403 Forbidden: this page link is not valid (it was changed or signed with another key). "
                "/ 链接无效（被改动过或签名密钥已更换），请重新向 prhub 索取。",
    "expired": "403 Forbidden: this page link has expired. Ask prhub for the report again to get a new link. "
               "/ 链接已过期，请重新向 prhub 索取周报链接。",
    "gone": "404 Not Found: this report is no longer kept. Ask prhub for it again. / 该周报已不在缓存中，请重新生成。",
}
"""The plain answers of refused requests, in English and Chinese."""

_SECURITY_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "private, max-age=300",
}


class DigestPages:
    """Digests kept for their pages.

    Args:
        store: where they are kept (a :class:`~bot.store.RedisStore` in the bot).
        ttl_s: how long a page stays (default 30 days, the default life of a link).
    """

    def __init__(self, store: Store, *, ttl_s: int = DEFAULT_TTL_S) -> None:
        self._store = store
        self._ttl_s = ttl_s

    @staticmethod
    def page_id(digest: Digest) -> str:
        """The id of ``digest``'s page: a hash of its content (``usage`` left out)."""
        return digest_of(digest.model_dump(mode="json", exclude={"usage"}))[:PAGE_ID_CHARS]

    async def put(self, digest: Digest) -> str:
        """Keep ``digest`` and return its page id (give it to :meth:`PageLinks.url`)."""
        page_id = self.page_id(digest)
        await self._store.set_json(cache_key("page", page_id), digest.model_dump(mode="json"), self._ttl_s)
        await self._store.set_json(self._latest_key(digest.repo, digest.window.name, digest.language), page_id,
                                   self._ttl_s)
        return page_id

    async def get(self, page_id: str) -> Digest | None:
        """The digest of ``page_id``, or ``None`` when it is not kept (any more)."""
        data = await self._store.get_json(cache_key("page", page_id))
        return Digest.model_validate(data) if data is not None else None

    async def latest(self, repo: str, window: str, language: Language) -> Digest | None:
        """The last digest kept for ``repo``, window name ``window`` and ``language``, or ``None``."""
        page_id = await self._store.get_json(self._latest_key(repo, window, language))
        return await self.get(page_id) if isinstance(page_id, str) else None

    async def known(self, repo: str, windows: Iterable[str], language: Language) -> dict[str, Digest]:
        """The kept digests of ``windows`` (names), by name: ``known=`` of week over week
        (:func:`bot.digest.service.with_week_over_week`)."""
        found = {}
        for name in windows:
            digest = await self.latest(repo, name, language)
            if digest is not None:
                found[name] = digest
        return found

    async def html(self, page_id: str) -> str | None:
        """The page of ``page_id`` (rendered once per layout version, then kept), or ``None`` when its
        digest is gone."""
        from bot.cards.html import layout_version, render_html  # the plotting library: only when a page is drawn

        key = cache_key("page", "html", layout_version(), page_id)
        kept = await self._store.get_json(key)
        if isinstance(kept, str):
            return kept
        digest = await self.get(page_id)
        if digest is None:
            return None

        page = await asyncio.to_thread(render_html, digest)
        await self._store.set_json(key, page, self._ttl_s)
        return page

    @staticmethod
    def _latest_key(repo: str, window: str, language: str) -> str:
        return cache_key("page", "latest", repo.lower(), window, language)


def page_routes(pages: DigestPages, links: PageLinks, *, prefix: str = "/pages") -> list[Route]:
    """``GET {prefix}/{token}`` serving kept digests' pages; mount with
    ``build_server(routes=page_routes(...))`` (:mod:`bot.handlers.server`)."""
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    async def page(request: Request) -> Response:
        token = str(request.path_params["token"])
        try:
            page_id = links.page_id(token)
        except BadLink as refused:
            log.info("page link refused: %s", refused.reason)
            return _plain(MESSAGES[refused.reason], 403)
        html = await pages.html(page_id)
        if html is None:
            return _plain(MESSAGES["gone"], 404)
        headers: dict[str, Any] = dict(_SECURITY_HEADERS)
        headers["Content-Security-Policy"] = _csp(html)
        return HTMLResponse(html, headers=headers)

    async def unsigned(_: Request) -> Response:
        return _plain(MESSAGES["unsigned"], 403)

    return [Route(prefix + "/{token}", page, methods=["GET"]), Route(prefix, unsigned, methods=["GET"]),
            Route(prefix + "/", unsigned, methods=["GET"])]


def _plain(message: str, status: int) -> Response:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(message + "\n", status_code=status, headers=_SECURITY_HEADERS)


def _csp(html: str) -> str:
    """The policy the page declares in its ``<meta>``, repeated as a header (or a strict default)."""
    marker = 'http-equiv="Content-Security-Policy" content="'
    start = html.find(marker)
    if start < 0:
        return "default-src 'none'"
    start += len(marker)
    return html[start:html.index('"', start)]
