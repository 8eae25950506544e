"""Windows that are releases: the PRs first released in a tag (``--release v0.7.1``, "v0.7.1 改了啥"), or
merged since one ("since v0.7.0"), from a source that knows the repository's releases
(:meth:`bot.sources.git.GitSource.releases`, :meth:`bot.sources.github.GitHubSource.releases`).

A release's PRs are those whose ``released_in`` is its tag: read from the window between the release before
it (less :data:`MARGIN`: the API dates a release when it was published, after its commit) and it, then kept
by ``released_in``, so a PR merged before the previous tag was cut but left out of it lands where git says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.digest.window import zone
from bot.errors import ReleaseError
from bot.models import PullRequest, Release, Window

__all__ = ["FIRST_RELEASE_SPAN", "MARGIN", "ReleaseSpan", "find_release", "release_span", "since_span"]

MARGIN = timedelta(days=14)
"""Read this much before the previous release: PRs merged between its commit and its publication."""
FIRST_RELEASE_SPAN = timedelta(days=365)
"""How far back the first release known reads (it holds everything before it)."""
_V = re.compile(r"^v", re.I)


@dataclass(frozen=True, slots=True)
class ReleaseSpan:
    """The PRs of a release window: ``release`` (``None`` for "since ``previous``" up to ``window.end``), the
    release before it (``previous``), the ``window`` they were merged in (named ``v0.7.0..v0.7.1``) and the
    ``prs`` (merge order)."""

    release: Release | None
    previous: Release | None
    window: Window
    prs: list[PullRequest]


def _releases(source: object, repo: str) -> list[Release]:
    reader = getattr(source, "releases", None)
    if reader is None:
        raise ReleaseError("this source does not know the repository's releases (a snapshot file): use git:PATH "
                          "or github",
                          zh="这个数据源不知道仓库的发布版本（快照文件）：请用 git:PATH 或 github 数据源")
    found = reader(repo)
    assert isinstance(found, list)
    return found


def find_release(releases: list[Release], tag: str) -> tuple[Release, Release | None]:
    """The release named ``tag`` (case and a leading ``v`` aside) and the one before it.

    Raises:
        ReleaseError: no such release (both languages name the latest ones).
    """
    wanted = _V.sub("", tag.strip()).lower()
    for n, release in enumerate(releases):
        if _V.sub("", release.tag).lower() == wanted:
            return release, releases[n - 1] if n else None
    latest = ", ".join(r.tag for r in releases[-5:][::-1]) or "none"
    raise ReleaseError(f"no release {tag}; the latest: {latest}", zh=f"没有发布版本 {tag}；最近的版本：{latest}")


def release_span(source: object, repo: str, tag: str, tz: str) -> ReleaseSpan:
    """The PRs first released in ``tag`` (see the module docstring).

    Raises:
        ReleaseError: the source does not know releases, or has no release ``tag``.
        SourceError: the source could not be read.
    """
    releases = _releases(source, repo)
    release, previous = find_release(releases, tag)
    local = zone(tz)
    start = (previous.at - MARGIN) if previous is not None else release.at - FIRST_RELEASE_SPAN
    end = release.at + timedelta(seconds=1)
    read = Window(start=start.astimezone(local), end=end.astimezone(local), timezone=tz, name=release.tag)
    prs = [pr for pr in source.merged_prs(repo, read) if pr.released_in == release.tag]  # type: ignore[attr-defined]
    first = min((pr.merged_at for pr in prs), default=previous.at if previous else start)
    name = f"{previous.tag}..{release.tag}" if previous is not None else release.tag
    window = Window(start=first.astimezone(local), end=end.astimezone(local), timezone=tz, name=name)
    return ReleaseSpan(release, previous, window, prs)


def since_span(source: object, repo: str, tag: str, tz: str, now: datetime) -> ReleaseSpan:
    """The PRs merged since ``tag`` and not in it (nor in any release before it), up to ``now``.

    Raises:
        ReleaseError, SourceError: as :func:`release_span`.
    """
    releases = _releases(source, repo)
    release, _ = find_release(releases, tag)
    earlier = {r.tag for r in releases if r.at <= release.at}
    local = zone(tz)
    read = Window(start=(release.at - MARGIN).astimezone(local), end=now.astimezone(local), timezone=tz,
                  name=f"{release.tag}..")
    prs = [pr for pr in source.merged_prs(repo, read)  # type: ignore[attr-defined]
           if pr.released_in not in earlier and pr.merged_at >= release.at - MARGIN]
    first = min((pr.merged_at for pr in prs), default=release.at)
    window = Window(start=first.astimezone(local), end=now.astimezone(local), timezone=tz, name=f"{release.tag}..")
    return ReleaseSpan(None, release, window, prs)
