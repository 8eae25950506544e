"""litellm, imported on first use with our process-wide settings; every module here gets it from :func:`load`.

Importing litellm takes seconds, so it happens when a request is about to be built (a prompt's token
count, or the call itself) — never for a run whose every analysis comes from the cache.
``LITELLM_LOCAL_MODEL_COST_MAP`` keeps litellm from downloading its model price list at import (the
copy bundled with the package is used); debug banners are off so that our stderr stays ours. The
cyclic garbage collector is paused while litellm is imported: the import makes some two hundred thousand
objects that all stay alive, and the full collections they trigger (each over the whole heap, the
digest's PRs included) were about a fifth of the import's time.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from types import ModuleType

__all__ = ["load", "prepare"]


@cache
def load() -> ModuleType:
    """The ``litellm`` module, imported (once) with the settings above."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with _collector_paused():
        import litellm  # after the variable above

    litellm.suppress_debug_info = True
    return litellm


@cache
def prepare(model: str) -> None:
    """Import, once, what the first request to ``model`` would import inside the request itself.

    For a model served through the OpenAI SDK (``openai/…`` and the OpenAI-compatible providers
    litellm lists) that is ``openai.resources`` (about 0.3 s): imported here, before the request is
    made, rather than after the request has started — when the caller already counts it as sent and
    other work of the process (:meth:`~bot.digest.llm.client.LLMClient.sending`) competes for the
    interpreter. Other providers import nothing here.
    """
    litellm = load()
    try:
        provider = litellm.get_llm_provider(model)[1]
    except litellm.exceptions.BadRequestError:  # a model string it cannot place: the request itself will say so
        return
    if provider in {"openai", "azure", "text-completion-openai", *litellm.openai_compatible_providers}:
        with _collector_paused():
            import openai.resources  # noqa: F401


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (an import whose objects all stay alive), as it was after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
