"""The network and the clients of a run: schedules, the recorded log, exploration.

One execution (:func:`execute`) starts the nodes, sends each Maelstrom ``init`` (and
waits for ``init_ok``) and a ``topology`` naming every other node, then repeats a step
until nothing is in flight: the schedule picks one *action* among those enabled (the
next ``broadcast`` request of a node's client, in the order a client sends them, or a
message a node wrote to another node, held in flight since), the harness writes it to
its node, then sends that node a ``read`` and collects everything the node writes until
the ``read_ok``: messages to other nodes go in flight, an explicit
``{"type": "deliver", "message": V}`` to ``ordercheck`` is recorded as a delivery, and
the ``read_ok``'s ``messages`` not yet recorded at that node are recorded as its
deliveries, in the order listed. There are no sleeps: the ``read`` is the step's
barrier (nodes are assumed to handle their stdin in order), and its reply is awaited
with a per-step timeout.

The execution is recorded as an ordercheck log (docs/reference/log-format.md): a
``send`` of value V at the node whose client asked to broadcast it (to every other
node), a ``deliver`` of V where a node reports it. Its own values are not recorded as
its deliveries, except in the ``ordered`` workload (:data:`ORDERED`), where the send
names every node and the broadcaster's delivery is recorded like any other.

Schedules: :func:`random_runs` (seeded), :func:`explore` (every order of the enabled
actions, depth first, by re-executing the nodes from the start for each schedule; a
node that offers different actions on replay is reported as :class:`Divergence`), and
a fixed list of picks (:func:`execute` with ``picks``, what ``--replay`` runs). There is
no partial-order reduction yet: every interleaving is run.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ordercheck.checker.harness.nodes import Node, NodeFailed

HARNESS = "ordercheck"
"""The ``dest`` a node writes an explicit delivery event to."""

CLIENT = "c1"
"""The client's id in the messages the harness sends."""

FLOOD = 1000
"""The most messages one node may write in one step before it counts as a flood."""

BROADCAST = "broadcast"
"""Maelstrom's broadcast workload: a node's own values are not recorded as its deliveries."""

ORDERED = "ordered"
"""ordercheck's ordered-broadcast workload: the same requests, but a value is sent to
every node, its broadcaster included, whose delivery of it is recorded too (what a
total-order layer's agreement is about)."""

WORKLOADS = (BROADCAST, ORDERED)
"""The workloads a run knows."""


class Divergence(Exception):
    """A replayed schedule met actions other than those recorded: a node is not
    deterministic given its inputs (or the schedule belongs to other nodes)."""


class StepBound(Exception):
    """An execution reached ``max_steps`` with messages still in flight."""


@dataclass(frozen=True)
class Scenario:
    """What every execution of a run does: ``nodes`` processes of ``argv``, ``broadcasts``
    values 1..K sent round-robin to n1, n2, ... (value V to node ``(V-1) % nodes``),
    ``timeout`` seconds per step, at most ``max_steps`` steps."""

    argv: tuple[str, ...]
    nodes: int
    broadcasts: int
    timeout: float = 5.0
    max_steps: int = 1000
    workload: str = "broadcast"

    @property
    def own_deliveries(self) -> bool:
        """Whether a node's deliveries of its own values are recorded (the ``ordered``
        workload: a value's send names every node, its broadcaster too)."""
        return self.workload == ORDERED

    @property
    def ids(self) -> list[str]:
        return [f"n{i + 1}" for i in range(self.nodes)]


@dataclass(frozen=True)
class Action:
    """One enabled action: ``msg`` to be written to node ``dest``; ``client`` for a
    client's request. ``key`` is what a replay compares."""

    dest: str
    msg: dict[str, Any]
    client: bool

    @property
    def key(self) -> str:
        body = {k: v for k, v in self.msg["body"].items()}
        return f"{self.msg['src']}->{self.dest} {json.dumps(body, sort_keys=True, separators=(',', ':'))}"


