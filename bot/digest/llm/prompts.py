"""The prompt templates: Jinja2 files shipped in the package, each with a version.

Templates live in ``bot/prompts/*.j2`` (package data, so an editable and a
regular install find them alike) and are rendered with ``StrictUndefined``: a
missing variable is an error, never an empty string. The first line of every
template declares its version::

    {#- version: 1 -#}

Bump it when the meaning of the prompt changes. The version used in cache keys
is ``NAME-vVERSION-HASH`` where HASH is the first 8 hex digits of the template
text's SHA-256, so an edit invalidates the cached results even if the version
was not bumped. Each template renders two parts, selected by the variable
``part``: ``"system"`` (the instructions) and ``"user"`` (the data).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

_VERSION = re.compile(r"^\{#-?\s*version:\s*(\S+)\s*-?#\}")


@dataclass(frozen=True)
class Prompt:
    """A loaded template.

    Attributes:
        name: the file name without ``.j2`` (``pr_analysis``, ``digest_summary``).
        version: the cache-key version, ``NAME-vVERSION-HASH``.
        source: the template text.
    """

    name: str
    version: str
    source: str

    def render(self, **variables: Any) -> list[dict[str, str]]:
        """The chat messages ``[system, user]`` for ``variables``.

        Raises:
            jinja2.UndefinedError: a variable the template uses was not given.
        """
        template = _compiled(self.source)
        return [
            {"role": "system", "content": template.render(part="system", **variables).strip()},
            {"role": "user", "content": template.render(part="user", **variables).strip()},
        ]


@cache
def _environment() -> jinja2.Environment:
    """The templates' Jinja2 environment, made on first use (a run answered from the cache renders no prompt)."""
    import jinja2

    return jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True)


@lru_cache(maxsize=32)
def _compiled(source: str) -> jinja2.Template:
    """The template of ``source``, compiled once per process (compiling costs milliseconds a prompt)."""
    return _environment().from_string(source)


def make_prompt(name: str, source: str) -> Prompt:
    """A :class:`Prompt` from template text (tests use it to change a version).

    Raises:
        ValueError: the first line declares no version.
    """
    found = _VERSION.match(source)
    if found is None:
        raise ValueError(f"prompt {name}: the first line must be '{{#- version: N -#}}'")
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:8]
    return Prompt(name=name, version=f"{name}-v{found.group(1)}-{digest}", source=source)


@cache
def load_prompt(name: str) -> Prompt:
    """The shipped template ``bot/prompts/NAME.j2``.

    Raises:
        FileNotFoundError: no such template.
        ValueError: it declares no version.
    """
    text = resources.files("bot").joinpath(f"prompts/{name}.j2").read_text(encoding="utf-8")
    return make_prompt(name, text)
