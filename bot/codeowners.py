"""CODEOWNERS: who owns which paths of a repository, for ``path:@me`` filters.

Parsing is the ``codeowners`` package (GitHub's rules: the **last** matching pattern wins; a
pattern with no owner leaves its paths unowned; owners are ``@handle``, ``@org/team`` or an
email). Lines the package cannot read (an unterminated ``[``) are skipped, as GitHub skips
invalid lines, and listed in :attr:`CodeOwners.skipped_lines`. Owners compare case-insensitively.

Where the text comes from: :func:`read_codeowners` asks any source that can read files of the
repository (:class:`RepositoryFiles` — :class:`bot.sources.git.GitSource` reads ``HEAD``,
:class:`bot.sources.github.GitHubSource` the contents API) for the locations GitHub looks at,
in GitHub's order (:data:`CODEOWNERS_PATHS`); the first that exists is used. A JSONL snapshot
has no file contents: :class:`~bot.errors.CodeownersError` says so.

:func:`cached_codeowners` keeps what was read (or why nothing could be) in the store for a while
(``prhub:codeowners:{repo}``, ``codeowners_ttl_s``), reading in a worker thread: the sources are
synchronous (git, HTTP).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import Protocol, runtime_checkable

from codeowners import CodeOwners as _Parser
from pydantic import BaseModel, ConfigDict

from bot.errors import CodeownersError
from bot.sources.reads import read_source
from bot.store import Store, cache_key

__all__ = ["CODEOWNERS_PATHS", "CodeOwners", "RepositoryFiles", "cached_codeowners", "read_codeowners"]

CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
"""Where GitHub looks for the file, in its order (the first one found is used)."""


@runtime_checkable
class RepositoryFiles(Protocol):
    """A source that can read files of a repository at its default branch."""

    def file_text(self, repo: str, path: str) -> str | None:
        """The text of ``path`` in ``repo`` (default branch / ``HEAD``), or ``None`` when there is no such file.

        Raises:
            SourceError: the source could not be read.
        """
        ...


class CodeOwners(BaseModel):
    """One repository's CODEOWNERS file: its ``text``, the ``repo`` and the ``path`` it was read from.

    Frozen and JSON round-trippable (the text is kept, the parse is redone), so it can be cached
    (e.g. in Redis) next to the subscriptions that need it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    repo: str = ""
    path: str = CODEOWNERS_PATHS[0]

    @cached_property
    def _parsed(self) -> tuple[_Parser, tuple[int, ...]]:
        try:
            return _Parser(self.text), ()
        except ValueError:
            kept: list[str] = []
            skipped: list[int] = []
            for number, line in enumerate(self.text.splitlines(), start=1):
                try:
                    _Parser(line)
                except ValueError:
                    skipped.append(number)
                    kept.append("")  # keep the line numbers of the rest
                else:
                    kept.append(line)
            return _Parser("\n".join(kept)), tuple(skipped)

    @property
    def skipped_lines(self) -> tuple[int, ...]:
        """1-based numbers of the lines skipped as invalid."""
        return self._parsed[1]

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners of ``path`` (repository-relative, no leading ``/``) by the last matching line,
        as written there (``@alice``, ``@org/team``, ``a@example.com``); ``()`` when unowned."""
        return tuple(name for _, name in self._parsed[0].of(path.lstrip("/")))

    def owns(self, owner: str, path: str) -> bool:
        """Whether ``owner`` (``@handle``, ``@org/team`` or an email; case-insensitive) is an owner of ``path``."""
        wanted = _owner_key(owner)
        return any(_owner_key(name) == wanted for name in self.owners_of(path))

    def patterns_of(self, owner: str) -> tuple[str, ...]:
        """The patterns of the lines that name ``owner``, in file order — the paths it owns, unless a
        later line gives some of them to someone else (:meth:`owns` applies that rule)."""
        wanted = _owner_key(owner)
        lines = sorted(self._parsed[0].paths, key=lambda entry: entry[3])
        return tuple(dict.fromkeys(pattern for _, pattern, owners, _, _ in lines
                                   if any(_owner_key(name) == wanted for _, name in owners)))

    def owned(self, owner: str, paths: Iterable[str]) -> list[str]:
        """Those of ``paths`` that ``owner`` owns, in order."""
        return [p for p in paths if self.owns(owner, p)]

    def owners(self) -> tuple[str, ...]:
        """Every owner the file names, sorted case-insensitively."""
        names = {name for _, _, owners, _, _ in self._parsed[0].paths for _, name in owners}
        return tuple(sorted(names, key=str.lower))


def _owner_key(owner: str) -> str:
    text = owner.strip().lower()
    return text if "@" in text[1:] and not text.startswith("@") else "@" + text.lstrip("@")


def read_codeowners(source: object, repo: str) -> CodeOwners:
    """The CODEOWNERS of ``repo`` from ``source``: the first of :data:`CODEOWNERS_PATHS` that exists.

    Args:
        source: a PR source; it must implement :class:`RepositoryFiles` (git clones and the
            GitHub API do, JSONL snapshots do not).
        repo: ``owner/name``.

    Raises:
        CodeownersError: the source cannot read files (a snapshot), or none of the paths exists.
        SourceError: the source failed (git error, GitHub refused the request).
    """
    if not isinstance(source, RepositoryFiles):
        kind = type(source).__name__
        raise CodeownersError(
            f"this source ({kind}) cannot see CODEOWNERS: it has PR records but no file contents; "
            "use a git clone (git:PATH) or the GitHub API (github) for path:@me",
            zh=f"这个数据源（{kind}）看不到 CODEOWNERS：它只有 PR 记录，没有文件内容；"
               "要用 path:@me，请把数据源设为本地克隆（git:PATH）或 GitHub API（github）")
    for path in CODEOWNERS_PATHS:
        text = source.file_text(repo, path)
        if text is not None:
            return CodeOwners(text=text, repo=repo, path=path)
    looked = ", ".join(CODEOWNERS_PATHS)
    raise CodeownersError(f"{repo} has no CODEOWNERS file (looked at {looked}), so path:@me has no paths",
                          zh=f"{repo} 没有 CODEOWNERS 文件（查找了 {looked}），所以 path:@me 没有对应的路径")


async def cached_codeowners(store: Store, source: object, repo: str, *, ttl_s: int) -> CodeOwners:
    """:func:`read_codeowners`, kept in ``store`` for ``ttl_s`` seconds (the answer, or the reason there is
    none: a repository without the file is not asked again every poll); read in a worker thread.

    Raises:
        CodeownersError: as :func:`read_codeowners` (also when that answer is the cached one).
        SourceError: the source failed (not cached: the next call tries again).
        redis.exceptions.RedisError: the store did not answer.
    """
    key = cache_key("codeowners", repo.strip().lower())
    cached = await store.get_json(key)
    if isinstance(cached, dict) and isinstance(cached.get("missing"), dict):
        missing = cached["missing"]
        raise CodeownersError(str(missing.get("en", "")), zh=str(missing.get("zh", "")))
    if isinstance(cached, dict):
        return CodeOwners.model_validate(cached)
    try:
        owners = await read_source(source, read_codeowners, source, repo)
    except CodeownersError as exc:
        await store.set_json(key, {"missing": exc.messages}, ttl_s)
        raise
    await store.set_json(key, owners.model_dump(mode="json"), ttl_s)
    return owners
