"""When the LLM path does its work: prompts one wave ahead, week over week once a request is out.

Real litellm against the fake server (in this process), real Redis; the orderings are observed from
the server's side (what had been built when a request arrived) and on the client.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from conftest import REPO, SHANGHAI
from fakes.llm_server import FakeLLMServer, RecordedRequest, Reply, default_reply
from llm_support import llm_settings
from redis_support import redis_store

from bot.config import Settings
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.history import read_earlier
from bot.digest.llm import LLMAnalyzer, LLMClient, Narrator
from bot.digest.service import build_digest_async
from bot.digest.usage import UsageMeter
from bot.digest.window import week_window
from bot.models import Analysis, PullRequest
from bot.sources.jsonl import SnapshotSource

FIVE_WEEKS = Path(__file__).resolve().parents[3] / "examples" / "verl-2026-W12-W16.jsonl.gz"


class CountingHeuristic(HeuristicAnalyzer):
    """The heuristic analyzer, counting the PRs it analysed (the LLM analyzer runs it just before each prompt)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self._lock = threading.Lock()

    def analyze(self, pr: PullRequest, context: AnalysisContext) -> Analysis:
        with self._lock:
            self.count += 1
        return super().analyze(pr, context)


async def test_prompts_are_made_one_wave_ahead_of_the_answers(verl_settings: Settings) -> None:
    window = week_window(2026, 16, SHANGHAI)
    prs = SnapshotSource(FIVE_WEEKS).merged_prs(REPO, window)[:12]
    heuristic = CountingHeuristic()
    built_at_arrival: list[int] = []

    def responder(request: RecordedRequest) -> Reply:
        built_at_arrival.append(heuristic.count)
        return default_reply(request)

    with FakeLLMServer(latency_s=0.2, responder=responder) as fake:
        settings = llm_settings(verl_settings, fake.base_url, llm_concurrency=2)
        async with redis_store() as store:
            client = LLMClient.from_settings(settings)
            analyzer = LLMAnalyzer(client=client, store=store, ttl_s=60, heuristic=heuristic)
            digest = await build_digest_async(prs, repo=REPO, window=window, settings=settings, analyzer=analyzer)
    assert len(built_at_arrival) == 12
    assert all(p.analysis is not None and p.analysis.status == "llm" for p in digest.prs)
    # The first wave (2 requests) is out after at most its own prompts and the next wave's (4); while it
    # is out, the prompts of the next wave only are made, not those of all 12 PRs.
    assert built_at_arrival[0] <= 4
    assert max(built_at_arrival[2:4]) <= 6
    assert all(count <= min(12, index + 4) for index, count in enumerate(built_at_arrival))


async def test_sending_returns_once_a_request_has_left(verl_settings: Settings) -> None:
    with FakeLLMServer(latency_s=0.5) as fake:
        client = LLMClient.from_settings(llm_settings(verl_settings, fake.base_url))
        sending = asyncio.ensure_future(client.sending())
        await asyncio.sleep(0.05)
        assert not sending.done()  # no request yet
        call = asyncio.ensure_future(client.complete([{"role": "user", "content": "hi"}], max_tokens=10))
        await asyncio.wait_for(sending, 5)
        assert not call.done()  # it returned while the request was out, not after the answer
        assert (await call).text
        await asyncio.wait_for(client.sending(), 0.1)  # at once, once one has left


async def test_week_over_week_and_narrative_are_the_same_whenever_earlier_digests_start(
    verl_settings: Settings,
) -> None:
    window = week_window(2026, 16, SHANGHAI)
    source = SnapshotSource(FIVE_WEEKS)
    prs = source.merged_prs(REPO, window)
    lookback = read_earlier(source, REPO, window)
    assert lookback.prs  # the earlier weeks are read as records: their digests are built
    never = asyncio.Event()
    results = []
    with FakeLLMServer() as fake:
        settings = llm_settings(verl_settings, fake.base_url)
        async with redis_store() as store:
            for sending in ("client", None, never.wait):
                meter = UsageMeter()
                client = LLMClient.from_settings(settings, meter)
                analyzer = LLMAnalyzer(client=client, store=store, ttl_s=60)
                narrator = Narrator(client=client, store=store, ttl_s=60)
                digest = await asyncio.wait_for(build_digest_async(
                    prs, repo=REPO, window=window, settings=settings, analyzer=analyzer, narrator=narrator,
                    meter=meter, lookback=lookback, now=window.end,
                    sending=client.sending if sending == "client" else sending), 60)
                results.append(digest)
    first = results[0]
    assert first.week_over_week is not None
    assert first.week_over_week.labels
    assert first.narrative_source == "llm"
    for other in results[1:]:
        # the cached runs count no calls; all else is the same digest
        assert other.model_copy(update={"usage": first.usage}) == first
