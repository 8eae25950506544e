"""Release questions (issue 29): which messages name a release and ask what it changed, or what came since it; and
none of the 518 messages of the phrasing corpus (written before releases were understood) is read as one."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bot.understand import DigestIntent, understand
from bot.understand.releases import release_request

CORPUS = Path(__file__).parent / "corpus"


@pytest.mark.parametrize(("said", "expected"), [
    ("v0.7.1 改了啥", ("release", "v0.7.1")),
    ("v0.7.1改了什么", ("release", "v0.7.1")),
    ("看下v0.7.1有啥变化", ("release", "v0.7.1")),
    ("v0.7.1 更新了什么内容", ("release", "v0.7.1")),
    ("v0.7.1 的发布说明", ("release", "v0.7.1")),
    ("what changed in v0.7.1?", ("release", "v0.7.1")),
    ("release notes for v2.0.0rc1", ("release", "v2.0.0rc1")),
    ("changelog v0.7.1", ("release", "v0.7.1")),
    ("since v0.7.0", ("since", "v0.7.0")),
    ("what's new since v0.7.0", ("since", "v0.7.0")),
    ("自 v0.7.0 以来有什么新东西", ("since", "v0.7.0")),
    ("从v0.7.0以来合并了啥", ("since", "v0.7.0")),
    ("v0.7.0 之后合并了哪些 PR", ("since", "v0.7.0")),
    ("bump veomni to v0.1.8 是哪个 PR", None),  # a tag without change words
    ("升级到 vllm 0.8.5 之后 rollout 变慢了吗", None),  # a bare version: a dependency's
    ("v0.7.1 发布了吗", None),
    ("digest since the last release", None),  # no tag: stays a clarification
])
def test_release_requests(said: str, expected: tuple[str, str] | None) -> None:
    assert release_request(said) == expected
    if expected is not None:
        intent = understand(said)
        assert isinstance(intent, DigestIntent)
        assert intent.week == f"{expected[0]}:{expected[1]}"


def test_no_message_of_the_corpus_reads_as_a_release_request() -> None:
    texts = [case["text"] for path in sorted(CORPUS.glob("*.toml"))
             for case in tomllib.loads(path.read_text(encoding="utf-8")).get("case", [])]
    assert len(texts) >= 500
    assert [t for t in texts if release_request(t) is not None] == []
