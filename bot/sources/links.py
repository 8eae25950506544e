"""What a PR's title and description say about other PRs: the PR number of a commit subject,
and the PR a revert undoes; and the trailers git and review tools append to a message.

Shared by the git and GitHub sources so that both link reverts the same way.
Only *structured* places count — a subject's final ``(#N)``, GitHub's
``Merge pull request #N from …`` subject, the quoted subject of a ``Revert "…"``
title and GitHub's ``Reverts owner/name#N`` revert-button description — never a
number mentioned in passing in a body.
"""

from __future__ import annotations

import re

__all__ = ["merge_pr_number", "reverted_pr", "split_squash_subject", "strip_trailers"]

_SQUASH = re.compile(r"^(?P<title>.*?)\s*\(#(?P<number>[0-9]+)\)\s*$")
_MERGE = re.compile(r"^Merge pull request #(?P<number>[0-9]+) from (?P<head>\S+)")
_REVERT_TITLE = re.compile(r'^\s*Revert\s+"(?P<inner>.*)"\s*$', re.S)
# GitHub's revert button writes "Reverts owner/name#123" as the description's first line.
_REVERTS_LINE = re.compile(r"^\s*Reverts\s+(?:[\w.-]+/[\w.-]+)?#(?P<number>[0-9]+)\s*$", re.M)


_TRAILER = re.compile(
    r"^[ \t]*(?:co-authored-by|signed-off-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by|"
    r"cc|change-id|differential revision|pull request resolved|ghstack-source-id|approved by|reviewed by|"
    r"reviewers|subscribers)[ \t]*:[^\n]*(?:\n|$)",
    re.IGNORECASE | re.MULTILINE,
)


def strip_trailers(message: str) -> str:
    """``message`` without trailer lines — ``Co-authored-by:``, ``Signed-off-by:``,
    ``Reviewed-by:``, ``Change-Id:``, ``Differential Revision:``, ``Pull Request resolved:``,
    ``ghstack-source-id:`` … — wherever they stand (a squash commit repeats them for every
    squashed commit), and without the blank lines they leave at the end."""
    return _TRAILER.sub("", message).rstrip()


def split_squash_subject(subject: str) -> tuple[str, int] | None:
    """``("title", N)`` for a squash-merge subject ending in ``(#N)``, else ``None``.

    Only the *final* ``(#N)`` counts: ``Fix x (#12) (#34)`` is PR 34 titled ``Fix x (#12)``.
    """
    found = _SQUASH.fullmatch(subject.strip())
    if found is None or int(found["number"]) < 1:
        return None
    return found["title"].strip(), int(found["number"])


def merge_pr_number(subject: str) -> tuple[int, str] | None:
    """``(N, "owner/branch")`` for GitHub's merge-commit subject ``Merge pull request #N from owner/branch``."""
    found = _MERGE.match(subject.strip())
    if found is None or int(found["number"]) < 1:
        return None
    return int(found["number"]), found["head"]


def reverted_pr(title: str, body: str) -> int | None:
    """The number of the PR that a revert PR undoes, from its title or GitHub's revert description.

    ``Revert "Add x (#5599)"`` → 5599; ``Revert "Merge pull request #12 from a/b"`` → 12;
    a description whose line reads ``Reverts owner/name#5599`` → 5599. ``None`` when the
    PR is not a revert or names no PR in those places.
    """
    found = _REVERT_TITLE.match(title)
    if found is not None:
        inner = found["inner"].strip()
        squash = split_squash_subject(inner)
        if squash is not None:
            return squash[1]
        merge = merge_pr_number(inner)
        if merge is not None:
            return merge[0]
    if title.lstrip().lower().startswith("revert"):
        line = _REVERTS_LINE.search(body)
        if line is not None and int(line["number"]) >= 1:
            return int(line["number"])
    return None
