"""litellm, imported on first use with our process-wide settings; every module here gets it from :func:`load`.

Importing litellm takes seconds, so it happens when a request is about to be built (a prompt's token
count, or the call itself) — never for a run whose every analysis comes from the cache.
``LITELLM_LOCAL_MODEL_COST_MAP`` keeps litellm from downloading its model price list at import (the
copy bundled with the package is used); debug banners are off so that our stderr stays ours.
"""

from __future__ import annotations

import os
from functools import cache
from types import ModuleType

__all__ = ["load"]


@cache
def load() -> ModuleType:
    """The ``litellm`` module, imported (once) with the settings above."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # after the variable above

    litellm.suppress_debug_info = True
    return litellm
