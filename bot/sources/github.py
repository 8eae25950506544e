"""A :class:`~bot.sources.base.PRSource` over the GitHub API (github.com or GitHub Enterprise).

Listing a window's merged PRs:

- **with a token** — GraphQL search ``repo:O/N is:pr is:merged merged:A..B``
  (``A``/``B`` are the window's instants in UTC; the range is inclusive, so the
  results are filtered to the half-open window). Search stops at 1,000 results:
  a window whose ``issueCount`` is larger is split in halves until each part
  fits. One query gives 100 PRs with labels, description, author, merge
  commit, totals and review/comment counts;
- **without a token** — the REST list ``pulls?state=closed&sort=updated&direction=desc``,
  pages followed until a page ends with a PR last updated before the window
  (a PR is updated when merged, so no later page can hold one merged in the
  window). Anonymous access allows **60 requests an hour**; a week costs a few
  list pages plus one request per PR, so a warning says so.

Files of each PR come from REST ``pulls/N/files`` (100 a page, every page;
``status``, ``previous_filename``, line counts and the per-file ``patch``). The
API lists at most 3,000 files: a longer PR gets ``files_partial = True`` with
the PR's own totals. GitHub leaves out patches once a response's patches reach
about 20,000 lines, and then reports those files with 0 added and 0 deleted
lines; when the sums disagree with the PR's totals, such pages are read again in
pages of 10. The whole-PR diff (``application/vnd.github.diff``) is only read by
:meth:`GitHubSource.diff`, which answers a 406 (diff too large) with the
per-file patches.

The repository's recent history (where core files come from, :meth:`GitHubSource.history`)
is read by the same GraphQL search with each PR's first 100 file paths and line counts
(no patches, no REST call per PR): at most ``max_prs`` PRs, newest updated first, 100 a
query — three queries for the default budget. Merged PRs do not change, so each span is
kept for the life of the source; without a token there is no history (the anonymous
budget cannot afford it).

Every GET is conditional (ETag), so a re-run is answered by 304s, which cost
nothing against the limit when a token is used. ``GitHubSource.stats`` counts
the requests. Rate limits are handled by :mod:`bot.sources.github_http`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from bot.errors import GitHubError, PRNotFoundError, SourceError, UnknownRepoError
from bot.models import FileChange, FileStatus, PullRequest, Release, Window
from bot.sources.github_http import ETagCache, GitHubHTTP, NotFound, RequestStats, TokenSource
from bot.sources.links import reverted_pr

__all__ = ["FILES_CAP", "HISTORY_MAX_PRS", "SEARCH_CAP", "GitHubSource"]

log = logging.getLogger("bot.sources.github")

SEARCH_CAP = 1000
"""GitHub search returns at most this many results per query."""
FILES_CAP = 3000
"""``pulls/N/files`` lists at most this many files."""
RELEASES_READ = 100
"""How many of the latest releases (and tags) the API source reads."""
RELEASES_TTL_S = 600.0
"""How long the API source remembers a repository's releases (seconds)."""
HISTORY_MAX_PRS = 300
"""Default budget of :meth:`GitHubSource.history`: PRs read (100 per GraphQL query)."""
_HISTORY_SPANS_KEPT = 32
_PAGE = 100
_SMALL_PAGE = 10
_CHANGE_TYPE: dict[str, FileStatus] = {"ADDED": "added", "DELETED": "removed", "MODIFIED": "modified",
                                        "RENAMED": "renamed", "COPIED": "copied", "CHANGED": "modified"}
_STATUS: dict[str, FileStatus] = {"added": "added", "removed": "removed", "modified": "modified",
                                  "renamed": "renamed", "copied": "copied", "changed": "modified",
                                  "unchanged": "modified"}

