"""A trace as a timeline of events: who did what at which step.

A :class:`~ordercheck.checker.api.result.Result` trace holds each step's action label, its position
among the enabled actions and the state as the spec *describes* it. The diagram needs
more: the observable history (:class:`ordercheck.specs.history.History`) at every step. So the
trace is replayed through the spec (:func:`ordercheck.checker.api.trace.replay`, from the recorded
positions ``Step.index``), the spec gives the history of each replayed state, and the
events that appear in a peer's log between two steps are placed at the later step.
This works for every spec that exposes ``history(state)``; the spec's optional
``action_site`` places the steps that leave no trace in the history (bus1's blocks
and commits).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ordercheck.checker.api.rendering import Rendering, rendering_of
from ordercheck.checker.api.result import Step
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.api.trace import ReplayError, replay
from ordercheck.checker.loading.registry import SpecNotImported, UnknownSpec, spec_class
from ordercheck.checker.monitors.events import DELIVER as LOG_DELIVER
from ordercheck.checker.monitors.events import DROP as LOG_DROP
from ordercheck.checker.monitors.log import Log, signal_sources
from ordercheck.checker.monitors.violation import Violation
from ordercheck.specs.history import (
    DELIVER,
    DROP,
    KIND_NAMES,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
    Event,
    History,
    Message,
    history_log,
)
from ordercheck.specs.properties import MONITORS, first_violation

# Event kinds that come before receipts within one step (so signals pair up in order).
_FIRST = {"send", "signal_out", "fail", "restart", "stage", "commit", "arrive", "step", "internal_send"}


@dataclass(frozen=True)
class TimelineEvent:
    """One event on one peer's line.

    ``kind`` is a history event kind (``send``, ``deliver``, ``signal_out``,
    ``signal_in``, ``drop``, ``fail``, ``restart``), an action site (``stage``,
    ``commit``, ``arrive``, ``step``) or a protocol-internal message (``internal_send``,
    ``internal_receive``, ``internal_lose``: ``other`` is the other end, ``text`` the
    message's name).
    ``message`` is a message id, ``other`` the other peer of a
    signal, ``log_index`` the event's position in the peer's history log (history
    events only).
    """

    step: int
    peer: int
    kind: str
    message: int | None = None
    other: int | None = None
    log_index: int | None = None
    text: str = ""


@dataclass
class Timeline:
    """The events of a replayed trace, with the history of its last state."""

    peers: tuple[str, ...]
    messages: dict[int, Message]
    events: list[TimelineEvent]
    history: History
    steps: int

    def message_name(self, mid: int | None) -> str:
        if mid is None or mid not in self.messages:
            return "?" if mid is None else f"m{mid}"
        return self.messages[mid].name

    def signal_pairs(self) -> dict[tuple[int, int], tuple[int, int]]:
        """Each signal receipt's signal, as ``{(peer, log_index) of the receipt: (peer,
        log_index) of the signal}``: the one pairing of the monitors
        (:func:`ordercheck.checker.monitors.log.signal_sources`) on the last history laid out as a
        log (:func:`ordercheck.specs.history.history_log`), so every report draws the signals the
        properties read."""
        log = history_log(self.history)
        at = history_positions(log)
        return {at[r]: at[s] for r, s in signal_sources(log).items()}


def history_positions(log: Log) -> list[tuple[int, int]]:
    """For each event of a history laid out as a log, ``(peer, index in the peer's
    history log)``: the layout keeps each peer's order, so the k-th event of peer ``p``
    in the log is event ``k`` of ``p``'s history log (a ``fail`` that
    :func:`~ordercheck.specs.history.history_log` adds at the end of a failed peer's log gets the
    index one past its history's end)."""
    seen = [0] * len(log.peers)
    out = []
    for p in log.peer:
        out.append((p, seen[p]))
        seen[p] += 1
    return out


@dataclass
class Blame:
    """What a diagram highlights for one verdict.

    ``deliveries`` are ``(peer, log_index)`` keys of the offending deliveries;
    ``missing`` are ``(message, peer)`` pairs never delivered when a liveness property
    broke; ``awaited`` are ``(message, peer)`` pairs an offending delivery should have
    waited for (``fifo``, ``causal``: predecessors not yet delivered at that peer);
    ``steps`` the steps to mark when no delivery is to blame (a state invariant broke, or
    a witness was reached).
    """

    deliveries: set[tuple[int, int]] = field(default_factory=set)
    missing: set[tuple[int, int]] = field(default_factory=set)
    awaited: set[tuple[int, int]] = field(default_factory=set)
    steps: set[int] = field(default_factory=set)
    witness: bool = False


class TimelineUnavailable(Exception):
    """The trace cannot be drawn: the spec is unknown, keeps no history, or the trace
    does not replay. The message says which, for the report to show."""


