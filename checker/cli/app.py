"""The ``ordercheck`` command group (DESIGN.md, "Command line").

Each command group lives in its own module and is added here: :mod:`~ordercheck.checker.cli.check`
(check, simulate, list), :mod:`~ordercheck.checker.cli.reports` (report, ablate, graph),
:mod:`~ordercheck.checker.cli.matrix`, :mod:`~ordercheck.checker.cli.prove`, :mod:`~ordercheck.checker.cli.sweep` and
:mod:`~ordercheck.checker.cli.tla` (export-tla, tlc) and :mod:`~ordercheck.checker.cli.new` (new). They import :mod:`~ordercheck.checker.cli.common` and the
layers below; none imports this module.

Exit codes (docs/reference/exit-codes.md): 0 every verdict as expected; 1 a verdict
differs from ``[expect]`` (or a property is violated where nothing is expected); 2 bad
input, with one line naming the file and field; 3 a bound stopped the search before a
verdict (the memory budget included); 4 the engine failed for good (a Spark job that
failed after its retries), with one line and nothing written; 5 a spec raised an
exception, with one line naming the spec, the action and the shortest trace to the
state it was taken from (:mod:`ordercheck.checker.engine.diagnose`); 6 an operating-system error on
an output or work path; 130 and 143 SIGINT and SIGTERM.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from ordercheck.checker.api.errors import EngineError, InputError, SpecError
from ordercheck.checker.api.exits import reset as reset_verdicts
from ordercheck.checker.api.exits import verdicts_printed
from ordercheck.checker.api.result import EXIT_ENGINE, EXIT_INPUT, EXIT_SPEC
from ordercheck.checker.api.spec_errors import SpecRaised, left_spec_code, left_text
from ordercheck.checker.cli.exitcodes import UNDECLARED, undeclared
from ordercheck.checker.cli.faults import guarded_command, machine_faults

COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("ordercheck.checker.cli.check", "add_commands"),
    "simulate": ("ordercheck.checker.cli.check", "add_commands"),
    "list": ("ordercheck.checker.cli.check", "add_commands"),
    "report": ("ordercheck.checker.cli.reports", "add_commands"),
    "ablate": ("ordercheck.checker.cli.reports", "add_commands"),
    "graph": ("ordercheck.checker.cli.reports", "add_commands"),
    "matrix": ("ordercheck.checker.cli.matrix", "matrix_command"),
    "prove": ("ordercheck.checker.cli.prove", "prove"),
    "sweep": ("ordercheck.checker.cli.sweep", "add_commands"),
    "export-tla": ("ordercheck.checker.cli.tla", "add_commands"),
    "tlc": ("ordercheck.checker.cli.tla", "add_commands"),
    "validate": ("ordercheck.checker.validate.command", "add_commands"),
    "generate-logs": ("ordercheck.checker.validate.command", "add_commands"),
    "new": ("ordercheck.checker.cli.new", "add_commands"),
    "run": ("ordercheck.checker.cli.run", "run_command"),
}
"""Each command: the module that defines it and either its ``add_commands(group)`` (which
adds every command of the module) or the command object's name. A command's module is
imported when the command is run or listed, so a run imports only what its command
needs (``ordercheck validate`` or ``--version`` never load the search engine and numpy)."""


BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}
"""Set (unless already set) before numpy is first loaded. ordercheck does no linear
algebra, yet the OpenBLAS library that numpy's wheels bundle starts a thread per core
as numpy loads, which spin before they sleep: on a 2-core machine a third of the CPU
time of a short ``ordercheck check`` (0.11 of 0.33 s), in every process the command
starts (sharded workers, Spark's Python workers on a local master) as well. A user
who wants other values sets them in the environment."""


def limit_blas_threads() -> None:
    """Give this process, and the processes it starts, :data:`BLAS_THREADS` where
    the environment does not say otherwise (before numpy loads, or it has no effect
    here)."""
    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)


class OrdercheckGroup(click.Group):
    """Turns bad input (a spec that breaks the spec API included) into one line and exit
    code 2, an engine that fails for good into one line and exit code 4, and what the
    machine does to a run (see :mod:`ordercheck.checker.cli.faults`) into one line and its own code,
    without a traceback."""

    running: str | None = None  # the command being run, for ordercheck.checker.cli.exitcodes

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, name = COMMANDS[cmd_name]
            found = getattr(importlib.import_module(module), name)
            if isinstance(found, click.Command):
                self.add_command(found)
            else:
                found(self)
        return self.commands.get(cmd_name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        self.running = None
        limit_blas_threads()
        try:
            with guarded_command():
                return super().main(*args, **kwargs)
        except SystemExit as exc:
            line = undeclared(self.running, exc.code)
            if line is not None:
                click.echo(line, err=True)
                sys.exit(UNDECLARED)
            raise

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in COMMANDS and not args[0].startswith("-"):
            for known in COMMANDS:  # an unknown name: click suggests the close ones among those loaded
                self.get_command(ctx, known)
        name, cmd, rest = super().resolve_command(ctx, args)
        self.running = cmd.name if cmd is not None else None
        return name, cmd, rest

    def invoke(self, ctx: click.Context) -> Any:
        reset_verdicts()
        try:
            with machine_faults():
                returned = super().invoke(ctx)
        except InputError as exc:
            click.echo(f"ordercheck: error: {exc.line()}", err=True)
            sys.exit(EXIT_INPUT)
        except EngineError as exc:
            click.echo(f"ordercheck: error: {exc.line()}", err=True)
            sys.exit(EXIT_ENGINE)
        except SpecError as exc:
            # A spec module that breaks the spec API (e.g. a string inside a state).
            click.echo(f"ordercheck: error: spec {exc} (fix the spec module)", err=True)
            sys.exit(EXIT_INPUT)
        except SpecRaised as exc:
            # An exception inside a spec's code, located by ordercheck.checker.engine.diagnose.
            click.echo(f"ordercheck: spec error: {exc.line()}", err=True)
            sys.exit(EXIT_SPEC)
        except SystemExit as exc:
            if exc.code in (None, 0):
                _unearned(ctx, f"ended by SystemExit({exc.code!r})")
            raise
        except BaseException as exc:
            if not left_spec_code(exc):  # ordercheck's interruption, a real Ctrl-C
                raise
            # A way out of a spec's code (a KeyboardInterrupt of its own...) that no engine caught.
            click.echo(f"ordercheck: spec error: {ctx.invoked_subcommand}: a spec's code raised {left_text(exc)}, "
                       "and the run ended without its verdicts", err=True)
            sys.exit(EXIT_SPEC)
        _unearned(ctx, "returned")
        return returned


VERDICT_COMMANDS = frozenset({"check", "simulate", "ablate", "matrix", "sweep", "prove", "validate", "tlc", "run"})
"""The commands whose exit code 0 says "every verdict as expected": they end through
:func:`ordercheck.checker.api.exits.exit_after_verdicts` once their verdicts are printed, and any
other end with exit code 0 is exit code 5 (:func:`_unearned`)."""


def _unearned(ctx: click.Context, how: str) -> None:
    """Exit code 5 with one line if a command of :data:`VERDICT_COMMANDS` ended (``how``)
    without printing its verdicts: a ``sys.exit(0)`` in a spec's code that no engine
    turned into the spec's error must not pass for a run's success."""
    name = ctx.invoked_subcommand
    if name in VERDICT_COMMANDS and not verdicts_printed():
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        click.echo(f"ordercheck: spec error: {name} {how} before printing its verdicts (a spec's code calling "
                   "sys.exit or os._exit?); no verdict was reached", err=True)
        sys.exit(EXIT_SPEC)


@click.group(cls=OrdercheckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ordercheck")
def main() -> None:
    """Model-check message-ordering protocols: bus1 and the classic algorithms."""


