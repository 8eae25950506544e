"""The one exception tree of prhub; the CLI and the platform handlers translate it at the edge.

::

    PrhubError                      base; ``str(exc)`` is one line a person can act on
    ├── ConfigError                 bad prhub.toml / environment value
    ├── WindowError                 malformed week, since > until, unknown time zone
    └── SourceError                 a PR source could not give what was asked
        ├── SnapshotFormatError     a snapshot line is not JSON or lacks a field (has ``path``, ``line``)
        ├── UnknownRepoError        the source holds no PR of that repository
        └── PRNotFoundError         no merged PR with that number

Code raises the most specific class and chains the cause (``raise … from exc``);
nothing catches ``Exception`` to log and carry on.
"""

from __future__ import annotations


class PrhubError(Exception):
    """Base of every error prhub raises on purpose."""


class ConfigError(PrhubError):
    """The configuration (TOML file or environment) is invalid."""


class WindowError(PrhubError, ValueError):
    """A time window could not be built: malformed week, since after until, unknown zone."""


class SourceError(PrhubError):
    """A PR source failed to deliver."""


class SnapshotFormatError(SourceError):
    """A line of a JSONL snapshot is not valid JSON or not a valid PR record.

    Attributes:
        path: the snapshot file.
        line: 1-based line number of the bad record.
    """

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class UnknownRepoError(SourceError):
    """The source holds no pull request of the requested repository."""


class PRNotFoundError(SourceError):
    """No merged pull request with that number in that repository."""
