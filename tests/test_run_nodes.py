"""``ordercheck run``: real node processes under ordercheck's network (issue 36).

Nodes are started with this interpreter and ``-S`` (no site import) to keep each
schedule's start-up cheap; exploration is bounded to 3 nodes and 2 broadcasts.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODES = ROOT / "examples" / "nodes"


def node_cmd(script: str | Path) -> str:
    return f"{sys.executable} -S {script}"


def test_explore_with_dpor_finds_the_missing_hold_back_on_3_nodes_with_2_broadcasts_each(run_cli, tmp_path):
    replay = tmp_path / "replay.json"
    cmd = node_cmd(NODES / "causal_broadcast_no_hold_back.py")
    said = "n2 delivered 6 (line 4) while 3, which happened before it, had not been delivered there"
    r = run_cli("run", "--node-cmd", cmd, "--explore", "--broadcasts", "6", "--replay-out", replay)
    assert r.exit_code == 1, r.output
    assert "2 schedules run (explored with DPOR, 3 nodes, 6 broadcasts)" in r.output
    assert "shrunk from 18 to 3 steps in" in r.output and said in r.output
    doc = json.loads(replay.read_text())
    assert doc["format"] == "ordercheck-run-replay" and len(doc["schedule"]) == 3 and doc["complete"] is False
    again = run_cli("run", "--node-cmd", cmd, "--replay", replay, "--log", tmp_path / "run.jsonl")
    assert again.exit_code == 1, again.output
    assert said in again.output and "1 schedule run (replayed" in again.output
    assert "eventual_delivery not judged: the replayed schedule stops where the violation shows" in again.output
    # the recorded log is one validate reads and judges the same way
    v = run_cli("validate", tmp_path / "run.jsonl", "--properties", "causal")
    assert v.exit_code == 1 and said in v.output
    # the node with its hold-back follows the same steps and keeps order on them; the prefix
    # cannot judge eventual delivery: no verdict, not a pass
    fixed = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast.py"), "--replay", replay)
    assert fixed.exit_code == 3, fixed.output
    assert "causal holds" in fixed.output and "the replayed schedule stops before the end" in fixed.output
    # without DPOR the same exploration runs more schedules before the violation
    plain = run_cli("run", "--node-cmd", cmd, "--explore", "--no-dpor", "--no-shrink", "--broadcasts", "6",
                    "--replay-out", replay)
    assert plain.exit_code == 1, plain.output
    assert "6 schedules run (explored, no DPOR, 3 nodes, 6 broadcasts)" in plain.output
    assert "shrunk" not in plain.output and len(json.loads(replay.read_text())["schedule"]) == 18


def test_explore_split_into_schedule_prefixes_finds_the_missing_hold_back(run_cli, tmp_path):
    replay = tmp_path / "replay.json"
    cmd = node_cmd(NODES / "causal_broadcast_no_hold_back.py")
    r = run_cli("run", "--node-cmd", cmd, "--explore", "--prefix-depth", "1", "--no-shrink", "--replay-out", replay)
    assert r.exit_code == 1, r.output
    rows = [line.split() for line in r.output.splitlines()[2:4]]
    assert rows == [["1", "2", "causal", "VIOLATED", "6", rows[0][5], "c1->n1", "broadcast", "1"],
                    ["2", "2", "causal", "VIOLATED", "6", rows[1][5], "c1->n2", "broadcast", "2"]]
    assert "prefix 1, schedule 2: 6 events, 3 peers: fifo holds, causal VIOLATED (line 6)" in r.output
    assert "4 schedules run (explored with DPOR, below each of 2 prefixes of 1 step, engine local" in r.output
    assert "the shortest failing schedule (6 steps) is in" in r.output
    again = run_cli("run", "--node-cmd", cmd, "--replay", replay)
    assert again.exit_code == 1 and "causal VIOLATED (line 6)" in again.output, again.output


def test_the_shortest_failing_prefix_is_the_one_kept():
    from ordercheck.checker.cli.run_prefixes import PrefixResult, shortest
    from ordercheck.checker.harness.network import Execution

    def failed(index: int, steps: int) -> PrefixResult:
        return PrefixResult(index, [], 1, failed=Execution(log=[], keys=["k"] * steps))

    assert shortest([PrefixResult(1, []), failed(2, 9), failed(3, 5), failed(4, 5)]).index == 3
    assert shortest([PrefixResult(1, [])]) is None


def test_explore_with_dpor_passes_the_correct_causal_node_on_every_schedule(run_cli, tmp_path):
    r = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast.py"), "--explore",
                "--replay-out", tmp_path / "replay.json")
    assert r.exit_code == 0, r.output
    assert "6 schedules run (explored with DPOR, 3 nodes, 2 broadcasts)" in r.output
    assert "causal holds" in r.output and "eventual_delivery holds" in r.output
    assert not (tmp_path / "replay.json").exists()


def test_gossip_breaks_causal_order_while_every_value_arrives(run_cli, tmp_path):
    r = run_cli("run", "--node-cmd", node_cmd(NODES / "gossip_broadcast.py"), "--runs", "20", "--seed", "4",
                "--replay-out", tmp_path / "replay.json")
    assert r.exit_code == 1, r.output
    assert "schedule 3: 6 events, 3 peers: fifo holds, causal VIOLATED (line 6), integrity holds, " \
           "eventual_delivery holds" in r.output
    assert "shrunk from 10 to 4 steps" in r.output


def test_max_schedules_without_a_verdict_is_exit_3(run_cli, tmp_path):
    r = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast.py"), "--explore", "--max-schedules", "2",
                "--replay-out", tmp_path / "replay.json")
    assert r.exit_code == 3, r.output
    assert "2 schedules run" in r.output and "schedules left to explore" in r.output


def test_random_schedules_are_reproducible_by_seed(run_cli, tmp_path):
    cmd = node_cmd(NODES / "causal_broadcast.py")
    logs = []
    for name in ("a", "b"):
        log = tmp_path / f"{name}.jsonl"
        r = run_cli("run", "--node-cmd", cmd, "--runs", "2", "--seed", "7", "--log", log)
        assert r.exit_code == 0, r.output
        assert "2 schedules run (random, seed 7," in r.output
        logs.append(log.read_text())
    assert logs[0] == logs[1] and '"kind": "deliver"' in logs[0]


EXPLICIT = """
import json, sys
me = ""
for line in sys.stdin:
    m = json.loads(line); b = m["body"]
    def out(dest, body):
        sys.stdout.write(json.dumps({"src": me, "dest": dest, "body": body}) + "\\n")
    if b["type"] == "init":
        me = b["node_id"]; out(m["src"], {"type": "init_ok", "in_reply_to": b["msg_id"]})
    elif b["type"] == "topology":
        out(m["src"], {"type": "topology_ok", "in_reply_to": b["msg_id"]})
    elif b["type"] == "broadcast":
        out("n2" if me == "n1" else "n1", {"type": "x", "message": b["message"]})
        out(m["src"], {"type": "broadcast_ok", "in_reply_to": b["msg_id"]})
    elif b["type"] == "x":
        out("ordercheck", {"type": "deliver", "message": b["message"]})
        out("ordercheck", {"type": "deliver", "message": b["message"]})
    elif b["type"] == "read":
        out(m["src"], {"type": "read_ok", "in_reply_to": b["msg_id"], "messages": []})
    sys.stdout.flush()
