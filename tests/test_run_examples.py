"""``ordercheck run`` on the shipped example nodes (issue 36): the total-order sequencer
and its buggy variants, the FIFO-only causal node, the C node, Maelstrom-protocol gossip
nodes, and the report of a failing run.

Python nodes are started with this interpreter and ``-S`` (no site import) to keep each
schedule's start-up cheap; scenarios are the smallest that show each bug.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODES = ROOT / "examples" / "nodes"


def node_cmd(script: str | Path) -> str:
    return f"{sys.executable} -S {script}"


def test_the_sequencer_keeps_total_order_on_every_schedule_of_two_nodes(run_cli, tmp_path):
    r = run_cli("run", "--workload", "ordered", "--nodes", "2", "--node-cmd", node_cmd(NODES / "sequencer.py"),
                "--explore", "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert "5 schedules run (explored with DPOR, 2 nodes, 2 broadcasts)" in r.output
    assert ("fifo holds, causal holds, integrity holds, total holds, total_global holds, total_prefix holds, "
            "eventual_delivery holds") in r.output
    assert not (tmp_path / "r.json").exists()


def test_the_sequencer_takes_each_nodes_requests_in_order(run_cli, tmp_path):
    # n2 broadcasts 2 and 4: its second request may reach the sequencer first
    r = run_cli("run", "--workload", "ordered", "--nodes", "2", "--broadcasts", "4", "--runs", "5", "--seed", "0",
                "--node-cmd", node_cmd(NODES / "sequencer.py"), "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert "5 schedules run" in r.output and "total holds, total_global holds, total_prefix holds" in r.output


def test_a_sequencer_whose_nodes_skip_the_numbering_breaks_total_order(run_cli, tmp_path):
    replay = tmp_path / "r.json"
    cmd = node_cmd(NODES / "sequencer_no_numbering.py")
    r = run_cli("run", "--workload", "ordered", "--nodes", "2", "--node-cmd", cmd, "--explore", "--replay-out", replay)
    assert r.exit_code == 1, r.output
    assert "causal holds, integrity holds, total VIOLATED (line 7), total_global VIOLATED (line 7), " \
           "total_prefix VIOLATED (line 6)" in r.output
    assert "n2 and n1 delivered 2 and 1 in different orders" in r.output
    # the replay file carries the workload: replayed without --workload, the own deliveries are still recorded
    again = run_cli("run", "--node-cmd", cmd, "--replay", replay)
    assert again.exit_code == 1, again.output
    assert "total VIOLATED" in again.output and "1 schedule run (replayed, 2 nodes" in again.output


def test_a_sequencer_that_skips_a_number_never_delivers_what_follows(run_cli, tmp_path):
    r = run_cli("run", "--workload", "ordered", "--nodes", "2", "--runs", "1",
                "--node-cmd", node_cmd(NODES / "sequencer_skips_a_number.py"), "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 1, r.output
    assert "total holds, total_global holds, total_prefix holds, eventual_delivery VIOLATED" in r.output
    assert " to n1 and 1 to n2 are never delivered" in r.output or " to n1 and 2 to n2 are never delivered" in r.output


def test_the_broadcast_workload_does_not_record_a_nodes_own_values(run_cli, tmp_path):
    # the same buggy sequencer under Maelstrom's workload: n1's own delivery of 1 is not recorded, so
    # with two nodes no two peers deliver both values and total order cannot break
    r = run_cli("run", "--nodes", "2", "--properties", "total", "--node-cmd", node_cmd(NODES / "sequencer_no_numbering.py"),
                "--explore", "--log", tmp_path / "run.jsonl", "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    log = (tmp_path / "run.jsonl").read_text()
    assert '"to": ["n2"]' in log and '"to": ["n1"]' in log


def test_a_fifo_only_causal_node_keeps_fifo_and_breaks_causal_order(run_cli, tmp_path):
    r = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast_fifo_only.py"), "--explore",
                "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 1, r.output
    assert "fifo holds, causal VIOLATED" in r.output
    assert "n3 delivered 2 (line 5) while 1, which happened before it, had not been delivered there" in r.output


C_NODE = ROOT / "build" / "nodes" / "causal_broadcast"


def test_the_c_node_keeps_causal_order(run_cli, tmp_path):
    if not C_NODE.exists():
        pytest.skip(f"{C_NODE.relative_to(ROOT)} is not built (make setup builds it with the system C compiler)")
    r = run_cli("run", "--node-cmd", str(C_NODE), "--nodes", "3", "--broadcasts", "4", "--runs", "10", "--seed", "3",
                "--log", tmp_path / "run.jsonl", "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert "10 schedules run (random, seed 3, 3 nodes, 4 broadcasts)" in r.output
    assert "fifo holds, causal holds, integrity holds, eventual_delivery holds" in r.output
    # every value other than its own reaches each node: 4 sends, 8 deliveries
    assert (tmp_path / "run.jsonl").read_text().count('"kind": "deliver"') == 8


MAELSTROM = NODES / "maelstrom_broadcast.py"


def test_a_maelstrom_broadcast_node_breaks_causal_order(run_cli, tmp_path):
    # written to Maelstrom's documented protocol only: its deliveries are seen by polling read
    source = MAELSTROM.read_text()
    assert '"ordercheck"' not in source and '"deliver"' not in source
    r = run_cli("run", "--node-cmd", node_cmd(MAELSTROM), "--runs", "10", "--seed", "1", "--replay-out",
                tmp_path / "r.json")
    assert r.exit_code == 1, r.output
    assert "fifo holds, causal VIOLATED (line 5), integrity holds, eventual_delivery holds" in r.output
    assert "n3 delivered 2 (line 5) while 1, which happened before it, had not been delivered there" in r.output
    assert "shrunk from 18 to 4 steps" in r.output


def test_a_maelstrom_broadcast_node_delivers_everything_everywhere(run_cli, tmp_path):
    r = run_cli("run", "--node-cmd", node_cmd(MAELSTROM), "--nodes", "3", "--broadcasts", "3", "--runs", "6",
                "--properties", "integrity,eventual_delivery", "--log", tmp_path / "run.jsonl",
                "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert "6 schedules run" in r.output and "eventual_delivery holds" in r.output
    assert (tmp_path / "run.jsonl").read_text().count('"kind": "deliver"') == 6


def test_the_report_draws_the_failing_execution_with_each_nodes_lines_beside_its_steps(run_cli, tmp_path):
    report = tmp_path / "report"
    r = run_cli("run", "--node-cmd", node_cmd(MAELSTROM), "--runs", "10", "--seed", "1", "--replay-out",
                tmp_path / "r.json", "--report", report)
    assert r.exit_code == 1, r.output
    assert f"report in {report / 'index.html'}" in r.output
    assert sorted(p.name for p in report.iterdir()) == ["index.html", "replay.json", "report.md", "run.jsonl",
                                                        "run.shiviz.log", "verdicts.json"]
    page = (report / "index.html").read_text()
    # validate's window diagram of the violation, then the whole execution with the nodes' lines beside it
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="spacetime"') == 2
    assert page.count('class="row hot"') == 2 and page.count('class="arrow message offending"') == 2
    # the window's hot row is the log's line 5; the execution's is step 4, where n3's delivery of 2 is drawn
    hot = re.findall(r'<g class="row hot">.*?y1="([\d.]+)".*?class="stepno">(\d+)</text>', page, re.S)
    assert [step for _y, step in hot] == ["5", "4"]
    rings = re.findall(r'<g class="mark deliver offending">\s*<title>([^<]*)</title>\s*<circle cx="[\d.]+" cy="([\d.]+)"',
                       page)
    assert ("step 4: n3 received 2", float(hot[1][0])) in [(t, float(y)) for t, y in rings]
    assert 'class="note err"' in page and "n3 err n3: new value 2 from n2</text>" in page
    assert 'class="note in"' in page and 'class="note out"' in page
    assert "n2→n3 {&#34;type&#34;:&#34;broadcast&#34;,&#34;message&#34;:2" in page
    md_text = (report / "report.md").read_text()
    assert "### step 4\n\n    action: n2->n3 " in md_text and "    n3 err n3: new value 2 from n2\n" in md_text
    # the report's log and replay file are the execution's: validate and --replay agree
    v = run_cli("validate", report / "run.jsonl", "--properties", "causal")
    assert v.exit_code == 1 and "n3 delivered 2 (line 5)" in v.output
    v = run_cli("validate", report / "run.shiviz.log", "--properties", "causal")
    assert v.exit_code == 1 and "causal VIOLATED" in v.output
    again = run_cli("run", "--node-cmd", node_cmd(MAELSTROM), "--replay", report / "replay.json")
    assert again.exit_code == 1 and "n3 delivered 2 (line 5)" in again.output


def test_seeds_run_as_tasks_with_one_table_and_the_shortest_failure_kept(run_cli, tmp_path):
    replay = tmp_path / "r.json"
    r = run_cli("run", "--node-cmd", node_cmd(MAELSTROM), "--seeds", "3", "--runs", "6", "--replay-out", replay)
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["seed", "schedules", "verdict", "steps", "seconds"]
    assert lines[2].split()[:5] == ["0", "6", "causal", "VIOLATED", "18"]  # seed 0 fails on its sixth schedule
    assert lines[4].split()[:5] == ["2", "6", "every", "property", "holds"]
    assert "(random, seeds 0..2, engine local, 3 nodes, 2 broadcasts)" in r.output
    assert "shrunk from 18 to 4 steps" in r.output and "the shortest failing schedule (4 steps) is in" in r.output
    again = run_cli("run", "--node-cmd", node_cmd(MAELSTROM), "--replay", replay)
    assert again.exit_code == 1 and "causal VIOLATED" in again.output
    bad = run_cli("run", "--node-cmd", node_cmd(MAELSTROM), "--seeds", "2", "--explore")
    assert bad.exit_code == 2 and bad.output.strip() == (
        "ordercheck: error: --seeds: runs random or PCT schedules by seed; leave out --explore and --replay")


def test_the_shortest_failing_seed_is_the_one_kept():
    from ordercheck.checker.cli.run_seeds import SeedResult, shortest
    from ordercheck.checker.harness.network import Execution

    def failed(seed: int, steps: int) -> SeedResult:
        return SeedResult(seed, 1, 0.0, failed=Execution(log=[], picks=[0] * steps))

    assert shortest([SeedResult(0, 3, 0.0), failed(1, 9), failed(2, 5), failed(3, 5)]).seed == 2
    assert shortest([SeedResult(0, 3, 0.0)]) is None


def test_a_replay_file_with_an_unknown_workload_is_one_line_and_exit_2(run_cli, tmp_path):
    replay = tmp_path / "bad.json"
    replay.write_text('{"format": "ordercheck-run-replay", "version": 1, "node_cmd": "x", "nodes": 2, "broadcasts": 1, '
                      '"workload": "total", "schedule": []}')
    r = run_cli("run", "--node-cmd", "unused-node", "--replay", replay)
    assert r.exit_code == 2, r.output
    assert r.output.strip() == f"ordercheck: error: {replay}: workload: expected one of broadcast, ordered, got 'total'"
class _Echo:
    """An in-process node for the harness (no process): a broadcast value is delivered at
    once and forwarded to every other node, which delivers it on arrival; ``read`` lists
    what it delivered."""

    def __init__(self, nid: str) -> None:
        import collections

        self.id = nid
        self.out: collections.deque = collections.deque()
        self.delivered: list = []
        self.others: list[str] = []

    def send(self, msg: dict) -> None:
        b = msg["body"]
        if b["type"] == "init":
            self.others = [n for n in b["node_ids"] if n != self.id]
        if b["type"] in ("broadcast", "fwd") and b["message"] not in self.delivered:
            self.delivered.append(b["message"])
            if b["type"] == "broadcast":
                self.out.extend({"src": self.id, "dest": n, "body": {"type": "fwd", "message": b["message"]}}
                                for n in self.others)
        if msg["src"] == "c1" and "msg_id" in b:
            reply = {"type": b["type"] + "_ok", "in_reply_to": b["msg_id"]}
            if b["type"] == "read":
                reply["messages"] = list(self.delivered)
            self.out.append({"src": self.id, "dest": "c1", "body": reply})

    def receive(self, timeout: float, waiting: str) -> dict:
        return self.out.popleft()

    def kill(self) -> None:
        pass


@pytest.mark.parametrize("workload", ["broadcast", "ordered"])
def test_each_logged_event_has_its_step_and_each_step_its_transcript_with_crashes(workload):
    # the schedule engine's crash and restart events go through the same recording as the
    # workloads' sends and deliveries: one step per event after the header, whatever its kind
    from ordercheck.checker.harness.network import Scenario, execute

    sc = Scenario(("unused",), 2, 2, crashes=1, workload=workload)

    def choose(step: int, enabled: list) -> int:  # crash n2 first, then the first action offered
        kinds = [(a.kind, a.dest) for a in enabled]
        return kinds.index(("crash", "n2")) if step == 0 else next(
            i for i, a in enumerate(enabled) if a.kind != "crash")

    ex = execute(sc, choose, spawn=lambda nid, argv: _Echo(nid))
    events = ex.log[1:]
    assert len(ex.event_steps) == len(events)
    assert [(e["kind"], s) for e, s in zip(events, ex.event_steps, strict=True)][:2] == [("fail", 1), ("restart", 2)]
    assert ex.event_steps == sorted(ex.event_steps) and ex.event_steps[-1] <= len(ex.keys)
    own = [e for e in events if e["kind"] == "deliver" and e["peer"] == ("n1" if e["msg"] == 1 else "n2")]
    sends = [e for e in events if e["kind"] == "send"]
    if workload == "ordered":
        assert len(own) == 2 and all(e["to"] == ["n1", "n2"] for e in sends)
    else:
        assert own == [] and [e["to"] for e in sends] == [["n2"], ["n1"]]
    # the restarted n2's init is in the transcript at the restart's step, as written to its stdin
    assert any(s == 2 and n == "n2" and stream == "in" and '"type":"init"' in line for s, n, stream, line in ex.transcript)
    assert {stream for _s, _n, stream, _l in ex.transcript} == {"in", "out"}
    # the report's diagram draws the crash and the restart at the rows of their steps
    from ordercheck.checker.cli.run_report import schedule_diagram
    from ordercheck.checker.validate.readers import read_text

    diagram = schedule_diagram(read_text(ex.log_text(), "x", "jsonl", None), ex, None)
    y = {s: row_y for s, row_y, _hot in diagram.rows}
    assert [(m.title, m.y) for m in diagram.marks[:2]] == [("step 1: n2: fail", y[1]), ("step 2: n2: restart", y[2])]


def test_seeds_run_pct_schedules_too(run_cli, tmp_path):
    # PCT seed 3 (depth 2) finds the missing hold-back on its sixth schedule, as `--schedule pct --seed 3` alone
    # does; random schedules from seeds 2 and 3 do not
    r = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast_no_hold_back.py"), "--seed", "2", "--seeds", "2",
                "--runs", "6", "--schedule", "pct", "--depth", "2", "--no-shrink", "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert lines[2].split()[:5] == ["2", "6", "every", "property", "holds"]
    assert lines[3].split()[:5] == ["3", "6", "causal", "VIOLATED", "6"]
    assert "12 schedules run (PCT depth 2, seeds 2..3, engine local, 3 nodes, 2 broadcasts)" in r.output
