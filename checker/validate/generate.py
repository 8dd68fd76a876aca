"""Logs to validate, made from models: random walks, simulation counterexamples, and a
fast synthetic workload for benchmarks.

- :func:`walk` takes a seeded random walk of a model (each step picks an action kind,
  the action's name and peer, with per-walk swarm weights, then one action of that
  kind, as ``ordercheck simulate`` does) and records the events each step adds to the
  spec's history. The walk's log is labelled with the model's own verdicts on the
  walk's final history (:func:`library_verdicts`): a holding model gives correct logs,
  a mutant gives faulty ones when the walk runs into its bug.
- :func:`counterexample_logs` runs ``ordercheck simulate`` (:func:`ordercheck.checker.simulate.simulate`)
  on a model and turns each shrunk violating walk into a log.
- :func:`synthetic_log` builds a log of any length without a spec: peers multicast to
  random destinations and deliver in the order of one global sequence (a sequencer),
  so fifo, causal, integrity, every total-order form and global_lock hold (messages
  cross in flight, so synchronous does not); ``fault`` swaps two deliveries to break
  them.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ordercheck.checker.api.model import Model
from ordercheck.checker.api.spec import Spec, State
from ordercheck.checker.simulate.walk import SWARM_WEIGHTS, action_kind
from ordercheck.checker.validate.itf_log import add_history_events
from ordercheck.checker.validate.log import DELIVER, Log, LogBuilder, causal_pasts

DEFAULT_DEPTH = 200


@dataclass
class Walk:
    """A generated log with what the walk knew: the spec's history after each step
    (``histories[0]`` is the initial state's) and, per log event, the step that added
    it; ``labels`` are the actions taken (one per step after the first state);
    ``verdicts`` are the model's own verdicts on the final history. ``grown`` names
    the messages the spec addressed to more peers after their send: the log format
    fixes destinations at the send. ``hidden`` names the messages whose causal past in
    the spec's history differs from the one the log's events give (program order,
    send to delivery, signal to receipt): bus1_impl lets a user that sees
    ``BUS1_HANDLE_INVALID`` join the destruction's causal past with no event to record
    it. A walk with either is not a faithful record (:attr:`faithful`), and
    ``generate-logs`` leaves it out."""

    log: Log
    histories: list[Any] = field(default_factory=list)
    step_of_event: list[int] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)
    terminal: bool = False
    grown: list[str] = field(default_factory=list)
    labels: list[Any] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)

    @property
    def faithful(self) -> bool:
        """Whether the log records the walk's history whole: no message gained
        destinations after its send and every causal past follows from the events."""
        return not self.grown and not self.hidden


def library_verdicts(model: Model, history: Any, terminal: bool) -> dict[str, str]:
    """The model's history properties on ``history``: ``"violated"`` or ``"holds"``
    for each ``always`` property, and for each ``eventually`` one when the walk ended
    with nothing enabled (``terminal``); the check functions are the model's own (the
    property library's, for the shared names)."""
    out: dict[str, str] = {}
    for prop in model.properties:
        if prop.over != "history" or prop.kind == "sometimes":
            continue
        if prop.kind == "eventually" and not terminal:
            continue
        found = prop.check(history)
        out[prop.name] = "holds" if found is None or found is False else "violated"
    return out


def _log_of_path(spec: Spec, states: Sequence[State], source: str) -> Walk:
    history = spec.history(states[0])
    builder = LogBuilder(source, history.peers)
    histories = [history]
    step_of_event: list[int] = []
    seen = [0] * len(history.peers)
    for k, state in enumerate(states):
        history = spec.history(state) if k else history
        if k:
            histories.append(history)
        before = len(builder.log)
        add_history_events(builder, history, seen, k)
        step_of_event.extend([k] * (len(builder.log) - before))
        seen = [len(log) for log in history.logs]
    # A spec may address a message to more peers after its send (no built-in spec does:
    # bus1_impl's late joiners are not destinations of a destruction); a log records the
    # destinations of the send, so such a walk is marked (see Walk.grown).
    log = builder.log
    final = {msg.name: msg for msg in history.messages.values()}
    grown = [name for m, name in enumerate(log.msg_name)
             if name in final and tuple(sorted(final[name].dests)) != log.msg_dests[m]]
    # A spec may also let knowledge flow with no event (bus1_impl: a user that sees
    # BUS1_HANDLE_INVALID has observed the destruction); such pasts are marked too.
    # Walks are short, so building the pasts whole is cheap here.
    name_of = {msg.id: msg.name for msg in history.messages.values()}
    pasts = causal_pasts(log)
    hidden = [name for m, name in enumerate(log.msg_name)
              if name in final and log.msg_send[m] >= 0
              and {name_of.get(x, f"#{x}") for x in final[name].past} != {log.msg_name[x] for x in pasts[m]}]
    return Walk(log, histories, step_of_event, grown=grown, hidden=hidden)


def walk(model: Model, seed: int, depth: int = DEFAULT_DEPTH, source: str = "") -> Walk:
    """One seeded random walk of ``model`` of up to ``depth`` steps, as a log."""
    spec = model.spec
    rng = random.Random(seed)
    inits = list(spec.init_states())
    state = inits[rng.randrange(len(inits))]
    weights: dict[str, float] = {}
    states = [state]
    labels = []
    terminal = False
    for _ in range(depth):
        succ = spec.next_states(state)
        if not succ:
            terminal = True
            break
        by_kind: dict[str, list[tuple[Any, State]]] = {}
        for item in succ:
            by_kind.setdefault(action_kind(item[0]), []).append(item)
        kinds = list(by_kind)
        w = [weights.setdefault(k, rng.choice(SWARM_WEIGHTS)) for k in kinds]
        kind = rng.choices(kinds, w)[0]
        label, state = rng.choice(by_kind[kind])
        states.append(state)
        labels.append(label)
    else:
        terminal = not spec.next_states(state)
    out = _log_of_path(spec, states, source or f"{model.name}-walk-{seed}")
    out.labels = labels
    out.terminal = terminal
    out.verdicts = library_verdicts(model, out.histories[-1], terminal)
    out.log.header = walk_header(model, {"seed": seed, "depth": depth}, out.verdicts)
    return out


def walk_header(model: Model, how: dict[str, Any], verdicts: dict[str, str]) -> dict[str, Any]:
    """The header a generated log carries: the model, how it was made, and the model's
    verdicts on it (``expect``)."""
    return {
        "model": model.path, "spec": model.spec_name, "constants": model.constants,
        "generated": how, "expect": dict(verdicts),
    }


def counterexample_logs(model: Model, runs: int = 1000, depth: int = DEFAULT_DEPTH, seed: int = 0) -> list[Walk]:
    """``ordercheck simulate``'s shrunk violating walks of ``model``, one log per
    violated history property (none when the walks find nothing)."""
    from ordercheck.checker.simulate.run import simulate

    result = simulate(model, runs, depth, seed)
    return trace_logs(model, result, {"simulate": {"runs": runs, "depth": depth, "seed": seed}})


def trace_logs(model: Model, result: Any, how: dict[str, Any]) -> list[Walk]:
    """The counterexample of each violated history property of ``result`` (a
    :class:`~ordercheck.checker.api.result.Result` of ``model``, from simulate or a search) as a log;
    ``how`` goes into each log's header."""
    from ordercheck.checker.api.trace import replay

    spec = model.spec
    props = {p.name: p for p in model.properties}
    out = []
    for name, verdict in result.properties.items():
        prop = props.get(name)
        if verdict.status != "violated" or not verdict.trace or prop is None or prop.over != "history":
            continue
        path = replay(spec, verdict.trace[0].index, [s.index for s in verdict.trace[1:]])
        w = _log_of_path(spec, [state for _label, _pos, state in path], f"{model.name}-cex-{name}")
        w.labels = [label for label, _pos, _state in path[1:]]
        w.terminal = not spec.next_states(path[-1][2])
        w.verdicts = library_verdicts(model, w.histories[-1], w.terminal)
        w.log.header = walk_header(model, dict(how, property=name), w.verdicts)
        out.append(w)
    return out


def synthetic_log(events: int, peers: int = 8, seed: int = 0, *, fault: str | None = None, fanout: int = 3) -> Log:
    """A log of about ``events`` events from a sequencer-ordered multicast system.

    Each step a random peer either multicasts (to ``fanout`` random other peers) or
    delivers the oldest message waiting for it; messages are numbered when sent and
    every peer delivers in that order, so every ordering property holds. Near the end
    sends stop and every waiting message is delivered, so the log may run a little
    past ``events`` and every message reaches all its destinations. ``fault``
    breaks the log once, two thirds of the way in: ``"fifo"`` makes a peer deliver a
    sender's next message before the previous one, ``"total"`` makes one peer deliver
    two messages from different senders, which another peer also receives, out of
    order (breaking causal only if one happened before the other).
    """
    if peers < 2 or fanout < 1 or fanout >= peers:
        raise ValueError("synthetic_log needs at least two peers and 1 <= fanout < peers")
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(peers)]
    b = LogBuilder("synthetic", names)
    queues: list[deque[int]] = [deque() for _ in range(peers)]
    sent = [0] * peers
    others = [[q for q in range(peers) if q != p] for p in range(peers)]
    fault_at = events * 2 // 3 if fault else -1
    line = 1
    while True:
        closing = len(b.log) > events - 2 * peers * fanout  # stop sending; deliver what waits
        if closing:
            waiting = [q for q in range(peers) if queues[q]]
            if not waiting:
                break
            p = rng.choice(waiting)
        else:
            p = rng.randrange(peers)
        if queues[p] and (closing or rng.random() < 0.75):
            m = queues[p].popleft()
            if 0 <= fault_at <= len(b.log) and queues[p]:
                second = _fault_partner(b.log, queues[p], m, fault)
                if second is not None:
                    queues[p].remove(second)
                    queues[p].appendleft(m)
                    m = second
                    fault_at = -1
            line += 1
            b.add(p, DELIVER, m, line)
        else:
            dests = rng.sample(others[p], fanout)
            line += 1
            b.send(p, f"{names[p]}.{sent[p]}", dests, line)
            sent[p] += 1
            m = b.log.arg[-1]
            for d in dests:
                queues[d].append(m)
    return b.log


def _fault_partner(log: Log, queue: deque[int], m: int, fault: str | None) -> int | None:
    """A message waiting behind ``m`` to deliver before it, as the fault asks: the same
    sender's for ``fifo``; for ``total`` another sender's that some other destination
    shares with ``m`` (which delivers the two in order, so they disagree)."""
    for other in queue:
        same = log.msg_sender[other] == log.msg_sender[m]
        if fault == "fifo" and same:
            return other
        if fault == "total" and not same and len(set(log.msg_dests[other]) & set(log.msg_dests[m])) > 1:
            return other
    return None


__all__ = ["DEFAULT_DEPTH", "Walk", "counterexample_logs", "library_verdicts", "synthetic_log", "trace_logs", "walk"]