def load_spec(name: str, constants: dict[str, Any], cls: type[Spec] | None = None) -> Spec:
    """The spec a result was checked against (``cls``, or found by name), with its
    constants."""
    if cls is None:
        try:
            cls = spec_class(name)
        except SpecNotImported:  # a file or module named by data: never imported (docs/explanation/security.md)
            raise TimelineUnavailable(f"spec {name!r} is a spec file or module, which a result never imports: "
                                      "pass it with --spec to replay the trace") from None
        except UnknownSpec:
            raise TimelineUnavailable(f"spec {name!r} is not installed, so the trace cannot be replayed") from None
    try:
        return cls(**constants)
    except (ValueError, TypeError) as exc:
        raise TimelineUnavailable(f"the recorded constants no longer fit spec {name!r}: {exc}") from None


def replay_states(spec: Spec, steps: list[Step]) -> list[Any]:
    """The spec's own states along a recorded trace; checks each label on the way."""
    if not steps:
        raise TimelineUnavailable("the trace is empty")
    try:
        path = replay(spec, steps[0].index, [s.index for s in steps[1:]])
    except ReplayError as exc:
        raise TimelineUnavailable(f"the trace does not replay: {exc}") from None
    for k, ((label, _pos, _state), step) in enumerate(zip(path, steps)):
        recorded = None if step.label is None else tuple(step.label)
        if k > 0 and (label is None or tuple(label) != recorded):
            raise TimelineUnavailable(
                f"the trace does not replay: step {k} records {step.action!r} but the spec now takes "
                f"{rendering_of(spec).format_action(label) if label else 'nothing'!r} there"
            )
    return [state for _label, _pos, state in path]


def build_timeline(spec: Spec, steps: list[Step], states: list[Any] | None = None) -> Timeline:
    """Replay ``steps`` through ``spec`` and place every history event at its step."""
    if states is None:
        states = replay_states(spec, steps)
    try:
        histories = [spec.history(s) for s in states]
    except NotImplementedError:
        raise TimelineUnavailable(f"spec {spec.name!r} keeps no history to draw") from None
    final = histories[-1]
    messages: dict[int, Message] = {}
    for h in histories:
        messages.update(h.messages)
    events: list[TimelineEvent] = []
    seen = [0] * len(final.peers)
    shown = rendering_of(spec)
    for k, h in enumerate(histories):
        step_events: list[TimelineEvent] = []
        for p, log in enumerate(h.logs):
            start = seen[p] if len(log) >= seen[p] else 0
            for i in range(start, len(log)):
                step_events.append(_history_event(h, k, p, i, log[i]))
            seen[p] = len(log)
        if k > 0 and steps[k].label is not None:
            label = tuple(steps[k].label)
            step_events.extend(internal_events(spec, k, label, final, steps[k].action or ""))
            if type(shown).action_site is not Rendering.action_site:
                site = shown.action_site(label)
            else:  # a spec that does not place its steps: (name, peer, ...) is the usual form
                site = _guess_site(label, len(final.peers)) if not step_events else None
            if site is not None:
                kind, peer, mid = site
                text = steps[k].action or kind
                if kind in ("stage", "commit") and steps[k].state == steps[k - 1].state:
                    # draw only what the step changed: no block or commit the described state does not show
                    kind, text = "step", f"{text} (no change in the described state)"
                if 0 <= peer < len(final.peers):
                    step_events.append(TimelineEvent(k, peer, kind, mid, text=text))
        step_events.sort(key=lambda e: (0 if e.kind in _FIRST else 1, e.peer))
        events.extend(step_events)
    return Timeline(final.peers, messages, events, final, len(steps))


def internal_events(spec: Spec, step: int, label: tuple, history: History, text: str) -> list[TimelineEvent]:
    """The protocol-internal messages the action at ``step`` sends or receives
    (:meth:`ordercheck.checker.api.rendering.Rendering.internal_messages`), as ``internal_send`` and
    ``internal_receive`` events whose ``other`` is the other end and ``text`` the
    message's name; a ``send_dests`` item is one ``internal_send`` per destination of
    its message in ``history`` (the trace's last); those naming a process outside the
    history's peers are left out."""
    shown = rendering_of(spec)
    if type(shown).internal_messages is Rendering.internal_messages:
        return []
    peers = len(history.peers)
    out = []
    for kind, peer, other, name in shown.internal_messages(label):
        if kind == "send_dests":
            msg = history.messages.get(other)
            ends = [("send", d) for d in sorted(msg.dests)] if msg is not None else []
        else:
            ends = [(kind, other)]
        for end, to in ends:
            if end not in ("send", "receive", "lose") or not (0 <= peer < peers and 0 <= to < peers):
                continue
            out.append(TimelineEvent(step, peer, f"internal_{end}", None, to, None, str(name)))
    return out


def _guess_site(label: tuple, peers: int) -> tuple[str, int, int | None] | None:
    """A local step of the peer a ``(name, peer, ...)`` label names, if it names one."""
    if len(label) > 1 and type(label[1]) is int and 0 <= label[1] < peers:
        return ("step", label[1], None)
    return None


