"""GitHub App authentication against the fake GitHub: a JWT signed with a test key, the installation token
exchanged, carried by every request, and exchanged again before it expires."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fakes.github_server import FakeGitHub, serve
from pydantic import SecretStr

from bot.config import Settings
from bot.digest.window import week_window
from bot.errors import ConfigError, GitHubError
from bot.models import PullRequest
from bot.sources.base import open_source
from bot.sources.github_app import JWT_LIFETIME_S, REFRESH_BEFORE_S, GitHubApp, read_private_key

APP_ID = "123456"
W16 = week_window(2026, 16, "Asia/Shanghai")


def pem_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


KEY, PUBLIC = pem_pair()
OTHER_KEY, _ = pem_pair()


class Clock:
    """Epoch seconds, starting at the real time (so the real clock of a source sees the same expiry)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake(all_prs: list[PullRequest], clock: Clock) -> Iterator[FakeGitHub]:
    server = FakeGitHub([p for p in all_prs if W16.start <= p.merged_at < W16.end], token="a-person's-token")
    server.enable_app(APP_ID, PUBLIC, token_ttl_s=3600, clock=clock)
    with serve(server):
        yield server


def authorizations(fake: FakeGitHub) -> list[str]:
    return [e["token"] for e in fake.exchanges]


def test_the_source_reads_as_the_installation(fake: FakeGitHub, verl_settings: Settings, tmp_path: Path) -> None:
    key_file = tmp_path / "app.pem"
    key_file.write_text(KEY)
    settings = verl_settings.model_copy(update={
        "github_app_id": APP_ID, "github_app_private_key": SecretStr(str(key_file)),
        "github_api_url": fake.base_url, "github_token": None})
    source = open_source("github", settings=settings)
    try:
        assert source.authenticated  # type: ignore[attr-defined]
        prs = source.merged_prs("verl-project/verl", W16)  # GraphQL search: needs authentication
        assert len(prs) == 39
        assert len(fake.exchanges) == 1  # one installation token for every request
        claims = fake.exchanges[0]["claims"]
        assert claims["iss"] == APP_ID
        assert claims["exp"] - claims["iat"] == JWT_LIFETIME_S + 60
        assert any(path == "/graphql" and status == 200 for _, path, status in fake.log)
    finally:
        source.close()  # type: ignore[attr-defined]


def test_the_token_is_exchanged_again_before_it_expires(fake: FakeGitHub, clock: Clock) -> None:
    app = GitHubApp(app_id=APP_ID, private_key=KEY, api_url=fake.base_url, clock=clock)
    try:
        first = app.token()
        assert first == "ghs_fake0001"
        assert app.installation_id == 4242  # the app's only installation, looked up once
        clock.now += 3600 - REFRESH_BEFORE_S - 1
        assert app.token() == first  # still more than five minutes left
        clock.now += 2
        second = app.token()
        assert second == "ghs_fake0002"
        assert authorizations(fake) == [first, second]
        assert [p for _, p, _ in fake.log].count("/app/installations") == 1
        # the new token opens the API; the old one, once expired, does not
        clock.now += REFRESH_BEFORE_S + 1
        assert fake.issued[first] < clock.now < fake.issued[second]
    finally:
        app.close()


def test_a_jwt_signed_with_another_key_is_refused_with_what_to_check(fake: FakeGitHub, clock: Clock) -> None:
    app = GitHubApp(app_id=APP_ID, private_key=OTHER_KEY, api_url=fake.base_url, clock=clock)
    try:
        with pytest.raises(GitHubError, match="PRHUB_GITHUB_APP_ID and PRHUB_GITHUB_APP_PRIVATE_KEY"):
            app.token()
        assert fake.exchanges == []
    finally:
        app.close()


def test_an_unknown_installation_says_so(fake: FakeGitHub, clock: Clock) -> None:
    app = GitHubApp(app_id=APP_ID, private_key=KEY, api_url=fake.base_url, installation_id=7, clock=clock)
    try:
        with pytest.raises(GitHubError, match="no installation 7"):
            app.token()
    finally:
        app.close()


def test_the_jwt_is_rs256_with_the_app_as_issuer(clock: Clock) -> None:
    app = GitHubApp(app_id=APP_ID, private_key=KEY, clock=clock)
    app.close()
    claims = jwt.decode(app.jwt(), PUBLIC, algorithms=["RS256"], options={"verify_exp": False})
    assert claims == {"iss": APP_ID, "iat": int(clock.now) - 60, "exp": int(clock.now) + JWT_LIFETIME_S}


def test_a_private_key_setting_that_is_no_key_is_a_config_error(tmp_path: Path) -> None:
    assert read_private_key(KEY) == KEY.strip()
    with pytest.raises(ConfigError, match="neither a PEM key nor a readable file"):
        read_private_key(str(tmp_path / "missing.pem"))
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ConfigError, match="does not hold a PEM private key"):
        read_private_key(str(tmp_path / "notes.txt"))
    broken = GitHubApp(app_id=APP_ID, private_key="-----BEGIN RSA PRIVATE KEY-----\nAA\n-----END RSA PRIVATE KEY-----")
    broken.close()
    with pytest.raises(ConfigError, match="cannot sign"):
        broken.jwt()
