"""The Slack bot on slack-bolt (async): ``app.py`` wires the app; ``commands``, ``events`` and
``actions`` each ``register(app, deps)`` their listeners; ``dedup`` and ``delivery`` are the
exactly-once guard and the message poster they share; ``render`` turns core replies into Block Kit."""
