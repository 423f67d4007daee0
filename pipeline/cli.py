"""The ``modelspec`` command: a Click group whose subcommands load only when run.

Each subcommand lives in its own module under :mod:`pipeline.commands` and
is imported only when it is invoked (or its ``--help`` is asked for), so
``modelspec --help`` and ``modelspec --version`` cost the import of Click and
nothing else. The table below carries each command's one-line help for the
group's listing. This module holds no logic of its own.

Exit codes, for every command: 0 success, 1 problems found (or, for
``--check`` modes, something would change), 2 a usage error or a broken
repository (an op profile or schema that cannot be read).
"""

from __future__ import annotations

import importlib
from typing import Dict, List, Optional, Tuple

import click

from pipeline import __version__

# name -> (module under pipeline.commands, one-line help shown by `modelspec --help`)
_COMMANDS: Dict[str, Tuple[str, str]] = {
    "check": ("check", "Check spec files: strict YAML, schema, semantic rules, layer stack, round-trip."),
    "import": ("import_", "Write a spec from a Hugging Face config.json."),
    "show": ("show", "Show one catalogue model's resolved layer stack."),
    "list": ("list_", "List the catalogue: name, arch, layers, experts, MTP, tower."),
    "fmt": ("fmt", "Rewrite specs in the canonical layout (or --check that they are)."),
    "regen": ("regen", "Regenerate the resolved-stack artifacts in resolved/ (or --check them)."),
    "diff": ("diff", "Show what a change does to the catalogue's resolved stacks."),
    "reference": ("reference", "Compare a config's weight inventories with transformers', tensor by tensor."),
    "site": ("site", "Write the catalogue's static web site: an index, a page per model, a diff page."),
    "rule": ("rule", "Explain a problem code (or --all): what it means, its fix, whether it can be silenced."),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand is used."""

    def list_commands(self, ctx: click.Context) -> List[str]:
        """The subcommands, in the table's order."""
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        """Import and return the subcommand *cmd_name*, or ``None`` if there is none."""
        if cmd_name not in _COMMANDS:
            return None
        module = importlib.import_module(f"pipeline.commands.{_COMMANDS[cmd_name][0]}")
        return module.command

    def invoke(self, ctx: click.Context) -> object:
        """Run the subcommand; a usage error's message, which may quote a path or value, is shown escaped.

        The message can name what the user passed (a path with a line break,
        a value from a CI template), so it is made printable like every other
        line modelspec prints (:func:`pipeline.spec.escape.printable`).
        """
        try:
            _current_folder_exists()
            return super().invoke(ctx)
        except click.ClickException as error:
            from pipeline.spec.escape import printable  # pylint: disable=import-outside-toplevel

            error.message = printable(error.message)
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the subcommands with their one-line help, without importing them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_text) for name, (_, help_text) in _COMMANDS.items()])


def _current_folder_exists() -> None:
    """Refuse, as git does, to run in a current folder that was removed: the repository is found from it, and
    report paths are spelled from it.

    Raises:
        click.UsageError: If the current folder no longer exists.
    """
    import os  # pylint: disable=import-outside-toplevel

    try:
        os.getcwd()
    except FileNotFoundError:
        raise click.UsageError("the current folder no longer exists (it was removed after the shell entered it); "
                               "cd to an existing folder") from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="modelspec")
def main() -> None:
    """modelspec: a catalogue of LLM architectures as YAML model specs, kept right.

    \b
    Examples:
      modelspec check                      # every spec under specs/
      modelspec check specs/deepseek/deepseek-v3.yaml --format json
      modelspec import config.json --name my-model -o specs/my/my-model.yaml
      modelspec show deepseek-v3

    Exit codes: 0 clean, 1 problems found, 2 usage error or a broken op
    profile or schema. Run `modelspec COMMAND --help` for a command's options.
    """
