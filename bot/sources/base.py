"""The interface every pull-request source implements, and the spec parser that picks one.

A source answers three questions about the merged PRs it knows: which
repositories it holds, which PRs of a repository were merged in a window, and
one PR by number. The digest core, the CLI and the handlers only see
:class:`PRSource`; what lies behind it (a JSONL snapshot today; the GitHub API
and a git clone later) is chosen by a spec string with :func:`open_source`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from bot.errors import SourceError
from bot.models import PullRequest, Window
from bot.sources.jsonl import SnapshotSource

__all__ = ["SOURCE_FORMS", "PRSource", "open_source"]

SOURCE_FORMS = "jsonl:PATH (a JSONL snapshot, plain or .gz)"
"""The source specs :func:`open_source` accepts, as quoted in error messages."""

_LATER_FORMS = "'github' and 'git:PATH' are planned but not available yet"


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


def open_source(spec: str) -> PRSource:
    """Open the PR source named by ``spec``.

    Supported: ``jsonl:PATH`` — a JSONL snapshot file (plain or gzip, see
    :class:`bot.sources.jsonl.SnapshotSource`); ``~`` in PATH is expanded and
    a relative PATH is relative to the working directory. The file is read
    lazily, on the first question asked of the source.

    Raises:
        SourceError: ``spec`` has an unknown scheme or no path; the message
            names the supported forms (``github`` and ``git:PATH`` are
            announced for a later release).
    """
    scheme, sep, rest = spec.strip().partition(":")
    if sep and scheme.lower() == "jsonl":
        if not rest.strip():
            raise SourceError(f"source {spec!r} has no path: expected {SOURCE_FORMS}")
        return SnapshotSource(Path(rest.strip()).expanduser())
    raise SourceError(f"unsupported source {spec!r}: expected {SOURCE_FORMS}; {_LATER_FORMS}")
