"""``ordercheck run``'s schedule engine on in-process nodes (issue 36): DPOR against plain
depth-first exploration, faults, timers, PCT and shrinking, without starting processes.

A fake node runs a small program in this process behind the interface the harness
speaks to (``send``, ``receive``, ``kill``), so thousands of executions cost a second.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ordercheck.checker.harness.explore import Exploration, explore, pct_runs, schedule_prefixes, shrink
from ordercheck.checker.harness.network import Scenario, execute, key_chooser
from ordercheck.checker.harness.nodes import NodeFailed
from ordercheck.checker.validate.readers import read_text
from ordercheck.checker.validate.verdicts import Job, judge


class Causal:
    """The logic of examples/nodes/causal_broadcast.py (``hold`` False: no hold-back)."""

    def __init__(self, hold: bool = True) -> None:
        self.hold = hold
        self.delivered: list[Any] = []
        self.held: list[dict] = []

    def handle(self, m: dict, out: list) -> None:
        b = m["body"]
        if b["type"] == "init":
            self.me, self.ids = b["node_id"], b["node_ids"]
            self.clock = {n: 0 for n in self.ids}
        elif b["type"] == "broadcast":
            self.clock[self.me] += 1
            self.delivered.append(b["message"])
            for n in self.ids:
                if n != self.me:
                    out.append((n, {"type": "cb", "message": b["message"], "sender": self.me, "vc": dict(self.clock)}))
        elif b["type"] == "cb":
            self.held.append(b)
            progress = True
            while progress:
                progress = False
                for h in list(self.held):
                    vc, s = h["vc"], h["sender"]
                    if not self.hold or (vc[s] == self.clock[s] + 1
                                         and all(vc[k] <= self.clock[k] for k in self.ids if k != s)):
                        self.held.remove(h)
                        self.delivered.append(h["message"])
                        self.clock[s] = max(self.clock[s], vc[s])
                        progress = True


class Retransmit:
    """Sends each value to every other node until acknowledged, retrying on a timer;
    delivers a value the first time it arrives (``timer`` False: never retries)."""

    def __init__(self, timer: bool = True) -> None:
        self.timer = timer
        self.delivered: list[Any] = []
        self.unacked: set[tuple[str, Any]] = set()

    def handle(self, m: dict, out: list) -> None:
        b = m["body"]
        if b["type"] == "init":
            self.me, self.ids = b["node_id"], b["node_ids"]
        elif b["type"] == "broadcast":
            self.delivered.append(b["message"])
            for n in self.ids:
                if n != self.me:
                    self.unacked.add((n, b["message"]))
                    out.append((n, {"type": "v", "message": b["message"]}))
            if self.timer:
                out.append(("ordercheck", {"type": "timer", "name": "retry", "after": 1}))
        elif b["type"] == "v":
            if b["message"] not in self.delivered:
                self.delivered.append(b["message"])
            out.append((m["src"], {"type": "ack", "message": b["message"]}))
        elif b["type"] == "ack":
            self.unacked.discard((m["src"], b["message"]))
        elif b["type"] == "timeout":
            for n, v in sorted(self.unacked):
                out.append((n, {"type": "v", "message": v}))
            if self.unacked:
                out.append(("ordercheck", {"type": "timer", "name": "retry", "after": 1}))


class Fake:
    """A node the harness speaks to in process: ``program`` handles each message."""

    def __init__(self, nid: str, program: Any) -> None:
        self.id = nid
        self.program = program
        self.out: collections.deque = collections.deque()

    def send(self, msg: dict) -> None:
        b = msg["body"]
        sent: list = []
        self.program.handle(msg, sent)
        for dest, body in sent:
            self.out.append({"src": self.id, "dest": dest, "body": body})
        if "msg_id" in b and msg["src"] == "c1":
            reply: dict[str, Any] = {"type": b["type"] + "_ok", "in_reply_to": b["msg_id"]}
            if b["type"] == "read":
                reply["messages"] = list(self.program.delivered)
            self.out.append({"src": self.id, "dest": msg["src"], "body": reply})

    def receive(self, timeout: float, waiting: str) -> dict:
        if not self.out:
            raise NodeFailed(self.id, f"did not answer {waiting}")
        return self.out.popleft()

    def kill(self) -> None:
        pass


def spawner(make: Any) -> Any:
    return lambda nid, argv: Fake(nid, make())


def outcome(ex: Any) -> tuple:
    """The execution's per-node histories (what equivalent schedules share)."""
    per: dict[str, list] = collections.defaultdict(list)
    for e in ex.log[1:]:
        per[e["peer"]].append((e["kind"], e.get("msg")))
    return tuple(sorted((k, tuple(v)) for k, v in per.items()))


