"""Helpers every ``prhub`` command shares (the digest command in :mod:`bot.cli` and :mod:`bot.commands`)."""

from __future__ import annotations

from bot.errors import SourceError


def canonical_repo(requested: str | None, held: list[str]) -> str:
    """The source's own spelling of ``requested`` (GitHub names ignore case and stray
    spaces are dropped); with no ``--repo``, the source's only repository.

    Args:
        requested: the ``owner/name`` the user gave, or ``None``.
        held: the repositories the source holds (``PRSource.repos()``).

    Raises:
        SourceError: no ``--repo`` and the source holds several repositories or none.
    """
    if requested is None:
        if len(held) != 1:
            raise SourceError(f"--repo is required: the source holds {len(held)} repositories ({', '.join(held[:5])})")
        return held[0]
    wanted = requested.strip()
    return next((name for name in held if name.lower() == wanted.lower()), wanted)
