"""Settings: defaults with no file, the TOML layout of the docs, env overrides and clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

from bot.config import DEFAULT_PR_URL_TEMPLATE, load_settings
from bot.errors import ConfigError


def test_defaults_without_any_file(no_config: Path) -> None:
    settings = load_settings()
    assert settings.timezone == "Asia/Shanghai"
    assert settings.language == "zh"
    repo = settings.repo("any/repo")
    assert repo.key_pr_bar == 6
    assert repo.pr_url("any/repo", 7) == "https://github.com/any/repo/pull/7"
    assert {r.label for r in repo.label_rules} >= {"doc", "ci", "docker", "npu"}
    assert repo.aliases["ascend"] == "npu"


def test_reference_example_is_valid(no_config: Path) -> None:
    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", reference, re.DOTALL) if "[repositories." in b)
    (no_config / "prhub.toml").write_text(block, encoding="utf-8")
    repo = load_settings().repo("owner/name")
    assert repo.pr_url("owner/name", 3) == "https://gitlab.example.com/owner/name/-/merge_requests/3"
    assert repo.label_min_share == 0.25
    assert any(r.label == "fully_async" for r in repo.label_rules)
    assert load_settings().repo("other/repo").pr_url_template == DEFAULT_PR_URL_TEMPLATE


def test_environment_and_arguments_override_the_file(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (no_config / "prhub.toml").write_text('timezone = "UTC"\nlanguage = "en"\n', encoding="utf-8")
    assert load_settings().timezone == "UTC"
    monkeypatch.setenv("PRHUB_TIMEZONE", "Europe/London")
    assert load_settings().timezone == "Europe/London"
    assert load_settings(timezone="America/New_York").timezone == "America/New_York"
    assert load_settings(timezone=None).language == "en"


def test_missing_explicit_file(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRHUB_CONFIG", str(no_config / "nope.toml"))
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings()


def test_invalid_toml_and_bad_values_are_named(no_config: Path) -> None:
    path = no_config / "prhub.toml"
    path.write_text("timezone = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings()
    path.write_text('[repositories."o/r"]\nkey_pr_bar = 11\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r'prhub\.toml:2: repositories\."o/r"\.key_pr_bar: input should be less'):
        load_settings()
    path.write_text('[repositories."o/r"]\nkey_pr_barr = 5\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="key_pr_barr"):
        load_settings()


def test_error_names_the_environment_variable(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRHUB_LANGUAGE", "fr")
    with pytest.raises(ConfigError, match=r"invalid setting language \(from PRHUB_LANGUAGE\)"):
        load_settings()


def test_repository_lookup_ignores_case(no_config: Path) -> None:
    (no_config / "prhub.toml").write_text('[repositories."Owner/Name"]\nkey_pr_bar = 8\n', encoding="utf-8")
    assert load_settings().repo("owner/name ").key_pr_bar == 8


SUBSCRIPTIONS_TOML = '''
default_repo = "verl-project/verl"
bots = ["verl-ci-bot"]
admins = ["slack:U0ADMIN"]
alerts_batch_s = 300
quiet_hours = "22:00-08:00"
personal_digest_at = "fri 17:30"

[repositories."verl-project/verl"]
bots = ["release-robot"]

[channels."slack:C0OPEN"]
admins = []
quiet_hours = "off"

[[subscriptions]]
subscriber = "slack:C0TEAM"
filter = "path:verl/trainer/** -label:ci"

[[subscriptions]]
subscriber = "feishu-webhook:team"
repo = "other/repo"
filter = "ascend importance>=6"
'''


def test_subscriptions_bots_admins_and_quiet_hours_read_from_the_file(no_config: Path) -> None:
    from bot.filters import is_bot, parse_filter
    from bot.subscriptions import Subscriber, Subscriptions

    (no_config / "prhub.toml").write_text(SUBSCRIPTIONS_TOML, encoding="utf-8")
    settings = load_settings()
    assert (settings.alerts_batch_s, settings.quiet_hours, settings.personal_digest_at) == (300, "22:00-08:00",
                                                                                              "fri 17:30")
    bots = settings.bots_of("verl-project/verl")
    assert is_bot("verl-ci-bot", bots)
    assert is_bot("release-robot", bots)
    assert is_bot("renovate", bots)  # the built-in ones stay
    assert not is_bot("release-robot", settings.bots_of("other/repo"))
    assert settings.channel("slack:C0TEAM").admins == ("slack:U0ADMIN",)
    assert settings.channel("slack:C0OPEN").admins == ()  # every member may
    assert settings.channel("slack:C0OPEN").quiet_hours == "off"
    import asyncio

    from bot.store import MemoryStore

    found = asyncio.run(Subscriptions(MemoryStore(), settings).all())
    assert {who: [(s.repo, s.filter.text(), s.from_config) for s in subs] for who, subs in found.items()} == {
        Subscriber("feishu-webhook", "team"): [("other/repo", "label:npu importance>=6", True)],  # the alias applies
        Subscriber("slack", "C0TEAM"): [("verl-project/verl", parse_filter("path:verl/trainer/** -ci").text(), True)],
    }


@pytest.mark.parametrize(("toml", "message"), [
    ('[[subscriptions]]\nsubscriber = "slack:C1"\nrepo = "o/r"\nfilter = "flavour:npu"\n',
     r"prhub\.toml:4: subscriptions\[0\]\.filter: .*unknown filter key flavour:.*known keys: label"),
    ('[[subscriptions]]\nsubscriber = "slack:C1"\nrepo = "o/r"\nfilter = "importance>=12"\n',
     r"importance takes a number 1-10"),
    ('[[subscriptions]]\nsubscriber = "slack:C1"\nfilter = "npu"\n', r"no repo, and the subscriber has no bound"),
    ('[[subscriptions]]\nsubscriber = "teams:C1"\nrepo = "o/r"\n', r"expected slack:C…"),
    ('quiet_hours = "late"\n', r"quiet hours 'late': expected HH:MM-HH:MM"),
    ('personal_digest_at = "1 09:00"\n', r"prhub\.toml:1: personal_digest_at: .*expected \"mon 10:00\""),
])
def test_a_bad_subscription_setting_is_a_config_error_naming_it(no_config: Path, toml: str, message: str) -> None:
    (no_config / "prhub.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings()


def test_the_operator_guide_subscriptions_example_is_valid(no_config: Path) -> None:
    guide = (ROOT / "docs" / "operator-guide.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", guide, re.DOTALL) if "[[subscriptions]]" in b)
    (no_config / "prhub.toml").write_text(block, encoding="utf-8")
    settings = load_settings()
    assert settings.subscriptions[0].filter == "path:verl/trainer/** -label:ci"
    assert settings.channel("slack:C0123456789").admins == ("U0123ABCD",)
    assert settings.channel("slack:C0OTHER").admins == ("slack:U0123ABCD",)
