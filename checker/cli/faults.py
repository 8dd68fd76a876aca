"""What the machine does to a run, as the command line reports it.

* An operating-system error (permission, not a directory, no space, file too large, too
  many open files) ends the command with ``ordercheck: error: PATH: reason`` and exit
  code 6 (:data:`ordercheck.checker.api.result.EXIT_OS`); outputs are staged (:mod:`ordercheck.checker.api.outputs`),
  so nothing half-written is left.
* Running out of memory outside the search's own budget (which stops the search as a
  bound, see :mod:`ordercheck.checker.engine.budget`) ends it with one line and exit code 3.
* SIGINT and SIGTERM end it with a line saying whether and where the progress was
  saved and how to resume, and exit codes 130 and 143 (:mod:`ordercheck.checker.engine.interrupts`).
* A closed standard output is ignored (:mod:`ordercheck.checker.cli.pipes`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.outputs import os_error_line
from ordercheck.checker.api.result import EXIT_BOUND, EXIT_OS
from ordercheck.checker.api.spec_errors import guard_os_exit
from ordercheck.checker.cli.pipes import quiet_closed_stdout
from ordercheck.checker.engine.interrupts import (
    DEFAULT_GRACE,
    Interrupted,
    handling_signals,
    noted,
    stop_grace,
)


def interrupted_line(exc: Interrupted) -> str:
    """What an interrupted run says: the signal, what the stop had to interrupt or kill
    (a step that did not return within the grace, a worker that did not answer), and
    where its progress is saved."""
    head = f"ordercheck: interrupted by {exc.name}; "
    if exc.stuck and exc.stuck.startswith("the spec's code"):
        head += (f"the step in hand did not return within {stop_grace_or_default():g} s and was interrupted "
                 f"in {exc.stuck}; ")
    elif exc.stuck and exc.stuck.startswith("waiting for"):  # WAITING_FOR_SPARK
        head += (f"the run did not stop within {stop_grace_or_default():g} s and was interrupted while "
                 f"{exc.stuck}; ")
    elif exc.stuck:
        head += f"the search did not stop within {stop_grace_or_default():g} s and was interrupted in {exc.stuck}; "
    elif noted():
        head += f"{noted()}; "
    if exc.checkpoint:
        return (f"{head}progress saved in {exc.checkpoint}: "
                "run the same command with --resume to continue from there")
    return (f"{head}nothing was saved "
            "(with --checkpoint DIR a run can be resumed with --resume)")


def stop_grace_or_default() -> float:
    """The stop's grace in seconds (its default when the environment's is bad)."""
    try:
        return stop_grace()
    except InputError:
        return DEFAULT_GRACE


def _stop(line: str, code: int) -> None:
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    click.echo(line, err=True)
    sys.exit(code)


@contextmanager
def machine_faults() -> Iterator[None]:
    """Turn operating-system errors, exhausted memory and signals raised in the block
    into one line on stderr and their exit codes."""
    try:
        yield
    except Interrupted as exc:
        from ordercheck.checker.spark.session import stop_spark

        stop_spark()  # a Spark run's JVM and its workers end with it
        _stop(interrupted_line(exc), exc.exit_code)
    except MemoryError:
        _stop("ordercheck: error: out of memory; give the run more memory or make the model "
              "smaller (reductions, a lower --max-states)", EXIT_BOUND)
    except OSError as exc:
        _stop(f"ordercheck: error: {os_error_line(exc)}", EXIT_OS)


@contextmanager
def guarded_command() -> Iterator[None]:
    """Around a whole command: standard output is written line by line
    (:func:`line_by_line`), signals become :class:`Interrupted`, a closed standard
    output is ignored, and ``os._exit`` called in this process (by a spec's code: ordercheck
    never calls it here) raises :class:`~ordercheck.checker.api.spec_errors.SpecExited` instead of
    ending the process with a status the spec chose (:func:`~ordercheck.checker.api.spec_errors.guard_os_exit`)."""
    line_by_line()
    with handling_signals(), quiet_closed_stdout(), guard_os_exit(), machine_faults():
        yield


def line_by_line() -> None:
    """Make standard output write each line as it is printed, even into a pipe or a file
    (where Python buffers it by blocks): a run killed by ``timeout`` keeps every verdict
    line it printed before."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(line_buffering=True)
        except (ValueError, OSError):  # a stream that cannot be reconfigured: left as it is
            pass


def warn_workers(workers: int) -> None:
    """Warn when ``--workers`` asks for more processes than this machine has cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    if workers > cores:
        click.echo(
            f"ordercheck: warning: --workers {workers} is more than the {cores} cores available; "
            "extra workers only share them and slow the search down (the results are the same)",
            err=True,
        )
