"""Prompt templates live here as ``<name>.j2`` files; :func:`render` renders one by name, with strict undefined
variables. Tools and the app both render prompts, so this sits below both and imports neither."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import jinja2

PROMPTS_DIR = Path(__file__).resolve().parent


_DATA_TAG = re.compile(r"<\s*/?\s*data\s*>", re.I)


def data_text(value: object) -> str:
    """Text from uploads or documents, safe to place inside a prompt's ``<data>…</data>`` block.

    Templates put such text only inside that block, and say that it is data, never instructions. A value
    that writes ``</data>`` itself could close the block early and smuggle instructions after it, so the
    tags are defused here.
    """
    return _DATA_TAG.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), str(value))


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["data"] = data_text
    return env


def names() -> list[str]:
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.j2"))


def render(name: str, **variables) -> str:
    return _env().get_template(f"{name}.j2").render(**variables).strip()
