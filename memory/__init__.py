"""Evidentia memory."""
