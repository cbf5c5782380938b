"""``evidentia user add|remove|list|passwd``: the web UI's login accounts.

Accounts live in the threads database of the configured data folder. Adding the first account turns
the UI's login on at its next start (see assistant/ui/auth.py for the modes).
"""

from __future__ import annotations

import sys

import click

from assistant.settings import Settings
from memory.accounts import AccountError, Accounts


def _accounts() -> Accounts:
    return Accounts(Settings().data_dir / "threads.db")


def _read_password(password_stdin: bool, *, confirm: bool = True) -> str:
    if password_stdin:  # for scripts: the first line of stdin, never a command-line argument (ps shows those)
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=confirm)


@click.group("user")
def user_group() -> None:
    """Manage the web UI's login accounts."""


@user_group.command("add")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def add(name: str, password_stdin: bool) -> None:
    """Add a user with their own password."""
    accounts = _accounts()
    first = not accounts.names()
    try:
        accounts.add(name, _read_password(password_stdin))
    except AccountError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Added user {name}.")
    if first:
        click.echo("This is the first account: restart `evidentia run` to require logins. Each user sees "
                   "only their own chats.")


@user_group.command("passwd")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the new password from standard input.")
def passwd(name: str, password_stdin: bool) -> None:
    """Set a user's password."""
    try:
        _accounts().set_password(name, _read_password(password_stdin))
    except AccountError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Changed the password of {name}.")


@user_group.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Remove a user's login (their chats stay in the database)."""
    accounts = _accounts()
    try:
        accounts.remove(name)
    except AccountError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Removed user {name}; their open sessions end now.")
    if not accounts.names():  # without accounts the next start falls back to a mode with less protection
        fallback = ("single-user mode (EVIDENTIA_AUTH_PASSWORD)" if Settings().auth_password
                    else "the local user with NO login: anyone who can reach the UI can use it")
        click.echo(f"That was the last account: from the next start of `evidentia run` the UI serves {fallback}.")


@user_group.command("list")
def list_users() -> None:
    """List the users who can log in."""
    names = _accounts().names()
    click.echo("\n".join(names) if names else "No accounts: the UI runs for the local user "
               "(or single-user mode with EVIDENTIA_AUTH_PASSWORD).")
