"""Placeholder: its owner replaces this module. ``register(group)`` attaches click commands."""


def register(group) -> None:
    return None
