"""The help's examples: each works as written, and the nearest are those most like what was asked."""

from __future__ import annotations

import pytest

from bot.understand import understand
from bot.understand.examples import EXAMPLES, nearest_examples

KIND_OF = {"digest": "DigestIntent", "pr": "PRIntent", "what": "PRIntent", "compare": "CompareIntent",
           "label": "LabelIntent", "merged": "MergedIntent", "authors": "MergedIntent", "question": "QuestionIntent",
           "subscribe": "SubscribeIntent", "unsubscribe": "UnsubscribeIntent",
           "subscriptions": "ListSubscriptionsIntent", "github": "LinkGitHubIntent",
           "mydigest": "PersonalDigestIntent"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.en for e in EXAMPLES])
def test_every_example_is_understood_as_its_kind_in_both_languages(example: object) -> None:
    for text in (example.zh, example.en):  # type: ignore[attr-defined]
        assert type(understand(text)).__name__ == KIND_OF[example.kind], text  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("asked", "language", "first"),
    [
        ("周报呢", "zh", "上周周报"),
        ("weekly thing?", "en", "last week's digest"),
        ("对比两个PR", "zh", "#6046 和 #6029 哪个更值得读"),
        ("compare them", "en", "compare #6046 and #6029"),
        ("订阅", "zh", "我订阅了什么"),
        ("上周的 trainer", "zh", "上周 trainer 有哪些重点 PR"),
        ("rollout 配置", "zh", "上周哪些 PR 改了 rollout 的配置？"),
        ("which PR changed docker?", "en", "which PRs touched rollout config last week?"),
        ("npu", "zh", "npu 标签 W16"),
        ("退订", "zh", "取消订阅 npu"),
        ("个人周报", "zh", "每周给我发我的周报"),
        ("github", "en", "my GitHub is alice"),
    ],
)
def test_the_nearest_example_is_the_one_most_like_the_message(asked: str, language: str, first: str) -> None:
    assert nearest_examples(asked, language)[0] == first  # type: ignore[arg-type]


def test_nothing_similar_gives_the_most_asked_for_and_results_are_stable() -> None:
    assert nearest_examples("😀😀", "zh") == tuple(e.zh for e in EXAMPLES[:3])
    assert nearest_examples("", "en", k=2) == (EXAMPLES[0].en, EXAMPLES[1].en)
    assert nearest_examples("对比两个PR", "zh") == nearest_examples("对比两个PR", "zh")
    assert len(set(nearest_examples("周报", "zh", k=5))) == 5
    assert len(nearest_examples("x" * 50_000, "en")) == 3
