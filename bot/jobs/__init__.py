"""Analysis jobs: the queue on the bot's Redis and the workers that run them (``prhub worker``).

==================  ===============================================================================
:mod:`.queue`       :class:`~.queue.JobQueue` (Dramatiq's Redis broker; job id = the analysis cache
                    key; the workers' heartbeats) and :class:`~.queue.QueueAnalyzer`, the analyzer the
                    digest service uses while a worker is alive
:mod:`.worker`      :class:`~.worker.AnalysisWorker`: a Dramatiq worker running the LLM analyzer
==================  ===============================================================================

Why Dramatiq (docs/operator-guide.md "Scale out"): its Redis broker installs beside the project's redis 8 pin
(``redis<9``), keeps fetched jobs in a per-worker ack set that a dead worker's heartbeat releases back
to the queue, retries with backoff and time limits as middleware, and takes our own message id.
"""
