"""Evidentia kb."""
