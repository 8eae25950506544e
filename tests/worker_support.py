"""`prhub worker` processes for tests and benchmarks: started with the settings' Redis, queue and model
in their environment, waited for until their heartbeat is in Redis, stopped (SIGTERM) or killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bot.config import Settings
from bot.jobs.queue import JobQueue

ROOT = Path(__file__).resolve().parents[1]


def worker_env(settings: Settings, *, config: Path | None = None) -> dict[str, str]:
    """The environment of a worker that runs ``settings``' jobs (model, Redis, queue, limits)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRHUB_")}
    env.update({
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PRHUB_REDIS_URL": settings.redis_url, "PRHUB_REDIS_KEY_PREFIX": settings.redis_key_prefix,
        "PRHUB_JOBS_QUEUE": settings.jobs_queue, "PRHUB_LLM_MODEL": settings.llm_model or "",
        "PRHUB_LLM_API_BASE": settings.llm_api_base or "",
        "PRHUB_LLM_API_KEY": settings.llm_api_key.get_secret_value() if settings.llm_api_key else "",
        "PRHUB_LLM_TIMEOUT_S": str(settings.llm_timeout_s), "PRHUB_LLM_MAX_RETRIES": str(settings.llm_max_retries),
        "PRHUB_LLM_CONCURRENCY": str(settings.llm_concurrency),
        "PRHUB_JOBS_HEARTBEAT_TIMEOUT_S": str(settings.jobs_heartbeat_timeout_s),
        "PRHUB_JOBS_MAX_RETRIES": str(settings.jobs_max_retries),
        "PRHUB_JOBS_MAINTENANCE_CHANCE": str(settings.jobs_maintenance_chance),
        "PRHUB_CONFIG": str(config or ROOT / "prhub.toml"),
    })
    return env


class WorkerProcess:
    """One ``prhub worker`` subprocess (its output goes to ``log``)."""

    def __init__(self, settings: Settings, *, concurrency: int = 4, log: Path | None = None,
                 config: Path | None = None) -> None:
        self._log = open(log, "w") if log is not None else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "prhub"), "worker", "--concurrency", str(concurrency)],
            env=worker_env(settings, config=config), cwd=ROOT, stdout=self._log, stderr=self._log)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, timeout_s: float = 30.0) -> int:
        """SIGTERM, then wait (SIGKILL after ``timeout_s``); the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not subprocess.DEVNULL:
            self._log.close()  # type: ignore[union-attr]
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL: the worker dies in the middle of its jobs."""
        self.process.kill()
        self.process.wait()


def wait_alive(queue: JobQueue, pids: set[int], timeout_s: float = 60.0) -> None:
    """Wait until a worker heartbeat of every pid in ``pids`` is in Redis."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pids <= {b.pid for b in queue.workers()}:
            return
        time.sleep(0.2)
    raise AssertionError(f"workers {sorted(pids)} did not beat within {timeout_s} s")
