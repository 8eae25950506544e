"""How far the digest's words are a reader's, on the hand-judged weeks, in Chinese and in English.

Run: ``.venv/bin/python bench/eval_prose.py``  (offline, heuristic analyzer, no configuration; about a minute).

Each ``tests/data/judged/*.toml`` names one week of one repository; its digest is built from the shipped PR records
(``tests/data/*.jsonl.gz``) the way ``bench/eval_judgement.py`` builds it, once in Chinese and once in English.
Printed per week and language:

- ``copy``: share of the highlight and summary lines (highlights, the executive summary's sentences, key changes,
  suggestions) that copy 40 or more characters of a description of one of the week's PRs (whitespace folded; what
  the line quotes — titles in quotes, code in backticks — and paths left out first);
- ``foreign``: share of the words outside identifiers that are not in the digest's language — in a Chinese digest the
  English words, in an English one the Chinese words. Not words: text in backticks or quotes (``「…」``, ``“…”``,
  ``"…"``), PR numbers, paths, URLs, identifiers (with ``_ . / -`` or a digit, camelCase, ALL-CAPS), the week's
  labels. Chinese is cut into words by ``jieba``;
- ``names``: share of highlights that name what changed — an identifier in backticks, a file of one of the PRs
  (or its base name), or a label (a component) — **and** say why it matters (a word of :data:`WHY`);
- ``card``: characters of text of the digest reply in chat (the Slack card message: every ``text`` field), the
  number of its blocks, and ``pr max``: the longest PR answer in chat (Slack, every key PR of the week);
- ``inside``: chat replies (card and PR answers) that show an internal — the analyzer's version, a coverage counter
  ("changed lines 3/15"), a ranking note.

``--json FILE`` writes the figures; ``--week NAME`` keeps one week (e.g. ``verl-2026-W16``); ``--show`` prints the
highlights and summary of each digest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench"))

COPY_CHARS = 40
WHY = {
    "zh": ("调用方", "用户", "使用者", "使用方", "配置", "影响", "风险", "回归", "失效", "报错", "结果", "兼容", "迁移",
           "测试", "需要", "可能", "行为", "环境", "依赖", "升级", "数值", "注意", "打断", "不再", "会"),
    "en": ("caller", "user", "config", "affect", "risk", "regression", "break", "error", "result", "compatib",
           "migrat", "test", "need", "may ", "behav", "environment", "depend", "upgrade", "numeric", "no longer",
           "must", "will"),
}
INTERNALS = {
    "version": re.compile(r"heuristic-v\d|llm:[\w/.-]+"),
    "coverage": re.compile(r"changed lines \d+/\d+|改动行 \d+/\d+|覆盖 \d+/\d+|files \d+/\d+ seen"),
    "ranking": re.compile(r"occurs in \d+ of \d+|出现在 \d+ 个|too common|it only ranks|只用于排序"),
}
"""What chat must not show (the full report's analysis notes keep it), by kind."""
_QUOTED = re.compile(r"`[^`]*`|「[^」]*」|“[^”]*”|\"[^\"]*\"|‘[^’]*’|《[^》]*》")
_PATHISH = re.compile(r"\S*/\S*")
_URL = re.compile(r"https?://\S+")
_TOKEN = re.compile(r"[A-Za-z][\w.+/'-]*|[\u4e00-\u9fff]+")
_CODEISH = re.compile(r"[_./\d]|[a-z][A-Z]|^[A-Z]{2,}|-\w")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SENTENCE = re.compile(r"(?<=[。！？])|(?<=[.!?])\s+(?=[A-Z#“])")


def _fold(text: str) -> str:
    return " ".join(text.split())


def copies(line: str, bodies: Sequence[str], n: int = COPY_CHARS) -> bool:
    """Whether ``line`` holds ``n`` consecutive characters (whitespace folded) of one of ``bodies``; what the line
    quotes (a title, code in backticks) and paths are not its words, so they are left out first."""
    text = _fold(_PATHISH.sub(" ", _QUOTED.sub(" ", line)))
    if len(text) < n:
        return False
    for body in bodies:
        if len(body) < n:
            continue
        for start in range(0, len(text) - n + 1):
            if text[start:start + n] in body:
                return True
    return False


def words(text: str, labels: set[str]) -> tuple[int, int]:
    """(English words, Chinese words) of ``text`` outside identifiers, quotes, numbers, paths and labels."""
    import jieba

    text = _URL.sub(" ", _QUOTED.sub(" ", text))
    english = chinese = 0
    for token in _TOKEN.findall(text):
        if _CJK.match(token):
            chinese += sum(1 for w in jieba.lcut(token, HMM=False) if w.strip())
        elif not _CODEISH.search(token) and token.lower() not in labels:
            english += 1
    return english, chinese


def names_and_why(line: str, language: str, paths: set[str], labels: set[str]) -> bool:
    """The highlight names a changed identifier, file or component and says why it matters."""
    lower = line.lower()
    named = ("`" in line or any(p in line for p in paths)
             or any(re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", lower) for label in labels))
    why = any(w in lower for w in WHY[language])
    return named and why


def _chars(node: object, keys: tuple[str, ...] = ("text", "content")) -> int:
    if isinstance(node, dict):
        return sum(len(v) if k in keys and isinstance(v, str) else _chars(v, keys) for k, v in node.items())
    if isinstance(node, list):
        return sum(_chars(item, keys) for item in node)
    return 0


def _texts(node: object) -> list[str]:
    if isinstance(node, dict):
        return [t for k, v in node.items() for t in ([v] if k in ("text", "content") and isinstance(v, str)
                                                      else _texts(v))]
    if isinstance(node, list):
        return [t for item in node for t in _texts(item)]
    return []


def chat_sizes(digest: Any) -> dict[str, Any]:
    """The digest reply's card in chat (Slack: text characters and blocks; Feishu: text characters) and the PR
    answers of its key PRs (Slack text characters, the longest), and the internals any of them shows."""
    from bot.cards.chat import render_reply_feishu, render_reply_slack
    from bot.replies import DigestReply, PRReply

    card = render_reply_slack(DigestReply(digest))
    feishu = render_reply_feishu(DigestReply(digest))
    answers = [render_reply_slack(PRReply(digest.pr(n), digest.repo, digest.language, digest.window.timezone))
               for n in digest.key_prs]
    shown = _texts(card) + _texts(feishu) + [t for a in answers for t in _texts(a)]
    inside = [kind for kind, pattern in INTERNALS.items() if any(pattern.search(t) for t in shown)]
    return {
        "card_chars": _chars([m.get("blocks", []) for m in card]),
        "card_blocks": sum(len(m.get("blocks", [])) for m in card),
        "card_messages": len(card),
        "feishu_chars": _chars(feishu),
        "pr_max_chars": max((_chars([m.get("blocks", []) for m in a]) for a in answers), default=0),
        "internals": inside,
    }


def measure(digest: Any, prs: Sequence[Any]) -> dict[str, Any]:
    """The figures of one digest (see the module docstring); ``prs`` the week's records (their descriptions)."""
    language = digest.language
    bodies = [_fold(p.body) for p in prs if p.body and p.body.strip()]
    labels = {g.label.lower() for g in digest.label_view}
    paths = {f.path for p in prs for f in p.files} | {f.path.rsplit("/", 1)[-1] for p in prs for f in p.files
                                                         if "." in f.path.rsplit("/", 1)[-1]}
    summary = [s for s in _SENTENCE.split(digest.executive_summary) if s and s.strip()]
    lines = [*digest.highlights, *summary, *digest.key_changes, *digest.suggestions]
    copied = [line for line in lines if copies(line, bodies)]
    english = chinese = 0
    for line in [digest.headline, *lines]:
        e, c = words(line, labels)
        english, chinese = english + e, chinese + c
    foreign = (english if language == "zh" else chinese) / max(english + chinese, 1)
    named = [h for h in digest.highlights if names_and_why(h, language, paths, labels)]
    return {
        "lines": len(lines), "copied": len(copied), "copy": len(copied) / max(len(lines), 1),
        "foreign": foreign, "highlights": len(digest.highlights), "named": len(named),
        "names": len(named) / max(len(digest.highlights), 1), **chat_sizes(digest),
        "copied_lines": copied[:3],
    }


async def _digest(table: dict[str, Any], data: Path, language: str) -> tuple[Any, list[Any]]:
    import eval_judgement

    from bot.digest.service import DigestService
    from bot.digest.window import week_window
    from bot.sources.jsonl import SnapshotSource

    settings = eval_judgement._settings(None, keep_llm=False)
    repo = table["repo"]
    year, number = table["week"].split("-W")
    window = week_window(int(year), int(number), table["timezone"])
    source = SnapshotSource(data / eval_judgement.DATA[repo])
    prs = source.merged_prs(repo, window)
    service = DigestService(settings)
    earlier = await service.look_back(source, repo, window)
    digest = await service.digest(prs, repo=repo, window=window, language=language, lookback=earlier.lookback,
                                  known=earlier.known)
    await service.aclose()
    return digest, list(prs)


def evaluate(judged: Path, data: Path, only: str | None = None, show: bool = False) -> dict[str, Any]:
    """Per judged week and language, the figures of :func:`measure`."""
    out: dict[str, Any] = {}
    for path in sorted(judged.glob("*.toml")):
        if only and path.stem != only:
            continue
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        if "pr" not in table:
            continue
        for language in ("zh", "en"):
            digest, prs = asyncio.run(_digest(table, data, language))
            out[f"{path.stem} {language}"] = measure(digest, prs)
            if show:
                print(f"== {path.stem} {language}\n{digest.headline}\n{digest.executive_summary}\n"
                      + "\n".join(f"* {h}" for h in digest.highlights) + "\n"
                      + "\n".join(f"- {s}" for s in digest.suggestions) + "\n")
    return out


def render(result: dict[str, Any]) -> str:
    head = (f"{'week':32s} {'copy':>11s} {'foreign':>7s} {'names':>9s} {'card':>6s} {'blocks':>6s} "
            f"{'feishu':>6s} {'pr max':>6s}  internals")
    lines = [head]
    for name, r in result.items():
        lines.append(f"{name:32s} {r['copied']:>3d}/{r['lines']:<3d}{r['copy']:4.0%} {r['foreign']:7.1%} "
                     f"{r['named']:>2d}/{r['highlights']:<2d}{r['names']:4.0%} {r['card_chars']:>6d} "
                     f"{r['card_blocks']:>6d} {r['feishu_chars']:>6d} {r['pr_max_chars']:>6d}  "
                     f"{', '.join(r['internals']) or '-'}")
    for language in ("zh", "en"):
        rows = [r for name, r in result.items() if name.endswith(language)]
        if not rows:
            continue
        copied, total = sum(r["copied"] for r in rows), sum(r["lines"] for r in rows)
        named, highlights = sum(r["named"] for r in rows), sum(r["highlights"] for r in rows)
        lines.append(f"{'pooled ' + language:32s} {copied:>3d}/{total:<3d}{copied / max(total, 1):4.0%} "
                     f"{max(r['foreign'] for r in rows):7.1%} {named:>2d}/{highlights:<2d}"
                     f"{named / max(highlights, 1):4.0%} {max(r['card_chars'] for r in rows):>6d} "
                     f"{max(r['card_blocks'] for r in rows):>6d} {max(r['feishu_chars'] for r in rows):>6d} "
                     f"{max(r['pr_max_chars'] for r in rows):>6d}  (foreign and sizes: the worst week)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--judged", default=str(HERE / "tests" / "data" / "judged"))
    parser.add_argument("--data", default=str(HERE / "tests" / "data"))
    parser.add_argument("--week", help="one judged week, e.g. verl-2026-W16")
    parser.add_argument("--show", action="store_true", help="print each digest's highlights and summary")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    result = evaluate(Path(args.judged), Path(args.data), args.week, args.show)
    print(render(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
