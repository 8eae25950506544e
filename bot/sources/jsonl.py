"""A :class:`~bot.sources.base.PRSource` over a JSONL snapshot file (plain or gzip).

Snapshot format (``shared/data/README.md``; ``tests/data/verl-prs.jsonl.gz``
and ``examples/verl-2026-W16.jsonl`` are real ones): UTF-8, one JSON object
per line, one merged PR per object, records in any order, blank lines allowed.

Required fields of a record (present and not ``null``):

=====================  ===========================================================
``repo``               str, ``owner/name``
``number``             int ≥ 1, the PR number
``title``              str
``body``               str, may be empty
``author``             str
``merged_at``          str, ISO 8601 *with* UTC offset (naive times are rejected)
``authored_at``        str, ISO 8601 with UTC offset
``merge_commit_sha``   str, 40 hex digits
``additions``          int ≥ 0, added lines over all files
``deletions``          int ≥ 0, deleted lines over all files
``changed_files``      int ≥ 0, number of files
``files``              list of ``{path, status, additions, deletions}``; ``status`` is
                       one of added, modified, removed, renamed, copied;
                       ``additions``/``deletions`` are int ≥ 0, or ``null`` for binary files
=====================  ===========================================================

Optional fields, used when present: ``url`` (str), ``labels`` (list of str),
``reviews`` and ``comments`` (int counts), and per file ``previous_path`` (str,
for renames and copies) and ``patch`` (str, unified diff of that file).
Any other field is ignored, so later versions of the format can add fields.

Values are checked strictly (``"12"`` is not a number, ``12.0`` is not an
int). A line that is not JSON, lacks a required field or has a bad value is
never skipped: it raises :class:`~bot.errors.SnapshotFormatError` with the
file, the 1-based line number and a one-line reason naming the field.

The first line may be a header instead of a record (``prhub export`` writes one,
:func:`snapshot_header`): an object with the key :data:`HEADER_KEY` (the header's version, 1),
``repo``, ``window`` (the window exported) and ``covers_from`` / ``covers_until`` (ISO 8601
instants): the span whose every merged PR of ``repo`` the file holds. A window before
``covers_from`` is then unknown rather than empty (:meth:`SnapshotSource.covered_from`);
without a header the first record's merge marks where the file's knowledge begins.
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import re
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.errors import PRNotFoundError, SnapshotFormatError, SourceError, UnknownRepoError
from bot.models import PullRequest, Window

__all__ = ["HEADER_KEY", "SnapshotSource", "snapshot_header"]

HEADER_KEY = "prhub_snapshot"
"""The key that makes a snapshot's first line its header (its value: the header's version)."""

_REQUIRED_FIELDS = (
    "repo",
    "number",
    "title",
    "body",
    "author",
    "merged_at",
    "authored_at",
    "merge_commit_sha",
    "additions",
    "deletions",
    "changed_files",
    "files",
)
_REQUIRED_FILE_FIELDS = ("path", "status", "additions", "deletions")
_NULLABLE_FILE_FIELDS = frozenset({"additions", "deletions"})
_SHA_RE = re.compile(r"^[0-9a-fA-F]{40}$")
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class _RepoIndex:
    """The PRs of one repository: in merge order (UTC instant, number) and by number."""

    name: str
    prs: list[PullRequest] = field(default_factory=list)
    merged_utc: list[datetime] = field(default_factory=list)
    by_number: dict[int, PullRequest] = field(default_factory=dict)


def _repo_key(repo: str) -> str:
    # GitHub owner and repository names are case-insensitive.
    return repo.strip().lower()


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _missing_field(record: dict[str, Any]) -> str | None:
    """Reason why a decoded record lacks a required field, or ``None`` when it has them all."""
    for name in _REQUIRED_FIELDS:
        if name not in record:
            return f"missing required field `{name}`"
        if record[name] is None:
            return f"required field `{name}` is null"
    files = record["files"]
    if not isinstance(files, list):
        return f"`files`: expected an array, got {_json_type(files)}"
    for index, item in enumerate(files):
        where = f"files[{index}]"
        if not isinstance(item, dict):
            return f"`{where}`: expected an object, got {_json_type(item)}"
        for name in _REQUIRED_FILE_FIELDS:
            if name not in item:
                return f"`{where}`: missing required field `{name}`"
            if item[name] is None and name not in _NULLABLE_FILE_FIELDS:
                return f"`{where}.{name}`: required field is null"
    return None


def _validation_reason(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = _format_loc(tuple(first["loc"]))
    reason = f"`{loc}`: {first['msg']}" if loc else str(first["msg"])
    if first["type"] != "missing":
        reason += f" (got {_short(first.get('input'))})"
    if len(errors) > 1:
        reason += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return reason


def _parse_record(path: str, line: int, raw: bytes) -> PullRequest | None:
    """The PR of one snapshot line, or ``None`` for a blank line.

    Raises:
        SnapshotFormatError: the line is not UTF-8 JSON object text or not a valid record.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotFormatError(path, line, f"not UTF-8 text (bad byte at column {exc.start + 1})") from exc
    if line == 1:
        text = text.removeprefix("\ufeff")
    if not text.strip():
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        what = exc.msg.removesuffix(" at")  # json says "Unterminated string starting at" before a position
        raise SnapshotFormatError(path, line, f"not valid JSON at column {exc.colno}: {what}",
                                  zh=f"不是有效的 JSON（第 {exc.colno} 列）：{what}") from exc
    except RecursionError as exc:
        raise SnapshotFormatError(path, line, "not valid JSON: nested too deeply") from exc
    if not isinstance(record, dict):
        raise SnapshotFormatError(path, line, f"expected a JSON object, got {_json_type(record)}")
    missing = _missing_field(record)
    if missing is not None:
        raise SnapshotFormatError(path, line, missing)
    try:
        pr = PullRequest.model_validate_json(text, strict=True)
    except ValidationError as exc:
        raise SnapshotFormatError(path, line, _validation_reason(exc)) from exc
    sha = record["merge_commit_sha"]
    if not _SHA_RE.fullmatch(sha):
        raise SnapshotFormatError(
            path, line, f"`merge_commit_sha`: expected 40 hex digits (got {_short(sha)})"
        )
    return pr


