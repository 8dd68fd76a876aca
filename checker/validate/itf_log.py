"""Reading ITF traces (the Informal Trace Format of :mod:`ordercheck.reports.itf`) as logs.

An ITF trace holds each state as its spec *describes* it, and each step's action label
(``#meta.label``). The observable events are not in it as such, so the trace is
replayed through the spec it names (``#meta.spec`` and ``#meta.constants``, which the
reports write): the initial state is the one whose description the first state
records, each step is the enabled action with the recorded label, and the events a
step adds to the spec's history (:meth:`~ordercheck.checker.Spec.history`) become the log's
events, placed at the index of the state they lead to (``Log.unit`` is ``"state"``).
A trace that does not replay is bad input, naming the state.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker.api.errors import ConstantError, InputError
from ordercheck.checker.api.inputs import parse_json, too_deep
from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.spec import Spec
from ordercheck.checker.loading.registry import SpecNotImported, UnknownSpec, spec_class
from ordercheck.checker.validate.log import (
    DELIVER,
    DROP,
    FAIL,
    RESTART,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
    Log,
    LogBuilder,
)
from ordercheck.reports.itf import itf_value

_FIRST = (SEND, SIGNAL_OUT, FAIL, RESTART)  # within a step, these come before receipts


def _where(source: str, field: str, message: str) -> InputError:
    return InputError(source, field, message)


def decode_value(value: Any) -> Any:
    """An ITF value back in Python: integers (``#bigint`` too), strings, booleans,
    lists as tuples, ``#set`` as frozensets, records and ``#map`` as dicts."""
    if isinstance(value, list):
        return tuple(decode_value(v) for v in value)
    if isinstance(value, dict):
        if "#bigint" in value:
            return int(value["#bigint"])
        if "#set" in value:
            return frozenset(decode_value(v) for v in value["#set"])
        if "#tup" in value:
            return tuple(decode_value(v) for v in value["#tup"])
        if "#map" in value:
            return {decode_value(k): decode_value(v) for k, v in value["#map"]}
        return {k: decode_value(v) for k, v in value.items()}
    return value


MAX_NESTING = 500
"""ITF documents nested deeper than this are refused (:func:`~ordercheck.checker.api.inputs.nesting`):
ordercheck's own traces nest a few levels, and a fixed limit gives the same answer
whatever Python's recursion limit is at the time (an engine in the same process may
have raised it)."""


def read_itf(text: str, source: str, spec: Spec | type[Spec] | None = None) -> Log:
    """Read an ITF trace written by the reports; ``spec`` overrides the one it names (a
    class: built with the trace's ``#meta.constants``). Without it, ``#meta.spec`` may
    name a built-in or registered spec only: a spec file or module it names is never
    imported (bad input saying to pass ``--spec``). A trace nested deeper than
    :data:`MAX_NESTING` levels (or than Python's recursion allows, for the JSON reader)
    is bad input, not a crash."""
    try:
        return _read_itf(text, source, spec)
    except RecursionError:
        raise too_deep(source, "an ITF trace", MAX_NESTING) from None


def _read_itf(text: str, source: str, spec: Spec | type[Spec] | None) -> Log:
    doc = parse_json(text, source, "an ITF trace", MAX_NESTING)
    if not isinstance(doc, dict) or not isinstance(doc.get("states"), list):
        raise _where(source, "states", "missing: an ITF trace is an object with a list of states")
    meta = doc.get("#meta", {})
    if spec is None or isinstance(spec, type):
        spec = _spec_of(meta, source, spec)
    states = doc["states"]
    if not states:
        raise _where(source, "states", "is empty")
    names = [str(v) for v in doc.get("vars", [])]

    def described(state: Any) -> dict[str, Any]:
        full = rendering_of(spec).describe(state)
        return {k: itf_value(full.get(k)) for k in (names or full)}

    def recorded(i: int) -> dict[str, Any]:
        rec = states[i]
        if not isinstance(rec, dict):
            raise _where(source, f"states[{i}]", "expected an object")
        return {k: v for k, v in rec.items() if k != "#meta" and (not names or k in names)}

    first = recorded(0)
    inits = [s for s in spec.init_states() if described(s) == first]
    if not inits:
        raise _where(source, "states[0]", f"is not an initial state of spec {spec.name!r} with these constants")
    state = inits[0]
    try:
        history = spec.history(state)
    except NotImplementedError:
        raise _where(source, "#meta.spec", f"spec {spec.name!r} keeps no history, so its traces have no events") from None
    builder = LogBuilder(source, history.peers)
    builder.log.unit = "state"
    builder.log.fmt = "itf"
    builder.log.header = {"spec": spec.name, "itf": True}
    seen = [len(log) for log in history.logs]
    add_history_events(builder, history, [0] * len(seen), 0)
    for i in range(1, len(states)):
        rec_meta = states[i].get("#meta", {}) if isinstance(states[i], dict) else {}
        if "label" not in rec_meta:
            raise _where(source, f"states[{i}].#meta.label", "missing: the action that led to this state")
        label = decode_value(rec_meta["label"])
        want = recorded(i)
        step = next(
            (t for lab, t in spec.next_states(state) if tuple(lab) == label and described(t) == want),
            None,
        )
        if step is None:
            raise _where(
                source, f"states[{i}].#meta.label",
                f"no enabled action of spec {spec.name!r} is {list(label)!r} leading to the recorded state",
            )
        state = step
        history = spec.history(state)
        add_history_events(builder, history, seen, i)
        seen = [len(log) for log in history.logs]
    return builder.log


def _spec_of(meta: Any, source: str, cls: type[Spec] | None = None) -> Spec:
    """The spec the trace's ``#meta`` names (or ``cls``), with its constants."""
    if not isinstance(meta, dict):
        raise _where(source, "#meta", "expected an object")
    name = meta.get("spec")
    if cls is not None:
        name = cls.name
    elif not isinstance(name, str):
        raise _where(source, "#meta.spec", "missing: the spec the trace belongs to (ordercheck's reports write it)")
    else:
        try:
            cls = spec_class(name)
        except SpecNotImported as exc:  # a path or module in the data: never imported
            raise _where(source, "#meta.spec", str(exc)) from None
        except UnknownSpec:
            raise _where(source, "#meta.spec", f"unknown spec {name!r} (neither built in nor registered by an "
                                               "installed package); pass --spec to replay the trace through a spec of yours") from None
    constants = meta.get("constants", {})
    if not isinstance(constants, dict):
        raise _where(source, "#meta.constants", "expected an object")
    try:
        return cls(**constants)
    except (ConstantError, ValueError, TypeError) as exc:
        raise _where(source, "#meta.constants", f"do not fit spec {name!r}: {exc}") from None


def add_history_events(b: LogBuilder, history: Any, seen: list[int], index: int) -> None:
    """Append to ``b`` the events ``history`` has beyond the first ``seen[p]`` of each
    peer ``p``, at line ``index``: sends, signals and failures first, then receipts, by
    peer within each group (as the reports' timelines place one step's events)."""
    new = []
    for p, log in enumerate(history.logs):
        for ev in log[seen[p] :] if len(log) >= seen[p] else log:
            new.append((0 if ev.kind in _FIRST else 1, p, ev))
    new.sort(key=lambda t: (t[0], t[1]))
    for _order, p, ev in new:
        kind, arg = ev.kind, ev.arg
        if kind == SEND:
            msg = history.messages[arg]
            b.send(p, msg.name, sorted(msg.dests), index)
        elif kind in (DELIVER, DROP):
            msg = history.messages.get(arg)
            name = msg.name if msg is not None else f"m{arg}"
            reason = history.drops.get((p, arg)) if kind == DROP else None
            b.add(p, kind, b.message_id(name), index, {"reason": reason} if reason else None)
        elif kind in (SIGNAL_OUT, SIGNAL_IN):
            b.add(p, kind, arg, index)
        else:
            b.add(p, kind, 0, index)