def _history_event(h: History, step: int, peer: int, index: int, ev: Event) -> TimelineEvent:
    who = h.peers[peer]
    kind = KIND_NAMES.get(ev.kind, str(ev.kind))
    if ev.kind in (SEND, DELIVER, DROP):
        msg = h.messages.get(ev.arg)
        name = msg.name if msg else f"m{ev.arg}"
        if ev.kind == SEND:
            dests = ",".join(h.peers[d] for d in sorted(msg.dests)) if msg else "?"
            text = f"{who} sent {name} to {dests}"
        elif ev.kind == DELIVER:
            text = f"{who} received {name}"
        else:
            reason = h.drops.get((peer, ev.arg))
            text = f"{who} dropped {name}" + (f" ({reason})" if reason else "")
        return TimelineEvent(step, peer, kind, ev.arg, None, index, text)
    if ev.kind == SIGNAL_OUT:
        return TimelineEvent(step, peer, kind, None, ev.arg, index, f"{who} signalled {h.peers[ev.arg]}")
    if ev.kind == SIGNAL_IN:
        return TimelineEvent(step, peer, kind, None, ev.arg, index, f"{who} got a signal from {h.peers[ev.arg]}")
    return TimelineEvent(step, peer, kind, None, None, index, f"{who}: {kind}")


# -- what to highlight ------------------------------------------------------------------


def blame(timeline: Timeline, prop: Property | None, status: str) -> Blame:
    """The deliveries (or steps) a diagram highlights for this verdict.

    - a violated history property decided by a monitor (every library property): what
      the monitor's :class:`~ordercheck.checker.monitors.violation.Violation` names, read on the
      last history laid out as a log (:func:`violation_blame`), as ``validate`` and the
      sentence read it;
    - another violated history invariant: the *critical* deliveries, those whose removal
      from the final history makes the property hold;
    - another violated ``eventually`` property over the history: the messages still
      undelivered at the end;
    - a witness, a state invariant, or nothing to blame: the last step's events.
    """
    h = timeline.history
    last = timeline.steps - 1
    out = Blame(witness=prop is not None and prop.kind == "sometimes" and status == "holds")
    if prop is not None and status == "violated" and prop.over == "history":
        monitor = prop.monitor or (MONITORS.get(prop.name) if prop.name in ("fifo", "causal") else None)
        found = first_violation(h, monitor) if monitor is not None else None
        if found is not None:
            out = violation_blame(timeline, *found, eventually=prop.kind == "eventually")
        elif monitor is not None:
            pass  # the monitor finds nothing to blame on this history: the last step
        elif prop.kind == "always":
            out.deliveries = critical_deliveries(h, prop)
        elif prop.kind == "eventually":
            out.missing = undelivered(h)
    if not out.deliveries and not out.missing and not out.steps:
        out.steps.add(last)
        for e in timeline.events:
            if e.step == last and e.kind in ("deliver", "drop") and e.log_index is not None:
                out.deliveries.add((e.peer, e.log_index))
    return out


def violation_blame(timeline: Timeline, log: Log, v: Violation, eventually: bool = False) -> Blame:
    """What a diagram of ``timeline`` highlights for violation ``v`` found on ``log``
    (``timeline.history`` laid out as a log): its ``offending`` deliveries and drops;
    its ``missing`` pairs, never delivered for an ``eventually`` property, else awaited
    (predecessors the offending delivery did not wait for); when it offends with no
    delivery (a signal received before it was sent, a crown's sends), the steps of its
    offending events, else of its window."""
    at = history_positions(log)
    ids = {k: m for m, k in getattr(log, "ids", {}).items()}
    out = Blame()
    pairs = {(ids[m], q) for m, q in v.missing if m in ids}
    if eventually:
        out.missing = pairs
    else:
        out.awaited = pairs
    consumed = (LOG_DELIVER, LOG_DROP)
    out.deliveries = {at[i] for i in v.offending if log.kind[i] in consumed}
    if not out.deliveries and not out.missing:
        step_of = {(e.peer, e.log_index): e.step for e in timeline.events if e.log_index is not None}
        out.steps = {step_of[at[i]] for i in (v.offending or v.events) if at[i] in step_of}
    return out


def critical_deliveries(h: History, prop: Property) -> set[tuple[int, int]]:
    """Deliveries without which ``prop`` holds on ``h`` (each tried alone)."""
    found: set[tuple[int, int]] = set()
    for p, log in enumerate(h.logs):
        for i, ev in enumerate(log):
            if ev.kind != DELIVER:
                continue
            logs = list(h.logs)
            logs[p] = log[:i] + log[i + 1 :]
            if _passes(prop, replace(h, logs=tuple(logs))):
                found.add((p, i))
    return found


def _passes(prop: Property, h: History) -> bool:
    try:
        out = prop.check(h)
    except Exception:  # a check that cannot read a pruned history says nothing
        return False
    return out is None or out is False


def undelivered(h: History) -> set[tuple[int, int]]:
    """``(message, peer)`` for each live destination that neither delivered nor dropped it."""
    missing = set()
    for msg in h.sent_messages():
        for q in msg.dests:
            if q in h.failed:
                continue
            if not any(e.arg == msg.id and e.kind in (DELIVER, DROP) for e in h.logs[q]):
                missing.add((msg.id, q))
    return missing
