"""Fixtures of the command tests: the fake Slack Web API on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes.slack_api import FakeSlack, serve


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake
