"""Reading TLC's verdicts from its output (no TLC needed): several temporal properties
violated at once, and a violation exit code whose report cannot be read."""

from __future__ import annotations

import subprocess

import pytest

import tla.tlc
from tla.tlc import TlcFailed, parse_output, run_tlc

COUNTS = "329 states generated, 184 distinct states found, 0 states left on queue.\n"
TRACE = (
    "Error: The following behavior constitutes a counter-example:\n\n"
    "State 1: <Initial predicate>\n/\\ x = 0\n\n"
    "State 2: <Next line 1, col 1 to line 1, col 2 of module M>\n/\\ x = 1\n\n"
    "State 3: Stuttering\n"
)


@pytest.mark.parametrize(
    "line,first",
    [
        ("Error: Temporal property DeadlockFree was violated.", "DeadlockFree"),
        ("Error: Temporal properties EventualDelivery and DeadlockFree were violated.", "EventualDelivery"),
        ("Error: Temporal properties AllRead, EventualDelivery and DeadlockFree were violated.", "AllRead"),
        ("Error: Temporal properties were violated.", "temporal"),
    ],
)
def test_temporal_violation_is_read_with_its_first_property(line, first):
    run = parse_output(f"{line}\n\n{TRACE}{COUNTS}", 13)
    assert run.kind == "temporal" and run.violated == first
    assert [s.values for s in run.trace if s.values] == [{"x": 0}, {"x": 1}]  # then the stuttering step


def test_unreadable_violation_is_no_completed_run(monkeypatch, tmp_path):
    """TLC exits 13 (a liveness violation) but names it in words we cannot read: the
    run must fail loudly, not pass for a complete exploration with every property
    holding (its counts may even be those of a search TLC broke off)."""
    monkeypatch.setattr(tla.tlc, "find_tlc", lambda: ("java", "tla2tools.jar"))
    output = f"Error: Temporal thing went wrong.\n\n{TRACE}{COUNTS}"

    def fake_run(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 13, stdout=output, stderr="")

    monkeypatch.setattr(tla.tlc.subprocess, "run", fake_run)
    with pytest.raises(TlcFailed, match="TLC exited with 13"):
        run_tlc(tmp_path, "M", "M.cfg")
    # The same output with exit code 0 is an ordinary complete run.
    monkeypatch.setattr(tla.tlc.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0, COUNTS, ""))
    assert run_tlc(tmp_path, "M", "M.cfg").complete
