"""Pull-request sources: where merged PRs come from.

- :class:`PRSource` — the protocol every source implements (``repos``,
  ``merged_prs``, ``pull_request``);
- :func:`open_source` — a source from a spec string (``github``, ``git:PATH``, ``jsonl:PATH``);
- :class:`SnapshotSource` — a JSONL snapshot file, plain or gzip; :mod:`bot.sources.git` and
  :mod:`bot.sources.github` hold the other two.
"""

from __future__ import annotations

from bot.sources.base import SOURCE_FORMS, PRSource, open_source
from bot.sources.jsonl import SnapshotSource

__all__ = ["SOURCE_FORMS", "PRSource", "SnapshotSource", "open_source"]
