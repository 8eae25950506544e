"""Which repository, source and language a chat channel is about, and the sources behind them (each opened once).

A channel key is ``platform:id`` (``slack:C0123456789``, ``feishu:oc_…``, ``feishu-webhook:NAME``).
Its binding is :meth:`bot.config.Settings.channel`: the ``[channels."platform:id"]`` section of the
config file, with ``default_repo`` / ``default_source`` / ``language`` / ``timezone`` for what it
leaves out. The chat core, the weekly push and the label alerts all ask :class:`Channels`, so they
agree on a channel's repository and share one opened source per spec (a GitHub source keeps its
ETag cache and connection pool for the life of the process).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.config import ChannelConfig, Settings
from bot.errors import AccessError, SourceError
from bot.sources.base import PRSource, canonical_repo, close_source

__all__ = ["Channels", "SourceOpener", "refresh_source"]

log = logging.getLogger(__name__)

SourceOpener = Callable[[str], PRSource]
"""Opens a source spec (``github``, ``git:PATH``, ``jsonl:PATH``)."""


class Channels:
    """Channel bindings and the source cache.

    Args:
        settings: the bindings (``channels``, ``default_repo``, ``default_source``).
        open_source: opens a spec; each spec is opened once, on first use.
    """

    def __init__(self, settings: Settings, *, open_source: SourceOpener) -> None:
        self.settings = settings
        self._open = open_source
        self._sources: dict[str, PRSource] = {}

    def binding(self, key: str) -> ChannelConfig:
        """The effective binding of channel ``key`` (every field filled but ``repo`` and ``push``)."""
        return self.settings.channel(key)

    def source(self, spec: str) -> PRSource:
        """The source of ``spec``, opened on first use and kept.

        Raises:
            SourceError: the spec is malformed.
        """
        source = self._sources.get(spec)
        if source is None:
            source = self._sources[spec] = self._open(spec)
        return source

    def resolve(self, key: str, repo: str | None = None) -> tuple[PRSource, str]:
        """The source of channel ``key`` and the repository to read: ``repo`` (what a message named),
        else the channel's; a name without an owner, or none, is matched against what the source
        holds (:func:`~bot.sources.base.canonical_repo`).

        Raises:
            SourceError: no repository named or bound and the source holds several (or none).
        """
        binding = self.binding(key)
        source = self.source(binding.source or self.settings.default_source)
        wanted = repo or binding.repo
        if wanted is not None and "/" in wanted:
            return source, wanted.strip()
        try:
            held = source.repos()
        except SourceError:
            held = []
        return source, canonical_repo(wanted, held)

    def visible(self, key: str, source: PRSource | None = None) -> list[str]:
        """The repositories channel ``key`` may see (:meth:`bot.config.Settings.visible_repos`); when the
        config names none (no binding, no ``default_repo``, no ``allowed_repos``), those the channel's
        source lists (a snapshot's or a clone's; the GitHub source lists none)."""
        named = self.settings.visible_repos(key)
        if named:
            return named
        try:
            return list((source or self.source(self.binding(key).source or self.settings.default_source)).repos())
        except SourceError:
            return []

    def resolve_visible(self, key: str, repo: str | None = None) -> tuple[PRSource, str]:
        """:meth:`resolve`, refused unless the repository is one channel ``key`` may see (:meth:`visible`);
        a name without an owner is matched against those alone.

        Raises:
            AccessError: another repository (the message names the visible ones, and no other).
            SourceError: as :meth:`resolve`.
        """
        binding = self.binding(key)
        source = self.source(binding.source or self.settings.default_source)
        allowed = self.visible(key, source)
        wanted = (repo or binding.repo or "").strip()
        if wanted and "/" not in wanted:
            match = [name for name in allowed if name.lower().rsplit("/", 1)[-1] == wanted.lower()]
            wanted = match[0] if len(match) == 1 else wanted
        if not wanted and len(allowed) == 1:
            wanted = allowed[0]
        if not wanted and len(allowed) > 1:
            raise _refusal(allowed)  # several to choose from: the person names one
        if wanted and "/" in wanted and wanted.lower() in {a.lower() for a in allowed}:
            name = next(a for a in allowed if a.lower() == wanted.lower())
            return self.repo_source(key, name), name
        if not wanted:
            return self.resolve(key, None)
        raise _refusal(allowed)

    def source_for_repo(self, repo: str) -> PRSource:
        """The source of a channel bound to ``repo`` (the first in key order; an entry of a channel's ``repos``
        with its own source counts), else ``default_source``."""
        spec = next((cfg.source for _, cfg in sorted(self.settings.channels.items())
                     if cfg.source and (cfg.repo or "").lower() == repo.lower()), None)
        spec = spec or next((r.source for _, cfg in sorted(self.settings.channels.items()) for r in cfg.repos
                             if r.source and r.repo.lower() == repo.lower()), None)
        return self.source(spec or self.settings.default_source)

    def repo_source(self, key: str, repo: str) -> PRSource:
        """The source channel ``key`` reads ``repo`` from: its ``repos`` entry's own source, else the channel's."""
        binding = self.binding(key)
        spec = next((r.source for r in binding.repos if r.repo.lower() == repo.lower() and r.source), None)
        return self.source(spec or binding.source or self.settings.default_source)

    def repos_of(self, key: str) -> list[tuple[str, PRSource]]:
        """The repositories channel ``key`` follows, each with its source: its ``repos``, else its one ``repo``
        (``[]`` when it has none)."""
        binding = self.binding(key)
        names = [r.repo for r in binding.repos] or ([binding.repo] if binding.repo else [])
        return [(name, self.repo_source(key, name)) for name in names]

    def scheduled(self) -> list[str]:
        """The channel keys with a weekly ``push`` time, sorted."""
        return sorted(key for key, cfg in self.settings.channels.items() if cfg.push is not None)

    def opened(self) -> list[PRSource]:
        """The sources opened so far (for the metrics of their requests)."""
        return list(self._sources.values())

    def refresh(self) -> int:
        """Fetch every ``git:`` source the channels read (``default_source`` and the ``[channels]`` sections'; each
        opened if it was not yet) and any other opened source that can, one after the other
        (:meth:`~bot.sources.git.GitSource.refresh`); a failure is logged and the others go on. Blocking: run it
        in a worker thread.

        Returns:
            How many sources got new history.
        """
        configured = [self.settings.default_source, *(c.source for c in self.settings.channels.values() if c.source)]
        for spec in configured:
            if spec.strip().lower().startswith("git:") and spec not in self._sources:
                try:
                    self.source(spec)
                except SourceError as exc:
                    log.warning("git source %s cannot be opened: %s", spec, exc)
        moved = 0
        for spec, source in list(self._sources.items()):
            moved += refresh_source(source, spec)
        return moved

    def close(self) -> None:
        """Release what the opened sources hold (connections); they are opened again on next use."""
        for source in self._sources.values():
            close_source(source)
        self._sources.clear()


def refresh_source(source: PRSource, what: str = "") -> bool:
    """Fetch ``source`` when it can (a git clone); a failure is logged, never raised. Blocking.

    Returns:
        Whether new history arrived.
    """
    refresh = getattr(source, "refresh", None)
    if not callable(refresh):
        return False
    try:
        return bool(refresh())
    except SourceError as exc:
        log.warning("fetching %s failed (%s); its history stays as it was", what or source, exc)
        return False


def _refusal(allowed: list[str]) -> AccessError:
    if not allowed:
        return AccessError("No repository is set up for this conversation; ask an admin to bind one.",
                           zh="这个会话还没有绑定仓库，请管理员在配置里绑定一个。")
    names = ", ".join(allowed)
    return AccessError(f"This conversation can only see {names}. Name one of them to switch.",
                       zh=f"这个会话只能查看 {names}，可以在其中指定一个。")
