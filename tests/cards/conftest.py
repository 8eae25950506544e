"""Fixtures of hand-built digests (see ``card_digests.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.models import Digest
from cards.card_digests import make_digest


@pytest.fixture
def digest_factory() -> Callable[..., Digest]:
    """``make_digest`` itself, for tests that need their own variant."""
    return make_digest


@pytest.fixture
def realistic_digest() -> Digest:
    """40 PRs, zh, two pending."""
    return make_digest(n_prs=40, pending=(7, 23))


@pytest.fixture
def empty_digest() -> Digest:
    """No PR at all."""
    return make_digest(n_prs=0)


@pytest.fixture
def huge_digest() -> Digest:
    """120 PRs, 30 labels, very long texts (CJK, emoji, entities)."""
    return make_digest(n_prs=120, long_text=20_000, n_labels=30, pending=(3, 50, 99))


@pytest.fixture
def pending_digest() -> Digest:
    """12 PRs of which 5 have no analysis yet."""
    return make_digest(n_prs=12, pending=(0, 2, 4, 6, 8))


@pytest.fixture
def hostile_digest() -> Digest:
    """PR texts trying to mention, inject tags and break tables."""
    return make_digest(n_prs=20, hostile=True, pending=(5,))
