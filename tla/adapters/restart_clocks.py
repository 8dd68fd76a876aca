"""The TLA+ adapter of :mod:`ordercheck.specs.restart_clocks` (template ``restart_clocks.tla.j2``).

Nodes (``A``, ``B``, ``C``) and producers (``p1``, ``p2``) are model values; message
``mid`` of producer ``p`` is ``<<p, i>>`` (its ``i``-th, ``mid = p * messages + i -
1``). A clock is a function from nodes to ``<<restart count, counter>>``; the queue
``stored`` a function from each stored message to ``[clock |-> .., nodes |-> ..]``.
The spec keeps no peer history, so only its own properties are exported.
"""

from __future__ import annotations

from typing import Any

from ordercheck.specs.common import members
from ordercheck.tla.adapters.base import Adapter
from ordercheck.tla.values import ModelValue


class RestartClocksAdapter(Adapter):
    template = "restart_clocks.tla.j2"
    protocol_module = "RestartClocks"
    mc_about = "the queue's nodes, their order (the order a write numbers them in) and the producers"
    variables = (
        "counter", "restarts", "up", "stored", "read", "last", "pending", "produced", "crashesLeft", "collectionsLeft",
    )
    predicates = {"all_read": "EveryMessageRead"}
    actions = {
        "write": "\\E pr \\in Producers : \\E Q \\in Quorums : Write(pr, Q)",
        "assign": "Assign(pr)",  # of one producer pr
        "poll": "Poll",
        "collect": "Collect",
        "crash": "\\E n \\in Nodes : Crash(n)",
        "restart": "Restart(n)",  # of one node n
    }

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self.node_names = tuple(spec.node_names)
        self.nodes = tuple(ModelValue(n) for n in self.node_names)
        self.producer_names = tuple(f"p{i + 1}" for i in range(spec.producers))
        self.producers = tuple(ModelValue(n) for n in self.producer_names)
        self.per_producer: int = spec.messages

    def mc_model_values(self) -> list[str]:
        return [*self.node_names, *self.producer_names]

    def mc_definitions(self) -> list[tuple[str, str]]:
        return [
            ("MCNodes", "{" + ", ".join(self.node_names) + "}"),
            ("MCNodeOrder", "<<" + ", ".join(self.node_names) + ">>"),
            ("MCProducers", "{" + ", ".join(self.producer_names) + "}"),
        ]

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [
            *((n, n) for n in self.node_names),
            *((p, p) for p in self.producer_names),
            ("Nodes", "<- MCNodes"),
            ("NodeOrder", "<- MCNodeOrder"),
            ("Producers", "<- MCProducers"),
            ("Quorum", str(spec.quorum)),
            ("PerProducer", str(spec.messages)),
            ("Crashes", str(spec.crashes)),
            ("Collections", str(spec.collections)),
            ("ClockMode", f'"{spec.clock_mode}"'),
            ("AtomicWrites", "TRUE" if spec.atomic_writes else "FALSE"),
        ]

    def symmetry(self) -> tuple[bool, str]:
        return False, "a write numbers its nodes in node order, so permuting nodes is no symmetry"

    # -- the codec ----------------------------------------------------------------------

    def msg(self, mid: int) -> tuple[ModelValue, int]:
        p, i = divmod(mid, self.per_producer)
        return (self.producers[p], i + 1)

    def mid(self, msg: tuple[ModelValue, int]) -> int:
        return self.producers.index(msg[0]) * self.per_producer + msg[1] - 1

    def node_set(self, mask: int) -> frozenset:
        return frozenset(self.nodes[i] for i in members(mask))

    def node_mask(self, nodes: frozenset) -> int:
        return sum(1 << self.nodes.index(n) for n in nodes)

    def clock(self, clock: tuple) -> dict:
        return {n: tuple(entry) for n, entry in zip(self.nodes, clock)}

    def unclock(self, value: dict) -> tuple:
        return tuple(tuple(value[n]) for n in self.nodes)

    def idle(self) -> dict[str, Any]:
        return {"msg": (), "nodes": frozenset(), "clock": self.clock(self.spec.zero)}  # type: ignore[attr-defined]

    def encode(self, state: tuple) -> dict[str, Any]:
        counters, restarts, up, stored, read, last, pending, produced, crashes, collections = state

        def write(w: Any) -> dict[str, Any]:
            if not w:
                return self.idle()
            mid, qmask, clock = w
            return {"msg": self.msg(mid), "nodes": self.node_set(qmask), "clock": self.clock(clock)}

        return {
            "counter": dict(zip(self.nodes, counters)),
            "restarts": dict(zip(self.nodes, restarts)),
            "up": self.node_set(up),
            "stored": {self.msg(m): {"clock": self.clock(c), "nodes": self.node_set(q)} for m, c, q in stored},
            "read": frozenset(self.msg(m) for m in members(read)),
            "last": self.clock(last),
            "pending": {p: write(w) for p, w in zip(self.producers, pending)},
            "produced": dict(zip(self.producers, produced)),
            "crashesLeft": crashes,
            "collectionsLeft": collections,
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        stored = values["stored"] if isinstance(values["stored"], dict) else {}  # TLC prints an empty queue as <<>>

        def write(w: dict[str, Any]) -> Any:
            if not w["nodes"]:
                return 0
            return (self.mid(w["msg"]), self.node_mask(w["nodes"]), self.unclock(w["clock"]))

        return (
            tuple(values["counter"][n] for n in self.nodes),
            tuple(values["restarts"][n] for n in self.nodes),
            self.node_mask(values["up"]),
            tuple(sorted((self.mid(m), self.unclock(e["clock"]), self.node_mask(e["nodes"])) for m, e in stored.items())),
            sum(1 << self.mid(m) for m in values["read"]),
            self.unclock(values["last"]),
            tuple(write(values["pending"][p]) for p in self.producers),
            tuple(values["produced"][p] for p in self.producers),
            values["crashesLeft"],
            values["collectionsLeft"],
        )


ADAPTER = RestartClocksAdapter
