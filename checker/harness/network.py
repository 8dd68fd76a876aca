"""The network and the clients of a run: one execution under a schedule, the recorded log.

One execution (:func:`execute`) starts the nodes, sends each Maelstrom ``init`` (and
waits for ``init_ok``) and a ``topology`` naming every other node, then repeats a step
until no action is enabled: the schedule picks one *action* among those enabled, the
harness carries it out, and when the action wrote to a node it sends that node a
``read`` and collects everything the node writes until the ``read_ok``: messages to
other nodes go in flight, what the node writes to the harness (``dest`` ``ordercheck``)
is a delivery event or a timer request, and the ``read_ok``'s ``messages`` not yet
recorded at that node are recorded as its deliveries, in the order listed. There are
no sleeps: the ``read`` is the step's barrier (nodes are assumed to handle their stdin
in order), and its reply is awaited with a per-step timeout.

The actions, in the order they are offered (the first is what a schedule with no
preference takes: the oldest message first, a client's request only when nothing is
in flight):

- ``deliver``: a message in flight written to its node (every message in flight, or
  with ``reorder`` off only the oldest of each sender-receiver link);
- ``timeout``: a node's earliest pending timer fires (virtual time: the node's clock
  moves to the timer's deadline; at most ``timer_fires`` per node and execution);
- ``restart``: a crashed node is started again (a fresh process, ``init`` and
  ``topology`` again);
- ``client``: the next ``broadcast`` request of a node's client (one node's requests
  in order);
- the faults the scenario allows, each within its budget per execution: ``drop`` a
  message in flight, ``duplicate`` one, ``crash`` a node (its process killed, its
  timers gone; messages to it wait in flight until it restarts).

A node asks for a timer by writing ``{"type": "timer", "name": N, "after": T}`` to
``ordercheck`` (T virtual seconds from its clock; the same name again re-arms it),
cancels one with ``{"type": "cancel_timer", "name": N}``, and receives
``{"type": "timeout", "name": N, "time": T}`` from ``ordercheck`` when it fires.

The execution is recorded as an ordercheck log (docs/reference/log-format.md): a
``send`` of value V at the node whose client asked to broadcast it (to every other
node), a ``deliver`` of V where a node reports it, ``fail`` and ``restart`` for a
crash and a restart. A node's own values are not recorded as its deliveries, except in
the ``ordered`` workload (:data:`ORDERED`), where the send names every node and the
broadcaster's delivery is recorded like any other. Each event's step is kept
(:attr:`Execution.event_steps`), and so is what each step wrote to a node and what the
node wrote back (:attr:`Execution.transcript`), for the reports.

Every step is recorded with what partial-order reduction needs
(:mod:`ordercheck.checker.harness.explore`): the locations it touches (the node it
acts on, and a fault budget it spends) and the steps that enabled it (the step that
sent the message, the client's previous request, ...). Two actions are *dependent*
when their locations meet.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ordercheck.checker.harness.nodes import Node, NodeFailed

HARNESS = "ordercheck"
"""The ``dest`` a node writes an explicit delivery event or a timer request to (and
the ``src`` of a ``timeout``)."""

CLIENT = "c1"
"""The client's id in the messages the harness sends."""

FLOOD = 1000
"""The most messages one node may write in one step before it counts as a flood."""

FAULTS = ("drop", "duplicate", "crash")
"""The kinds of action that are faults (each within a budget)."""

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
    """An execution reached ``max_steps`` with actions still enabled."""


