"""Regenerate the pinned tool schemas: ``python -m tests.snapshots.update``."""

import json
from pathlib import Path

from tools.registry import REGISTRY, load_all

if __name__ == "__main__":
    load_all()
    out = Path(__file__).parent / "tool_schemas.json"
    out.write_text(json.dumps({n: t.openai_schema() for n, t in sorted(REGISTRY.items())}, indent=2) + "\n")
    print(f"wrote {out} ({len(REGISTRY)} tools)")
