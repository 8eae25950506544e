"""The web side of prhub: digest pages under signed, expiring links.

- :mod:`bot.web.links` — :class:`~bot.web.links.PageLinks` signs page ids (itsdangerous) and
  checks link tokens; settings ``PRHUB_PAGE_SECRET``, ``PRHUB_PAGE_LINK_TTL_S``, ``PRHUB_PUBLIC_URL``;
- :mod:`bot.web.pages` — :class:`~bot.web.pages.DigestPages` keeps digests in Redis and
  :func:`~bot.web.pages.page_routes` serves their pages (``GET /pages/{token}``), mounted by
  :func:`bot.app.serve` on the bot's HTTP server (:func:`bot.handlers.server.build_server`); the
  cards link there through :class:`bot.delivery.media.CardMedia`.
"""
