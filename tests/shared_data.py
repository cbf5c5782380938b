"""Where tests and benchmarks find the shared data (never committed): the configured folders, else ``shared/``
beside the checkout (``EVIDENTIA_SHARED_DIR`` overrides it where the checkout sits elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.exists():  # CI clones next to shared/ as well; allow an override
    SHARED = Path(os.environ.get("EVIDENTIA_SHARED_DIR", "../shared")).resolve()
EVAL_DATA = SHARED / "eval-data"
KB_DATA = SHARED / "kb-data"


def eval_data_dir(settings) -> Path:
    """``EVIDENTIA_EVAL_DATA_DIR`` (which ``make bench`` sets), else the shared benchmark folder."""
    return Path(settings.eval_data_dir or EVAL_DATA)


def kb_mirror_dir(settings) -> Path:
    """``EVIDENTIA_KB_MIRROR_DIR`` (which ``make bench`` sets), else the shared KB-source mirror."""
    return Path(settings.kb_mirror_dir or KB_DATA)