def violates(ex: Any, prop: str) -> bool:
    return bool(judge(read_text(ex.log_text(), "x", "jsonl", None), Job(props=(prop,), fmt="jsonl")).violated)


def everything(sc: Scenario, make: Any, dpor: bool) -> tuple[list, Exploration]:
    stats = Exploration()
    runs = list(explore(sc, 100000, lambda ex: False, dpor=dpor, stats=stats, spawn=spawner(make)))
    assert not stats.left
    return runs, stats


CASES = {  # scenario, node, the properties some schedules violate
    "no hold-back, 3 nodes": (Scenario(("x",), 3, 2), lambda: Causal(False), {"causal"}),
    "no hold-back, a drop": (Scenario(("x",), 2, 3, drops=1), lambda: Causal(False),
                             {"fifo", "causal", "eventual_delivery"}),
    "hold-back, a crash": (Scenario(("x",), 2, 2, crashes=1), Causal, {"eventual_delivery"}),
    "duplicates on FIFO links": (Scenario(("x",), 2, 3, duplicates=1, reorder=False), lambda: Causal(False), set()),
    "retries on timers, a drop": (Scenario(("x",), 2, 1, drops=1, timer_fires=2), Retransmit, set()),
    "no retries, a drop": (Scenario(("x",), 3, 1, drops=1), lambda: Retransmit(False), {"eventual_delivery"}),
    "no hold-back, a crash and a drop": (Scenario(("x",), 2, 2, drops=1, crashes=1), lambda: Causal(False),
                                         {"eventual_delivery"}),
    "hold-back on FIFO links, a drop": (Scenario(("x",), 3, 2, drops=1, reorder=False), Causal,
                                        {"eventual_delivery"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_dpor_reaches_every_outcome_and_violation_plain_exploration_reaches(case):
    sc, make, prop = CASES[case]
    full, plain = everything(sc, make, dpor=False)
    reduced, st = everything(sc, make, dpor=True)
    want = {outcome(ex) for ex in full}
    got = {outcome(ex) for ex in reduced}
    assert got == want, f"{len(want - got)} outcomes of plain exploration missed by DPOR"
    for p in ("fifo", "causal", "integrity", "eventual_delivery"):
        bad = {outcome(ex) for ex in full if violates(ex, p)}
        assert bad == {outcome(ex) for ex in reduced if violates(ex, p)}, p
        assert bool(bad) == (p in prop), p
    assert st.runs < plain.runs, (st.runs, plain.runs)


@pytest.mark.parametrize("case", ["no hold-back, a drop", "hold-back, a crash"])
def test_exploring_below_each_schedule_prefix_adds_up_to_exploring_everything(case):
    # run --prefix-depth (the tasks of --explore --engine spark): the prefixes of 2 steps split the schedules
    sc, make, _ = CASES[case]
    full, plain = everything(sc, make, dpor=False)
    reduced, st = everything(sc, make, dpor=True)
    prefixes = schedule_prefixes(sc, 2, spawn=spawner(make))
    assert len(prefixes) > 2 and all(len(p) == 2 for p in prefixes) and len(set(map(tuple, prefixes))) == len(prefixes)
    below, dpor_below = [], []
    for p in prefixes:
        runs = list(explore(sc, 100000, lambda ex: False, dpor=False, spawn=spawner(make), root=p))
        assert runs and all(ex.keys[:2] == p for ex in runs)
        below += runs
        dpor_below += explore(sc, 100000, lambda ex: False, dpor=True, spawn=spawner(make), root=p)
    # without DPOR: exactly plain exploration's schedules, in its order
    assert [ex.keys for ex in below] == [ex.keys for ex in full]
    # with DPOR (reduced below each prefix alone): every outcome and violation, at most one run per schedule
    assert {outcome(ex) for ex in dpor_below} == {outcome(ex) for ex in full}
    for p in ("causal", "eventual_delivery"):
        assert {outcome(ex) for ex in dpor_below if violates(ex, p)} == {outcome(ex) for ex in full if violates(ex, p)}
    assert st.runs <= len(dpor_below) < plain.runs


def test_dpor_runs_one_schedule_per_class_on_the_causal_node():
    # 1 at n1, 2 at n2: n1 and n2 each order their request and the other's message (3 ways
    # without a cycle), n3 orders 1 and 2 (2 ways): 6 classes, against 80 interleavings
    _, plain = everything(Scenario(("x",), 3, 2), Causal, dpor=False)
    _, st = everything(Scenario(("x",), 3, 2), Causal, dpor=True)
    assert (st.runs, plain.runs) == (6, 80)


def test_timers_fire_in_virtual_time_and_unfair_runs_are_marked():
    sc = Scenario(("x",), 2, 1, drops=1, timer_fires=1)
    runs, _ = everything(sc, Retransmit, dpor=True)
    keys = {k for ex in runs for k in ex.keys}
    assert 'timeout n1 "retry"' in keys
    # a timer re-armed after the one fire allowed is left pending: such runs are unfair
    assert {ex.end for ex in runs} == {"quiet", "timers"}
    assert all(ex.fair == (ex.end == "quiet") for ex in runs)
    assert all(not ex.fair for ex in runs if any(k.startswith("drop n1") for k in ex.keys))
    fair = [ex for ex in runs if ex.fair]
    assert fair and not any(violates(ex, "eventual_delivery") for ex in fair)


def test_a_crash_restarts_a_fresh_node_that_is_initialised_again():
    sc = Scenario(("x",), 2, 1, crashes=1)
    made: list[str] = []

    def spawn(nid, argv):
        made.append(nid)
        return Fake(nid, Causal())

    ex = execute(sc, key_chooser(["crash n2", "restart n2"], complete=False), spawn=spawn)
    assert made == ["n1", "n2", "n2"]
    assert [e["kind"] for e in ex.log[1:]] == ["fail", "restart"]
    assert ex.keys == ["crash n2", "restart n2"] and not ex.complete


def test_pct_is_reproducible_by_seed_and_finds_the_missing_hold_back():
    sc = Scenario(("x",), 3, 2)

    def first_failing(seed):
        found = [ex for ex in pct_runs(sc, seed, 50, 2, lambda ex: violates(ex, "causal"), spawn=spawner(
            lambda: Causal(False)))]
        return [ex.keys for ex in found]

    a, b = first_failing(3), first_failing(3)
    assert a == b and violates_keys(sc, a[-1])
    assert first_failing(4) != a


def violates_keys(sc: Scenario, keys: list[str]) -> bool:
    return violates(execute(sc, key_chooser(keys, complete=True), spawn=spawner(lambda: Causal(False))), "causal")


def test_shrinking_keeps_the_violation_and_makes_the_schedule_shorter():
    sc = Scenario(("x",), 3, 6)
    spawn = spawner(lambda: Causal(False))
    found = next(ex for ex in explore(sc, 100, lambda ex: violates(ex, "causal"), spawn=spawn)
                 if violates(ex, "causal"))

    def violated(ex):
        if len(ex.log) < 2:
            return frozenset()
        props = ("causal",) if not ex.fair else ("causal", "eventual_delivery")
        v = judge(read_text(ex.log_text(), "x", "jsonl", None), Job(props=props, fmt="jsonl"))
        return frozenset(n for n, p in v.properties.items() if p["status"] == "violated")

    small = shrink(sc, found, violated, 200, spawn=spawn)
    assert len(small.run.keys) < len(found.keys) and "causal" in violated(small.run)
    assert len(small.run.keys) == 3  # 1 and 4 sent by n1, 4 delivered at n2 first: nothing shorter fails
    again = execute(sc, key_chooser(small.run.keys, complete=small.run.complete), spawn=spawn)
    assert again.keys == small.run.keys and "causal" in violated(again)


# ----- the command line, on real node processes (each a small script, started with -S)

RETRY = """
import json, sys
me, ids, unacked, delivered = "", [], set(), []
RETRIES = {retries}
def out(dest, body):
    sys.stdout.write(json.dumps({{"src": me, "dest": dest, "body": body}}) + "\\n")
for line in sys.stdin:
    m = json.loads(line); b = m["body"]; t = b["type"]
    if t == "init":
        me, ids = b["node_id"], b["node_ids"]
    elif t == "broadcast":
        delivered.append(b["message"])
        for n in ids:
            if n != me:
                unacked.add((n, b["message"])); out(n, {{"type": "v", "message": b["message"]}})
        if RETRIES:
            out("ordercheck", {{"type": "timer", "name": "retry", "after": 0.5}})
    elif t == "v":
        if b["message"] not in delivered:
            delivered.append(b["message"])
        out(m["src"], {{"type": "ack", "message": b["message"]}})
    elif t == "ack":
        unacked.discard((m["src"], b["message"]))
    elif t == "timeout":
        for n, v in sorted(unacked):
            out(n, {{"type": "v", "message": v}})
        if unacked or RETRIES == "forever":
            out("ordercheck", {{"type": "timer", "name": "retry", "after": 0.5}})
    if "msg_id" in b and m["src"] == "c1":
        reply = {{"type": t + "_ok", "in_reply_to": b["msg_id"]}}
        if t == "read":
            reply["messages"] = delivered
        out(m["src"], reply)
    sys.stdout.flush()
"""


def retry_node(tmp_path, retries) -> str:
    script = tmp_path / f"retry_{retries}.py"
    script.write_text(RETRY.format(retries=repr(retries)))
    return f"{sys.executable} -S {script}"


def test_a_drop_breaks_eventual_delivery_without_retries_and_timers_repair_it(run_cli, tmp_path):
    args = ("--nodes", "2", "--broadcasts", "1", "--drops", "1", "--explore", "--replay-out", tmp_path / "r.json")
    r = run_cli("run", "--node-cmd", retry_node(tmp_path, False), *args)
    assert r.exit_code == 1, r.output
    assert "eventual_delivery VIOLATED" in r.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["drops"] == 1 and doc["complete"] is True
    assert [s["action"] for s in doc["schedule"]] == [
        'c1->n1 {"message":1,"type":"broadcast"}', 'drop n1->n2 {"message":1,"type":"v"}']
    again = run_cli("run", "--node-cmd", retry_node(tmp_path, False), "--replay", tmp_path / "r.json")
    assert again.exit_code == 1 and "eventual_delivery VIOLATED" in again.output
    ok = run_cli("run", "--node-cmd", retry_node(tmp_path, True), *args, "--timer-fires", "2")
    assert ok.exit_code == 0, ok.output
    assert "eventual_delivery holds" in ok.output
    assert "18 schedules run (explored with DPOR, 2 nodes, 1 broadcast; 13 more cut short by sleep sets)" in ok.output
    assert "eventual_delivery judged on the 9 fair schedules of 18" in ok.output


def test_no_fair_schedule_leaves_eventual_delivery_unjudged_exit_3(run_cli, tmp_path):
    # the node re-arms its timer for ever: every execution ends with the timer budget spent
    r = run_cli("run", "--node-cmd", retry_node(tmp_path, "forever"), "--nodes", "2", "--broadcasts", "1",
                "--runs", "1", "--timer-fires", "2", "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 3, r.output
    assert "eventual_delivery judged on the 0 fair schedules of 1" in r.output
    assert "no schedule was fair" in r.output and "eventual_delivery holds" not in r.output


def test_a_bad_timer_request_is_one_line_exit_2(run_cli, tmp_path):
    script = tmp_path / "bad_timer.py"
    script.write_text(RETRY.format(retries="True").replace('"after": 0.5', '"after": -1'))
    r = run_cli("run", "--node-cmd", f"{sys.executable} -S {script}", "--nodes", "2", "--broadcasts", "1",
                "--runs", "1", "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "\n" not in line and line.startswith("ordercheck: error: node n1: wrote to ordercheck a body")
    assert '"after": -1' in line


def test_pct_from_the_command_line_is_reproducible_and_refuses_faults(run_cli, tmp_path):
    cmd = f"{sys.executable} -S {Path(__file__).resolve().parent.parent / 'examples/nodes/causal_broadcast_no_hold_back.py'}"
    files = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.json"
        r = run_cli("run", "--node-cmd", cmd, "--schedule", "pct", "--depth", "2", "--seed", "3", "--runs", "30",
                    "--no-shrink", "--replay-out", out)
        assert r.exit_code == 1, r.output
        assert "(PCT depth 2, seed 3, 3 nodes, 2 broadcasts)" in r.output
        files.append(out.read_text())
    assert files[0] == files[1]
    bad = run_cli("run", "--node-cmd", cmd, "--schedule", "pct", "--drops", "1")
    assert bad.exit_code == 2 and "--schedule pct: schedules no faults" in bad.output


def test_crashes_restart_real_processes_and_the_correct_node_keeps_its_properties(run_cli, tmp_path):
    cmd = f"{sys.executable} -S {Path(__file__).resolve().parent.parent / 'examples/nodes/causal_broadcast.py'}"
    log = tmp_path / "run.jsonl"
    r = run_cli("run", "--node-cmd", cmd, "--nodes", "2", "--broadcasts", "1", "--crashes", "1", "--explore",
                "--log", log, "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert "schedules run (explored with DPOR, 2 nodes, 1 broadcast" in r.output
    kinds = [json.loads(line)["kind"] for line in log.read_text().splitlines()[1:]]
    assert kinds.count("fail") == 1 and kinds.count("restart") == 1


class Picky(Causal):
    """The no-hold-back node, except that n3 falls silent when the first thing it is
    sent is its client's request (so some of shrinking's candidates fail otherwise)."""

    def __init__(self) -> None:
        super().__init__(False)
        self.started = False

    def handle(self, m: dict, out: list) -> None:
        if m["body"]["type"] == "broadcast" and self.me == "n3" and not self.started:
            raise NodeFailed("n3", "fell silent")
        self.started = self.started or m["body"]["type"] in ("broadcast", "cb")
        super().handle(m, out)


def test_shrinking_passes_over_candidates_on_which_a_node_misbehaves():
    sc = Scenario(("x",), 3, 6)
    spawn = spawner(Picky)
    found = next(ex for ex in explore(sc, 100, lambda ex: violates(ex, "causal"), spawn=spawn)
                 if violates(ex, "causal"))

    def violated(ex):
        if len(ex.log) < 2:
            return frozenset()
        return frozenset({"causal"}) if violates(ex, "causal") else frozenset()

    small = shrink(sc, found, violated, 200, spawn=spawn)
    assert "causal" in violated(small.run) and len(small.run.keys) < len(found.keys)


def test_the_pool_hands_out_processes_started_ahead_and_reaps_the_rest():
    from ordercheck.checker.harness.nodes import Pool

    argv = [sys.executable, "-S", "-c", "import time; time.sleep(60)"]
    with Pool(1) as pool:
        first = pool.spawn("n1", argv)
        ahead = pool._ready[0][1]
        second = pool.spawn("n2", argv)
        assert second is ahead and second.id == "n2" and first.id == "n1"
        left = pool._ready[0][1]
        assert left.proc.poll() is None
    assert left.proc.poll() is not None  # killed and reaped when the pool closed
    for node in (first, second):
        node.kill()


def test_prefix_depth_without_explore_is_one_line_exit_2(run_cli):
    r = run_cli("run", "--node-cmd", "never-started", "--prefix-depth", "2")
    assert r.exit_code == 2, r.output
    assert r.output.strip() == ("ordercheck: error: --prefix-depth: splits systematic exploration into tasks: "
                                "it needs --explore")