@dataclass(frozen=True)
class Scenario:
    """What every execution of a run does: ``nodes`` processes of ``argv``, ``broadcasts``
    values 1..K sent round-robin to n1, n2, ... (value V to node ``(V-1) % nodes``),
    ``timeout`` seconds per step, at most ``max_steps`` steps; the faults allowed per
    execution (``drops``, ``duplicates``, ``crashes``), whether messages on one link
    may overtake each other (``reorder``), and the timer fires allowed per node."""

    argv: tuple[str, ...]
    nodes: int
    broadcasts: int
    timeout: float = 5.0
    max_steps: int = 1000
    drops: int = 0
    duplicates: int = 0
    crashes: int = 0
    reorder: bool = True
    timer_fires: int = 10
    workload: str = BROADCAST

    @property
    def ids(self) -> list[str]:
        return [f"n{i + 1}" for i in range(self.nodes)]

    @property
    def own_deliveries(self) -> bool:
        """Whether a node's deliveries of its own values are recorded (the ``ordered``
        workload: a value's send names every node, its broadcaster too)."""
        return self.workload == ORDERED

    def unrecorded(self, value: Any, nid: str) -> bool:
        """Whether node ``nid`` delivering ``value`` is left out of the log: its own value,
        in the ``broadcast`` workload."""
        return not self.own_deliveries and self.owner(value) == nid

    def owner(self, value: Any) -> str | None:
        """The node whose client broadcasts ``value`` (None for a value no client sends)."""
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= self.broadcasts:
            return self.ids[(value - 1) % self.nodes]
        return None


@dataclass(eq=False)
class _Msg:
    """A message in flight: ``msg`` to ``dest``, sent by step ``born`` (-1: before the
    first step)."""

    dest: str
    msg: dict[str, Any]
    born: int


@dataclass(eq=False)
class Action:
    """One enabled action of ``kind`` at node ``dest``; ``msg`` the message it writes or
    affects; ``born`` the steps that enabled it; ``locs`` what it touches. ``key`` names
    it: what a replay compares and what exploration tells actions apart by."""

    kind: str
    dest: str
    msg: dict[str, Any] | None = None
    born: tuple[int, ...] = ()
    locs: frozenset[str] = frozenset()
    ref: Any = None

    @property
    def key(self) -> str:
        if self.kind in ("crash", "restart"):
            return f"{self.kind} {self.dest}"
        if self.kind == "timeout":
            assert self.msg is not None
            return f"timeout {self.dest} {json.dumps(self.msg['body']['name'])}"
        assert self.msg is not None
        body = json.dumps(self.msg["body"], sort_keys=True, separators=(",", ":"))
        text = f"{self.msg['src']}->{self.dest} {body}"
        return text if self.kind in ("client", "deliver") else f"{self.kind} {text}"


@dataclass(frozen=True)
class Step:
    """One step taken: its action's ``key``, ``kind``, ``locs`` and ``born``."""

    key: str
    kind: str
    locs: frozenset[str]
    born: tuple[int, ...]


@dataclass
class Execution:
    """One execution: the recorded log (JSON objects, header first), the picks made (an
    index into the enabled actions at each step), the steps they took, how many actions
    were enabled at each step, and how it ended (``end``): ``quiet`` (nothing enabled),
    ``timers`` (only timers were left, their ``timer_fires`` budget spent) or
    ``stopped`` (the schedule stopped it)."""

    log: list[dict[str, Any]]
    picks: list[int] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    end: str = "quiet"
    verdict: Any = None
    """What the caller's judge made of it (kept with the execution it belongs to)."""
    event_steps: list[int] = field(default_factory=list)
    """For each event of the log after the header, the step that recorded it (1 is the
    first step; 0 the ``init`` and ``topology`` handshake)."""
    transcript: list[tuple[int, str, str, str]] = field(default_factory=list)
    """What each step wrote to a node and what the node wrote: ``(step, node, stream,
    line)`` with stream ``in`` (the step's action, as written to the node's stdin),
    ``out`` (a line of its stdout) or ``err`` (a line of its stderr); the same step
    numbers as :attr:`event_steps`."""

    def record(self, event: dict[str, Any]) -> None:
        """Append ``event`` to the log, at the current step."""
        self.log.append(event)
        self.event_steps.append(len(self.picks))

    @property
    def fair(self) -> bool:
        """Whether the execution ran until nothing was enabled: every message in flight
        delivered (or dropped, within the fault budget), every node up, every pending
        timer fired. Eventual delivery is judged on fair executions only."""
        return self.end == "quiet"

    @property
    def complete(self) -> bool:
        """Whether the execution ran to its end (not stopped by the schedule)."""
        return self.end != "stopped"

    def log_text(self) -> str:
        """The log as JSON Lines, the format ``validate`` reads."""
        return "".join(json.dumps(e, separators=(", ", ": ")) + "\n" for e in self.log)


