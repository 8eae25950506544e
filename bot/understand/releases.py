"""Release questions: "v0.7.1 改了啥", "what changed in v0.7.1", "since v0.7.0 有什么新东西" (issue 29).

:func:`release_request` finds a version tag (``v`` then dotted numbers: ``v0.7.1``, ``v2.0.0rc1``) and either
"since" before it (``since v0.7.0``, ``自 v0.7.0 以来``, ``v0.7.0 之后``) — the PRs merged after that release —
or words asking what a release changed (改了啥, 更新了什么, 有什么变化, 发布说明, release notes, changelog, what's
new, what changed) — the PRs first released in it. A bare number (``0.7.1``) is not read as a tag (a dependency's
version, a config value), nor is a tag without such words ("bump veomni to v0.1.8 是哪个 PR"). "since the last
release" names no tag and stays a clarification.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["ReleaseAsk", "release_request", "release_tag", "release_window"]

ReleaseAsk = tuple[Literal["release", "since"], str]

_TAG = r"(?P<tag>[vV]\d+(?:\.\d+)+(?:[.+-]?[0-9A-Za-z]+)*)"
_EDGE = "0-9A-Za-z_."
_BOUNDED_TAG = re.compile(rf"(?<![{_EDGE}]){_TAG}(?![{_EDGE}])")
_SINCE = re.compile(rf"(?:\bsince\s+|自从?\s*|从\s*){_TAG}(?![{_EDGE}])|(?<![{_EDGE}]){_TAG}\s*(?:以来|之后|以后|后)"
                    .replace("(?P<tag>", "(?:", 1), re.I)
_CHANGED = re.compile(
    r"改(?:了|动了?)(?:啥|什么|哪些|些什么)|变(?:了|化了?)(?:啥|什么|哪些)|更新了?(?:啥|什么|哪些|内容)|"
    r"有(?:啥|什么|哪些)(?:变化|改动|更新|新东西|新功能|新内容|变动)|新增了?(?:啥|什么|哪些)|发布说明|更新日志|"
    r"release ?notes?|change ?log|what(?:'s|s| is| has| was)? (?:new|changed)|what changed|changes? (?:in|of)|"
    r"新东西|改动|变更", re.I)


def release_request(text: str) -> ReleaseAsk | None:
    """``("since", "v0.7.0")`` / ``("release", "v0.7.1")`` when ``text`` asks about a release (see the module
    docstring), else ``None``."""
    since = _SINCE.search(text)
    if since is not None:
        found = _BOUNDED_TAG.search(text, since.start())
        if found is not None:
            return "since", found["tag"]
    tag = _BOUNDED_TAG.search(text)
    if tag is not None and _CHANGED.search(text):
        return "release", tag["tag"]
    return None


def release_tag(text: str) -> str | None:
    """The version tag in ``text`` (``/prhub digest v0.7.1``), else ``None``."""
    found = _BOUNDED_TAG.search(text)
    return found["tag"] if found is not None else None


def release_window(spec: str | None) -> ReleaseAsk | None:
    """The release a digest's window spec names (``release:v0.7.1``, ``since:v0.7.0``), else ``None``."""
    kind, _, tag = (spec or "").partition(":")
    if kind in ("release", "since") and tag:
        return kind, tag  # type: ignore[return-value]
    return None