@contextmanager
def _open_bytes(path: Path) -> Iterator[io.BufferedIOBase]:
    """Open ``path`` for reading bytes, transparently un-gzipping it (detected by its magic bytes).

    Raises:
        SourceError: the file is missing, not a regular file or unreadable.
    """
    try:
        raw = path.open("rb")
    except FileNotFoundError as exc:
        raise SourceError(f"snapshot not found: {path}", zh=f"找不到快照文件：{path}") from exc
    except IsADirectoryError as exc:
        raise SourceError(f"snapshot is a directory, not a file: {path}") from exc
    except OSError as exc:
        raise SourceError(f"cannot read snapshot {path}: {exc.strerror or exc}") from exc
    with raw:
        try:
            magic = raw.peek(2)[:2]
        except OSError as exc:
            raise SourceError(f"cannot read snapshot {path}: {exc.strerror or exc}") from exc
        if magic != _GZIP_MAGIC:
            yield raw
            return
        with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
            yield unpacked


def snapshot_header(repo: str, window: Window, *, covers_from: datetime, covers_until: datetime) -> dict[str, Any]:
    """The header line ``prhub export`` writes first (see the module docstring)."""
    return {HEADER_KEY: 1, "repo": repo, "window": window.name, "timezone": window.timezone,
            "covers_from": covers_from.astimezone(UTC).isoformat(),
            "covers_until": covers_until.astimezone(UTC).isoformat()}


