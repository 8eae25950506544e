"""The Feishu (Lark) door of the bot, on lark-oapi.

Layout (each module is thin; the digest core does the work):

- :mod:`.events` — ``im.message.receive_v1`` payloads to :class:`~.events.IncomingMessage`
  (mentions resolved, only the bot's own mention removed; ``text`` and ``post``);
- :mod:`.actions` — ``card.action.trigger`` callbacks (完整报告 / 订阅此标签 / 分析此 PR);
- :mod:`.app` — the wiring: lark-oapi's event dispatcher and the handlers;
- :mod:`.ws` — the long connection in a thread (and event loop) of its own;
- :mod:`.http` — the dispatcher behind a Starlette route (``POST /feishu/events``).

The replies are drawn by :mod:`bot.cards.chat` and sent by the Feishu deliverer
(:mod:`bot.delivery.feishu`, the process's one Open API client); claims are :mod:`bot.claims`.
"""
