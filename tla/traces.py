"""Traces both ways between our engine and TLC.

:func:`from_tlc` reads a TLC trace back into our trace format (a list of
:class:`checker.api.result.Step`): each TLC state is decoded into the Python state and each
step matched to the Python spec's action that produces it, so a report can show a trace
TLC found, and a TLC trace that is no behaviour of the Python spec is caught.
:func:`confirm_in_tlc` does the reverse: it writes our traces as a TLA+ module over the
exported spec and has TLC replay them (see ``templates/traces.tla.j2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.api.result import Step
from checker.api.trace import replay, to_steps
from tla.adapters import Adapter, ExportedProperty
from tla.export import template_environment
from tla.tlc import TlcRun, TlcState, run_tlc


class TraceMismatch(RuntimeError):
    """A TLC trace that the Python spec cannot follow."""


def from_tlc(adapter: Adapter, trace: Sequence[TlcState]) -> list[Step]:
    """TLC's trace as our Steps (action labels and described states of the Python spec)."""
    spec = adapter.spec
    if not trace:
        raise TraceMismatch("TLC printed no trace")
    states = [adapter.decode(s.values) for s in trace if s.values]
    inits = list(spec.init_states())
    if states[0] not in inits:
        raise TraceMismatch("TLC's first state is not an initial state of the Python spec")
    path: list[tuple[tuple | None, int, Any]] = [(None, inits.index(states[0]), states[0])]
    for n, target in enumerate(states[1:], start=2):
        succ = list(spec.next_states(path[-1][2]))
        found = [(pos, label) for pos, (label, s) in enumerate(succ) if s == target]
        if not found:
            raise TraceMismatch(f"TLC's state {n} is no successor of state {n - 1} in the Python spec")
        pos, label = found[0]
        path.append((label, pos, target))
    return to_steps(spec, path)


def raw_states(adapter: Adapter, steps: Sequence[Step]) -> list[Any]:
    """The Python states of one of our traces, replayed from its action positions."""
    if not steps:
        return []
    path = replay(adapter.spec, steps[0].index, [s.index for s in steps[1:]])
    return [state for _label, _pos, state in path]


def shows(prop: ExportedProperty, loop_start: int | None = None) -> str:
    """The TLA+ condition a trace's last state must meet to show ``prop``'s verdict.

    For an ``eventually`` property the run either stops there with the property's
    predicate false, or (a lasso) the last state is the state at ``loop_start``, so the
    run can go round the loop for ever with the predicate false.
    """
    if prop.kind == "sometimes":
        return prop.predicate
    if prop.kind == "eventually":
        if loop_start is not None:
            return f"~{prop.predicate} /\\ StateOf = Traces[t][{loop_start + 1}]"
        return f"~ENABLED Next /\\ ~{prop.predicate}"
    return f"~{prop.predicate}"


@dataclass
class Confirmation:
    """Which of our traces TLC replayed to a state showing the verdict."""

    confirmed: dict[str, bool]
    run: TlcRun | None


def confirm_in_tlc(
    adapter: Adapter,
    directory: Path,
    spec_module: str,
    model_file: str,
    traces: dict[str, tuple[ExportedProperty, Sequence[Any], int | None]],
    *,
    timeout: float | None = None,
) -> Confirmation:
    """Have TLC replay each of ``traces`` (property name -> the property, the Python
    states of our trace (see :func:`raw_states`) and, for a lasso, where its loop
    starts) on the export in ``directory``; a trace is confirmed when TLC reaches its last state through Init and
    Next steps only, and that state shows the property's verdict."""
    if not traces:
        return Confirmation({}, None)
    name = f"{spec_module}_traces"
    items = []
    order = list(traces)
    for prop_name in order:
        prop, raw, loop_start = traces[prop_name]
        states = [adapter.encode_text(s) for s in raw]
        items.append({"property": prop_name, "states": states, "shows": shows(prop, loop_start)})
    env = template_environment()
    module = env.get_template("traces.tla.j2").render(
        name=name, spec_module=spec_module, model_file=model_file, variables=list(adapter.variables), traces=items
    )
    config = env.get_template("traces.cfg.j2").render(model_file=model_file, constants=adapter.cfg_constants())
    (directory / f"{name}.tla").write_text(module, encoding="utf-8")
    (directory / f"{name}.cfg").write_text(config, encoding="utf-8")
    run = run_tlc(directory, name, f"{name}.cfg", timeout=timeout)
    done = set()
    for line in run.printed:
        if line.startswith('<<"confirmed",'):
            done.add(int(line.split(",")[1].strip(" >")))
    return Confirmation({p: (i + 1) in done for i, p in enumerate(order)}, run)