def _search_query(fields: str) -> str:
    """The GraphQL search over merged PRs (``$q``, paged by ``$first``/``$after``), asking ``fields`` of each PR."""
    return ("query($q: String!, $first: Int!, $after: String) {\n"
            "  search(query: $q, type: ISSUE, first: $first, after: $after) {\n"
            "    issueCount\n    pageInfo { hasNextPage endCursor }\n"
            f"    nodes {{ ... on PullRequest {{ {fields} }} }}\n  }}\n}}\n")


_SEARCH_QUERY = _search_query(
    "number title body url createdAt mergedAt author { login } mergeCommit { oid } additions deletions changedFiles "
    "labels(first: 100) { nodes { name } } reviews { totalCount } comments { totalCount }")
"""A window's PRs: what a record needs but its files (read by REST, with patches)."""
_HISTORY_QUERY = _search_query(
    "number title mergedAt author { login } additions deletions changedFiles "
    "files(first: 100) { nodes { path additions deletions changeType } }")
"""The history's PRs (:meth:`GitHubSource.history`): their first 100 file paths and line counts."""


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _login(user: Any) -> str:
    return str(user["login"]) if isinstance(user, dict) and user.get("login") else "ghost"


class _Head:
    """What the listing gave about one PR before its files are read."""

    def __init__(self, *, number: int, title: str, body: str | None, author: str, merged_at: str,
                 created_at: str | None, merge_sha: str | None, url: str | None, labels: Iterable[str],
                 totals: tuple[int, int, int] | None = None, reviews: int | None = None,
                 comments: int | None = None) -> None:
        self.number = number
        self.title = title
        self.body = body or ""
        self.author = author
        self.merged_at = _time(merged_at)
        self.created_at = _time(created_at) if created_at else None
        self.merge_sha = merge_sha
        self.url = url
        self.labels = tuple(labels)
        self.totals = totals
        self.reviews = reviews
        self.comments = comments


def _head_from_rest(item: dict[str, Any]) -> _Head:
    totals = None
    if all(isinstance(item.get(k), int) for k in ("additions", "deletions", "changed_files")):
        totals = (item["additions"], item["deletions"], item["changed_files"])
    return _Head(number=item["number"], title=item.get("title") or "", body=item.get("body"),
                 author=_login(item.get("user")), merged_at=item["merged_at"], created_at=item.get("created_at"),
                 merge_sha=item.get("merge_commit_sha"), url=item.get("html_url"),
                 labels=(label["name"] for label in item.get("labels") or () if isinstance(label, dict)),
                 totals=totals, comments=item.get("comments") if isinstance(item.get("comments"), int) else None)


def _head_from_graphql(node: dict[str, Any]) -> _Head:
    merge = node.get("mergeCommit") or {}
    return _Head(number=node["number"], title=node.get("title") or "", body=node.get("body"),
                 author=_login(node.get("author")), merged_at=node["mergedAt"], created_at=node.get("createdAt"),
                 merge_sha=merge.get("oid"), url=node.get("url"),
                 labels=(n["name"] for n in (node.get("labels") or {}).get("nodes") or () if n),
                 totals=(node["additions"], node["deletions"], node["changedFiles"]),
                 reviews=(node.get("reviews") or {}).get("totalCount"),
                 comments=(node.get("comments") or {}).get("totalCount"))


def _file(row: dict[str, Any]) -> FileChange:
    """A file row; no lines and no patch (binary files, as git's ``-``) gives ``None`` counts."""
    status = _STATUS.get(str(row.get("status")), "modified")
    binary = _suspect(row) and status != "renamed"
    return FileChange(path=row["filename"], status=status, additions=None if binary else row.get("additions"),
                      deletions=None if binary else row.get("deletions"),
                      previous_path=row.get("previous_filename") if status in ("renamed", "copied") else None,
                      patch=row.get("patch"))


def _suspect(row: dict[str, Any]) -> bool:
    """A row GitHub may have emptied past its per-response patch budget: no patch and no lines
    (also what binary files, empty files and pure renames look like)."""
    return row.get("patch") is None and not row.get("changes")