"""


def test_explicit_deliver_events_are_recorded(run_cli, tmp_path):
    script = tmp_path / "explicit.py"
    script.write_text(EXPLICIT)
    r = run_cli("run", "--node-cmd", node_cmd(script), "--nodes", "2", "--broadcasts", "1", "--runs", "1",
                "--properties", "integrity,eventual_delivery", "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 1, r.output
    assert "integrity VIOLATED" in r.output and "eventual_delivery holds" in r.output


def test_a_replay_the_nodes_do_not_follow_is_a_divergence(run_cli, tmp_path):
    cmd = node_cmd(NODES / "causal_broadcast_no_hold_back.py")
    replay = tmp_path / "replay.json"
    doc = {"format": "ordercheck-run-replay", "version": 1, "node_cmd": cmd, "nodes": 2, "broadcasts": 1,
           "schedule": [{"pick": 0, "action": 'c1->n1 {"message":9,"type":"broadcast"}'}]}
    replay.write_text(json.dumps(doc))
    r = run_cli("run", "--node-cmd", cmd, "--replay", replay)
    assert r.exit_code == 2, r.output
    assert "replay diverged at step 1" in r.output and "not deterministic" in r.output


@pytest.mark.parametrize("doc, field", [
    ("[1, 2]", "format"),
    ('{"format": "ordercheck-run-replay", "version": 1, "node_cmd": "x", "nodes": 0, "broadcasts": 1, '
     '"schedule": []}', "nodes"),
    ('{"format": "ordercheck-run-replay", "version": 1, "node_cmd": "x", "nodes": 2, "broadcasts": 1, '
     '"schedule": [{"pick": -1, "action": "a"}]}', "schedule[0]"),
    ("{", "is not valid JSON"),
    ('{"format": "ordercheck-run-replay", "version": 1, "node_cmd": "x", "nodes": 2, "broadcasts": 1, '
     '"drops": -1, "schedule": []}', "drops"),
    ('{"format": "ordercheck-run-replay", "version": 1, "node_cmd": "x", "nodes": 2, "broadcasts": 1, '
     '"complete": "yes", "schedule": []}', "complete"),
])
def test_a_bad_replay_file_is_one_line_and_exit_2(run_cli, tmp_path, doc, field):
    replay = tmp_path / "bad.json"
    replay.write_text(doc)
    r = run_cli("run", "--node-cmd", "unused-node", "--replay", replay)
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "\n" not in line and line.startswith(f"ordercheck: error: {replay}: {field}")


BAD = {
    "prints non-JSON": ('print("hello", flush=True)', "printed a line that is not JSON: 'hello'"),
    "never answers init": ("sys.stdin.readline(); time.sleep(60)", "did not answer init (msg_id 1) within 0.5 s"),
    "exits": ('sys.stderr.write("bye\\n"); sys.exit(3)', "exited (exit code 3; its last stderr line: 'bye')"),
    "floods": ('sys.stdout.write("x" * (2 << 20)); sys.stdout.flush(); time.sleep(60)',
               "flooded: wrote a line of more than 1,048,576 bytes"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_a_bad_node_ends_in_one_line_naming_it_with_every_process_reaped(run_cli, tmp_path, what):
    code, said = BAD[what]
    script = tmp_path / "bad.py"
    # n1 starts a grandchild in its process group and records its pid: it must be killed too
    script.write_text(textwrap.dedent(f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(60)"])
        open({str(tmp_path / "pids")!r}, "a").write(f"{{os.getpid()}} {{child.pid}}\\n")
        {code}
    """))
    r = run_cli("run", "--node-cmd", node_cmd(script), "--nodes", "2", "--step-timeout", "0.5", "--runs", "1",
                "--replay-out", tmp_path / "r.json")
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "\n" not in line and line.startswith("ordercheck: error: node n"), line
    assert said in line
    for pid in (int(p) for p in (tmp_path / "pids").read_text().split()):
        deadline = time.monotonic() + 3  # SIGKILL lands asynchronously on the grandchild
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(pid), f"process {pid} left running after: {line}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return " Z " not in Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1][:4]
    except OSError:
        return False
