"""Which repository, source and language a chat channel is about, and the sources behind them (each opened once).

A channel key is ``platform:id`` (``slack:C0123456789``, ``feishu:oc_…``, ``feishu-webhook:NAME``).
Its binding is :meth:`bot.config.Settings.channel`: the ``[channels."platform:id"]`` section of the
config file, with ``default_repo`` / ``default_source`` / ``language`` / ``timezone`` for what it
leaves out. The chat core, the weekly push and the label alerts all ask :class:`Channels`, so they
agree on a channel's repository and share one opened source per spec (a GitHub source keeps its
ETag cache and connection pool for the life of the process).
"""

from __future__ import annotations

from collections.abc import Callable

from bot.config import ChannelConfig, Settings
from bot.errors import SourceError
from bot.sources.base import PRSource, canonical_repo, close_source

__all__ = ["Channels", "SourceOpener"]

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

    def source_for_repo(self, repo: str) -> PRSource:
        """The source of a channel bound to ``repo`` (the first in key order), else ``default_source``."""
        spec = next((cfg.source for _, cfg in sorted(self.settings.channels.items())
                     if cfg.source and (cfg.repo or "").lower() == repo.lower()), None)
        return self.source(spec or self.settings.default_source)

    def scheduled(self) -> list[str]:
        """The channel keys with a weekly ``push`` time, sorted."""
        return sorted(key for key, cfg in self.settings.channels.items() if cfg.push is not None)

    def close(self) -> None:
        """Release what the opened sources hold (connections); they are opened again on next use."""
        for source in self._sources.values():
            close_source(source)
        self._sources.clear()
