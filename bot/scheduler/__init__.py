"""Things that happen without anyone asking: the weekly push and the label alerts.

- :mod:`.schedule` — push times (:mod:`bot.push_spec`) as APScheduler cron triggers in a channel's
  time zone, and the fire times between two instants;
- :mod:`.push` — the digest of the week that just ended, exactly once per
  (channel, repository, week), with catch-up after downtime;
- :mod:`.alerts` — one short card per (subscriber, matching PR), exactly once;
- :mod:`.jobs` — the ``AsyncIOScheduler`` that ``prhub serve`` runs.

APScheduler only decides *when*; exactly once comes from the claims in Redis (:mod:`bot.claims`),
so replicas, restarts and manual runs agree. Messages go out through the deliverers of
:mod:`bot.delivery`, the same ones the chat replies use. Everything here is built by :mod:`bot.app`.
"""
