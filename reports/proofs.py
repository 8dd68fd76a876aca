"""``ordercheck prove --json`` records in a report: each Z3 query in the words the
console prints (:attr:`ordercheck.checker.symbolic.prove.Query.shown_status`).

A bounded model check is never "proved": it reads ``no counterexample within k steps``
(or ``counterexample in k steps``, ``witness in k steps``); an implication proved from
an invariant that is not shown inductive reads ``conditional``. The record is kept as
the JSON ``prove`` wrote, so a report's ``results.json`` reads back the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.result import verdict_word


@dataclass
class ProofRow:
    """One query as a report shows it."""

    name: str
    kind: str
    shown: str
    seconds: float
    expected: str | None
    outcome: str
    flag: str
    note: str | None
    explanation: str | None
    steps: list[str]


def shown_status(q: dict[str, Any]) -> str:
    """A query's status in words: its recorded ``shown``, or for a record written
    before ``shown`` existed the same rule as the console's."""
    if isinstance(q.get("shown"), str):
        return q["shown"]
    if q.get("kind") == "bmc" and q.get("status") in ("bounded", "violated", "holds"):
        return q.get("explanation") or q["status"]
    if q.get("conditional"):
        return "conditional"
    return str(q.get("status"))


def _flag(q: dict[str, Any]) -> str:
    outcome = q.get("outcome")
    if outcome == "ok":
        return "ok, as expected" if q.get("status") == "violated" and q.get("expected") == "violated" else "ok"
    return "UNKNOWN" if outcome == "unknown" else "UNEXPECTED"


@dataclass
class ProofRecord:
    """One model's ``prove --json`` record."""

    data: dict[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "", field: str = "") -> ProofRecord:
        """Check the fields a report reads; :class:`InputError` names the first missing."""
        for key in ("model", "spec", "queries"):
            if key not in data:
                raise InputError(where, f"{field}.{key}".lstrip("."), "missing: is this an `ordercheck prove --json` file?")
        def bad(name: str, what: str) -> InputError:
            return InputError(where, f"{field}.{name}".lstrip("."), what)

        if not isinstance(data["queries"], dict):
            raise bad("queries", "expected an object of queries by name")
        for key in ("model", "spec"):
            if not isinstance(data[key], str):
                raise bad(key, "expected a string")
        for name, q in data["queries"].items():
            at = f"queries.{name}"
            if not isinstance(q, dict):
                raise bad(at, "expected a query (a JSON object)")
            for key in ("kind", "status", "shown", "expected", "outcome", "note", "explanation", "prop_kind"):
                if q.get(key) is not None and not isinstance(q[key], str):
                    raise bad(f"{at}.{key}", "expected a string or null")
            if not isinstance(q.get("seconds", 0), (int, float)) or isinstance(q.get("seconds"), bool):
                raise bad(f"{at}.seconds", "expected a number")
            trace = q.get("trace")
            if trace is not None and not (isinstance(trace, list) and all(
                    isinstance(s, dict) and (s.get("action") is None or isinstance(s["action"], str)) for s in trace)):
                raise bad(f"{at}.trace", "expected a list of steps whose action is a string or null")
        for key in ("bmc_skipped", "proof_uncovered", "dropped"):
            if not isinstance(data.get(key) or [], list) or not all(isinstance(v, str) for v in data.get(key) or []):
                raise bad(key, "expected a list of strings")
        for key in ("undecided", "not_judged"):
            table = data.get(key) or {}
            if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
                raise bad(key, "expected an object of strings")
        return cls(data)

    def to_json(self) -> dict[str, Any]:
        return self.data

    @property
    def model(self) -> str:
        return str(self.data["model"])

    @property
    def spec(self) -> str:
        return str(self.data["spec"])

    @property
    def inductive(self) -> bool:
        return bool(self.data.get("inductive"))

    @property
    def asked_invariant(self) -> bool:
        """Whether the run asked the invariant queries (not ``--bmc-only``)."""
        return any(q.get("kind") in ("initiation", "inductive") for q in self.data["queries"].values())

    @property
    def ok(self) -> bool:
        """Every query's outcome ``ok`` and nothing undecided."""
        queries = self.data["queries"].values()
        return bool(queries) and all(q.get("outcome") == "ok" for q in queries) and not self.data.get("undecided")

    @property
    def summary(self) -> str:
        """The configuration in one line: queue bound, BMC depth, invariant verdict."""
        parts = ["no queue in the encoding (any number of messages in flight)" if self.data.get("queue_free") else
                 f"queues of at most {self.data.get('queue_bound')} entries in the unbounded encoding"]
        depth = self.data.get("depth") or 0
        parts.append(f"bounded model checking to {depth} steps" if depth else "no bounded model checking")
        if self.asked_invariant:
            parts.append("invariant inductive" if self.inductive else "invariant NOT shown inductive")
        else:
            parts.append("no invariant queries (--bmc-only)")
        dropped = self.data.get("dropped") or []
        if dropped:
            parts.append("dropped: " + ", ".join(map(str, dropped)))
        return "; ".join(parts)

    @property
    def rows(self) -> list[ProofRow]:
        out = []
        for name, q in self.data["queries"].items():
            trace = q.get("trace") or []
            steps = [str(s.get("action") or "initial state") for s in trace if isinstance(s, dict)]
            out.append(ProofRow(
                str(name), str(q.get("kind")), shown_status(q), float(q.get("seconds") or 0.0),
                verdict_word(q.get("prop_kind"), q.get("expected")), str(q.get("outcome")), _flag(q),
                q.get("note"), q.get("explanation"), steps,
            ))
        return out

    @property
    def notes(self) -> list[str]:
        """What the console prints below the queries: properties with no symbolic form,
        proofs the queue bound does not cover, expectations no query decides."""
        out = []
        skipped = self.data.get("bmc_skipped") or []
        if skipped:
            out.append(f"bmc: no symbolic encoding of {', '.join(skipped)} (left to the explicit engine)")
        uncovered = self.data.get("proof_uncovered") or []
        if uncovered:
            out.append(f"proof: the invariant implies {', '.join(uncovered)} only for runs whose queues hold at most "
                       f"{self.data.get('queue_bound')} entries, fewer than this model's runs can: not a proof for the model")
        for name, word in (self.data.get("undecided") or {}).items():
            out.append(f"undecided: {name}, expected {word}: no query here decides it (run check on this model)")
        not_judged = self.data.get("not_judged") or {}
        if not_judged:
            judged = self.data.get("judged")
            out.append(not_judged_line(not_judged, [str(n) for n in judged] if isinstance(judged, list) else []))
        return out

    def trace_lines(self, name: str) -> list[str]:
        """Query ``name``'s trace as text (:func:`trace_text`); empty when it has none."""
        trace = self.data["queries"].get(name, {}).get("trace") or []
        return trace_text(trace)