@dataclass
class Execution:
    """One execution: the recorded log (JSON objects, header first), the picks made (an
    index into the enabled actions at each step), the actions they picked and how many
    were enabled at each step."""

    log: list[dict[str, Any]]
    picks: list[int] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    event_steps: list[int] = field(default_factory=list)
    """For each event of the log after the header, the step that recorded it (1 is the
    first step; 0 the ``init`` and ``topology`` handshake)."""
    transcript: list[tuple[int, str, str, str]] = field(default_factory=list)
    """What each step wrote to a node and what the node wrote: ``(step, node, stream,
    line)`` with stream ``in`` (the step's action, as written to the node's stdin),
    ``out`` (a line of its stdout) or ``err`` (a line of its stderr)."""

    def record(self, event: dict[str, Any]) -> None:
        """Append ``event`` to the log, at the current step."""
        self.log.append(event)
        self.event_steps.append(len(self.picks))

    def log_text(self) -> str:
        """The log as JSON Lines, the format ``validate`` reads."""
        return "".join(json.dumps(e, separators=(", ", ": ")) + "\n" for e in self.log)


Chooser = Callable[[int, list[Action]], int]


def execute(sc: Scenario, choose: Chooser, expected: list[str] | None = None) -> Execution:
    """Run the nodes once under the schedule ``choose`` (step, enabled actions -> index).
    ``expected`` (the keys of a recorded schedule's first steps) makes a differing
    enabled action a :class:`Divergence`. Every node process is killed and reaped
    before this returns or raises."""
    ids = sc.ids
    nodes: dict[str, Node] = {}
    run = Execution(log=[{"format": "ordercheck-log", "version": 1, "peers": ids}])
    try:
        for nid in ids:
            nodes[nid] = Node(nid, list(sc.argv))
        flight: list[Action] = []
        counter = iter(range(1, 1 << 62))
        seen: dict[str, set[Any]] = {nid: set() for nid in ids}
        own: dict[Any, str] = {}  # value -> its broadcaster, whose deliveries of it are not recorded
        for nid in ids:
            _call(nodes[nid], {"type": "init", "msg_id": next(counter), "node_id": nid, "node_ids": ids},
                  "init_ok", sc, flight, run, seen, own)
        for nid in ids:
            _call(nodes[nid], {"type": "topology", "msg_id": next(counter),
                               "topology": {n: [m for m in ids if m != n] for n in ids}},
                  "topology_ok", sc, flight, run, seen, own)
        queues: dict[str, list[int]] = {nid: [] for nid in ids}
        for v in range(1, sc.broadcasts + 1):
            queues[ids[(v - 1) % sc.nodes]].append(v)
        step = 0
        while True:
            enabled = [Action(nid, {"src": CLIENT, "dest": nid, "body": {"type": "broadcast", "message": q[0]}}, True)
                       for nid, q in queues.items() if q] + flight
            if not enabled:
                break
            if step >= sc.max_steps:
                raise StepBound(f"{sc.max_steps} steps ran with {len(enabled)} actions still enabled")
            pick = choose(step, enabled)
            act = enabled[pick]
            if expected is not None and step < len(expected) and act.key != expected[step]:
                raise Divergence(f"step {step + 1}: the schedule delivers {expected[step]} but the nodes offer "
                                 f"{act.key} there: a node is not deterministic given its inputs")
            run.picks.append(pick)
            run.keys.append(act.key)
            run.widths.append(len(enabled))
            node = nodes[act.dest]
            if act.client:
                v = queues[act.dest].pop(0)
                if not sc.own_deliveries:
                    own[v] = act.dest
                run.record({"peer": act.dest, "kind": "send", "msg": v,
                                "to": [n for n in ids if n != act.dest or sc.own_deliveries]})
                msg = dict(act.msg, body=dict(act.msg["body"], msg_id=next(counter)))
            else:
                flight.remove(act)
                msg = act.msg
            node.send(msg)
            run.transcript.append((len(run.picks), node.id, "in", json.dumps(msg, separators=(",", ":"))))
            _call(node, {"type": "read", "msg_id": next(counter)}, "read_ok", sc, flight, run, seen, own)
            step += 1
        return run
    finally:
        for node in nodes.values():
            node.kill()