class GitHubSource:
    """Merged PRs read from the GitHub API (see the module docstring for the requests made).

    Args:
        token: a GitHub token (GraphQL search, 5,000 requests/hour); ``None`` for anonymous REST
            (60 requests/hour).
        api_url: the API root; ``https://HOST/api/v3`` for GitHub Enterprise, a local fake in tests.
        client: the ``httpx.Client`` to send requests with (created when ``None``).
        cache: where ETag answers are kept (default: in memory, for the life of this source);
            a :class:`~bot.sources.github_http.FileETagCache` makes re-runs of the CLI cheap.
        max_retries: retries per request after a rate limit or a transient failure.
        max_wait_s: the longest rate-limit wait accepted, seconds.
        sleep: how to wait (``time.sleep``; tests pass a recorder).
        repos: what :meth:`repos` reports (the API cannot list "every repository").
        auth: the tokens of a GitHub App (:class:`~bot.sources.github_app.GitHubApp`) instead of ``token``.
    """

    def __init__(self, token: str | None, api_url: str = "https://api.github.com", client: httpx.Client | None = None,
                 *, cache: ETagCache | None = None, max_retries: int = 4, max_wait_s: float = 900.0,
                 sleep: Callable[[float], None] | None = None, repos: Iterable[str] = (),
                 auth: TokenSource | None = None) -> None:
        extra: dict[str, Any] = {"sleep": sleep} if sleep is not None else {}
        self._http = GitHubHTTP(token=token, api_url=api_url, client=client, cache=cache, max_retries=max_retries,
                                max_wait_s=max_wait_s, auth=auth, **extra)
        self._repos = sorted(repos)
        self._warned = False
        self._history: dict[tuple[str, datetime, datetime, int], tuple[PullRequest, ...]] = {}
        self._releases: dict[str, tuple[float, tuple[Release, ...]]] = {}
        self._compares: dict[tuple[str, str, str], frozenset[str]] = {}

    def __repr__(self) -> str:
        mode = "app" if self._http.authenticated and not self._http.token else (
            "token" if self._http.token else "anonymous")
        return f"GitHubSource({self._http.api_url!r}, {mode})"

    @property
    def stats(self) -> RequestStats:
        """Requests sent so far (retries included), of which 304s, GraphQL queries and rate limits."""
        return self._http.stats

    @property
    def authenticated(self) -> bool:
        """Whether requests carry a token."""
        return self._http.authenticated

    @property
    def rate_limited_until(self) -> float | None:
        """Epoch seconds until which a read waits out GitHub's rate limit; ``None`` while none waits
        (:attr:`bot.sources.github_http.GitHubHTTP.rate_limited_until`)."""
        return self._http.rate_limited_until

    def close(self) -> None:
        """Close the HTTP client if this source created it."""
        self._http.close()

    def file_text(self, repo: str, path: str) -> str | None:
        """The text of ``path`` on ``repo``'s default branch, or ``None`` when it has no such file
        (contents API; for CODEOWNERS, :mod:`bot.codeowners`).

        Raises:
            GitHubError: the API refused the request or failed.
        """
        return self._http.file_text(repo, path)

    # -- PRSource ---------------------------------------------------------------------------------

    def repos(self) -> list[str]:
        """The repositories given as ``repos=`` (the API itself is not enumerated)."""
        return list(self._repos)

    def merged_prs(self, repo: str, window: Window) -> list[PullRequest]:
        """The PRs of ``repo`` merged in ``[window.start, window.end)``, by merge instant then number.

        Raises:
            UnknownRepoError: GitHub has no repository ``repo`` visible to the token.
            RateLimitError: a rate limit outlasted the bounded waits.
            GitHubError: the API refused a request.
        """
        name = self._name(repo)
        start, end = window.start.astimezone(UTC), window.end.astimezone(UTC)
        heads = self._search(name, start, end) if self._http.authenticated else self._list_rest(name, start, end)
        chosen = sorted((h for h in heads.values() if start <= h.merged_at < end),
                        key=lambda h: (h.merged_at, h.number))
        return self._with_releases(name, [self._complete(name, head) for head in chosen])

    def history(self, repo: str, start: datetime, end: datetime, *, max_prs: int = HISTORY_MAX_PRS,
                ) -> tuple[PullRequest, ...]:
        """The PRs of ``repo`` merged in ``[start, end)`` as far as ``max_prs`` goes (the most recently
        opened first, so the same span gives the same PRs), each with its first 100 changed files (path,
        status, line counts; no patch, no body): the repository's recent history, from which core files are
        worked out. ``ceil(max_prs / 100)`` GraphQL queries at most (GitHub's search stops at 1,000 results,
        so a larger budget reads no more); a span already read is answered from memory. Without a token: ``()``.

        Raises:
            UnknownRepoError: GitHub has no repository ``repo`` visible to the token.
            RateLimitError: a rate limit outlasted the bounded waits.
            GitHubError: the API refused a request.
        """
        if not self._http.authenticated or max_prs <= 0 or end <= start:
            return ()
        name = self._name(repo)
        start, end = start.astimezone(UTC), end.astimezone(UTC)
        key = (name.lower(), start, end, max_prs)
        if key in self._history:
            return self._history[key]
        query = f"repo:{name} is:pr is:merged merged:{_stamp(start)}..{_stamp(end)} sort:created-desc"
        found: list[PullRequest] = []
        after: str | None = None
        budget = min(max_prs, SEARCH_CAP)
        for page in range(-(-budget // _PAGE)):
            data = self._http.graphql(_HISTORY_QUERY, {"q": query, "first": min(_PAGE, budget - page * _PAGE),
                                                       "after": after})
            search = data["search"]
            found += [pr for node in search["nodes"] if node and node.get("mergedAt")
                      for pr in (self._history_record(name, node),) if start <= pr.merged_at < end]
            if not search["pageInfo"]["hasNextPage"]:
                break
            after = search["pageInfo"]["endCursor"]
        records = tuple(sorted(found[:max_prs], key=lambda pr: (pr.merged_at, pr.number)))
        if len(self._history) >= _HISTORY_SPANS_KEPT:
            self._history.pop(next(iter(self._history)))
        self._history[key] = records
        return records

    @staticmethod
    def _history_record(name: str, node: dict[str, Any]) -> PullRequest:
        rows = [row for row in (node.get("files") or {}).get("nodes") or () if row and row.get("path")]
        files = tuple(FileChange(path=row["path"], status=_CHANGE_TYPE.get(str(row.get("changeType")), "modified"),
                                 additions=row.get("additions"), deletions=row.get("deletions")) for row in rows)
        return PullRequest(repo=name, number=node["number"], title=node.get("title") or "",
                           author=_login(node.get("author")), merged_at=_time(node["mergedAt"]),
                           additions=node.get("additions") or 0, deletions=node.get("deletions") or 0,
                           changed_files=node.get("changedFiles") or len(files), files=files,
                           files_partial=(node.get("changedFiles") or 0) > len(files))

    def merged_count(self, repo: str, window: Window) -> int:
        """How many PRs of ``repo`` were merged in ``window``: one GraphQL search, no files read
        (the look back of week over week, :mod:`bot.digest.history`).

        The search's ``merged:A..B`` is inclusive, so it runs up to one second before ``window.end``.

        Raises:
            GitHubError: no token (the search needs one), or the API refused the query.
            RateLimitError: a rate limit outlasted the bounded waits.
        """
        name = self._name(repo)
        start = window.start.astimezone(UTC)
        last = window.end.astimezone(UTC) - timedelta(seconds=1)
        query = f"repo:{name} is:pr is:merged merged:{_stamp(start)}..{_stamp(last)}"
        data = self._http.graphql(_SEARCH_QUERY, {"q": query, "first": 1, "after": None})
        return int(data["search"]["issueCount"])

    def pull_request(self, repo: str, number: int) -> PullRequest:
        """The merged PR ``number`` of ``repo`` with its files (two requests or more).

        Raises:
            PRNotFoundError: ``number`` is an issue, an unmerged PR, or nothing at all.
            UnknownRepoError: GitHub has no repository ``repo``.
            RateLimitError, GitHubError: as :meth:`merged_prs`.
        """
        name = self._name(repo)
        try:
            item = self._http.get(f"repos/{name}/pulls/{number}").data
        except NotFound as exc:
            raise self._missing(name, number) from exc
        if not item.get("merged_at"):
            raise PRNotFoundError(f"PR #{number} of {name} is not merged (state: {item.get('state', '?')})")
        return self._with_releases(name, [self._complete(name, _head_from_rest(item))])[0]

    # -- releases ---------------------------------------------------------------------------------

    def releases(self, repo: str) -> list[Release]:
        """The repository's published releases (not drafts), oldest first: the latest :data:`RELEASES_READ` of
        ``GET repos/O/N/releases``, each with the commit of its tag (``GET repos/O/N/tags``, the latest
        :data:`RELEASES_READ`); two requests, remembered for :data:`RELEASES_TTL_S` seconds.

        Raises:
            UnknownRepoError, RateLimitError, GitHubError: as :meth:`merged_prs`.
        """
        return list(self._releases_of(self._name(repo)))

    def _releases_of(self, name: str) -> tuple[Release, ...]:
        kept = self._releases.get(name.lower())
        if kept is not None and time.monotonic() - kept[0] < RELEASES_TTL_S:
            return kept[1]
        try:
            rows = self._http.get(f"repos/{name}/releases", {"per_page": RELEASES_READ}).data
            tags = self._http.get(f"repos/{name}/tags", {"per_page": RELEASES_READ}).data
        except NotFound as exc:
            raise UnknownRepoError(f"GitHub has no repository {name} (or the token cannot see it)") from exc
        commit = {str(t.get("name")): str((t.get("commit") or {}).get("sha", "")) for t in tags}
        found = sorted((Release(tag=str(r["tag_name"]), sha=commit[str(r["tag_name"])], at=_time(r["published_at"]))
                        for r in rows if not r.get("draft") and r.get("published_at") and commit.get(
                            str(r.get("tag_name")))), key=lambda r: (r.at, r.tag))
        self._releases[name.lower()] = (time.monotonic(), tuple(found))
        return tuple(found)

    def _compare(self, name: str, base: str, head: str) -> frozenset[str]:
        """The commits ``head`` holds and ``base`` does not (``GET repos/O/N/compare/BASE...HEAD``, every page);
        kept for the life of the source (two tags never move apart)."""
        key = (name.lower(), base, head)
        if key not in self._compares:
            shas: set[str] = set()
            page = 1
            while True:
                data = self._http.get(f"repos/{name}/compare/{base}...{head}", {"per_page": _PAGE, "page": page}).data
                commits = data.get("commits") or []
                shas |= {str(c["sha"]) for c in commits}
                if len(commits) < _PAGE:
                    break
                page += 1
            self._compares[key] = frozenset(shas)
        return self._compares[key]

    def _with_releases(self, name: str, prs: list[PullRequest]) -> list[PullRequest]:
        """``prs`` with ``released_in`` (the first release whose tag holds the merge commit) and
        ``release_known``: for each release from the first one made after the earliest merge, the commits
        between the release before it and it (one compare each, until every PR is placed). A repository
        without releases leaves the PRs as they are (``release_known`` false)."""
        if not prs:
            return prs
        releases = self._releases_of(name)
        if not releases:
            return prs
        pending = {pr.merge_commit_sha for pr in prs if pr.merge_commit_sha}
        placed: dict[str, str] = {}
        earliest = min(pr.merged_at for pr in prs)
        for n, release in enumerate(releases):
            if not pending:
                break
            if release.at < earliest:
                continue
            if n == 0:  # nothing to compare with: the first release holds what was merged before it
                held = {pr.merge_commit_sha for pr in prs if pr.merge_commit_sha and pr.merged_at <= release.at}
            else:
                held = set(self._compare(name, releases[n - 1].sha, release.sha))
            for sha in pending & held:
                placed[sha] = release.tag
            pending -= held
        return [pr.model_copy(update={"released_in": placed.get(pr.merge_commit_sha or ""), "release_known": True})
                for pr in prs]

    def diff(self, repo: str, number: int) -> str:
        """The unified diff of PR ``number``; when GitHub answers 406 (diff too large) the
        per-file patches are joined instead (files whose patch GitHub omits are left out).

        Raises:
            PRNotFoundError, UnknownRepoError, RateLimitError, GitHubError: as :meth:`pull_request`.
        """
        name = self._name(repo)
        try:
            return str(self._http.get(f"repos/{name}/pulls/{number}", accept="application/vnd.github.diff").data)
        except NotFound as exc:
            raise self._missing(name, number) from exc
        except GitHubError as exc:
            if exc.status != 406:
                raise
        log.info("GitHub: the diff of %s#%s is too large for the API; joining per-file patches", name, number)
        parts = []
        for f in self.pull_request(name, number).files:
            if f.patch is not None:
                old = f.previous_path or f.path
                parts.append(f"diff --git a/{old} b/{f.path}\n--- a/{old}\n+++ b/{f.path}\n{f.patch}\n")
        return "".join(parts)

    # -- listing ----------------------------------------------------------------------------------

    @staticmethod
    def _name(repo: str) -> str:
        name = repo.strip()
        if name.count("/") != 1 or not all(name.split("/")):
            raise UnknownRepoError(f"repository {repo!r} is not owner/name")
        return name

    def _missing(self, name: str, number: int) -> SourceError:
        try:
            issue = self._http.get(f"repos/{name}/issues/{number}").data
        except NotFound:
            try:
                self._http.get(f"repos/{name}")
            except NotFound:
                return UnknownRepoError(f"GitHub has no repository {name} (or the token cannot see it)")
            return PRNotFoundError(f"{name} has no pull request #{number}")
        if isinstance(issue, dict) and "pull_request" not in issue:
            return PRNotFoundError(f"#{number} of {name} is an issue, not a pull request")
        return PRNotFoundError(f"{name} has no pull request #{number}")

    def _search(self, name: str, start: datetime, end: datetime) -> dict[int, _Head]:
        """GraphQL search over ``[start, end]``, split while a part holds more than 1,000 results."""
        query = f"repo:{name} is:pr is:merged merged:{_stamp(start)}..{_stamp(end)}"
        heads: dict[int, _Head] = {}
        after: str | None = None
        while True:
            data = self._http.graphql(_SEARCH_QUERY, {"q": query, "first": _PAGE, "after": after})
            search = data["search"]
            if after is None and search["issueCount"] > SEARCH_CAP and end - start > timedelta(seconds=2):
                middle = start + (end - start) / 2
                middle = middle.replace(microsecond=0)
                log.info("GitHub: %s PRs merged %s..%s; splitting the search at %s", search["issueCount"],
                         _stamp(start), _stamp(end), _stamp(middle))
                return {**self._search(name, start, middle), **self._search(name, middle, end)}
            for node in search["nodes"]:
                if node and node.get("mergedAt"):
                    heads[node["number"]] = _head_from_graphql(node)
            if not search["pageInfo"]["hasNextPage"]:
                break
            after = search["pageInfo"]["endCursor"]
        if not heads and search["issueCount"] == 0:
            self._check_repo(name)
        return heads

    def _check_repo(self, name: str) -> None:
        try:
            self._http.get(f"repos/{name}")
        except NotFound as exc:
            raise UnknownRepoError(f"GitHub has no repository {name} (or the token cannot see it)") from exc

    def _list_rest(self, name: str, start: datetime, end: datetime) -> dict[int, _Head]:
        if not self._warned:
            self._warned = True
            log.warning("GitHub: no token (GITHUB_TOKEN), so using the REST pulls list anonymously; GitHub "
                        "allows 60 anonymous requests an hour (a week costs a few list pages + 1 per PR)")
        heads: dict[int, _Head] = {}
        params: dict[str, str | int] = {"state": "closed", "sort": "updated", "direction": "desc", "per_page": _PAGE}
        try:
            for answer in self._http.pages(f"repos/{name}/pulls", params):
                items = answer.data or []
                for item in items:
                    merged = item.get("merged_at")
                    if merged and start <= _time(merged) < end:
                        heads[item["number"]] = _head_from_rest(item)
                if not items or _time(items[-1]["updated_at"]) < start:
                    break
        except NotFound as exc:
            raise UnknownRepoError(f"GitHub has no repository {name} (or it is private: set GITHUB_TOKEN)") from exc
        return heads

    # -- files ------------------------------------------------------------------------------------

    def _complete(self, name: str, head: _Head) -> PullRequest:
        rows = self._file_rows(name, head.number, _PAGE)
        totals = head.totals
        adds, dels = sum(r.get("additions") or 0 for r in rows), sum(r.get("deletions") or 0 for r in rows)
        needs_totals = len(rows) >= FILES_CAP or any(_suspect(r) for r in rows)
        if totals is None and needs_totals:
            detail = self._http.get(f"repos/{name}/pulls/{head.number}").data
            totals = (detail["additions"], detail["deletions"], detail["changed_files"])
        if totals is not None and (adds, dels) != (totals[0], totals[1]) and any(_suspect(r) for r in rows):
            rows = self._repair(name, head.number, rows)
            adds, dels = sum(r.get("additions") or 0 for r in rows), sum(r.get("deletions") or 0 for r in rows)
        files = tuple(_file(r) for r in rows)
        partial = totals is not None and totals[2] > len(files)
        if totals is None:
            totals = (adds, dels, len(files))
        if partial:
            log.warning("GitHub: %s#%s changes %s files; the API lists only %s", name, head.number, totals[2],
                        len(files))
        elif (adds, dels) != (totals[0], totals[1]):
            log.warning("GitHub: %s#%s line counts of its files (%s+/%s-) differ from the PR's (%s+/%s-)", name,
                        head.number, adds, dels, totals[0], totals[1])
        return PullRequest(
            repo=name, number=head.number, title=head.title, body=head.body, author=head.author,
            merged_at=head.merged_at, authored_at=head.created_at, merge_commit_sha=head.merge_sha,
            additions=totals[0] if partial else adds, deletions=totals[1] if partial else dels,
            changed_files=totals[2] if partial else len(files), files=files, url=head.url,
            labels=head.labels, reviews=head.reviews, comments=head.comments,
            reverts=reverted_pr(head.title, head.body), files_partial=partial,
        )

    def _file_rows(self, name: str, number: int, per_page: int, first_page: int = 1,
                   last_page: int | None = None) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        page = first_page
        answer = self._http.get(f"repos/{name}/pulls/{number}/files", {"per_page": per_page, "page": page})
        while True:
            rows.extend(answer.data or [])
            if answer.next_url is None or (last_page is not None and page >= last_page):
                return rows
            page += 1
            answer = self._http.get(answer.next_url)

    def _repair(self, name: str, number: int, rows: list[dict[str, Any]],
                per_page: int = _PAGE) -> list[dict[str, Any]]:
        """Re-read the pages that hold rows GitHub may have emptied, in pages ten times smaller
        (100 → 10 → 1 files), while such rows remain."""
        smaller = max(1, per_page // 10)
        if smaller == per_page:
            return rows
        repaired = list(rows)
        ratio = per_page // smaller
        for page in sorted({i // per_page for i, r in enumerate(rows) if _suspect(r)}):
            fresh = self._file_rows(name, number, smaller, page * ratio + 1, (page + 1) * ratio)
            repaired[page * per_page: page * per_page + len(fresh)] = fresh
        if smaller > 1 and any(_suspect(r) for r in repaired):
            return self._repair(name, number, repaired, smaller)
        return repaired
