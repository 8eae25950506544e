"""The matcher on records made here (the shared data is pseudonymised: no bots, no real handles)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.codeowners import CodeOwners
from bot.errors import FilterError
from bot.filters import DEFAULT_BOTS, Candidate, Reason, explain, is_bot, match, parse_filter
from bot.models import Analysis, Coverage, DigestPR, FileChange, PullRequest, Recommendation, RecommendationLevel

REPO = "acme/rocket"
WHEN = datetime(2026, 4, 15, 10, 0, tzinfo=UTC)


def pr(number: int, *, title: str = "fix: something", author: str = "alice", paths: tuple[str, ...] = ("src/a.py",),
       labels: tuple[str, ...] = (), renamed_from: str | None = None) -> PullRequest:
    files = tuple(FileChange(path=p, status="renamed" if renamed_from and i == 0 else "modified", additions=3,
                             deletions=1, previous_path=renamed_from if i == 0 else None) for i, p in enumerate(paths))
    return PullRequest(repo=REPO, number=number, title=title, author=author, merged_at=WHEN, files=files,
                       labels=labels, additions=3 * len(files), deletions=len(files), changed_files=len(files))


def analysis(level: RecommendationLevel = "skim", *, importance: int = 5, insight: int = 5,
             minutes: int = 10) -> Analysis:
    return Analysis(summary="s", change_type="fix", importance=importance, insight=insight,
                    recommendation=Recommendation(level=level, minutes=minutes, reason="r"),
                    coverage=Coverage(files_seen=1, files_total=1, lines_seen=4, lines_total=4), status="heuristic")


def candidate(record: PullRequest, labels: tuple[str, ...] = ("other",), result: Analysis | None = None) -> Candidate:
    item = DigestPR(number=record.number, title=record.title, url=f"https://x/{record.number}", author=record.author,
                    labels=labels, merged_at=record.merged_at, additions=record.additions,
                    deletions=record.deletions, changed_files=record.changed_files, analysis=result)
    return Candidate.of(record, item)


def test_labels_any_of_and_exclusions_win() -> None:
    flt = parse_filter("npu rollout -ci")
    assert match(flt, candidate(pr(1), ("npu",)))
    assert match(flt, candidate(pr(2), ("rollout", "trainer")))
    assert not match(flt, candidate(pr(3), ("trainer",)))
    rejected = match(flt, candidate(pr(4), ("npu", "ci")))
    assert not rejected
    assert rejected.excluded_by == Reason("label", "ci", "ci")
    assert explain(rejected, "zh") == "排除 标签 ci"


def test_keys_must_all_hold_and_say_why() -> None:
    flt = parse_filter("label:npu path:verl/trainer/** importance>=6")
    record = pr(5, paths=("docs/x.md", "verl/trainer/ppo.py"))
    result = match(flt, candidate(record, ("npu",), analysis(importance=8)))
    assert result.matched
    assert result.reasons == (Reason("label", "npu", "npu"), Reason("path", "verl/trainer/**", "verl/trainer/ppo.py"),
                              Reason("importance", ">=6", "8"))
    assert explain(result, "zh") == "标签 npu；路径 verl/trainer/**（verl/trainer/ppo.py）；重要性 8"
    assert explain(result, "en") == "label npu; path verl/trainer/** (verl/trainer/ppo.py); importance 8"
    low = match(flt, candidate(record, ("npu",), analysis(importance=5)))
    assert not low
    assert low.missing == ("importance",)
    pending = match(flt, candidate(record, ("npu",), None))  # no analysis yet: no bound holds
    assert not pending
    assert pending.missing == ("importance",)
    elsewhere = match(flt, candidate(pr(6, paths=("docs/x.md",)), ("npu",), analysis(importance=9)))
    assert elsewhere.missing == ("path",)


@pytest.mark.parametrize(("pattern", "path", "hit"), [
    ("verl/trainer/**", "verl/trainer/ppo.py", True),
    ("verl/trainer/**", "verl/trainer/config/a.yaml", True),
    ("verl/trainer/**", "verl/trainers/x.py", False),
    ("verl/trainer", "verl/trainer/ppo.py", True),  # a literal path covers what lies below it
    ("verl/trainer", "verl/trainer", True),
    ("verl/trainer/", "verl/trainer/ppo.py", True),
    ("verl/trainer", "verl/trainer_utils.py", False),
    ("**/*.md", "docs/start/install.md", True),
    ("*.md", "docs/start/install.md", False),  # as in the label rules: no ** means this folder only
    ("*.md", "README.md", True),
    ("verl/{trainer,workers}/**", "verl/workers/actor.py", True),
    ("**/.github/**", ".github/workflows/ci.yml", True),
    ("docs/**", "docs/.hidden/x", True),
])
def test_path_globs(pattern: str, path: str, hit: bool) -> None:
    assert bool(match(parse_filter(f'path:"{pattern}"'), candidate(pr(7, paths=(path,))))) is hit


def test_a_renamed_file_matches_by_its_old_path() -> None:
    record = pr(8, paths=("src/new_home.py",), renamed_from="verl/trainer/old.py")
    assert match(parse_filter("path:verl/trainer/**"), candidate(record))


@pytest.mark.parametrize("author", ["dependabot[bot]", "renovate[bot]", "dependabot", "renovate", "github-actions[bot]",
                                    "some-app[bot]", "Dependabot[bot]"])
def test_bots_are_left_out_by_default(author: str) -> None:
    record = pr(9, author=author, title="chore(deps): bump torch")
    assert is_bot(author)
    everything = match(parse_filter(""), candidate(record, ("dependency",)))
    assert not everything
    assert everything.bot
    assert explain(everything, "en").startswith("a bot's PR")
    assert not match(parse_filter("dependency"), candidate(record, ("dependency",)))


def test_a_filter_that_names_the_bot_gets_it_but_an_exclusion_still_wins() -> None:
    record = pr(10, author="dependabot[bot]")
    assert match(parse_filter("author:dependabot"), candidate(record))
    assert match(parse_filter("author:dependabot[bot] dependency"), candidate(record, ("dependency",)))
    assert not match(parse_filter("author:renovate"), candidate(record))  # another bot is not this one
    named_and_excluded = match(parse_filter("author:dependabot -author:dependabot"), candidate(record))
    assert not named_and_excluded
    assert named_and_excluded.excluded_by is not None


def test_configured_bot_names() -> None:
    record = pr(11, author="verl-release-bot")
    assert match(parse_filter(""), candidate(record))
    assert not match(parse_filter(""), candidate(record), bots=DEFAULT_BOTS | {"verl-release-bot"})
    assert match(parse_filter("author:verl-release-bot"), candidate(record), bots=DEFAULT_BOTS | {"verl-release-bot"})
    assert not is_bot("robot-arm-team")
    assert not is_bot("renovates")


def test_author_title_verdict_and_minutes() -> None:
    record = pr(12, author="Alice", title="[trainer] fix: HCCL timeout on resume")
    c = candidate(record, ("trainer",), analysis("close_read", minutes=25, insight=7))
    assert match(parse_filter("author:alice"), c)
    assert match(parse_filter("author:@ALICE"), c)
    assert not match(parse_filter("author:bob"), c)
    assert match(parse_filter("title:hccl"), c)
    assert match(parse_filter('title:"hccl timeout"'), c)
    assert not match(parse_filter("title:time"), c)  # words, not a substring of "timeout"
    assert match(parse_filter("verdict:close_read"), c)
    assert not match(parse_filter("verdict:skim,skip"), c)
    assert match(parse_filter("精读 minutes<=30 insight>=7"), c)
    assert not match(parse_filter("minutes<=20"), c)
    assert not match(parse_filter("-title:resume"), c)
    chinese = candidate(pr(13, title="修复 NPU 上的超时问题"), ("npu",))
    assert match(parse_filter("标题含 超时"), chinese)


def test_author_me_needs_the_linked_handle() -> None:
    c = candidate(pr(14, author="alice"))
    assert match(parse_filter("author:@me"), c, me="Alice")
    assert not match(parse_filter("author:@me"), c, me="bob")
    with pytest.raises(FilterError) as caught:
        match(parse_filter("author:@me"), c)
    assert "my GitHub is NAME" in str(caught.value)
    assert "我的 GitHub 是 NAME" in caught.value.message("zh")


CODEOWNERS = """\
# default owners
*                       @acme/core
/verl/                  @alice @acme/rl-team
/verl/trainer/          @bob
/verl/trainer/ppo/      @alice
/docs/                  docs@acme.example
/verl/third_party/
"""


def test_path_me_follows_codeowners_last_match() -> None:
    owners = CodeOwners(text=CODEOWNERS, repo=REPO)
    mine = parse_filter("path:@me")
    assert match(mine, candidate(pr(20, paths=("verl/workers/actor.py",))), me="alice", codeowners=owners)
    # a later line gives verl/trainer/ to bob ...
    assert not match(mine, candidate(pr(21, paths=("verl/trainer/main.py",))), me="alice", codeowners=owners)
    assert match(mine, candidate(pr(21, paths=("verl/trainer/main.py",))), me="bob", codeowners=owners)
    # ... and a still later one gives verl/trainer/ppo/ back to alice
    result = match(mine, candidate(pr(22, paths=("README.md", "verl/trainer/ppo/core.py"))), me="@Alice",
                   codeowners=owners)
    assert result.reasons == (Reason("path", "@me", "verl/trainer/ppo/core.py"),)
    assert explain(result, "zh") == "我负责的路径（CODEOWNERS）（verl/trainer/ppo/core.py）"
    # a pattern without owners leaves its paths unowned
    assert not match(mine, candidate(pr(23, paths=("verl/third_party/x.py",))), me="alice", codeowners=owners)
    team = parse_filter("path:@acme/rl-team")
    assert match(team, candidate(pr(24, paths=("verl/utils/x.py",))), codeowners=owners)
    assert match(parse_filter("path:docs@acme.example"), candidate(pr(25, paths=("docs/a.md",))), codeowners=owners)
    assert not match(parse_filter("npu -path:@acme/core"), candidate(pr(26, paths=("setup.py",)), ("npu",)),
                     codeowners=owners)


def test_path_me_without_handle_or_codeowners_says_what_is_missing() -> None:
    c = candidate(pr(27))
    with pytest.raises(FilterError, match="GitHub handle"):
        match(parse_filter("path:@me"), c, codeowners=CodeOwners(text=CODEOWNERS))
    with pytest.raises(FilterError) as caught:
        match(parse_filter("path:@me"), c, me="alice")
    assert "CODEOWNERS" in str(caught.value)
    assert "CODEOWNERS" in caught.value.message("zh")


def test_candidate_without_digest_item_uses_source_labels() -> None:
    record = pr(28, labels=("NPU",))
    c = Candidate.of(record)
    assert c.labels == ("npu",)
    assert c.analysis is None
    assert match(parse_filter("npu"), c)
