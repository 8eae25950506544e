"""A fake GitHub API on 127.0.0.1, built from real PR records (``tests/data/verl-prs.jsonl.gz``).

It answers the requests :class:`bot.sources.github.GitHubSource` makes, in GitHub's shapes:

- ``GET /repos/O/N`` — the repository;
- ``GET /repos/O/N/pulls?state=closed&sort=updated&direction=desc&per_page&page`` — PRs by
  ``updated_at`` (= merged_at + 1 h, or a later comment time from ``updated_later``), plus
  a few closed-unmerged ones, with ``Link`` headers;
- ``GET /repos/O/N/pulls/K`` — one PR (``Accept: application/vnd.github.diff``: its diff, or
  406 when it changes more than ``diff_line_limit`` lines);
- ``GET /repos/O/N/pulls/K/files?per_page&page`` — at most ``files_cap`` files, with a
  synthetic patch of the right numbers of ``+``/``-`` lines; once a response's patches reach
  ``patch_budget`` lines, later rows get 0/0/0 and no patch (as GitHub does);
- ``GET /repos/O/N/issues/K`` — issues (``issue_numbers``) and PRs (with ``pull_request``);
- ``GET /repos/O/N/contents/PATH`` — a file of ``files`` (``{"type": "file", "encoding": "base64",
  "content": …}``; ``Accept: application/vnd.github.raw`` gives the text), 404 for any other path;
- ``POST /graphql`` — ``search(query: "repo:O/N is:pr is:merged merged:A..B")``, inclusive
  range, 1,000 results at most, ``after`` cursors; needs the token. A query asking for
  ``files(`` (the history query) gets each PR's first 100 files (path, lines, change type).

Every 200 carries an ``ETag``; a matching ``If-None-Match`` gets a 304. Every answer carries
``X-RateLimit-*`` headers. ``fail_next(path_prefix, kind)`` makes the next matching request
answer a rate limit: ``primary`` (403, remaining 0, reset in 1 s), ``secondary`` (403 with
``Retry-After: 1``) or ``secondary_429`` (429 without ``Retry-After``). ``log`` records
``(method, path, status)`` of every request. ``limit_until(t)`` answers every request with a
primary rate limit until the epoch second ``t``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from bot.models import PullRequest

_MERGED_RANGE = re.compile(r"merged:(\S+)\.\.(\S+)")
_REPO_Q = re.compile(r"repo:(\S+)")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(value: str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def synthetic_patch(path: str, additions: int, deletions: int) -> str | None:
    """A hunk of ``deletions`` removed and ``additions`` added lines (``None`` when both are 0)."""
    if not additions and not deletions:
        return None
    lines = [f"@@ -1,{deletions} +1,{additions} @@"]
    lines += [f"-old line {i} of {path}" for i in range(deletions)]
    lines += [f"+new line {i} of {path}" for i in range(additions)]
    return "\n".join(lines)


class FakeGitHub:
    """State and behaviour of the fake API (see the module docstring).

    Args:
        prs: the merged PRs to serve (all of one repository).
        token: the token GraphQL requires (REST also accepts anonymous requests).
        issue_numbers: numbers that are issues, not PRs.
        unmerged: numbers of closed, unmerged PRs to add to the list.
        updated_later: PR number -> a later ``updated_at`` (a comment after the merge).
    """

    def __init__(self, prs: list[PullRequest], *, token: str = "test-token", issue_numbers: tuple[int, ...] = (),
                 unmerged: tuple[int, ...] = (), updated_later: dict[int, datetime] | None = None,
                 files_cap: int = 3000, patch_budget: int = 20000, diff_line_limit: int = 20000,
                 max_per_page: int = 100, files: dict[str, str] | None = None) -> None:
        self.repo = prs[0].repo
        self.files = dict(files or {})
        self.token = token
        self.prs = {pr.number: pr for pr in prs}
        self.issue_numbers = set(issue_numbers)
        self.unmerged = set(unmerged)
        self.updated_later = dict(updated_later or {})
        self.files_cap = files_cap
        self.patch_budget = patch_budget
        self.diff_line_limit = diff_line_limit
        self.max_per_page = max_per_page
        self.log: list[tuple[str, str, int]] = []
        self.remaining = 5000
        self.app: dict[str, Any] | None = None
        self.issued: dict[str, float] = {}
        self.exchanges: list[dict[str, Any]] = []
        self._faults: list[tuple[str, str]] = []
        self.limited_until = 0.0
        self._lock = threading.Lock()
        self.releases: list[tuple[str, str, datetime]] = []
        """``(tag, commit sha, published_at)`` of the repository's releases (``GET …/releases``, ``…/tags``);
        the history is linear in merge order (``GET …/compare/A...B`` lists the PR commits merged after A's
        PR up to B's)."""

    def enable_app(self, app_id: str, public_key: str, *, installation_id: int = 4242, account: str = "verl-project",
                   token_ttl_s: float = 3600.0, clock: Any = time.time) -> None:
        """Act as GitHub for App ``app_id``: ``GET /app/installations`` and ``POST /app/installations/{id}/
        access_tokens`` take a JWT signed with the key of ``public_key`` (PEM) and issued by ``app_id``; the
        installation tokens issued (``ghs_…``, valid ``token_ttl_s`` by ``clock``) are accepted like the token."""
        self.app = {"id": app_id, "key": public_key, "installation": installation_id, "account": account,
                    "ttl": token_ttl_s, "clock": clock}

    def _app_route(self, method: str, path: str, auth: str) -> tuple[int, dict[str, str], Any]:
        import jwt

        app = self.app
        if app is None:
            return 404, {}, {"message": "Not Found"}
        try:
            claims = jwt.decode(auth.removeprefix("Bearer "), app["key"], algorithms=["RS256"],
                                options={"require": ["iat", "exp", "iss"], "verify_exp": False, "verify_iat": False})
        except jwt.PyJWTError as exc:
            return 401, {}, {"message": f"A JSON web token could not be decoded ({exc})"}
        now = app["clock"]()  # expiry by the fake's clock, which tests move
        if not claims["iat"] - 60 <= now < claims["exp"]:
            return 401, {}, {"message": "'Expiration time' claim ('exp') is too far in the future or has passed"}
        if str(claims["iss"]) != app["id"] or claims["exp"] - claims["iat"] > 600:
            return 401, {}, {"message": "'Issuer' claim ('iss') must be the app id, and exp at most 10 minutes on"}
        if method == "GET" and path == "/app/installations":
            return 200, {}, [{"id": app["installation"], "account": {"login": app["account"]}}]
        wanted = f"/app/installations/{app['installation']}/access_tokens"
        if method == "POST" and path.startswith("/app/installations/") and path.endswith("/access_tokens"):
            if path != wanted:
                return 404, {}, {"message": "Not Found"}
            with self._lock:
                token = f"ghs_fake{len(self.exchanges) + 1:04d}"
                expires = app["clock"]() + app["ttl"]
                self.issued[token] = expires
                self.exchanges.append({"token": token, "expires": expires, "claims": claims})
            return 201, {}, {"token": token, "expires_at": _iso(datetime.fromtimestamp(expires, UTC))}
        return 404, {}, {"message": "Not Found"}

    def limit_until(self, moment: float) -> None:
        """Answer every request with a primary rate limit (403, remaining 0, reset at ``moment``, epoch s)
        until ``moment``."""
        self.limited_until = moment

    def fail_next(self, path_prefix: str, kind: str) -> None:
        """Make the next request whose path starts with ``path_prefix`` answer a rate limit of ``kind``."""
        self._faults.append((path_prefix, kind))

    # -- shapes -----------------------------------------------------------------------------------

    def _updated(self, number: int) -> datetime:
        if number in self.updated_later:
            return self.updated_later[number]
        pr = self.prs.get(number)
        return pr.merged_at + timedelta(hours=1) if pr else datetime(2026, 1, 1, tzinfo=UTC)

    def pull_json(self, number: int, *, detail: bool) -> dict[str, Any]:
        pr = self.prs.get(number)
        base = f"https://github.com/{self.repo}/pull/{number}"
        if pr is None:  # closed unmerged
            item: dict[str, Any] = {"number": number, "state": "closed", "title": f"abandoned #{number}",
                                    "body": None, "user": {"login": "someone"}, "labels": [],
                                    "merged_at": None, "merge_commit_sha": None, "html_url": base,
                                    "created_at": "2026-01-01T00:00:00Z", "updated_at": _iso(self._updated(number))}
            return item | ({"additions": 1, "deletions": 0, "changed_files": 1, "comments": 0} if detail else {})
        item = {
            "number": number, "state": "closed", "title": pr.title, "body": pr.body or None,
            "user": {"login": pr.author}, "labels": [{"name": name} for name in pr.labels],
            "merged_at": _iso(pr.merged_at), "merge_commit_sha": pr.merge_commit_sha, "html_url": base,
            "created_at": _iso(pr.authored_at or pr.merged_at), "updated_at": _iso(self._updated(number)),
            "closed_at": _iso(pr.merged_at),
        }
        if detail:
            item |= {"additions": pr.additions, "deletions": pr.deletions, "changed_files": pr.changed_files,
                     "comments": 2, "review_comments": 1}
        return item

    def file_rows(self, number: int) -> list[dict[str, Any]]:
        pr = self.prs[number]
        rows = []
        for f in pr.files[: self.files_cap]:
            adds, dels = f.additions or 0, f.deletions or 0
            row: dict[str, Any] = {"filename": f.path, "status": f.status, "additions": adds, "deletions": dels,
                                   "changes": adds + dels}
            patch = synthetic_patch(f.path, adds, dels)
            if patch is not None:
                row["patch"] = patch
            if f.previous_path:
                row["previous_filename"] = f.previous_path
            rows.append(row)
        return rows

    def graphql_node(self, pr: PullRequest, *, files: bool = False) -> dict[str, Any]:
        node = {
            "number": pr.number, "title": pr.title, "body": pr.body, "url": f"https://github.com/{pr.repo}/pull/{pr.number}",
            "createdAt": _iso(pr.authored_at or pr.merged_at), "mergedAt": _iso(pr.merged_at),
            "author": {"login": pr.author}, "mergeCommit": {"oid": pr.merge_commit_sha},
            "additions": pr.additions, "deletions": pr.deletions, "changedFiles": pr.changed_files,
            "labels": {"nodes": [{"name": n} for n in pr.labels]},
            "reviews": {"totalCount": 1}, "comments": {"totalCount": 2},
        }
        if files:  # the history query: the first 100 files, path and lines only
            kinds = {"added": "ADDED", "removed": "DELETED", "renamed": "RENAMED", "copied": "COPIED"}
            node["files"] = {"nodes": [{"path": f.path, "additions": f.additions or 0, "deletions": f.deletions or 0,
                                        "changeType": kinds.get(f.status, "MODIFIED")} for f in pr.files[:100]]}
        return node

    # -- routing ----------------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes,
               ) -> tuple[int, dict[str, str], bytes]:
        """The status, headers and body for one request."""
        url = urlsplit(target)
        path, query = url.path, {k: v[-1] for k, v in parse_qs(url.query).items()}
        reset = int(time.time()) + 1
        auth = headers.get("authorization", "")
        if path.startswith("/app/"):
            status, _, payload = self._app_route(method, path, auth)
            return status, {}, json.dumps(payload).encode()
        issued = self.issued.get(auth.removeprefix("Bearer "))
        clock = self.app["clock"] if self.app else time.time
        authed = auth == f"Bearer {self.token}" or (issued is not None and issued > clock())
        limit_headers = {"X-RateLimit-Limit": "5000", "X-RateLimit-Reset": str(reset)}
        with self._lock:
            fault = next((f for f in self._faults if path.startswith(f[0])), None)
            if fault is not None:
                self._faults.remove(fault)
        if time.time() < self.limited_until:
            fault = (path, "primary")
            limit_headers["X-RateLimit-Reset"] = str(int(self.limited_until))
        if fault is not None:
            kind = fault[1]
            message = {"message": "API rate limit exceeded" if kind == "primary" else
                       "You have exceeded a secondary rate limit."}
            extra = {"X-RateLimit-Remaining": "0" if kind == "primary" else "4000"}
            if kind == "secondary":
                extra["Retry-After"] = "1"
            return (403 if kind != "secondary_429" else 429), limit_headers | extra, json.dumps(message).encode()
        if auth and not authed:
            return 401, limit_headers, b'{"message": "Bad credentials"}'
        status, out_headers, payload = self._route(method, path, query, headers, body, authed)
        if status == 200 and isinstance(payload, bytes | str):
            raw = payload.encode() if isinstance(payload, str) else payload
        else:
            raw = json.dumps(payload).encode()
        if status == 200 and method == "GET":
            etag = '"' + hashlib.sha1(raw + auth.encode()).hexdigest() + '"'
            out_headers["ETag"] = etag
            if headers.get("if-none-match") == etag:
                free = authed
                if not free:
                    self.remaining -= 1
                return 304, limit_headers | out_headers | {"X-RateLimit-Remaining": str(self.remaining)}, b""
        self.remaining -= 1
        return status, limit_headers | out_headers | {"X-RateLimit-Remaining": str(self.remaining)}, raw

    def _route(self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: bytes,
               authed: bool) -> tuple[int, dict[str, str], Any]:
        if method == "POST" and path == "/graphql":
            if not authed:
                return 401, {}, {"message": "This endpoint requires you to be authenticated."}
            return 200, {}, self._graphql(json.loads(body))
        prefix = f"/repos/{self.repo}"
        if not path.lower().startswith(prefix.lower()):
            return 404, {}, {"message": "Not Found"}
        rest = path[len(prefix):].strip("/").split("/")
        if rest == [""]:
            return 200, {}, {"full_name": self.repo, "default_branch": "main"}
        if rest == ["pulls"]:
            return self._list(path, query)
        if rest == ["releases"]:
            rows = [{"tag_name": tag, "name": tag, "draft": False, "prerelease": False,
                     "published_at": _iso(at), "target_commitish": "main"}
                    for tag, _, at in sorted(self.releases, key=lambda r: r[2], reverse=True)]
            chunk, out = self._page(path, query, rows)
            return 200, out, chunk
        if rest == ["tags"]:
            rows = [{"name": tag, "commit": {"sha": sha}} for tag, sha, _ in reversed(self.releases)]
            chunk, out = self._page(path, query, rows)
            return 200, out, chunk
        if rest[0] == "compare" and len(rest) == 2 and "..." in rest[1]:
            return self._compare(path, query, *unquote(rest[1]).split("...", 1))
        if rest[0] == "contents" and len(rest) > 1:
            return self._contents("/".join(unquote(p) for p in rest[1:]), headers)
        if len(rest) >= 2 and rest[0] == "pulls" and rest[1].isdigit():
            number = int(rest[1])
            if number not in self.prs and number not in self.unmerged:
                return 404, {}, {"message": "Not Found"}
            if len(rest) == 2:
                if "diff" in headers.get("accept", ""):
                    return self._diff(number)
                return 200, {}, self.pull_json(number, detail=True)
            if rest[2:] == ["files"] and number in self.prs:
                return self._files(path, query, number)
        if len(rest) == 2 and rest[0] == "issues" and rest[1].isdigit():
            number = int(rest[1])
            if number in self.issue_numbers:
                return 200, {}, {"number": number, "title": "an issue", "state": "open"}
            if number in self.prs or number in self.unmerged:
                return 200, {}, {"number": number, "pull_request": {"url": f"{prefix}/pulls/{number}"}}
        return 404, {}, {"message": "Not Found"}

    def _compare(self, path: str, query: dict[str, str], base: str, head: str) -> tuple[int, dict[str, str], Any]:
        by_sha = {pr.merge_commit_sha: pr for pr in self.prs.values() if pr.merge_commit_sha}
        if base not in by_sha or head not in by_sha:
            return 404, {}, {"message": "Not Found"}
        low, high = by_sha[base].merged_at, by_sha[head].merged_at
        ahead = sorted((pr for pr in self.prs.values() if pr.merge_commit_sha and low < pr.merged_at <= high),
                       key=lambda pr: pr.merged_at)
        rows = [{"sha": pr.merge_commit_sha, "commit": {"message": pr.title}} for pr in ahead]
        chunk, out = self._page(path, query, rows)
        return 200, out, {"status": "ahead" if rows else "identical", "ahead_by": len(rows), "behind_by": 0,
                          "total_commits": len(rows), "commits": chunk}

    def _page(self, path: str, query: dict[str, str], items: list[Any]) -> tuple[list[Any], dict[str, str]]:
        per_page = min(int(query.get("per_page", "30")), self.max_per_page)
        page = int(query.get("page", "1"))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            nxt = urlencode(query | {"page": str(page + 1)})
            last = urlencode(query | {"page": str(-(-len(items) // per_page))})
            headers["Link"] = f'<{self.base_url}{path}?{nxt}>; rel="next", <{self.base_url}{path}?{last}>; rel="last"'
        return chunk, headers

    base_url = ""

    def _list(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        numbers = sorted([*self.prs, *self.unmerged], key=lambda n: (self._updated(n), n), reverse=True)
        chunk, headers = self._page(path, query, numbers)
        return 200, headers, [self.pull_json(n, detail=False) for n in chunk]

    def _files(self, path: str, query: dict[str, str], number: int) -> tuple[int, dict[str, str], Any]:
        chunk, headers = self._page(path, query, self.file_rows(number))
        budget = self.patch_budget
        out = []
        for row in chunk:
            lines = row["changes"]
            if budget <= 0:
                row = row | {"additions": 0, "deletions": 0, "changes": 0}
                row.pop("patch", None)
            budget -= lines
            out.append(row)
        return 200, headers, out

    def _contents(self, file: str, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        text = self.files.get(file)
        if text is None:
            return 404, {}, {"message": "Not Found"}
        if "raw" in headers.get("accept", ""):
            return 200, {"Content-Type": "text/plain"}, text
        encoded = base64.b64encode(text.encode()).decode()
        return 200, {}, {"type": "file", "encoding": "base64", "path": file, "name": file.rsplit("/", 1)[-1],
                         "size": len(text.encode()), "content": "\n".join(encoded[i:i + 60]
                                                                        for i in range(0, len(encoded), 60))}

    def _diff(self, number: int) -> tuple[int, dict[str, str], Any]:
        pr = self.prs[number]
        if pr.additions + pr.deletions > self.diff_line_limit:
            return 406, {}, {"message": "Sorry, the diff exceeded the maximum number of lines (20000)"}
        parts = []
        for f in pr.files:
            patch = synthetic_patch(f.path, f.additions or 0, f.deletions or 0)
            if patch:
                parts.append(f"diff --git a/{f.path} b/{f.path}\n--- a/{f.path}\n+++ b/{f.path}\n{patch}\n")
        return 200, {"Content-Type": "text/plain"}, "".join(parts)

    def _graphql(self, payload: dict[str, Any]) -> dict[str, Any]:
        variables = payload.get("variables") or {}
        q = str(variables.get("q", ""))
        repo, span = _REPO_Q.search(q), _MERGED_RANGE.search(q)
        if repo is None or span is None or "is:merged" not in q:
            return {"errors": [{"message": f"unsupported query {q!r}"}]}
        if repo[1].lower() != self.repo.lower():
            return {"data": {"search": {"issueCount": 0, "pageInfo": {"hasNextPage": False, "endCursor": None},
                                        "nodes": []}},
                    "errors": [{"type": "INVALID", "message": "The listed users and repositories cannot be searched"}]}
        low, high = _parse(span[1]), _parse(span[2])
        found = sorted((pr for pr in self.prs.values() if low <= pr.merged_at <= high),
                       key=lambda pr: pr.number, reverse=True)
        first = int(variables.get("first", 10))
        offset = int(variables.get("after") or 0)
        reachable = found[:1000]
        nodes = reachable[offset: offset + first]
        more = offset + first < len(reachable)
        return {"data": {"search": {
            "issueCount": len(found),
            "pageInfo": {"hasNextPage": more, "endCursor": str(offset + first) if more else None},
            "nodes": [self.graphql_node(pr, files="files(" in str(payload.get("query", ""))) for pr in nodes],
        }}}


@contextmanager
def serve(fake: FakeGitHub | MultiGitHub) -> Iterator[str]:
    """Run ``fake`` on 127.0.0.1 (a free port) in a thread; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        wbufsize = 1 << 16  # headers and body leave in one write (no delayed-ACK stalls)

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, out, raw = fake.handle(self.command, self.path, headers, body)
            fake.log.append((self.command, self.path, status))
            self.send_response(status)
            out.setdefault("Content-Type", "application/json; charset=utf-8")
            for key, value in out.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake.base_url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class MultiGitHub:
    """Several :class:`FakeGitHub` behind one address, one per repository: ``/repos/O/N/…`` goes to that
    repository's fake and a GraphQL search to the one its ``repo:O/N`` names (the benchmark of a push to many
    channels over many repositories, bench/bench_multi.py). Serve it with :func:`serve`; ``log`` holds every
    request of all of them."""

    def __init__(self, fakes: list[FakeGitHub]) -> None:
        self.fakes = {fake.repo.lower(): fake for fake in fakes}
        self.log: list[tuple[str, str, int]] = []
        self._base_url = ""

    @property
    def base_url(self) -> str:
        return self._base_url

    @base_url.setter
    def base_url(self, value: str) -> None:
        self._base_url = value
        for fake in self.fakes.values():
            fake.base_url = value

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes,
               ) -> tuple[int, dict[str, str], bytes]:
        """Route one request to the repository's fake (404 when none holds it)."""
        path = urlsplit(target).path
        name: str | None = None
        if path == "/graphql":
            found = _REPO_Q.search(str((json.loads(body or b"{}").get("variables") or {}).get("q", "")))
            name = found[1] if found else None
        elif path.startswith("/repos/"):
            name = "/".join(path.split("/")[2:4])
        fake = self.fakes.get((name or "").lower())
        if fake is None:
            return 404, {}, b'{"message": "Not Found"}'
        return fake.handle(method, target, headers, body)
