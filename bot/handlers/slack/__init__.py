"""The Slack bot on slack-bolt (async): ``app.py`` wires the app; ``commands``, ``events`` and ``actions``
each ``register(app, deps)`` their listeners; ``deps`` is what they share (the core, the claims of
:mod:`bot.claims` and the deliverer of :mod:`bot.delivery.slack`)."""