Chooser = Callable[[int, list[Action]], "int | None"]
"""A schedule: (step, enabled actions) -> the index of the action to take, or None to
stop the execution there."""


Spawn = Callable[[str, list[str]], Node]
"""Starts one node: (node id, argv) -> a :class:`~ordercheck.checker.harness.nodes.Node`
(or an object with its ``send``, ``receive`` and ``kill``; its ``last_line`` and
``new_stderr`` too where the transcript is to have the node's own text and stderr: a
node without ``last_line`` has each message it wrote written there as JSON)."""


def execute(sc: Scenario, choose: Chooser, expected: list[str] | None = None, *, spawn: Spawn = Node) -> Execution:
    """Run the nodes once under the schedule ``choose``. ``expected`` (the keys of a
    recorded schedule's first steps) makes a differing action a :class:`Divergence`.
    Every node process is killed and reaped before this returns or raises."""
    run = _Run(sc, spawn)
    try:
        return run.go(choose, expected)
    finally:
        for node in run.nodes.values():
            if node is not None:
                node.kill()


class _Run:
    """The state of one execution."""

    def __init__(self, sc: Scenario, spawn: Spawn) -> None:
        self.sc = sc
        self.spawn = spawn
        self.ids = sc.ids
        self.nodes: dict[str, Node | None] = {}
        self.ex = Execution(log=[{"format": "ordercheck-log", "version": 1, "peers": self.ids}])
        self.flight: list[_Msg] = []
        # one msg_id sequence per node: what a node is sent must not depend on how other
        # nodes' steps interleave with its own (independent steps commute)
        self.counters = {nid: iter(range(1, 1 << 62)) for nid in self.ids}
        self.seen: dict[str, set[Any]] = {nid: set() for nid in self.ids}
        self.step = -1
        self.queues: dict[str, list[int]] = {nid: [] for nid in self.ids}
        for v in range(1, sc.broadcasts + 1):
            self.queues[self.ids[(v - 1) % sc.nodes]].append(v)
        self.client_last: dict[str, int] = {}
        self.link_last: dict[tuple[str, str], int] = {}
        self.timers: dict[str, dict[str, tuple[float, int, int]]] = {nid: {} for nid in self.ids}
        self.timer_seq = 0
        self.clock: dict[str, float] = {nid: 0.0 for nid in self.ids}
        self.fires: dict[str, int] = {nid: sc.timer_fires for nid in self.ids}
        self.crashed_at: dict[str, int] = {}
        self.budget = {"drop": sc.drops, "duplicate": sc.duplicates, "crash": sc.crashes}

    def go(self, choose: Chooser, expected: list[str] | None) -> Execution:
        for nid in self.ids:
            self.nodes[nid] = self.spawn(nid, list(self.sc.argv))
        for nid in self.ids:
            self._init(nid)
        ex = self.ex
        while True:
            self.step = len(ex.steps)
            enabled = self.enabled()
            if not enabled:
                ex.end = "timers" if any(self.timers[n] for n in self.ids if self.nodes[n] is not None) else "quiet"
                return ex
            if self.step >= self.sc.max_steps:
                raise StepBound(f"{self.sc.max_steps} steps ran with {len(enabled)} actions still enabled")
            pick = choose(self.step, enabled)
            if pick is None:
                ex.end = "stopped"
                return ex
            act = enabled[pick]
            key = act.key
            if expected is not None and self.step < len(expected) and key != expected[self.step]:
                raise Divergence(f"step {self.step + 1}: the schedule takes {expected[self.step]} but the nodes "
                                 f"offer {key} there: a node is not deterministic given its inputs")
            ex.picks.append(pick)
            ex.keys.append(key)
            ex.widths.append(len(enabled))
            ex.steps.append(Step(key, act.kind, act.locs, act.born))
            self.take(act)

    def _init(self, nid: str) -> None:
        node = self.nodes[nid]
        assert node is not None
        self._call(node, {"type": "init", "msg_id": next(self.counters[nid]), "node_id": nid, "node_ids": self.ids},
                   "init_ok")
        self._call(node, {"type": "topology", "msg_id": next(self.counters[nid]),
                          "topology": {n: [m for m in self.ids if m != n] for n in self.ids}}, "topology_ok")

    def enabled(self) -> list[Action]:
        """The actions enabled now, in the order described in the module's docstring."""
        up = [n for n in self.ids if self.nodes[n] is not None]
        acts: list[Action] = []
        heads: set[tuple[str, str]] = set()
        for m in self.flight:
            if self.nodes[m.dest] is None:
                continue
            link = (m.msg["src"], m.dest)
            if not self.sc.reorder:
                if link in heads:
                    continue
                heads.add(link)
            born = (m.born,) if self.sc.reorder or link not in self.link_last else (m.born, self.link_last[link])
            acts.append(Action("deliver", m.dest, m.msg, _steps(born), frozenset({m.dest}), m))
        for nid in up:
            if self.timers[nid] and self.fires[nid] > 0:
                name, (deadline, _seq, born) = min(self.timers[nid].items(), key=lambda kv: kv[1][:2])
                msg = {"src": HARNESS, "dest": nid, "body": {"type": "timeout", "name": name, "time": deadline}}
                acts.append(Action("timeout", nid, msg, _steps((born,)), frozenset({nid})))
        for nid in self.ids:
            if self.nodes[nid] is None:
                acts.append(Action("restart", nid, None, _steps((self.crashed_at[nid],)), frozenset({nid})))
        for nid in up:
            if self.queues[nid]:
                msg = {"src": CLIENT, "dest": nid, "body": {"type": "broadcast", "message": self.queues[nid][0]}}
                acts.append(Action("client", nid, msg, _steps((self.client_last.get(nid, -1),)), frozenset({nid})))
        for kind in ("drop", "duplicate"):
            if self.budget[kind] > 0:
                for m in self.flight:
                    locs = {m.dest, "#" + kind} | ({m.msg["src"]} if kind == "duplicate" else set())
                    acts.append(Action(kind, m.dest, m.msg, _steps((m.born,)), frozenset(locs), m))
        if self.budget["crash"] > 0:
            for nid in up:
                acts.append(Action("crash", nid, None, (), frozenset({nid, "#crash"})))
        return acts

    def take(self, act: Action) -> None:
        """Carry out ``act`` (the current step's action)."""
        nid, kind = act.dest, act.kind
        if kind in FAULTS:
            self.budget[kind] -= 1
        if kind in ("deliver", "drop"):
            self.flight.remove(act.ref)
            self.link_last[(act.ref.msg["src"], act.ref.dest)] = self.step
        if kind == "drop":
            return
        if kind == "duplicate":
            self.flight.append(_Msg(act.ref.dest, act.ref.msg, self.step))
            return
        if kind == "crash":
            node = self.nodes[nid]
            assert node is not None
            node.kill()
            self.nodes[nid] = None
            self.timers[nid].clear()
            self.crashed_at[nid] = self.step
            self.ex.record({"peer": nid, "kind": "fail"})
            return
        if kind == "restart":
            self.nodes[nid] = self.spawn(nid, list(self.sc.argv))
            self.ex.record({"peer": nid, "kind": "restart"})
            self._init(nid)
            return
        node = self.nodes[nid]
        assert node is not None and act.msg is not None
        msg = act.msg
        if kind == "client":
            v = self.queues[nid].pop(0)
            self.client_last[nid] = self.step
            self.ex.record({"peer": nid, "kind": "send", "msg": v,
                            "to": [n for n in self.ids if n != nid or self.sc.own_deliveries]})
            msg = dict(msg, body=dict(msg["body"], msg_id=next(self.counters[nid])))
        elif kind == "timeout":
            name = msg["body"]["name"]
            self.clock[nid] = max(self.clock[nid], self.timers[nid].pop(name)[0])
            self.fires[nid] -= 1
        node.send(msg)
        self.ex.transcript.append((len(self.ex.picks), nid, "in", json.dumps(msg, separators=(",", ":"))))
        self._call(node, {"type": "read", "msg_id": next(self.counters[nid])}, "read_ok")

    def _call(self, node: Node, body: dict[str, Any], reply: str) -> None:
        """Send ``body`` from the client to ``node`` and take what the node writes until its
        ``reply`` (``in_reply_to`` the request): messages to nodes in flight, deliveries
        and timers recorded; a ``read_ok``'s messages recorded as deliveries."""
        node.send({"src": CLIENT, "dest": node.id, "body": body})
        step = len(self.ex.picks)
        if reply != "read_ok":  # the read after every step is left out of the transcript
            self.ex.transcript.append((step, node.id, "in", json.dumps({"src": CLIENT, "dest": node.id, "body": body},
                                                                       separators=(",", ":"))))
        waiting = f"{body['type']} (msg_id {body['msg_id']})"
        for _ in range(FLOOD):
            msg = node.receive(self.sc.timeout, waiting)
            self.ex.transcript.append((step, node.id, "out", getattr(node, "last_line", None)
                                       or json.dumps(msg, separators=(",", ":"))))
            b = msg["body"]
            if msg["src"] != node.id:
                raise NodeFailed(node.id, f"wrote a message with src {msg['src']!r}, not its own id")
            dest = msg["dest"]
            if dest == HARNESS:
                self._to_harness(node.id, b)
            elif dest in self.seen:
                if dest == node.id:
                    raise NodeFailed(node.id, "wrote a message to itself")
                self.flight.append(_Msg(dest, msg, self.step))
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
                        if v not in self.seen[node.id] and not self.sc.unrecorded(v, node.id):
                            self._deliver(node.id, v)
                new_stderr = getattr(node, "new_stderr", None)
                if new_stderr is not None:
                    self.ex.transcript.extend((step, node.id, "err", line) for line in new_stderr())
                return
            # anything else to a client (a broadcast_ok) needs no action
        raise NodeFailed(node.id, f"flooded: wrote more than {FLOOD} messages in one step")

    def _to_harness(self, nid: str, b: dict[str, Any]) -> None:
        kind = b["type"]
        if kind == "deliver" and "message" in b:
            if not _hashable(b["message"]):
                raise NodeFailed(nid, f"reported delivering {json.dumps(b['message'])[:40]}: a value must be a "
                                      "number or a string")
            if not self.sc.unrecorded(b["message"], nid):
                self._deliver(nid, b["message"])
            return
        if kind in ("timer", "cancel_timer") and isinstance(b.get("name"), str):
            if kind == "cancel_timer":
                self.timers[nid].pop(b["name"], None)
                return
            after = b.get("after")
            if isinstance(after, (int, float)) and not isinstance(after, bool) and math.isfinite(after) and after >= 0:
                self.timer_seq += 1
                self.timers[nid][b["name"]] = (self.clock[nid] + after, self.timer_seq, self.step)
                return
        raise NodeFailed(nid, f"wrote to {HARNESS} a body that is none of "
                              f'{{"type": "deliver", "message": V}}, {{"type": "timer", "name": N, "after": T}} '
                              f'(T a number >= 0), {{"type": "cancel_timer", "name": N}}: {json.dumps(b)[:80]}')

    def _deliver(self, nid: str, v: Any) -> None:
        self.seen[nid].add(v)
        self.ex.record({"peer": nid, "kind": "deliver", "msg": v})


