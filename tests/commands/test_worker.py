"""`prhub worker`: refuses without a model or Redis, runs until SIGTERM, and `--status` reports it."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer
from llm_support import llm_settings
from redis_support import REDIS_URL
from typer.testing import CliRunner
from worker_support import WorkerProcess, wait_alive, worker_env

from bot.cli import app
from bot.config import Settings, load_settings
from bot.jobs.queue import JobQueue

PRHUB = str(Path(sys.executable).parent / "prhub")


@pytest.fixture
def settings(no_config: Path) -> Iterator[Settings]:
    with FakeLLMServer() as fake:
        yield llm_settings(load_settings(), fake.base_url, redis_url=REDIS_URL,
                           redis_key_prefix=f"test-worker-{uuid.uuid4().hex[:10]}:",
                           jobs_queue=f"q{uuid.uuid4().hex[:10]}")


def test_without_a_model_it_says_what_to_set(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRHUB_LLM_MODEL", raising=False)
    result = CliRunner().invoke(app, ["worker"])
    assert result.exit_code == 1
    assert "set PRHUB_LLM_MODEL" in result.output


def test_without_redis_it_says_so(settings: Settings) -> None:
    env = worker_env(settings) | {"PRHUB_REDIS_URL": "redis://127.0.0.1:1/0"}
    done = subprocess.run([PRHUB, "worker"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("错误：worker 需要 PRHUB_REDIS_URL 上的 Redis（")  # the settings' language
    assert done.stderr.count("\n") == 1


def test_it_runs_beats_and_stops_on_sigterm(settings: Settings, tmp_path: Path) -> None:
    queue = JobQueue(settings)
    log = tmp_path / "worker.log"
    worker = WorkerProcess(settings, concurrency=3, log=log)
    try:
        wait_alive(queue, {worker.pid})
        [beat] = queue.workers()
        assert (beat.concurrency, beat.queue) == (3, settings.jobs_queue)
        status = subprocess.run([PRHUB, "worker", "--status"], env=worker_env(settings), capture_output=True,
                                text=True, timeout=60)
        assert status.returncode == 0
        assert beat.id in status.stdout
        assert "3 at once" in status.stdout
    finally:
        assert worker.stop() == 0
    assert queue.workers() == []
    text = log.read_text()
    assert f"prhub worker {beat.id}: 3 at once on queue {settings.jobs_queue}" in text
    assert "stopped: 0 analysed" in text
    gone = subprocess.run([PRHUB, "worker", "--status"], env=worker_env(settings), capture_output=True, text=True,
                          timeout=60)
    assert gone.returncode == 1
    assert "no worker alive" in gone.stdout
    queue.close()
