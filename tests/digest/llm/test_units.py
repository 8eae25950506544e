"""Pure logic of the LLM path: JSON extraction, the merge rules, the diff budget, prompts, keys, stores."""

from __future__ import annotations

from datetime import UTC, datetime

import jinja2
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.config import Settings
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.llm.analyzer import analysis_key, merge_reply
from bot.digest.llm.evidence import IMPORTANCE_BAND, band
from bot.digest.llm.excerpts import CLIP_MARK, MIN_EXCERPT_TOKENS, plan_excerpts
from bot.digest.llm.prompts import load_prompt, make_prompt
from bot.digest.llm.reply import AnalysisReply, extract_json_object
from bot.models import FileChange, PullRequest
from bot.store import MemoryStore, RedisStore, cache_key

OBJ = '{"a": 1, "b": {"c": [1, 2]}}'


@pytest.mark.parametrize("text", [
    OBJ, f"```json\n{OBJ}\n```", f"Here it is:\n```\n{OBJ}\n```\nDone.", f"Sure! {OBJ} Anything else?",
    f"note {{not json}} then {OBJ}",
])
def test_extract_json_object_accepts_one_object(text: str) -> None:
    assert extract_json_object(text) == {"a": 1, "b": {"c": [1, 2]}}


@pytest.mark.parametrize("text", ["no json here", "[1, 2, 3]", '{"a": 1', ""])
def test_extract_json_object_rejects_the_rest(text: str) -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object(text)


def _pr(files: tuple[FileChange, ...] = (), body: str = "") -> PullRequest:
    return PullRequest(repo="o/r", number=7, title="[trainer] fix: a bug", body=body, author="a",
                       merged_at=datetime(2026, 4, 14, tzinfo=UTC), merge_commit_sha="a" * 40,
                       additions=sum(f.additions or 0 for f in files), deletions=sum(f.deletions or 0 for f in files),
                       changed_files=len(files), files=files)


def _reply(**changes: object) -> AnalysisReply:
    data: dict[str, object] = {
        "summary": "S", "change_type": "feat", "importance": 10, "insight": 10,
        "risks": [{"kind": "missing_tests", "title": "T", "detail": "D", "evidence": ["src/a.py", "nope.py"]},
                  {"kind": "perf_regression", "title": "P", "evidence": ["src/a.py", "ghost/file.py"]}],
        "recommendation": {"level": "close_read", "minutes": 0, "reason": "R",
                           "focus": ["src/a.py", "ghost/file.py", "the retry loop"]},
        "key_points": ["k"],
    }
    data.update(changes)
    return AnalysisReply.model_validate(data)


def test_merge_bounds_scores_keeps_computed_risks_and_drops_invented_files(default_settings: Settings) -> None:
    pr = _pr((FileChange(path="src/a.py", status="modified", additions=40, deletions=5),))
    base = HeuristicAnalyzer().analyze(pr, AnalysisContext(repo=default_settings.repo("o/r")))
    assert "missing_tests" in {r.kind for r in base.risks}
    merged = merge_reply(base, _reply(), pr, base.coverage, analyzer="llm:m")
    # no evidence: the band, never across the key-PR bar
    assert merged.importance == band(base.importance, IMPORTANCE_BAND, bar=6)[1] <= base.importance + 1
    assert merged.score_evidence == ()
    assert merged.status == "llm"
    kinds = [r.kind for r in merged.risks]
    assert kinds[: len(base.risks)] == [r.kind for r in base.risks]  # computed ones first, all kept
    extra = merged.risks[kinds.index("perf_regression")]
    assert extra.evidence == ("src/a.py",)
    assert "nope.py" not in merged.risks[kinds.index("missing_tests")].evidence
    assert merged.recommendation.focus == ("src/a.py", "the retry loop")
    assert merged.recommendation.minutes == 1
    assert merged.recommendation.level == base.recommendation.level  # no evidence: the heuristic's verdict
    low = merge_reply(base, _reply(importance=-3, risks=[]), pr, base.coverage, analyzer="llm:m")
    assert low.importance == band(base.importance, IMPORTANCE_BAND, bar=6)[0] >= base.importance - 1
    assert {r.kind for r in low.risks} == {r.kind for r in base.risks}


