"""Render the prompt files in ``prompts/`` by name, with strict undefined variables."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def names() -> list[str]:
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.j2"))


def render(name: str, **variables) -> str:
    return _env().get_template(f"{name}.j2").render(**variables).strip()
