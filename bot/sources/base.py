"""The interface every pull-request source implements, and the spec parser that picks one.

A source answers three questions about the merged PRs it knows: which
repositories it holds, which PRs of a repository were merged in a window, and
one PR by number. The digest core, the CLI and the handlers only see
:class:`PRSource`; what lies behind it (a JSONL snapshot, the GitHub API, a
local git clone) is chosen by a spec string with :func:`open_source`.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeGuard, runtime_checkable

from bot.errors import SourceError
from bot.models import PullRequest, Window
from bot.sources.jsonl import SnapshotSource

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.sources.github import GitHubSource

__all__ = ["SOURCE_FORMS", "PRSource", "canonical_repo", "close_source", "default_source_spec", "is_github",
           "merge_span", "open_source", "request_summary"]

SOURCE_FORMS = (
    "github (the GitHub API; GITHUB_TOKEN optional), git:PATH (a local clone) "
    "or jsonl:PATH (a JSONL snapshot, plain or .gz)"
)
"""The source specs :func:`open_source` accepts, as quoted in error messages."""


@runtime_checkable
class PRSource(Protocol):
    """Where merged pull requests come from.

    Repository names are ``owner/name``. Implementations raise the
    :class:`bot.errors.SourceError` subclasses below and nothing else on
    purpose.
    """

    def merged_prs(self, repo: str, window: Window) -> list[PullRequest]:
        """The PRs of ``repo`` whose ``merged_at`` instant lies in ``[window.start, window.end)``.

        Returns a new list sorted by the instant of ``merged_at`` ascending
        (never by its string), ties broken by PR number ascending; empty when
        the repository had no merge in the window.

        Raises:
            UnknownRepoError: the source holds no PR of ``repo`` at all (the
                message lists the repositories it does hold).
            SourceError: the source could not be read.
        """
        ...

    def pull_request(self, repo: str, number: int) -> PullRequest:
        """The merged PR ``number`` of ``repo``.

        Raises:
            UnknownRepoError: the source holds no PR of ``repo``.
            PRNotFoundError: ``repo`` is known but has no merged PR ``number``.
            SourceError: the source could not be read.
        """
        ...

    def repos(self) -> list[str]:
        """The ``owner/name`` of every repository the source holds, sorted.

        Raises:
            SourceError: the source could not be read.
        """
        ...


def open_source(spec: str, *, settings: Settings | None = None, fetch: bool = False) -> PRSource:
    """Open the PR source named by ``spec``.

    Supported:

    - ``github`` — the GitHub API at ``settings.github_api_url`` with
      ``settings.github_token`` (optional), or as a GitHub App installation when
      ``github_app_id`` and ``github_app_private_key`` are set (:mod:`bot.sources.github_app`),
      see :class:`bot.sources.github.GitHubSource`;
    - ``git:PATH`` — a local clone, bare or not, see :class:`bot.sources.git.GitSource`; ``git:URL``
      (``https://…``, ``ssh://…``, ``git@host:owner/name.git``) — that remote, cloned (bare) into
      ``settings.git_clones_dir`` on first use;
    - ``jsonl:PATH`` — a JSONL snapshot file (plain or gzip, see
      :class:`bot.sources.jsonl.SnapshotSource`).

    ``~`` in PATH is expanded and a relative PATH is relative to the working
    directory. Nothing is read until the first question asked of the source.

    Args:
        spec: the source spec (scheme case-insensitive).
        settings: where the GitHub token and API URL (and the git timeout and clones folder) come from;
            loaded from the environment and config file when ``None`` and ``spec`` needs them.
        fetch: a git source fetches its remote before its first read (``prhub push``, ``prhub alerts``).

    Raises:
        SourceError: ``spec`` has an unknown scheme or no path; the message
            names the supported forms.
        ConfigError: ``settings`` had to be loaded and are invalid.
    """
    scheme, sep, rest = spec.strip().partition(":")
    kind = scheme.strip().lower()
    if kind == "github" and not rest.strip():
        from bot.config import load_settings
        from bot.sources.github import GitHubSource

        conf = settings if settings is not None else load_settings()
        if conf.github_app_id and conf.github_app_private_key is not None:
            from bot.sources.github_app import GitHubApp, read_private_key

            app = GitHubApp(app_id=conf.github_app_id, api_url=conf.github_api_url,
                            private_key=read_private_key(conf.github_app_private_key.get_secret_value()),
                            installation_id=conf.github_app_installation_id)
            return GitHubSource(token=None, api_url=conf.github_api_url, auth=app)
        token = conf.github_token.get_secret_value() if conf.github_token is not None else None
        return GitHubSource(token=token or None, api_url=conf.github_api_url)
    if sep and kind in ("jsonl", "git"):
        if not rest.strip():
            raise SourceError(f"source {spec!r} has no path: expected {SOURCE_FORMS}")
        if kind == "git":
            return _git_source(rest.strip(), settings, fetch=fetch)
        return SnapshotSource(Path(rest.strip()).expanduser())
    raise SourceError(f"unsupported source {spec!r}: expected {SOURCE_FORMS}")


def _git_source(where: str, settings: Settings | None, *, fetch: bool) -> PRSource:
    """The git source of a ``git:`` spec's path: a local clone, or a remote URL cloned into the clones folder."""
    from bot.config import load_settings
    from bot.sources.git import GitSource, is_remote, repo_from_remote

    conf = settings if settings is not None else load_settings()
    if not is_remote(where):
        return GitSource(Path(where).expanduser(), fetch=fetch, fetch_timeout_s=conf.git_timeout_s)
    name = repo_from_remote(where) or where.rstrip("/").rsplit("/", 1)[-1]
    folder = name.replace("/", "__").removesuffix(".git") + ".git"
    return GitSource(Path(conf.git_clones_dir).expanduser() / folder, remote=where, fetch=True,
                     fetch_timeout_s=conf.git_timeout_s, repo=repo_from_remote(where))


def default_source_spec(source: str | None, repo: str | None, settings: Settings | None = None) -> str:
    """The CLI's ``--source``: as given; else, when a repository is known (``--repo``, or
    ``default_repo`` in the config), the config's ``default_source`` (``github`` unless set).

    Raises:
        SourceError: no ``--source`` and no repository to read from.
    """
    if source is not None:
        return source
    if repo is not None or (settings is not None and settings.default_repo):
        return settings.default_source if settings is not None else "github"
    from bot.errors import UsageError

    raise UsageError(f"--source or --repo is required: --source takes {SOURCE_FORMS}",
                     zh="需要 --source 或 --repo：--source 可以是 github、git:PATH（本地克隆）"
                        "或 jsonl:PATH（快照文件）")


def request_summary(source: PRSource) -> str:
    """`` · N GitHub API requests (M not modified)`` for a GitHub source, ``""`` for any other."""
    if not is_github(source):
        return ""
    stats = source.stats
    return f" · {stats.requests} GitHub API requests ({stats.not_modified} not modified)"


def merge_span(source: PRSource, repo: str) -> tuple[datetime, datetime, int] | None:
    """The first and last merge of ``repo`` in ``source`` and how many PRs it holds, for a source that can
    tell without reading files (a snapshot, a git clone: their ``merge_times``); ``None`` for others (the
    GitHub API), for a repository the source does not hold, or on a source failure."""
    times = getattr(source, "merge_times", None)
    if not callable(times):
        return None
    try:
        found: list[datetime] = times(repo)
    except SourceError:
        return None
    return (min(found), max(found), len(found)) if found else None


def is_github(source: object) -> TypeGuard[GitHubSource]:
    """Whether ``source`` is a :class:`~bot.sources.github.GitHubSource`, asked without importing that
    module (and httpx): when it was never imported, no GitHub source exists."""
    module = sys.modules.get("bot.sources.github")
    return module is not None and isinstance(source, module.GitHubSource)


def close_source(source: PRSource) -> None:
    """Release what ``source`` holds open (the GitHub source's HTTP connections); it stays usable
    for :func:`request_summary`. A no-op for sources with nothing to close."""
    close = getattr(source, "close", None)
    if callable(close):
        close()


def canonical_repo(requested: str | None, held: list[str]) -> str:
    """The source's own spelling of ``requested`` (GitHub names ignore case and stray
    spaces are dropped); with no ``--repo``, the source's only repository.

    Args:
        requested: the ``owner/name`` the user gave, or ``None``.
        held: the repositories the source holds (``PRSource.repos()``).

    Raises:
        SourceError: no ``--repo`` and the source holds several repositories or none.
    """
    if requested is None:
        if not held:
            raise SourceError("--repo is required: the source does not say which repository it holds "
                              "(a git clone needs an origin remote on a host, e.g. git@github.com:owner/name.git)",
                              zh="需要 --repo：数据源没有说明它是哪个仓库（git 克隆需要一个托管平台上的 origin 远程，"
                                 "例如 git@github.com:owner/name.git）")
        if len(held) != 1:
            names = ", ".join(held[:5])
            raise SourceError(f"--repo is required: the source holds {len(held)} repositories ({names})",
                              zh=f"需要 --repo：数据源里有 {len(held)} 个仓库（{names}）")
        return held[0]
    wanted = requested.strip()
    return next((name for name in held if name.lower() == wanted.lower()), wanted)
