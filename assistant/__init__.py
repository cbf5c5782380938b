"""Evidentia: the chat app, LLM client, tool loop, settings and CLI."""
