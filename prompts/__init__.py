"""Prompt templates live here as ``<name>.j2`` files; render them with ``assistant.prompts.render``."""
