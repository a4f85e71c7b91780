"""A module that leaves a mark when imported: the file named by ``RRL_IMPORT_MARKER``.

The bridge's tests name it in a ``module:Env-v0`` id to see whether the bridge imported it.
"""

from __future__ import annotations

import os
from pathlib import Path

_marker = os.environ.get("RRL_IMPORT_MARKER")
if _marker:
    Path(_marker).write_text("imported\n")
