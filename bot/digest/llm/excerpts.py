"""Diff excerpts for the per-PR prompt, within a token budget.

When a source gives patches (GitHub, git; the snapshot has none), the prompt
holds as much diff text as the budget allows:

1. binary files and files without a patch are not read (listed as ``binary`` /
   ``no_patch`` — the latter only when some other file does have a patch);
2. source and other reviewable files first: if all their patches fit, all go in
   whole; otherwise every patch is clipped to one common cap (the largest hunks
   are clipped first and smaller patches stay whole — "water filling"), and if
   that cap falls below :data:`MIN_EXCERPT_TOKENS` the clipped files are left
   out as ``token_budget`` instead of being shown as useless stubs;
3. generated and lock files last, whole, smallest first, while budget remains;
   the rest are listed as ``generated`` / ``lock_file``.

Tokens are counted with the caller's counter (litellm's ``token_counter`` for
the model); clipping keeps whole lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.digest.files import FileKind, classify, is_lock_file
from bot.models import Coverage, FileChange, LeftOutFile

MIN_EXCERPT_TOKENS = 64
CLIP_MARK = "… (clipped)"


@dataclass(frozen=True)
class Excerpt:
    """The diff text of one file as it goes into the prompt (``clipped``: cut to the budget)."""

    path: str
    text: str
    clipped: bool


@dataclass(frozen=True)
class ExcerptPlan:
    """The excerpts, the files left out and the resulting coverage."""

    excerpts: tuple[Excerpt, ...]
    left_out: tuple[LeftOutFile, ...]
    coverage: Coverage


def changed_lines_in(text: str) -> int:
    """Added and removed lines of unified-diff text (``+``/``-`` lines, not the file headers)."""
    return sum(1 for line in text.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---")))


def clip(text: str, tokens: int, cap: int) -> str:
    """``text`` (``tokens`` long) cut at a line boundary to about ``cap`` tokens, with a mark."""
    keep = max(1, int(len(text) * cap / max(tokens, 1)))
    head = text[:keep]
    cut = head.rfind("\n")
    return (head[:cut] if cut > 0 else head) + "\n" + CLIP_MARK


def _cap(sizes: Sequence[int], budget: int) -> int:
    """The largest cap c with sum(min(size, c)) <= budget."""
    remaining = budget
    ordered = sorted(sizes)
    for i, size in enumerate(ordered):
        share = remaining // (len(ordered) - i)
        if size > share:
            return share
        remaining -= size
    return max(ordered, default=0)


def plan_excerpts(
    files: Sequence[FileChange], *, budget_tokens: int, count: Callable[[str], int],
    generated: tuple[str, ...] = (),
) -> ExcerptPlan:
    """Choose the excerpts of ``files`` for a budget of ``budget_tokens`` tokens.

    Args:
        files: the PR's files (``patch`` may be ``None``).
        budget_tokens: tokens the diff text may take in the prompt.
        count: tokens of a text for the model.
        generated: the repository's generated-file globs.

    Returns:
        The plan; ``coverage.lines_seen`` counts the changed lines of the included text.
    """
    left_out: list[LeftOutFile] = []
    any_patch = any(f.patch for f in files)
    main: list[FileChange] = []
    late: list[tuple[FileChange, str]] = []
    for f in files:
        if f.additions is None:
            left_out.append(LeftOutFile(path=f.path, reason="binary"))
        elif not f.patch:
            if any_patch:
                left_out.append(LeftOutFile(path=f.path, reason="no_patch"))
        elif classify(f.path, generated) is FileKind.GENERATED:
            late.append((f, "generated"))
        elif is_lock_file(f.path):
            late.append((f, "lock_file"))
        else:
            main.append(f)
    sizes = {f.path: count(f.patch or "") for f in main}
    excerpts: list[Excerpt] = []
    cap = _cap(list(sizes.values()), budget_tokens) if main else 0
    spent = 0
    for f in main:
        size = sizes[f.path]
        if size <= cap:
            excerpts.append(Excerpt(f.path, f.patch or "", clipped=False))
            spent += size
        elif cap >= MIN_EXCERPT_TOKENS:
            excerpts.append(Excerpt(f.path, clip(f.patch or "", size, cap), clipped=True))
            spent += cap
        else:
            left_out.append(LeftOutFile(path=f.path, reason="token_budget"))
    for f, reason in sorted(late, key=lambda item: len(item[0].patch or "")):
        size = count(f.patch or "")
        if spent + size <= budget_tokens:
            excerpts.append(Excerpt(f.path, f.patch or "", clipped=False))
            spent += size
        else:
            left_out.append(LeftOutFile(path=f.path, reason=reason))
    unread = {x.path for x in left_out}
    return ExcerptPlan(
        excerpts=tuple(excerpts),
        left_out=tuple(left_out),
        coverage=Coverage(
            files_seen=sum(1 for f in files if f.path not in unread),
            files_total=len(files),
            lines_seen=sum(changed_lines_in(e.text) for e in excerpts),
            lines_total=sum(f.changed_lines for f in files),
            left_out=tuple(left_out),
        ),
    )
