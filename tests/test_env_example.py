""".env.example holds every setting of bot/config.py (under the name the environment uses), grouped and commented,
and docker-compose.yml is a file compose can run: `docker compose config` needs the compose plugin, which this
machine lacks (and no engine runs here), so the file's structure is checked here instead."""

from __future__ import annotations

import re

import yaml
from conftest import ROOT
from pydantic import AliasChoices

from bot.config import Settings

TOML_ONLY = {"channels", "repositories", "defaults", "subscriptions", "feishu_webhooks", "concepts"}
"""Tables of prhub.toml: a channel's binding, a repository's rules, the config's subscriptions and webhooks, the
concepts people ask about."""
OTHER_VARIABLES = {"PRHUB_CONFIG", "PRHUB_CHROMIUM"}
"""Read outside Settings: the config file's path (bot/config.py) and the browser of --format pdf (bot/cards/pdf.py)."""


def env_names(name: str) -> list[str]:
    """The environment variables that set field ``name``: its upper-case aliases, else ``PRHUB_<NAME>``."""
    alias = Settings.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices if str(choice).isupper()]
    return [f"PRHUB_{name.upper()}"]


def listed() -> set[str]:
    """The variable names of .env.example, set (``NAME=``) or commented out (``# NAME=``)."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    return set(re.findall(r"^(?:# )?([A-Z][A-Z0-9_]+)=", text, flags=re.M))


def test_every_setting_is_in_env_example() -> None:
    names = listed()
    missing = [f"{field} ({' or '.join(env_names(field))})" for field in Settings.model_fields
               if field not in TOML_ONLY and not set(env_names(field)) & names]
    assert missing == [], f".env.example lacks: {', '.join(missing)}"
    assert names >= OTHER_VARIABLES
    known = {n for field in Settings.model_fields for n in env_names(field)} | OTHER_VARIABLES
    assert names - known == set(), "names .env.example sets that prhub does not read"


def test_env_example_is_grouped_and_every_group_is_explained() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    groups = re.findall(r"^# --- (\d+)\. (.+?) -+$", text, flags=re.M)
    assert [int(n) for n, _ in groups] == list(range(1, len(groups) + 1))
    assert len(groups) >= 8
    for block in re.split(r"^# --- \d+\. .+$", text, flags=re.M)[1:]:
        assert block.strip().splitlines(), "an empty group"
    # what a newcomer fills in first, uncommented: a platform and a repository
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "FEISHU_APP_ID", "FEISHU_APP_SECRET", "PRHUB_DEFAULT_REPO",
                 "GITHUB_TOKEN"):
        assert re.search(rf"^{name}=$", text, flags=re.M), name


def test_compose_file_is_what_compose_can_run() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert set(compose) <= {"services", "volumes", "networks", "configs", "secrets", "name"}
    services = compose["services"]
    assert set(services) == {"bot", "worker", "redis"}
    declared = set(compose["volumes"])
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in declared, f"{name} mounts the undeclared volume {source}"
            else:
                assert (ROOT / source).exists(), f"{name} mounts {source}, which is not in the repository"
        for dependency, condition in (service.get("depends_on") or {}).items():
            assert dependency in services
            assert condition["condition"] in ("service_started", "service_healthy", "service_completed_successfully")
        restart = service.get("restart", "no")
        assert re.fullmatch(r"no|always|unless-stopped|on-failure(:\d+)?", restart), restart
        for entry in service.get("env_file", []):
            assert entry == {"path": ".env", "required": False}  # .env is optional: no .env, one clear line
        for key, value in (service.get("environment") or {}).items():
            assert isinstance(value, str), f"{name}: {key} must be a string in compose"
    bot, worker = services["bot"], services["worker"]
    assert bot["restart"].startswith("on-failure:")
    assert worker["restart"].startswith("on-failure:")
    assert bot["environment"]["PRHUB_GIT_CLONES_DIR"] == "/app/clones"
    assert "clones:/app/clones" in bot["volumes"]
    assert "/healthz" in " ".join(bot["healthcheck"]["test"])
    assert bot["ports"] == ["3000:3000"]
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "chown prhub:prhub /app/clones" in dockerfile  # the volume is writable by the bot's user
