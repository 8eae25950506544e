"""A :class:`~bot.sources.base.PRSource` over a local git clone (bare or not), through the ``git`` CLI.

Works for any repository that squash-merges or merge-commits its pull requests
(GitHub, GitLab and Gitee mirrors alike), with no token and no network.

Which commits are PRs — the first-parent history of ``ref`` (``HEAD`` by default,
i.e. the default branch of a fresh or bare clone), read once with ``git log
--first-parent``:

- a *squash* commit whose subject ends in ``(#N)`` is PR ``N``; its title is the
  subject without that suffix and its description is the commit body, without
  trailers (``Co-authored-by:``, ``Signed-off-by:`` …, :func:`~bot.sources.links.strip_trailers`);
- a *merge* commit whose subject is ``Merge pull request #N from owner/branch``
  is PR ``N``; GitHub writes the PR title as the first line of the body and the
  description after it; the author is ``owner`` of the head branch;
- any other commit is not a PR. Numbers in a body never make a commit a PR.

``merged_at`` is the committer date of that commit (with its UTC offset),
``authored_at`` its author date, ``merge_commit_sha`` its sha. Files,
line statistics (``git log --numstat``; binary files have ``None`` counts) and
per-file patch text (the hunks only, as the GitHub API's ``patch`` field) are
the diff against the first parent, with rename detection. A revert PR's
``reverts`` is the PR whose commit its ``This reverts commit SHA`` line names,
else the ``(#N)`` inside its ``Revert "…"`` title.

The commit list is read on first use and kept; files and patches are read per
window (two ``git`` processes per call) and cached by commit.

Fresh history (``prhub serve``): :meth:`GitSource.refresh` runs ``git fetch`` of the ``origin``
remote's default branch into :data:`UPSTREAM` (bounded by ``fetch_timeout_s``, logged), and from then on
the source reads that ref, the commit list read again when it moved. With ``fetch=True`` the first
read fetches first; the scheduler fetches every ``git_fetch_interval_s`` and before each weekly
push. A ``remote`` URL (``git:https://host/owner/name.git``) is cloned (bare) into ``path`` on first
use when ``path`` does not exist yet.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.errors import PRNotFoundError, SourceError, UnknownRepoError
from bot.models import FileChange, FileStatus, PullRequest, Release, Window
from bot.sources.links import merge_pr_number, reverted_pr, split_squash_subject, strip_trailers

__all__ = ["UPSTREAM", "GitSource", "is_remote", "repo_from_remote"]

GIT_TIMEOUT_S = 120.0
"""The longest one ``git`` command of a :class:`GitSource` may run (seconds) before it is killed."""

UPSTREAM = "refs/prhub/upstream"
"""Where :meth:`GitSource.refresh` puts the remote's default branch (the clone's own branches are left alone)."""

log = logging.getLogger(__name__)

_RS, _US = "\x1e", "\x1f"
_LOG_FORMAT = f"{_RS}%H{_US}%P{_US}%an{_US}%aI{_US}%cI{_US}%B"
_STATUS: dict[str, FileStatus] = {"A": "added", "D": "removed", "M": "modified", "T": "modified",
                                  "R": "renamed", "C": "copied"}
_REVERTS_COMMIT = re.compile(r"\bThis reverts commit ([0-9a-f]{7,40})\b")
_REMOTE = re.compile(r"(?:[:/])(?P<owner>[^/:\s]+)/(?P<name>[^/\s]+?)(?:\.git)?/?$")
_NAME = re.compile(r"^[^/\s]+/[^/\s]+$")
_VERSION_TAG = re.compile(r"v?\d+(?:\.\d+)+(?:[.+-]?[0-9A-Za-z]+)*")
"""A tag that names a release (``v0.7.1``, ``1.2.0``, ``v2.0.0rc1``, ``v0.4.0-post1``); other tags are not releases."""


def is_remote(spec_path: str) -> bool:
    """Whether the path of a ``git:`` spec is a remote's URL (``https://…``, ``ssh://…``, ``file://…``,
    ``git@host:owner/name.git``) rather than a local folder."""
    text = spec_path.strip()
    return "://" in text or re.match(r"^[\w.-]+@[\w.-]+:[^/]", text) is not None


def repo_from_remote(url: str) -> str | None:
    """``owner/name`` from a hosted remote URL (``git@host:owner/name.git``, ``https://host/owner/name``),
    or ``None`` — for a local path (``/srv/x.git``, ``file://…``) and for a path deeper than
    ``owner/name`` (a GitLab subgroup), whose name would be guessed wrong: pass ``repo=`` then."""
    url = url.strip()
    scp = re.match(r"^[\w.-]+@[\w.-]+:(?P<path>.+)$", url)
    hosted = re.match(r"^(?:https?|ssh|git)://[^/]+/(?P<path>.+)$", url)
    matched = scp or hosted
    path = matched["path"] if matched is not None else None
    if path is None or path.strip("/").removesuffix(".git").count("/") != 1:
        return None
    found = _REMOTE.search(url)
    if found is None:
        return None
    name = f"{found['owner']}/{found['name']}"
    return name if _NAME.fullmatch(name) else None


@dataclass(frozen=True)
class _Commit:
    """One PR commit of the first-parent history (no files yet)."""

    sha: str
    number: int
    title: str
    body: str
    author: str
    authored_at: datetime
    merged_at: datetime


def _split_message(message: str) -> tuple[str, str]:
    """(subject line, body) of a raw commit message."""
    subject, _, rest = message.strip("\n").partition("\n")
    return subject.strip(), rest.strip("\n").rstrip()


def _pr_of(sha: str, parents: str, author: str, authored: str, committed: str, message: str) -> _Commit | None:
    subject, body = _split_message(message)
    squash = split_squash_subject(subject)
    merge = merge_pr_number(subject) if len(parents.split()) > 1 else None
    if merge is not None:
        number, head = merge
        title_line, _, rest = body.partition("\n")
        title = title_line.strip() or subject
        body = rest.strip("\n").rstrip() if title_line.strip() else body
        author = head.split("/", 1)[0] if "/" in head else author
    elif squash is not None:
        title, number = squash
    else:
        return None
    body = strip_trailers(body)
    try:
        return _Commit(sha, number, title, body, author, datetime.fromisoformat(authored),
                       datetime.fromisoformat(committed))
    except ValueError as exc:
        raise SourceError(f"commit {sha[:12]} has an unreadable date ({committed!r}): {exc}") from exc


def _parse_raw_numstat(chunk: str) -> list[FileChange]:
    """Files of one commit from ``--raw --numstat -z`` output (raw entries first, then numstat)."""
    tokens = [t.lstrip("\n") for t in chunk.split("\0")]
    raw: list[tuple[FileStatus, str, str | None]] = []
    stats: list[tuple[int | None, int | None]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token:
            continue
        if token.startswith(":"):
            letter = token.split()[-1][:1]
            status = _STATUS.get(letter, "modified")
            if letter in ("R", "C"):
                old, new = tokens[i], tokens[i + 1]
                i += 2
                raw.append((status, new, old))
            else:
                raw.append((status, tokens[i], None))
                i += 1
            continue
        added, _, rest = token.partition("\t")
        deleted, _, path = rest.partition("\t")
        if not path:  # a rename or copy: old and new path follow as their own tokens
            i += 2
        stats.append((None if added == "-" else int(added), None if deleted == "-" else int(deleted)))
    if len(stats) != len(raw):
        raise SourceError(f"git reported {len(raw)} files but {len(stats)} line counts")
    return [
        FileChange(path=path, status=status, additions=adds, deletions=dels,
                   previous_path=old if status in ("renamed", "copied") else None)
        for (status, path, old), (adds, dels) in zip(raw, stats, strict=True)
    ]


def _split_patches(chunk: str) -> list[str | None]:
    """Per-file hunks (from the first ``@@`` line on) of one commit's ``-p`` output, in git's file order."""
    patches: list[str | None] = []
    current: list[str] | None = None
    hunks = False
    for line in chunk.split("\n"):
        if line.startswith("diff --git "):
            if current is not None:
                patches.append("\n".join(current).rstrip("\n") or None)
            current = []
            hunks = False
            continue
        if current is None:
            continue
        if not hunks and line.startswith("@@"):
            hunks = True
        if hunks:
            current.append(line)
    if current is not None:
        patches.append("\n".join(current).rstrip("\n") or None)
    return patches


class GitSource:
    """Merged PRs read from a local git clone (see the module docstring for the rules).

    Safe to share between threads. Repository names match case-insensitively.

    Args:
        path: the clone's working tree or its bare repository directory.
        repo: the ``owner/name`` this clone holds; by default taken from the
            ``origin`` remote's URL. Without either, the source answers for any
            ``owner/name`` asked (a clone holds one repository).
        ref: the branch whose first-parent history lists the merges (default ``HEAD``).
        patches: read per-file patch text (one more ``git`` process per window).
        git: the git executable.
        timeout_s: the longest one local ``git`` command may run (:data:`GIT_TIMEOUT_S`).
        fetch: fetch ``origin`` before the first read (:meth:`refresh`).
        fetch_timeout_s: the longest a ``git fetch`` (or the first clone) may take.
        remote: a URL to clone ``path`` from (bare) when ``path`` does not exist.
    """

    def __init__(self, path: Path, *, repo: str | None = None, ref: str = "HEAD", patches: bool = True,
                 git: str = "git", timeout_s: float = GIT_TIMEOUT_S, fetch: bool = False,
                 fetch_timeout_s: float = 300.0, remote: str | None = None) -> None:
        self._timeout_s = timeout_s
        self._path = Path(path).expanduser()
        self._repo = repo
        self._ref = ref
        self._patches = patches
        self._git = git
        self._fetch_first = fetch
        self._fetch_timeout_s = fetch_timeout_s
        self._remote = remote
        self._fetch_lock = threading.Lock()
        self._read_ref: str | None = None
        self._lock = threading.Lock()
        self._commits: list[_Commit] | None = None
        self._by_number: dict[int, _Commit] = {}
        self._reverts: dict[str, int] = {}
        self._files: dict[str, tuple[FileChange, ...]] = {}
        self._releases: tuple[tuple[Release, ...], dict[str, str]] | None = None

    def __repr__(self) -> str:
        return f"GitSource({str(self._path)!r}, ref={self._ref!r})"

    # -- git --------------------------------------------------------------------------------------

    def _run(self, args: Sequence[str], stdin: str | None = None, *, timeout_s: float | None = None,
             cwd: bool = True) -> str:
        """Output of ``git -C PATH ARGS`` as text (UTF-8, bad bytes replaced); ``cwd=False``: ``git ARGS``.

        Raises:
            SourceError: git is missing, exits with an error (its first stderr line is quoted), or runs
                longer than ``timeout_s`` (default: the source's ``timeout_s``; it is killed).
        """
        limit = timeout_s if timeout_s is not None else self._timeout_s
        env = {**os.environ, "LC_ALL": "C", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
        where = ["-C", str(self._path)] if cwd else []
        try:
            done = subprocess.run(
                [self._git, *where, "-c", "core.quotepath=false", *args],
                input=stdin.encode() if stdin is not None else None, capture_output=True, env=env, check=False,
                timeout=limit,
            )
        except FileNotFoundError as exc:
            raise SourceError(f"git source {self._path}: the `{self._git}` command is not installed") from exc
        except subprocess.TimeoutExpired as exc:
            raise SourceError(f"git source {self._path}: git {args[0]} took longer than {limit:g} s "
                              "and was stopped") from exc
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = reason[0] if reason else f"exit status {done.returncode}"
            raise SourceError(f"git source {self._path}: git {args[0]} failed: {why}")
        return done.stdout.decode("utf-8", "replace")

    def _load(self) -> list[_Commit]:
        commits = self._commits
        if commits is not None:
            return commits
        if self._fetch_first or (self._remote and not self._path.exists()):
            self._fetch_first = False
            try:
                self.refresh()
            except SourceError as exc:  # the local history is read as it is; the next fetch tries again
                log.warning("%s", exc)
        with self._lock:
            if self._commits is not None:
                return self._commits
            if not self._path.is_dir():
                raise SourceError(f"git source not found: {self._path} is not a directory",
                                  zh=f"找不到 git 数据源：{self._path} 不是目录")
            self._run(["rev-parse", "--git-dir"])
            if self._repo is None:
                remote = self._run(["config", "--default", "", "--get", "remote.origin.url"]).strip()
                self._repo = repo_from_remote(remote) if remote else None
            out = self._run(["log", "--first-parent", f"--format={_LOG_FORMAT}", self._reading(), "--"])
            found: list[_Commit] = []
            by_number: dict[int, _Commit] = {}
            for record in out.split(_RS)[1:]:
                fields = record.split(_US, 5)
                if len(fields) != 6:
                    raise SourceError(f"git source {self._path}: unexpected git log output")
                commit = _pr_of(*fields)
                if commit is None:
                    continue
                # Newest first: a number seen twice (a PR re-landed) keeps its latest merge.
                if commit.number in by_number:
                    log.debug("PR #%s appears again in commit %s; keeping the later merge", commit.number, commit.sha)
                    continue
                by_number[commit.number] = commit
                found.append(commit)
            found.sort(key=lambda c: (c.merged_at.astimezone(UTC), c.number))
            self._by_number = by_number
            self._reverts = self._link_reverts(found)
            self._commits = found
            return found

    def _reading(self) -> str:
        """The ref whose history is read: :data:`UPSTREAM` once a fetch put it there (``ref`` ``HEAD``), else
        ``ref`` (asked of git once, then known)."""
        if self._read_ref is None:
            found = self._run(["for-each-ref", "--format=%(refname)", UPSTREAM]).strip() if self._ref == "HEAD" else ""
            self._read_ref = UPSTREAM if found == UPSTREAM else self._ref
        return self._read_ref

    def refresh(self) -> bool:
        """Fetch the ``origin`` remote's default branch into :data:`UPSTREAM` (cloning ``remote`` into ``path``
        first when it does not exist), within ``fetch_timeout_s``; the commit list is read again when the branch
        moved. Two calls do not run at once (the second waits, then fetches again).

        Returns:
            Whether new history arrived.

        Raises:
            SourceError: no ``origin`` remote, git failed, or it took longer than ``fetch_timeout_s``.
        """
        from bot import metrics

        with self._fetch_lock:
            started = time.monotonic()
            try:
                if self._remote and not self._path.exists():
                    self._path.parent.mkdir(parents=True, exist_ok=True)
                    self._run(["clone", "--bare", "--no-tags", self._remote, str(self._path)],
                              timeout_s=self._fetch_timeout_s, cwd=False)
                    log.info("git source: cloned %s into %s in %.1f s", self._remote, self._path,
                             time.monotonic() - started)
                if not self._run(["config", "--default", "", "--get", "remote.origin.url"]).strip():
                    raise SourceError(f"git source {self._path}: no origin remote to fetch from")
                before = self._run(["for-each-ref", "--format=%(objectname)", UPSTREAM]).strip()
                self._run(["fetch", "--no-tags", "--quiet", "origin", f"+HEAD:{UPSTREAM}",
                           "+refs/tags/*:refs/tags/*"], timeout_s=self._fetch_timeout_s)
                after = self._run(["rev-parse", UPSTREAM]).strip()
            except SourceError:
                metrics.GIT_FETCHES.labels("failed").inc()
                metrics.FAILURES.labels("git_fetch").inc()
                raise
            metrics.GIT_FETCHES.labels("ok").inc()
            moved = before != after
            if self._ref == "HEAD":
                self._read_ref = UPSTREAM
            with self._lock:
                self._releases = None  # a new tag may point at a commit already read
                if moved:
                    self._commits = None
            log.info("git source %s: fetched in %.1f s, %s", self._path, time.monotonic() - started,
                     f"now at {after[:12]}" if moved else "no new commits")
            return moved

    @staticmethod
    def _link_reverts(commits: list[_Commit]) -> dict[str, int]:
        by_sha = {c.sha: c.number for c in commits}
        links: dict[str, int] = {}
        for commit in commits:
            if not commit.title.lstrip().lower().startswith("revert"):
                continue
            target: int | None = None
            named = _REVERTS_COMMIT.search(commit.body)
            if named is not None:
                target = next((n for sha, n in by_sha.items() if sha.startswith(named[1])), None)
            if target is None:
                target = reverted_pr(commit.title, commit.body)
            if target is not None and target != commit.number:
                links[commit.sha] = target
        return links

    def _read_files(self, shas: Iterable[str]) -> None:
        """Fill the file cache for ``shas`` (two git processes for all of them)."""
        wanted = [sha for sha in dict.fromkeys(shas) if sha not in self._files]
        if not wanted:
            return
        common = ["log", "--no-walk=unsorted", "--stdin", "--diff-merges=first-parent", "-M", "--root",
                  "--no-color", "--no-ext-diff", f"--format={_RS}%H"]
        stdin = "\n".join(wanted) + "\n"
        files: dict[str, list[FileChange]] = {}
        for record in self._run([*common, "--raw", "--numstat", "-z"], stdin).split(_RS)[1:]:
            sha, _, rest = record.partition("\0")
            files[sha.strip()] = _parse_raw_numstat(rest)
        if self._patches:
            for record in self._run([*common, "-p"], stdin).split(_RS)[1:]:
                sha, _, rest = record.partition("\n")
                entries = files.get(sha.strip())
                patches = _split_patches(rest)
                if entries is None or len(patches) != len(entries):
                    log.warning("git source: could not match the patches of commit %s to its files", sha[:12])
                    continue
                files[sha.strip()] = [f.model_copy(update={"patch": p}) for f, p in zip(entries, patches, strict=True)]
        with self._lock:
            for sha in wanted:
                self._files[sha] = tuple(files.get(sha, ()))

    def _pr(self, repo: str, commit: _Commit) -> PullRequest:
        files = self._files[commit.sha]
        return PullRequest(
            repo=repo, number=commit.number, title=commit.title, body=commit.body, author=commit.author,
            merged_at=commit.merged_at, authored_at=commit.authored_at, merge_commit_sha=commit.sha,
            additions=sum(f.additions or 0 for f in files), deletions=sum(f.deletions or 0 for f in files),
            changed_files=len(files), files=files, reverts=self._reverts.get(commit.sha),
            released_in=self._release_index()[1].get(commit.sha), release_known=bool(self._release_index()[0]),
        )

    # -- releases ---------------------------------------------------------------------------------

    def _release_index(self) -> tuple[tuple[Release, ...], dict[str, str]]:
        """The version tags reachable from the branch read (oldest commit first) and, for every commit one of
        them holds, the first of them that holds it (read once; again after a fetch)."""
        cached = self._releases
        if cached is not None:
            return cached
        fields = "%(refname:short)%1f%(objectname)%1f%(*objectname)%1f%(committerdate:iso-strict)%1f" \
                 "%(*committerdate:iso-strict)"
        out = self._run(["for-each-ref", "--merged", self._reading(), f"--format={fields}", "refs/tags"])
        releases: list[Release] = []
        for line in out.splitlines():
            parts = line.split("\x1f")
            if len(parts) != 5 or not _VERSION_TAG.fullmatch(parts[0]):
                continue
            tag, obj, peeled, date, peeled_date = parts
            releases.append(Release(tag=tag, sha=peeled or obj, at=datetime.fromisoformat(peeled_date or date)))
        releases.sort(key=lambda r: (r.at.astimezone(UTC), r.tag))
        first: dict[str, str] = {}
        for n, release in enumerate(releases):
            # the commits this tag holds and no earlier one does: their first release is this one
            revs = "".join(f"^{r.sha}\n" for r in releases[:n])
            for sha in self._run(["rev-list", "--stdin", release.sha], stdin=revs).split():
                first.setdefault(sha, release.tag)
        found = (tuple(releases), first)
        with self._lock:
            self._releases = found
        return found

    def releases(self, repo: str) -> list[Release]:
        """The repository's releases: its version tags (``v0.7.1``, ``1.2.0``, ``v2.0.0rc1``) reachable from the
        branch read, oldest first (by the date of the commit each points at).

        Raises:
            UnknownRepoError: ``repo`` is not the clone's repository.
            SourceError: git failed.
        """
        self._check_repo(repo)
        return list(self._release_index()[0])

    def _check_repo(self, repo: str) -> str:
        self._load()
        if self._repo is None:
            if not _NAME.fullmatch(repo.strip()):
                raise UnknownRepoError(f"repository {repo!r} is not owner/name")
            return repo.strip()
        if repo.strip().lower() != self._repo.lower():
            raise UnknownRepoError(f"unknown repository {repo!r}: git clone {self._path} holds {self._repo}",
                                   zh=f"git 克隆 {self._path} 是 {self._repo}，不是 {repo!r}")
        return self._repo

    def file_text(self, repo: str, path: str) -> str | None:
        """The text of ``path`` at ``ref`` (``HEAD``: the default branch), or ``None`` when the tree has
        no such file (CODEOWNERS for ``path:@me``, :mod:`bot.codeowners`).

        Raises:
            UnknownRepoError: ``repo`` is not the clone's repository.
            SourceError: the path is not a git repository or git failed.
        """
        self._check_repo(repo)
        spec = f"{self._reading()}:{path.lstrip('/')}"
        kind = self._run(["cat-file", "--batch-check=%(objecttype)"], stdin=spec + "\n").strip()
        if kind != "blob":  # "missing", or a folder of that name
            return None
        return self._run(["cat-file", "blob", spec])

    # -- PRSource ---------------------------------------------------------------------------------

    def repos(self) -> list[str]:
        """The clone's ``owner/name`` (from ``repo=`` or the ``origin`` URL); ``[]`` when unknown.

        Raises:
            SourceError: the path is not a git repository or git failed.
        """
        self._load()
        return [self._repo] if self._repo else []

    def merge_times(self, repo: str) -> list[datetime]:
        """The merge instants (UTC) of the clone's PRs, oldest first (no file is read).

        Raises:
            UnknownRepoError: ``repo`` is not the clone's repository.
            SourceError: the path is not a git repository or git failed.
        """
        self._check_repo(repo)
        return [c.merged_at.astimezone(UTC) for c in self._load()]

    def merged_prs(self, repo: str, window: Window) -> list[PullRequest]:
        """The PRs whose merge commit's committer date lies in ``[window.start, window.end)``.

        Ordered by that instant, then by number.

        Raises:
            UnknownRepoError: ``repo`` is not the clone's repository.
            SourceError: the path is not a git repository or git failed.
        """
        name = self._check_repo(repo)
        start, end = window.start.astimezone(UTC), window.end.astimezone(UTC)
        chosen = [c for c in self._load() if start <= c.merged_at.astimezone(UTC) < end]
        self._read_files(c.sha for c in chosen)
        return [self._pr(name, c) for c in chosen]

    def pull_request(self, repo: str, number: int) -> PullRequest:
        """The PR ``number`` (its latest merge in the first-parent history).

        Raises:
            UnknownRepoError: ``repo`` is not the clone's repository.
            PRNotFoundError: no squash or merge commit of the history names PR ``number``.
            SourceError: the path is not a git repository or git failed.
        """
        name = self._check_repo(repo)
        commit = self._by_number.get(number)
        if commit is None:
            raise PRNotFoundError(f"no merged PR #{number} in the history of {self._reading()} in git clone "
                                  f"{self._path}", zh=f"git 克隆 {self._path} 的历史里没有已合并的 PR #{number}")
        self._read_files([commit.sha])
        return self._pr(name, commit)