def test_excerpts_fit_the_budget_clip_the_largest_and_put_lock_files_last() -> None:
    def patch(n: int) -> str:
        return "@@ -1 +1 @@\n" + "".join(f"+line {i}\n" for i in range(n))

    files = (
        FileChange(path="src/small.py", status="modified", additions=5, deletions=0, patch=patch(5)),
        FileChange(path="src/huge.py", status="modified", additions=400, deletions=0, patch=patch(400)),
        FileChange(path="uv.lock", status="modified", additions=300, deletions=0, patch=patch(300)),
        FileChange(path="img.png", status="added"),
        FileChange(path="src/nopatch.py", status="modified", additions=1, deletions=1),
    )
    plan = plan_excerpts(files, budget_tokens=1000, count=len)
    by_path = {e.path: e for e in plan.excerpts}
    assert not by_path["src/small.py"].clipped
    assert by_path["src/huge.py"].clipped
    assert by_path["src/huge.py"].text.endswith(CLIP_MARK)
    assert sum(len(e.text) for e in plan.excerpts) <= 1000 + len(CLIP_MARK) + 1
    reasons = {x.path: x.reason for x in plan.left_out}
    assert reasons == {"uv.lock": "lock_file", "img.png": "binary", "src/nopatch.py": "no_patch"}
    assert plan.coverage.files_total == 5
    assert 5 < plan.coverage.lines_seen < 405
    tiny = plan_excerpts(files, budget_tokens=MIN_EXCERPT_TOKENS, count=len)
    assert "src/huge.py" in {x.path for x in tiny.left_out if x.reason == "token_budget"}
    none = plan_excerpts(files[3:], budget_tokens=1000, count=len)
    assert [x.reason for x in none.left_out] == ["binary"]  # no patch anywhere: not listed one by one


def test_prompts_are_shipped_versioned_and_strict() -> None:
    for name, version in (("pr_analysis", 3), ("digest_summary", 2)):
        prompt = load_prompt(name)
        assert prompt.version.startswith(f"{name}-v{version}-")
    with pytest.raises(jinja2.UndefinedError):
        load_prompt("pr_analysis").render(repo="o/r")
    with pytest.raises(ValueError, match="version"):
        make_prompt("x", "no version line")
    edited = make_prompt("pr_analysis", load_prompt("pr_analysis").source + " ")
    assert edited.version != load_prompt("pr_analysis").version  # an edit changes the key


def test_cache_keys_hold_every_part_and_hash_long_ones() -> None:
    pr = _pr()
    key = analysis_key(pr, prompt_version="pr_analysis-v1-abc", model="openai/gpt-4o-mini", language="zh")
    assert key == f"prhub:analysis:o/r:7:{'a' * 40}:llm:pr_analysis-v1-abc:openai/gpt-4o-mini:zh"
    local = analysis_key(pr, prompt_version="v", model="ollama/qwen2.5:7b", language="en")
    assert ":h-" in local
    assert local.endswith(":en")
    assert cache_key("x" * 200).startswith("prhub:h-")


async def test_memory_store_expires() -> None:
    now = [100.0]
    store = MemoryStore(clock=lambda: now[0])
    await store.set_json("k", {"v": 1}, ttl_s=10)
    assert await store.get_json("k") == {"v": 1}
    now[0] = 111.0
    assert await store.get_json("k") is None
    await store.set_json("forever", [1])
    await store.delete("forever", "missing")
    assert await store.get_json("forever") is None


class _BrokenRedis:
    async def get(self, key: str) -> bytes:
        raise RedisConnectionError("connection refused")

    async def set(self, *args: object, **kwargs: object) -> None:
        raise RedisConnectionError("connection refused")


async def test_redis_store_degrades_once_when_redis_goes_away() -> None:
    messages: list[str] = []
    store = RedisStore(_BrokenRedis(), on_unavailable=messages.append)  # type: ignore[arg-type]
    assert await store.get_json("k") is None
    await store.set_json("k", 1, ttl_s=5)
    assert await store.get_json("k") is None
    assert len(messages) == 1
    assert "without the cache" in messages[0]


def test_llm_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch, no_config: object) -> None:
    monkeypatch.setenv("PRHUB_LLM_MODEL", "ollama/qwen2.5")
    monkeypatch.setenv("PRHUB_LLM_API_BASE", "http://127.0.0.1:11434")
    monkeypatch.setenv("PRHUB_LLM_API_KEY", "sk-secret")
    monkeypatch.setenv("PRHUB_LLM_CONCURRENCY", "3")
    monkeypatch.setenv("PRHUB_CACHE_TTL_S", "60")
    settings = Settings()
    assert settings.llm_model == "ollama/qwen2.5"
    assert settings.llm_concurrency == 3
    assert settings.cache_ttl_s == 60
    assert settings.llm_api_key is not None
    assert settings.llm_api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(settings)
    assert Settings().llm_context_default == 8192
