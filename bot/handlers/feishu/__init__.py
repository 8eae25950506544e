"""The Feishu (Lark) door of the bot, on lark-oapi.

Layout (each module is thin; the digest core does the work):

- :mod:`.events` — ``im.message.receive_v1`` payloads to :class:`~.events.IncomingMessage`
  (mentions resolved, only the bot's own mention removed; ``text`` and ``post``);
- :mod:`.answers` — the shared core's replies (:mod:`bot.handlers.core`) as cards
  (digest, PR, label view, subscriptions, help, errors);
- :mod:`.actions` — ``card.action.trigger`` callbacks (完整报告 / 订阅此标签 / 分析此 PR);
- :mod:`.client` — the Open API: replies in threads, rate limits, card fallbacks;
- :mod:`.dedup` — one reply per message across redeliveries (Redis claims);
- :mod:`.app` — the wiring: lark-oapi's event dispatcher and the handlers;
- :mod:`.ws` — the long connection in a thread (and event loop) of its own;
- :mod:`.http` — the dispatcher behind a Starlette route (``POST /feishu/events``);
- :mod:`.webhook` — signed pushes to custom group-bot webhooks (no app needed).
"""