def _steps(born: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted({b for b in born if b >= 0}))


def _hashable(v: Any) -> bool:
    return isinstance(v, (int, str)) and not isinstance(v, bool)


def key_chooser(keys: list[str], *, complete: bool) -> Chooser:
    """The schedule that takes the recorded ``keys`` in order (an action the nodes do not
    offer is a :class:`Divergence`). After the last key: with ``complete``, any further
    enabled action is a divergence (the recorded run ended there); without, stop."""

    def choose(step: int, enabled: list[Action]) -> int | None:
        if step >= len(keys):
            if not complete:
                return None
            raise Divergence(f"step {step + 1}: the recorded schedule ended after {len(keys)} steps but "
                             f"{len(enabled)} actions are still enabled: a node is not deterministic")
        for i, a in enumerate(enabled):
            if a.key == keys[step]:
                return i
        raise Divergence(f"step {step + 1}: the schedule takes {keys[step]} but the nodes do not offer it: "
                         "a node is not deterministic given its inputs")

    return choose


SCENARIO_FIELDS = {"drops": 0, "duplicates": 0, "crashes": 0, "timer_fires": 10}
"""The replay file's optional integer fields of the scenario, with their defaults."""


def replay_record(sc: Scenario, command: str, run: Execution) -> dict[str, Any]:
    """The replay file's content for ``run`` (see :func:`replay_schedule`)."""
    return {"format": "ordercheck-run-replay", "version": 1, "node_cmd": command, "nodes": sc.nodes,
            "broadcasts": sc.broadcasts, "drops": sc.drops, "duplicates": sc.duplicates, "crashes": sc.crashes,
            "reorder": sc.reorder, "timer_fires": sc.timer_fires, "workload": sc.workload, "complete": run.complete,
            "schedule": [{"pick": p, "action": k} for p, k in zip(run.picks, run.keys, strict=True)]}