def _header(path: str, line: int, raw: bytes) -> dict[str, Any] | None:
    """The header of a first line that is one (its ``covers_from`` read as an instant), else ``None``.

    Raises:
        SnapshotFormatError: a header whose ``covers_from`` is not an ISO 8601 instant with its offset.
    """
    if HEADER_KEY.encode() not in raw:
        return None
    try:
        found = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None  # not a header: the record's own check reports what is wrong
    if not isinstance(found, dict) or HEADER_KEY not in found:
        return None
    try:
        start = datetime.fromisoformat(str(found.get("covers_from")))
    except ValueError as exc:
        raise SnapshotFormatError(path, line, "header: `covers_from` is not an ISO 8601 instant") from exc
    if start.tzinfo is None:
        raise SnapshotFormatError(path, line, "header: `covers_from` has no UTC offset")
    return {**found, "covers_from": start.astimezone(UTC)}


def _read_records(path: Path, header: dict[str, Any] | None = None) -> Iterator[tuple[int, PullRequest]]:
    """Yield ``(line number, PR)`` for every non-blank line of the snapshot at ``path``; a header line
    (:data:`HEADER_KEY`) goes into ``header`` instead.

    Raises:
        SourceError: the file is missing, unreadable or a corrupt gzip stream.
        SnapshotFormatError: a line is not a valid record.
    """
    name = str(path)
    line = 0
    with _open_bytes(path) as stream:
        try:
            for line, raw in enumerate(stream, start=1):
                if line == 1 and header is not None and (found := _header(name, line, raw)) is not None:
                    header.update(found)
                    continue
                pr = _parse_record(name, line, raw)
                if pr is not None:
                    yield line, pr
        except (OSError, EOFError, zlib.error) as exc:
            raise SourceError(f"cannot read snapshot {path} after line {line}: {exc}") from exc


def _build_index(path: Path, header: dict[str, Any] | None = None) -> dict[str, _RepoIndex]:
    """Read the whole snapshot into per-repository indexes.

    Raises:
        SourceError, SnapshotFormatError: see :func:`_read_records`; a duplicate
            (repo, number) is a :class:`SnapshotFormatError` naming both lines.
    """
    index: dict[str, _RepoIndex] = {}
    seen: dict[tuple[str, int], int] = {}
    for line, pr in _read_records(path, header):
        key = _repo_key(pr.repo)
        first = seen.setdefault((key, pr.number), line)
        if first != line:
            raise SnapshotFormatError(
                str(path), line, f"duplicate PR {pr.repo}#{pr.number}: already on line {first}"
            )
        repo = index.setdefault(key, _RepoIndex(name=pr.repo))
        repo.prs.append(pr)
        repo.by_number[pr.number] = pr
    for repo in index.values():
        repo.prs.sort(key=lambda pr: (pr.merged_at.astimezone(UTC), pr.number))
        repo.merged_utc = [pr.merged_at.astimezone(UTC) for pr in repo.prs]
    return index