def _call(node: Node, body: dict[str, Any], reply: str, sc: Scenario, flight: list[Action], run: Execution,
          seen: dict[str, set[Any]], own: dict[Any, str]) -> None:
    """Send ``body`` from the client to ``node`` and take what the node writes until its
    ``reply`` (``in_reply_to`` the request): messages to nodes in flight, deliveries
    recorded; a ``read_ok``'s messages recorded as deliveries."""
    node.send({"src": CLIENT, "dest": node.id, "body": body})
    if reply != "read_ok":  # the read after every step is left out of the transcript
        run.transcript.append((len(run.picks), node.id, "in", json.dumps({"src": CLIENT, "dest": node.id, "body": body},
                                                                        separators=(",", ":"))))
    waiting = f"{body['type']} (msg_id {body['msg_id']})"
    for _ in range(FLOOD):
        msg = node.receive(sc.timeout, waiting)
        run.transcript.append((len(run.picks), node.id, "out", node.last_line))
        b = msg["body"]
        if msg["src"] != node.id:
            raise NodeFailed(node.id, f"wrote a message with src {msg['src']!r}, not its own id")
        dest = msg["dest"]
        if dest == HARNESS:
            if b["type"] != "deliver" or "message" not in b:
                raise NodeFailed(node.id, f"wrote to {HARNESS} a body that is not "
                                          f'{{"type": "deliver", "message": V}}: {json.dumps(b)[:80]}')
            _deliver(run, node.id, b["message"], seen, own, explicit=True)
        elif dest in seen:
            if dest == node.id:
                raise NodeFailed(node.id, "wrote a message to itself")
            flight.append(Action(dest, msg, False))
        elif b.get("in_reply_to") == body["msg_id"]:
            if b["type"] == "error":
                raise NodeFailed(node.id, f"answered {waiting} with an error: {json.dumps(b)[:80]}")
            if b["type"] != reply:
                raise NodeFailed(node.id, f"answered {waiting} with {b['type']!r}, not {reply!r}")
            if reply == "read_ok":
                values = b.get("messages")
                if not isinstance(values, list):
                    raise NodeFailed(node.id, "answered read without a list of messages")
                for v in values:
                    if not _hashable(v):
                        raise NodeFailed(node.id, f"listed {json.dumps(v)[:40]} in read_ok: a value must be a "
                                                  "number or a string")
                    if v not in seen[node.id] and own.get(v) != node.id:
                        _deliver(run, node.id, v, seen, own, explicit=False)
            run.transcript.extend((len(run.picks), node.id, "err", line) for line in node.new_stderr())
            return
        # anything else to a client (a broadcast_ok) needs no action
    raise NodeFailed(node.id, f"flooded: wrote more than {FLOOD} messages in one step")


def _hashable(v: Any) -> bool:
    return isinstance(v, (int, str)) and not isinstance(v, bool)


def _deliver(run: Execution, nid: str, v: Any, seen: dict[str, set[Any]], own: dict[Any, str], *,
             explicit: bool) -> None:
    if not _hashable(v):
        raise NodeFailed(nid, f"reported delivering {json.dumps(v)[:40]}: a value must be a number or a string")
    if own.get(v) == nid:
        return
    seen[nid].add(v)
    run.record({"peer": nid, "kind": "deliver", "msg": v})


def random_runs(sc: Scenario, seed: int, runs: int, failing: Callable[[Execution], bool]) -> Iterator[Execution]:
    """``runs`` executions, each picking uniformly among the enabled actions with a
    generator seeded by ``seed`` (the same seed, the same schedules); stops after the
    first one ``failing`` accepts."""
    rng = random.Random(seed)
    for _ in range(runs):
        run = execute(sc, lambda _step, enabled: rng.randrange(len(enabled)))
        bad = failing(run)
        yield run
        if bad:
            return