@dataclass(frozen=True)
class Replay:
    """A parsed replay file: the scenario's settings, the steps' keys, whether the
    recorded execution ran to its end, and the node command it was recorded with."""

    nodes: int
    broadcasts: int
    settings: dict[str, Any]
    keys: list[str]
    complete: bool
    node_cmd: str


def replay_schedule(doc: Any) -> Replay:
    """Check a parsed replay file, or :class:`ValueError` with ``field: what is wrong``."""
    if not isinstance(doc, dict) or doc.get("format") != "ordercheck-run-replay":
        raise ValueError('format: expected an object with "format": "ordercheck-run-replay"')
    if doc.get("version") != 1:
        raise ValueError(f"version: expected 1, got {doc.get('version')!r}")
    for name in ("nodes", "broadcasts"):
        v = doc.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or v < (1 if name == "nodes" else 0) or v > 1000:
            raise ValueError(f"{name}: expected an integer from {1 if name == 'nodes' else 0} to 1000, got {v!r}")
    settings: dict[str, Any] = {}
    for name, default in SCENARIO_FIELDS.items():
        v = doc.get(name, default)
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 1000:
            raise ValueError(f"{name}: expected an integer from 0 to 1000, got {v!r}")
        settings[name] = v
    for name in ("reorder", "complete"):
        v = doc.get(name, True)
        if not isinstance(v, bool):
            raise ValueError(f"{name}: expected true or false, got {v!r}")
    settings["reorder"] = doc.get("reorder", True)
    workload = doc.get("workload", BROADCAST)  # files written before workloads name none
    if workload not in WORKLOADS:
        raise ValueError(f"workload: expected one of {', '.join(WORKLOADS)}, got {workload!r}")
    settings["workload"] = workload
    cmd = doc.get("node_cmd")
    if not isinstance(cmd, str):
        raise ValueError(f"node_cmd: expected a string, got {cmd!r}")
    steps = doc.get("schedule")
    if not isinstance(steps, list):
        raise ValueError("schedule: expected a list of steps")
    keys: list[str] = []
    for i, s in enumerate(steps):
        if not (isinstance(s, dict) and isinstance(s.get("pick"), int) and not isinstance(s["pick"], bool)
                and s["pick"] >= 0 and isinstance(s.get("action"), str)):
            raise ValueError(f"schedule[{i}]: expected {{\"pick\": a non-negative integer, \"action\": a string}}")
        keys.append(s["action"])
    return Replay(doc["nodes"], doc["broadcasts"], settings, keys, doc.get("complete", True), cmd)
