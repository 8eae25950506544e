"""Things that happen without anyone asking: the weekly push and the label alerts.

- :mod:`.schedule` — push times (``"mon 10:00"`` or cron fields) as APScheduler cron
  triggers in a channel's time zone, and the fire times between two instants;
- :mod:`.delivery` — one small :class:`~.delivery.Deliverer` protocol over Slack, the
  Feishu app and Feishu custom-bot webhooks;
- :mod:`.push` — the digest of the week that just ended, exactly once per
  (channel, repository, week), with catch-up after downtime;
- :mod:`.alerts` — one short card per (subscriber, matching PR), exactly once;
- :mod:`.jobs` — the ``AsyncIOScheduler`` that ``prhub serve`` runs.

APScheduler only decides *when*; exactly once comes from Redis markers and locks
(:meth:`bot.store.Store.claim`), so replicas, restarts and manual runs agree.
This package's ``__init__`` imports nothing: :mod:`bot.config` uses :mod:`.schedule`.
"""