def explore(sc: Scenario, max_schedules: int, failing: Callable[[Execution], bool]) -> Iterator[Execution]:
    """Every schedule, depth first (the first enabled action first, then the deepest
    step with an untried alternative), each a fresh execution of the nodes that
    replays the prefix it shares with the one before (a difference is a
    :class:`Divergence`); stops after the first one ``failing`` accepts, after
    ``max_schedules``, or when none is left."""
    prefix: list[int] = []
    keys: list[str] = []
    for _ in range(max_schedules):
        fixed = list(prefix)
        run = execute(sc, lambda step, _enabled, fixed=fixed: fixed[step] if step < len(fixed) else 0, keys[:len(fixed)])
        bad = failing(run)
        yield run
        if bad:
            return
        j = len(run.picks) - 1
        while j >= 0 and run.picks[j] + 1 >= run.widths[j]:
            j -= 1
        if j < 0:
            return
        prefix = run.picks[:j] + [run.picks[j] + 1]
        keys = run.keys[:j]
    return


def replay_record(sc: Scenario, command: str, run: Execution) -> dict[str, Any]:
    """The replay file's content for ``run`` (see :func:`read_replay`)."""
    return {"format": "ordercheck-run-replay", "version": 1, "node_cmd": command, "nodes": sc.nodes,
            "broadcasts": sc.broadcasts, "workload": sc.workload,
            "schedule": [{"pick": p, "action": k} for p, k in zip(run.picks, run.keys, strict=True)]}


def replay_schedule(doc: Any, where: str) -> tuple[int, int, list[int], list[str], str]:
    """Check a parsed replay file: (nodes, broadcasts, picks, action keys, node_cmd), or
    :class:`ValueError` with ``field: what is wrong``."""
    if not isinstance(doc, dict) or doc.get("format") != "ordercheck-run-replay":
        raise ValueError('format: expected an object with "format": "ordercheck-run-replay"')
    if doc.get("version") != 1:
        raise ValueError(f"version: expected 1, got {doc.get('version')!r}")
    for name in ("nodes", "broadcasts"):
        v = doc.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or v < (1 if name == "nodes" else 0) or v > 1000:
            raise ValueError(f"{name}: expected an integer from {1 if name == 'nodes' else 0} to 1000, got {v!r}")
    cmd = doc.get("node_cmd")
    if not isinstance(cmd, str):
        raise ValueError(f"node_cmd: expected a string, got {cmd!r}")
    steps = doc.get("schedule")
    if not isinstance(steps, list):
        raise ValueError("schedule: expected a list of steps")
    picks: list[int] = []
    keys: list[str] = []
    for i, s in enumerate(steps):
        if not (isinstance(s, dict) and isinstance(s.get("pick"), int) and not isinstance(s["pick"], bool)
                and s["pick"] >= 0 and isinstance(s.get("action"), str)):
            raise ValueError(f"schedule[{i}]: expected {{\"pick\": a non-negative integer, \"action\": a string}}")
        picks.append(s["pick"])
        keys.append(s["action"])
    return doc["nodes"], doc["broadcasts"], picks, keys, cmd


def replay_workload(doc: dict[str, Any]) -> str:
    """The workload of a replay file :func:`replay_schedule` accepted (``broadcast``
    when it names none, as files written before workloads did), or :class:`ValueError`
    with ``workload: what is wrong``."""
    w = doc.get("workload", BROADCAST)
    if w not in WORKLOADS:
        raise ValueError(f"workload: expected one of {', '.join(WORKLOADS)}, got {w!r}")
    return str(w)


def fixed_chooser(picks: list[int]) -> Chooser:
    """The schedule that makes the recorded ``picks`` (a step past them is a
    :class:`Divergence`: the recorded run ended there)."""

    def choose(step: int, enabled: list[Action]) -> int:
        if step >= len(picks):
            raise Divergence(f"step {step + 1}: the recorded schedule ended after {len(picks)} steps but "
                             f"{len(enabled)} actions are still enabled: a node is not deterministic")
        if picks[step] >= len(enabled):
            raise Divergence(f"step {step + 1}: the schedule picks action {picks[step] + 1} of {len(enabled)} "
                             "enabled: a node is not deterministic given its inputs")
        return picks[step]

    return choose
