"""Traces both ways between our engine and TLC.

:func:`from_tlc` reads a TLC trace back into our trace format (a list of
:class:`ordercheck.checker.api.result.Step`): each TLC state is decoded into the Python state and each
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

from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.result import Step
from ordercheck.checker.api.trace import replay, to_steps
from ordercheck.tla.adapters import Adapter, ExportedProperty
from ordercheck.tla.export import template_environment
from ordercheck.tla.tlc import TlcRun, TlcState, run_tlc
from ordercheck.tla.values import tla


@dataclass(frozen=True)
class Candidate:
    """A Python state TLC's state could have been: an initial state, or a successor of
    the state before with the action (formatted) that leads to it."""

    action: str
    state: Any


class TraceMismatch(RuntimeError):
    """A TLC trace that the Python spec cannot follow, with what was seen where it
    parted: TLC's state number ``position`` (1-based, as TLC numbers them), its
    ``values`` as TLC printed them (variable -> TLA+ text), the adapter's ``decoded``
    state (or ``decode_error`` when ``decode`` raised), and the ``candidates``: the
    Python states it could have been (the initial states for state 1, otherwise the
    successors of the state before). ``position`` is ``None`` when TLC printed no trace."""

    def __init__(
        self,
        message: str,
        *,
        position: int | None = None,
        values: dict[str, str] | None = None,
        decoded: Any = None,
        decode_error: str | None = None,
        candidates: Sequence[Candidate] = (),
    ) -> None:
        super().__init__(message)
        self.position = position
        self.values = dict(values or {})
        self.decoded = decoded
        self.decode_error = decode_error
        self.candidates = tuple(candidates)


def _decode(adapter: Adapter, n: int, state: TlcState, candidates: list[Candidate]) -> Any:
    try:
        return adapter.decode(state.values)
    except Exception as exc:  # the adapter's code: its failure is a trace that does not read back
        why = f"{type(exc).__name__}: {exc}"
        raise TraceMismatch(
            f"the adapter's decode raised {why} on TLC's state {n}", position=n, values=_texts(state),
            decode_error=why, candidates=candidates,
        ) from None


def _texts(state: TlcState) -> dict[str, str]:
    return {k: tla(v) for k, v in state.values.items()}


def from_tlc(adapter: Adapter, trace: Sequence[TlcState]) -> list[Step]:
    """TLC's trace as our Steps (action labels and described states of the Python spec).

    Raises :class:`TraceMismatch`, carrying TLC's state where the two part and the
    Python states it could have been, when a state does not decode, the first is no
    initial state of the Python spec, or a later one is no successor of the one before."""
    spec = adapter.spec
    shown = rendering_of(spec)
    trace = [s for s in trace if s.values]
    if not trace:
        raise TraceMismatch("TLC printed no trace")
    inits = list(spec.init_states())
    candidates = [Candidate("initial state", s) for s in inits]
    first = _decode(adapter, 1, trace[0], candidates)
    # states compare by the adapter's view (the parts the module holds); the path keeps the
    # Python states themselves
    views = [adapter.view(s) for s in inits]
    if adapter.view(first) not in views:
        raise TraceMismatch(
            "TLC's first state is not an initial state of the Python spec", position=1, values=_texts(trace[0]),
            decoded=first, candidates=candidates,
        )
    start = views.index(adapter.view(first))
    path: list[tuple[tuple | None, int, Any]] = [(None, start, inits[start])]
    for n, tlc_state in enumerate(trace[1:], start=2):
        succ = list(spec.next_states(path[-1][2]))
        candidates = [Candidate(shown.format_action(label), s) for label, s in succ]
        target = _decode(adapter, n, tlc_state, candidates)
        seen = adapter.view(target)
        found = [(pos, label, s) for pos, (label, s) in enumerate(succ) if adapter.view(s) == seen]
        if not found:
            raise TraceMismatch(
                f"TLC's state {n} is no successor of state {n - 1} in the Python spec", position=n,
                values=_texts(tlc_state), decoded=target, candidates=candidates,
            )
        pos, label, state = found[0]
        path.append((label, pos, state))
    return to_steps(spec, path)


def _differs(decoded: Any, state: Any) -> str:
    """Which items of a tuple state differ from the decoded one."""
    if isinstance(decoded, tuple) and isinstance(state, tuple) and len(decoded) == len(state):
        items = [str(i) for i, (a, b) in enumerate(zip(decoded, state, strict=True)) if a != b]
        return f"differs in item{'s' if len(items) > 1 else ''} {', '.join(items)}"
    return "differs in shape"


def mismatch_lines(exc: TraceMismatch) -> list[str]:
    """What ``ordercheck tlc --show-traces`` prints for a TLC trace that does not replay:
    TLC's state where the two part, as TLC printed it and as the adapter decodes it,
    beside the Python states it could have been, each with the items it differs in."""
    lines = [str(exc)]
    if exc.position is None:
        return lines
    n = exc.position
    lines.append(f"TLC's state {n}, as TLC printed it:")
    lines += [f"  /\\ {name} = {text}" for name, text in exc.values.items()]
    if exc.decode_error is not None:
        lines.append(f"TLC's state {n}, decoded by the adapter: decode raised {exc.decode_error}")
    else:
        lines.append(f"TLC's state {n}, decoded by the adapter:")
        lines.append(f"  {exc.decoded!r}")
    where = "the Python spec's initial states" if n == 1 else f"the Python spec's successors of state {n - 1}"
    lines.append(f"{where} ({len(exc.candidates)}):")
    for cand in exc.candidates:
        mark = "" if exc.decode_error is not None else f"  ({_differs(exc.decoded, cand.state)})"
        lines.append(f"  {cand.action}: {cand.state!r}{mark}")
    return lines


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
    run can go round the loop for ever with the predicate false. For a per-step check
    (``prop.step``) the trace's last step shows it: the replay records in ``stepShown``
    whether that step met :func:`step_shows`.
    """
    if prop.step:
        return "stepShown"
    if prop.kind == "sometimes":
        return prop.predicate
    if prop.kind == "eventually":
        if loop_start is not None:
            return f"~{prop.predicate} /\\ StateOf = Traces[t][{loop_start + 1}]"
        return f"~ENABLED Next /\\ ~{prop.predicate}"
    return f"~{prop.predicate}"


def step_shows(prop: ExportedProperty) -> str:
    """The TLA+ action a trace's last step must meet to show a per-step check's verdict:
    a step failing the check (``always``), or showing it (``sometimes``); ``FALSE`` for a
    property of states."""
    if not prop.step:
        return "FALSE"
    return prop.predicate if prop.kind == "sometimes" else f"~({prop.predicate})"


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
        items.append({"property": prop_name, "states": states, "shows": shows(prop, loop_start),
                      "step_shows": step_shows(prop)})
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