class SnapshotSource:
    """Merged PRs read from one JSONL snapshot file (see the module docstring for the format).

    The file is read on the first call of any method, completely, and then
    answered from memory: later changes to the file are not seen (make a new
    ``SnapshotSource`` to re-read). A failed read is not cached; the next call
    tries again. Safe to share between threads.

    Repository names are matched case-insensitively (as on GitHub); returned
    PRs and :meth:`repos` keep the spelling of the file.

    Args:
        path: the snapshot, plain JSONL or gzip-compressed (detected by content,
            not by the ``.gz`` suffix).
    """

    def __init__(self, path: Path) -> None:
        self._path = Path(path)
        self._index: dict[str, _RepoIndex] | None = None
        self._header: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SnapshotSource({str(self._path)!r})"

    @property
    def path(self) -> Path:
        """The snapshot file this source reads."""
        return self._path

    def load(self) -> None:
        """Read and check the whole file now (otherwise done on first use); no-op once loaded.

        Raises:
            SourceError: ``snapshot not found: PATH``, or the file is unreadable
                or a corrupt gzip stream.
            SnapshotFormatError: a line is not JSON, lacks a required field, has
                a bad value, or repeats a (repo, number) of an earlier line.
        """
        self._loaded()

    def _loaded(self) -> dict[str, _RepoIndex]:
        index = self._index
        if index is None:
            with self._lock:
                index = self._index
                if index is None:
                    header: dict[str, Any] = {}
                    index = _build_index(self._path, header)
                    self._header = header
                    self._index = index
        return index

    def _repo(self, repo: str) -> _RepoIndex:
        index = self._not_empty()
        found = index.get(_repo_key(repo))
        if found is None:
            held = ", ".join(sorted(entry.name for entry in index.values()))
            raise UnknownRepoError(f"unknown repository {repo!r}: snapshot {self._path} holds {held}",
                                   zh=f"快照 {self._path} 里没有仓库 {repo!r}，只有 {held}")
        return found

    def _not_empty(self) -> dict[str, _RepoIndex]:
        index = self._loaded()
        if not index:
            raise SourceError(f"snapshot {self._path} is empty: it holds no PR records",
                              zh=f"快照 {self._path} 是空的：里面没有任何 PR 记录")
        return index

    def repos(self) -> list[str]:
        """The ``owner/name`` of every repository in the file, sorted, as spelled there.

        Raises:
            SourceError: the file holds no record (``snapshot … is empty``); else as :meth:`load`.
            SnapshotFormatError: as :meth:`load`.
        """
        return sorted(entry.name for entry in self._not_empty().values())

    def covered_from(self, repo: str) -> datetime | None:
        """Where the file's knowledge of ``repo`` begins: the header's ``covers_from`` (for its repository),
        else the first record's merge; ``None`` when the file holds no PR of ``repo``. Windows ending before
        it are unknown, not empty (week over week says so).

        Raises:
            SourceError, SnapshotFormatError: as :meth:`load`.
        """
        index = self._loaded()
        entry = index.get(_repo_key(repo))
        start = self._header.get("covers_from")
        if isinstance(start, datetime) and _repo_key(str(self._header.get("repo", ""))) == _repo_key(repo):
            return start
        return entry.merged_utc[0] if entry is not None and entry.merged_utc else None

    def merge_times(self, repo: str) -> list[datetime]:
        """The merge instants (UTC) of ``repo``'s PRs in the file, oldest first.

        Raises:
            UnknownRepoError, SourceError, SnapshotFormatError: as :meth:`merged_prs`.
        """
        return list(self._repo(repo).merged_utc)

    def merged_prs(self, repo: str, window: Window) -> list[PullRequest]:
        """The PRs of ``repo`` whose ``merged_at`` instant is in ``[window.start, window.end)``.

        Returns a new list ordered by the instant of ``merged_at`` (ascending,
        whatever the records' UTC offsets), ties by PR number; empty if none.

        Raises:
            UnknownRepoError: the file holds no PR of ``repo``; the message
                lists the repositories it holds.
            SourceError: the file is empty; else as :meth:`load`.
            SnapshotFormatError: as :meth:`load`.
        """
        entry = self._repo(repo)
        lo = bisect.bisect_left(entry.merged_utc, window.start.astimezone(UTC))
        hi = bisect.bisect_left(entry.merged_utc, window.end.astimezone(UTC), lo=lo)
        return entry.prs[lo:hi]

    def pull_request(self, repo: str, number: int) -> PullRequest:
        """The PR ``number`` of ``repo``.

        Raises:
            UnknownRepoError: the file holds no PR of ``repo``.
            PRNotFoundError: ``repo`` is in the file but PR ``number`` is not.
            SourceError, SnapshotFormatError: as :meth:`load`.
        """
        entry = self._repo(repo)
        try:
            return entry.by_number[number]
        except KeyError as exc:
            raise PRNotFoundError(f"no merged PR #{number} of {entry.name} in snapshot {self._path}",
                                  zh=f"快照 {self._path} 里没有 {entry.name} 的已合并 PR #{number}") from exc
