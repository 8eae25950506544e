"""Signed, expiring links to digest pages (itsdangerous), so a private repository's report
cannot be read by guessing a URL.

A link is ``{public_url}/pages/{token}``; the token is the page id signed with HMAC-SHA256 under
the key ``PRHUB_PAGE_SECRET`` and a timestamp (:class:`itsdangerous.URLSafeTimedSerializer`),
valid for ``PRHUB_PAGE_LINK_TTL_S`` seconds (default 30 days). Links signed before with HMAC-SHA1
(itsdangerous' default, used until issue 30) still verify until they expire. :meth:`PageLinks.page_id` gives
the id back, or raises :class:`BadLink` (``reason`` ``unsigned``, ``tampered`` or ``expired``).

Settings (fields of :class:`bot.config.Settings`, from the environment like every ``PRHUB_*`` one):

===========================  =========================================================  ==========
``PRHUB_PAGE_SECRET``        the signing key (any long random string; keep it secret,    required
                             rotate it to revoke every link)
``PRHUB_PAGE_LINK_TTL_S``    how long a link works, seconds                              2592000
``PRHUB_PUBLIC_URL``         the bot's public base URL, e.g. ``https://prhub.example``   none
===========================  =========================================================  ==========
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from bot.config import Settings, load_settings
from bot.errors import ConfigError

__all__ = ["DEFAULT_TTL_S", "BadLink", "PageLinks"]

DEFAULT_TTL_S = 30 * 24 * 3600
"""Links work for 30 days unless ``PRHUB_PAGE_LINK_TTL_S`` says otherwise."""
_SALT = "prhub.digest-page"
MIN_SECRET = 16


class BadLink(Exception):
    """A page link that must be refused; ``reason`` is ``unsigned``, ``tampered`` or ``expired``."""

    def __init__(self, reason: Literal["unsigned", "tampered", "expired"]) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PageLinks:
    """Signs page ids into link tokens and checks them.

    Args:
        secret: the signing key (at least :data:`MIN_SECRET` characters).
        ttl_s: seconds a token stays valid after signing.
        public_url: base of the links :meth:`url` makes (``None``: :meth:`url` refuses).
    """

    secret: str
    ttl_s: int = DEFAULT_TTL_S
    public_url: str | None = None

    def __post_init__(self) -> None:
        if len(self.secret) < MIN_SECRET:
            raise ConfigError(f"PRHUB_PAGE_SECRET must be at least {MIN_SECRET} characters long")

    @classmethod
    def from_env(cls, settings: Settings | None = None) -> PageLinks:
        """The signer ``settings`` configure (default: :func:`bot.config.load_settings`, i.e. the
        environment and the config file).

        Raises:
            ConfigError: ``PRHUB_PAGE_SECRET`` is not set or too short.
        """
        conf = settings if settings is not None else load_settings()
        if conf.page_secret is None or not conf.page_secret.get_secret_value().strip():
            raise ConfigError("PRHUB_PAGE_SECRET is not set: page links are signed with it (any long random string)")
        return cls(conf.page_secret.get_secret_value(), conf.page_link_ttl_s, conf.public_url)

    def _serializer(self) -> URLSafeTimedSerializer:
        # signed with HMAC-SHA256; links signed before with itsdangerous' default (HMAC-SHA1) still verify
        # until they expire (a fallback signer, checked only after SHA-256 fails)
        return URLSafeTimedSerializer(self.secret, salt=_SALT, signer_kwargs={"digest_method": hashlib.sha256},
                                      fallback_signers=[{"digest_method": hashlib.sha1}])

    def token(self, page_id: str) -> str:
        """The signed, timestamped token of ``page_id`` (URL-safe)."""
        return str(self._serializer().dumps(page_id))

    def path(self, page_id: str) -> str:
        """``/pages/{token}`` — the route of :mod:`bot.web.pages`."""
        return f"/pages/{self.token(page_id)}"

    def url(self, page_id: str) -> str:
        """``{public_url}/pages/{token}``.

        Raises:
            ConfigError: no ``PRHUB_PUBLIC_URL``.
        """
        if not self.public_url:
            raise ConfigError("PRHUB_PUBLIC_URL is not set: links to pages need the bot's public address")
        return self.public_url.rstrip("/") + self.path(page_id)

    def page_id(self, token: str) -> str:
        """The page id a token was signed for.

        Raises:
            BadLink: ``unsigned`` (no signature part), ``tampered`` (the signature does not match
                this key), or ``expired`` (older than ``ttl_s``).
        """
        if token.count(".") < 2:  # payload.timestamp.signature (a compressed payload adds a leading ".")
            raise BadLink("unsigned")
        try:
            value = self._serializer().loads(token, max_age=self.ttl_s)
        except SignatureExpired as exc:
            raise BadLink("expired") from exc
        except BadSignature as exc:
            raise BadLink("tampered") from exc
        if not isinstance(value, str):
            raise BadLink("tampered")
        return value
