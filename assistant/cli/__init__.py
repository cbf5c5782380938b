"""The ``evidentia`` command line.

Sub-command groups live beside the code they drive and attach themselves here:
``model`` (assistant.cli.model_cli), ``kb`` (assistant.cli.kb_cli), ``eval`` (assistant.evals.cli), ``user``
(assistant.cli.user_cli), ``rules`` (assistant.cli.rules_cli); the chat
commands (``ask``, ``chat``, ``run``) are in assistant.cli.chat_cli.
"""

from __future__ import annotations

import logging

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages.")
def main(verbose: bool) -> None:
    """Evidentia: answers and claim checks that cite their evidence."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    check_settings()


def check_settings() -> None:
    """Read the settings once before any command, so that a mistyped value is one message naming the variable, not a
    traceback from whichever command first reads it."""
    from pydantic import ValidationError

    from assistant.settings import Settings

    try:
        Settings()
    except ValidationError as exc:
        prefix = Settings.model_config.get("env_prefix", "")
        lines = []
        for error in exc.errors():
            name = f"{prefix}{'_'.join(str(part) for part in error['loc'])}".upper()
            lines.append(f"  {name}={error.get('input')!r}: {error['msg']}")
        raise click.ClickException("A setting is not valid (from the environment or .env):\n" + "\n".join(lines)
                                   + "\nFix or unset it; every setting is described in .env.example.") from None


def _attach() -> None:
    from assistant.cli.chat_cli import register as register_chat
    from assistant.evals.cli import eval_group
    from assistant.cli.kb_cli import kb_group
    from assistant.kbloom.cli import register as register_harvest
    from assistant.cli.model_cli import model_group
    from assistant.cli.rules_cli import rules_command
    from assistant.cli.user_cli import user_group

    main.add_command(model_group)
    main.add_command(kb_group)
    register_harvest(kb_group)
    main.add_command(eval_group)
    main.add_command(user_group)
    main.add_command(rules_command)
    register_chat(main)


_attach()


if __name__ == "__main__":
    main()
