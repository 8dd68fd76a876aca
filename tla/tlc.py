"""Running TLC and reading what it prints.

TLC is found through the environment only: ``TLA2TOOLS_JAR`` names ``tla2tools.jar``
and ``java`` must be on ``PATH``. :func:`run_tlc` runs one configuration and returns a
:class:`TlcRun`: the state counts, the depth, and the violation TLC reported with its
trace, each state parsed into Python values (:mod:`ordercheck.tla.values`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ordercheck.tla.values import parse_value

JAR_VARIABLE = "TLA2TOOLS_JAR"


class TlcUnavailable(RuntimeError):
    """TLC cannot be run here; the message says why."""


class TlcFailed(RuntimeError):
    """TLC stopped with an error that is not a property violation (a bad module, a
    type error in an expression...); the message carries TLC's own words."""


def find_tlc() -> tuple[str, str]:
    """``(java, jar)``, or :class:`TlcUnavailable` saying what is missing."""
    jar = os.environ.get(JAR_VARIABLE)
    if not jar:
        raise TlcUnavailable(f"{JAR_VARIABLE} is not set (point it at tla2tools.jar to run TLC)")
    if not Path(jar).is_file():
        raise TlcUnavailable(f"{JAR_VARIABLE}={jar} is not a file")
    java = shutil.which("java")
    if java is None:
        raise TlcUnavailable("java is not on PATH")
    return java, jar


@dataclass
class TlcState:
    """One state of a TLC trace: the action TLC names and the variables' values."""

    action: str
    values: dict[str, Any]


@dataclass
class TlcRun:
    """What one TLC run found."""

    exit_code: int
    output: str
    distinct: int | None = None
    generated: int | None = None
    depth: int | None = None
    violated: str | None = None  # the invariant, action property or temporal property TLC reports
    kind: str | None = None  # "invariant", "action", "temporal" or "deadlock"
    trace: list[TlcState] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)  # lines TLC's Print/PrintT wrote
    seconds: float = 0.0
    config: str | None = None  # the configuration file TLC ran on

    @property
    def complete(self) -> bool:
        """TLC explored the whole state space without reporting anything."""
        return self.violated is None and self.kind is None and self.exit_code == 0


_COUNTS = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left on queue\.", re.M)
_PROGRESS = re.compile(r"^Progress\(\d+\) at .*?: ([\d,]+) states generated.*?, ([\d,]+) distinct states found", re.M)
_DEPTH = re.compile(r"^The depth of the complete state graph search is (\d+)\.", re.M)
_INVARIANT = re.compile(r"^Error: Invariant (\w+) is violated", re.M)
# "Action property P is violated." (a PROPERTY [][A]_vars; TLC names it when the formula is one definition)
_ACTION = re.compile(r"^Error: Action property (\w+) is violated", re.M)
# "Temporal property P was violated", or several at once: "Temporal properties P and Q
# were violated" (the first is reported; the rerun without it reports the next).
_TEMPORAL = re.compile(r"^Error: Temporal propert(?:y|ies) (?:(\w+)(?:(?:, | and )\w+)* )?(?:was|were) violated", re.M)
_STATE = re.compile(r"^State (\d+): (.*)$")
_VAR = re.compile(r"^/\\ (\w+) = (.*)$")
_BACK = re.compile(r"^Back to state (\d+): ?(.*)$")


def parse_output(text: str, exit_code: int) -> TlcRun:
    """Read TLC's plain output (not ``-tool`` mode)."""
    run = TlcRun(exit_code, text)
    counts = _COUNTS.findall(text)
    if counts:
        generated, distinct, _left = counts[-1]
        run.generated, run.distinct = int(generated.replace(",", "")), int(distinct.replace(",", ""))
    depth = _DEPTH.findall(text)
    if depth:
        run.depth = int(depth[-1])
    inv = _INVARIANT.search(text)
    temporal = _TEMPORAL.search(text)
    action = _ACTION.search(text)
    if inv:
        run.violated, run.kind = inv.group(1), "invariant"
    elif action:
        run.violated, run.kind = action.group(1), "action"
    elif temporal:
        run.violated, run.kind = temporal.group(1) or "temporal", "temporal"
    elif "Error: Deadlock reached." in text:
        run.kind = "deadlock"
    run.trace = parse_trace(text)
    run.printed = [line for line in text.splitlines() if line.startswith("<<\"")]
    return run


def parse_trace(text: str) -> list[TlcState]:
    """The states of the first trace in TLC's output; for a lasso, the step back to the
    loop's first state is the last one."""
    states: list[TlcState] = []
    current: TlcState | None = None
    var: str | None = None
    buf: list[str] = []

    def flush() -> None:
        nonlocal var, buf
        if current is not None and var is not None:
            current.values[var] = parse_value(" ".join(buf))
        var, buf = None, []

    started = False
    for line in text.splitlines():
        m = _STATE.match(line)
        if m:
            if started and int(m.group(1)) <= len(states) and states:
                break  # a second trace begins
            flush()
            started = True
            current = TlcState(m.group(2).strip(), {})
            states.append(current)
            continue
        if not started or current is None:
            continue
        v = _VAR.match(line)
        if v:
            flush()
            var, buf = v.group(1), [v.group(2)]
        elif line.strip() and var is not None and not line.startswith(("Error", "State", "Back to", "Progress")):
            buf.append(line.strip())
        else:
            flush()
            back = _BACK.match(line)
            if back and 0 < int(back.group(1)) <= len(states):
                # A lasso: the loop's last step returns to an earlier state; keep that
                # step, so the trace reads back with its loop closed.
                states.append(TlcState(back.group(2).strip(), dict(states[int(back.group(1)) - 1].values)))
                break
            if line.startswith(("Back to state", "Progress", "Finished", "The ", "Checking")):
                break
    flush()
    return states


def run_tlc(
    directory: str | Path,
    module: str,
    config: str,
    *,
    workers: int = 1,
    extra: list[str] | None = None,
    timeout: float | None = None,
) -> TlcRun:
    """Run TLC on ``directory/module.tla`` with ``directory/config``.

    Deadlock checking is off (``-deadlock``): a run that ends is the specs' normal end,
    and ``deadlock_free`` is a property of its own. TLC's scratch files go to a temporary
    directory, and so does what TLC writes to the JVM's temporary directory (an empty
    ``tlc-NNN`` folder per run, left there otherwise): nothing stays behind.
    """
    import time

    java, jar = find_tlc()
    with tempfile.TemporaryDirectory(prefix="ordercheck-tlc-") as meta:
        cmd = [
            java, "-XX:+UseParallelGC", f"-Djava.io.tmpdir={meta}", "-cp", jar, "tlc2.TLC",
            "-workers", str(workers), "-deadlock", "-noGenerateSpecTE",
            "-metadir", meta, "-config", config, *(extra or []), f"{module}.tla",
        ]
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=directory, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TlcFailed(f"TLC did not finish within {timeout:.0f} s") from None
        elapsed = time.monotonic() - started
    output = proc.stdout + proc.stderr
    run = parse_output(output, proc.returncode)
    run.seconds = elapsed
    run.config = config
    unread = proc.returncode in (12, 13) and run.kind is None  # a violation we cannot read is no completed run
    if proc.returncode not in (0, 11, 12, 13) or (proc.returncode == 0 and run.distinct is None) or unread:
        tail = "\n".join(line for line in output.splitlines() if line.strip())
        raise TlcFailed(f"TLC exited with {proc.returncode}:\n{tail[-3000:]}")
    return run
