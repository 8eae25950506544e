"""What each command line run imports (issue 11): a fresh interpreter per case, ``sys.modules`` read at
its end. The guard is on modules loaded, not on seconds (timings are bench/bench_cli.py's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from typing import get_args

import pytest
from conftest import EXAMPLE, ROOT
from fakes.llm_server import FakeLLMServer
from redis_support import REDIS_URL, redis_sync_client

from bot.commands.common import Lang
from bot.models import Language

# Runs `prhub ARGS` inside this interpreter (as the console script does), then prints the top-level
# packages and the bot modules that were imported, as JSON on stderr's last line.
_PROBE = """
import json, sys
from bot.cli import app
try:
    app(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(sys.modules)
print(json.dumps({"code": code, "modules": loaded}), file=sys.stderr)
"""

PLATFORM_AND_SERVICE = {"slack_sdk", "slack_bolt", "lark_oapi", "aiohttp", "apscheduler", "starlette", "uvicorn",
                        "redis", "httpx", "litellm", "openai", "tiktoken", "matplotlib", "PIL", "playwright"}
"""Never needed to print help or a heuristic digest from a snapshot."""


def _loaded(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    result = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=ROOT, capture_output=True, text=True,
                            env=env or _env(), timeout=300)
    report = json.loads(result.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), result.stderr
    return set(report["modules"])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRHUB_")}
    return {**env, "PRHUB_CONFIG": str(ROOT / "prhub.toml"), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_lang_option_is_the_models_language() -> None:
    assert get_args(Lang) == get_args(Language)


@pytest.mark.parametrize("args", [["--help"], ["digest", "--help"], ["subscriptions", "--help"]])
def test_help_imports_no_settings_models_or_services(args: list[str]) -> None:
    modules = _loaded(args)
    heavy = PLATFORM_AND_SERVICE | {"pydantic_settings", "jinja2", "asyncio", "wcmatch"}
    if args == ["--help"]:
        heavy.add("pydantic")  # a command's own help may load typer's pydantic adapters; the list of commands not
    assert _top(modules) & heavy == set()
    ours = {m for m in modules if m.startswith("bot.") and not m.startswith("bot.commands.")}
    assert ours <= {"bot.cli", "bot.commands", "bot.errors"}


def test_heuristic_digest_imports_no_platform_cache_or_model_library() -> None:
    modules = _loaded(["digest", "--source", f"jsonl:{EXAMPLE}", "--repo", "verl-project/verl", "--week", "2026-W16"])
    assert "bot.digest.service" in modules  # it did build the digest
    assert _top(modules) & (PLATFORM_AND_SERVICE | {"jinja2"}) == set()
    assert modules & {"bot.filters", "bot.subscriptions", "bot.delivery", "bot.sources.github", "bot.digest.llm",
                      "bot.cards.charts", "bot.cards.html"} == set()


def test_cached_llm_rerun_imports_no_litellm() -> None:
    client = redis_sync_client()
    prefix = f"test-imports-{uuid.uuid4().hex[:8]}:"
    args = ["digest", "--source", f"jsonl:{EXAMPLE}", "--repo", "verl-project/verl", "--week", "2026-W16"]
    try:
        with FakeLLMServer() as fake:
            env = _env(PRHUB_LLM_MODEL="openai/fake-model", PRHUB_LLM_API_BASE=fake.base_url,
                       PRHUB_LLM_API_KEY="test-key", PRHUB_REDIS_URL=REDIS_URL,
                       PRHUB_REDIS_KEY_PREFIX=prefix)
            cold = _loaded(args, env)
            asked = len(fake.requests)
            fake.reset()
            warm = _loaded(args, env)
            assert asked == 40  # 39 analyses and the narrative
            assert not fake.requests  # then all from the cache
    finally:
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
        client.close()
    assert {"litellm", "openai"} <= _top(cold)
    assert _top(warm) & {"litellm", "openai", "tiktoken", "aiohttp", "jinja2"} == set()  # no prompt rendered
    assert "bot.digest.llm" in warm  # the LLM runtime was built; only the provider library stayed unloaded
