"""GitHub App authentication: the app's id and private key -> an installation access token, kept fresh.

An organisation installs the app on its repositories; the bot then reads them as the installation, not as
a person. :class:`GitHubApp` (``PRHUB_GITHUB_APP_ID`` + ``PRHUB_GITHUB_APP_PRIVATE_KEY``):

1. signs a JWT with the private key (RS256, PyJWT): ``iss`` the app id, ``iat`` 60 s in the past (clock
   drift), ``exp`` 9 minutes on (GitHub allows 10);
2. finds the installation: ``PRHUB_GITHUB_APP_INSTALLATION_ID``, else ``GET /app/installations`` when
   the app has exactly one;
3. exchanges the JWT for an installation token: ``POST /app/installations/{id}/access_tokens`` (201,
   ``{"token", "expires_at"}``, an hour);
4. hands out that token until :data:`REFRESH_BEFORE_S` before ``expires_at``, then exchanges again (one
   exchange at a time across threads).

:meth:`GitHubApp.token` is what :class:`~bot.sources.github_http.GitHubHTTP` calls for each request's
``Authorization`` header. Errors are :class:`~bot.errors.GitHubError` with what to check (the key, the id,
the installation).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import jwt

from bot import __version__
from bot.errors import ConfigError, GitHubError

__all__ = ["JWT_LIFETIME_S", "REFRESH_BEFORE_S", "GitHubApp", "read_private_key"]

JWT_LIFETIME_S = 9 * 60
"""How long the app's JWT is valid (GitHub's limit is 10 minutes), seconds."""
REFRESH_BEFORE_S = 5 * 60
"""An installation token is exchanged again this long before it expires, seconds."""


def read_private_key(value: str) -> str:
    """The PEM text of ``value``: the text itself, or the contents of the file it names.

    Raises:
        ConfigError: neither a PEM private key nor a readable file holding one.
    """
    text = value.strip()
    if not text.startswith("-----BEGIN"):
        path = Path(text).expanduser()
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"PRHUB_GITHUB_APP_PRIVATE_KEY is neither a PEM key nor a readable file "
                              f"({exc.strerror})") from exc
    if not text.startswith("-----BEGIN") or "PRIVATE KEY-----" not in text:
        raise ConfigError("PRHUB_GITHUB_APP_PRIVATE_KEY does not hold a PEM private key "
                          "(-----BEGIN RSA PRIVATE KEY----- …, as GitHub downloads it)")
    return text


class GitHubApp:
    """Installation tokens of one GitHub App installation (see the module docstring).

    Args:
        app_id: the app's id (or client id), the JWT's ``iss``.
        private_key: the PEM text of the app's private key.
        api_url: the API root (GitHub Enterprise ``https://HOST/api/v3``; tests: the fake).
        installation_id: the installation; ``None``: the app's only one.
        client: the ``httpx.Client`` to send with (created when ``None``).
        clock: epoch seconds (tests move it to see the refresh).
    """

    def __init__(self, *, app_id: str, private_key: str, api_url: str = "https://api.github.com",
                 installation_id: int | None = None, client: httpx.Client | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.app_id = app_id
        self._key = private_key
        self.api_url = api_url.rstrip("/")
        self.installation_id = installation_id
        self._client = client or httpx.Client(timeout=30.0)
        self._own_client = client is None
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at = 0.0
        self.exchanges = 0

    def jwt(self) -> str:
        """A fresh JWT of the app (RS256).

        Raises:
            ConfigError: the private key cannot sign (not an RSA private key).
        """
        now = int(self._clock())
        claims = {"iat": now - 60, "exp": now + JWT_LIFETIME_S, "iss": self.app_id}
        try:
            return jwt.encode(claims, self._key, algorithm="RS256")
        except (ValueError, TypeError, jwt.PyJWTError) as exc:
            raise ConfigError(f"the GitHub App's private key cannot sign a JWT: {exc}") from exc

    def token(self) -> str:
        """An installation token valid for at least :data:`REFRESH_BEFORE_S` more seconds.

        Raises:
            GitHubError: GitHub refused the JWT (wrong app id or key), knows no such installation, or the
                app has several installations and none is configured.
        """
        with self._lock:
            if self._token is None or self._expires_at - self._clock() < REFRESH_BEFORE_S:
                self._token, self._expires_at = self._exchange()
            return self._token

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.jwt()}", "Accept": "application/vnd.github+json",
                "User-Agent": f"prhub/{__version__}", "X-GitHub-Api-Version": "2022-11-28"}

    def _send(self, method: str, path: str) -> Any:
        try:
            answer = self._client.request(method, f"{self.api_url}{path}", headers=self._headers())
        except httpx.HTTPError as exc:
            raise GitHubError(f"GitHub App authentication: GitHub could not be reached ({exc})") from exc
        if answer.status_code == 401:
            raise GitHubError("GitHub refused the app's JWT: check PRHUB_GITHUB_APP_ID and "
                              "PRHUB_GITHUB_APP_PRIVATE_KEY (and this machine's clock)")
        if answer.status_code == 404:
            which = f" {self.installation_id}" if self.installation_id is not None else ""
            raise GitHubError(f"the GitHub App {self.app_id} has no installation{which} (install it on the "
                              "organisation, or fix PRHUB_GITHUB_APP_INSTALLATION_ID)")
        if answer.status_code >= 400:
            raise GitHubError(f"GitHub App authentication failed: HTTP {answer.status_code}")
        return answer.json()

    def _installation(self) -> int:
        if self.installation_id is not None:
            return self.installation_id
        found = self._send("GET", "/app/installations")
        ids = [int(item["id"]) for item in found if isinstance(item, dict) and "id" in item]
        if len(ids) != 1:
            accounts = ", ".join(f"{item.get('id')} ({(item.get('account') or {}).get('login', '?')})"
                                 for item in found if isinstance(item, dict))
            raise GitHubError(f"the GitHub App {self.app_id} has {len(ids)} installations; set "
                              f"PRHUB_GITHUB_APP_INSTALLATION_ID to one of: {accounts or 'none'}")
        self.installation_id = ids[0]
        return ids[0]

    def _exchange(self) -> tuple[str, float]:
        installation = self._installation()
        body = self._send("POST", f"/app/installations/{installation}/access_tokens")
        try:
            token = str(body["token"])
            expires = datetime.fromisoformat(str(body["expires_at"]).replace("Z", "+00:00")).timestamp()
        except (KeyError, TypeError, ValueError) as exc:
            raise GitHubError("GitHub's installation token answer had no token or expiry") from exc
        self.exchanges += 1
        return token, expires

    def close(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._own_client:
            self._client.close()
