"""``bot/defaults/phrasings.toml`` (the phrasings :mod:`bot.understand.nearest` compares a message with) is the
tuning corpora's phrasings, never a held-out set's. Regenerate it after changing a tuning corpus:
``.venv/bin/python tests/understand/test_phrasings.py``."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "understand" / "corpus"
BANK = ROOT / "bot" / "defaults" / "phrasings.toml"
SOURCES = ("tuning", "tuning2", "tuning3", "tuning4", "tuning5", "tuning6", "tuning7", "audit")
KINDS = {"digest", "authors", "merged", "list_subscriptions", "help", "smalltalk", "unsubscribe_all", "personal_digest",
         "pr", "compare", "label", "subscribe", "unsubscribe", "none"}
HEADER = """# Phrasings people used, each with the request it makes (generated from the tuning corpora of
# tests/understand/corpus/, never the held-out sets: .venv/bin/python tests/understand/test_phrasings.py).
# bot/understand/nearest.py reads a message the rules do not understand by the nearest of these, then takes the
# window, numbers and label from the message itself.
"""


def build() -> str:
    """The bank's text: each case without a thread, of a request kind, once."""
    seen: set[str] = set()
    out = [HEADER]
    for name in SOURCES:
        for case in tomllib.loads((CORPUS / f"{name}.toml").read_text(encoding="utf-8"))["case"]:
            kind = case["expect"]
            if case.get("thread") or kind not in KINDS or case["text"] in seen:
                continue
            seen.add(case["text"])
            if kind == "personal_digest":
                kind = f"personal_digest:{case['action']}"
            out.append(f"[[phrase]]\ntext = {json.dumps(case['text'], ensure_ascii=False)}\nkind = \"{kind}\"\n")
    return "\n".join(out)


def _texts(*names: str) -> set[str]:
    return {c["text"] for n in names for c in tomllib.loads((CORPUS / f"{n}.toml").read_text(encoding="utf-8"))["case"]}


def test_the_shipped_phrasings_are_the_tuning_corpora_s() -> None:
    assert BANK.read_text(encoding="utf-8") == build(), "regenerate: python tests/understand/test_phrasings.py"
    bank = {p["text"] for p in tomllib.loads(BANK.read_text(encoding="utf-8"))["phrase"]}
    held_out = sorted(p.stem for p in CORPUS.glob("held_out*.toml"))  # every held-out set, a new one too
    only_held_out = _texts(*held_out) - _texts(*SOURCES)
    assert not bank & only_held_out  # a held-out phrasing is never one the bot compares with


if __name__ == "__main__":
    BANK.write_text(build(), encoding="utf-8")
    sys.stdout.write(f"wrote {BANK}\n")