def not_judged_line(not_judged: dict[str, str], judged: list[str]) -> str:
    """The line that names the expectations ``prove`` left to ``check`` (``[prove]
    properties`` or ``--property`` chose ``judged``)."""
    which = ", ".join(judged) if judged else "no property, only the lemmas and targets"
    return (f"not judged: {', '.join(f'{n} (expected {w})' for n, w in not_judged.items())}: left to check "
            f"(prove judges {which}; no part in the exit code)")


def trace_text(steps: list[Any]) -> list[str]:
    """A ``prove`` trace (steps as JSON objects: ``action``, ``index``, ``state``) as
    text: each state's peers one per line, actions between them."""
    out = []
    for step in steps:
        if not isinstance(step, dict):
            continue
        if step.get("action") is None:
            out.append("state 0:")
        else:
            out.append(f"--[ {step['action']} ]-->")
            out.append(f"state {step.get('index')}:")
        state = step.get("state")
        out += ["  " + line for line in state_text(state if isinstance(state, dict) else {})]
    return out


def state_text(state: dict[str, Any]) -> list[str]:
    """One symbolic state as lines: an encoding's own ``lines``, a bus1-style state's
    peers one per line, or else one line per entry."""
    if "lines" in state:  # an encoding that draws its own states (one line per peer)
        return [str(line) for line in state["lines"]]
    if "peers" not in state:  # an encoding that draws its states its own way: one line per entry
        return [f"{k}: {v}" for key, part in state.items()
                for k, v in (part.items() if isinstance(part, dict) else [(key, part)])]
    lines = []
    for name, peer in state.get("peers", {}).items():
        parts = [f"clock {peer['clock']}", f"sent {peer['sent']}"]
        parts.append("queue [" + ", ".join(peer["queue"]) + "]")
        if peer.get("transaction"):
            parts.append(f"sending {peer['transaction']}")
        if peer.get("last_dequeued"):
            parts.append(f"last dequeued {peer['last_dequeued']}")
        if peer.get("knows_up_to"):
            parts.append("knows " + ", ".join(f"{d}:{ts}" for d, ts in peer["knows_up_to"].items()))
        lines.append(f"{name}: " + "; ".join(parts))
    if "signals_left" in state:
        lines.append(f"signals left: {state['signals_left']}")
    return lines
