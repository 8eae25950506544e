"""litellm, imported once with our process-wide settings; every module here imports it from this one.

``LITELLM_LOCAL_MODEL_COST_MAP`` keeps litellm from downloading its model price
list at import (the copy bundled with the package is used); debug banners are
off so that our stderr stays ours.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # after the variable above

litellm.suppress_debug_info = True

__all__ = ["litellm"]
