"""``ordercheck run --model``: each execution's log checked for conformance to a model's
spec, as ``validate --model`` checks a log (issue 36).

The nodes are Python examples started with this interpreter and ``-S``; the model is
BSS on three peers with one broadcast each (``models/bss-3.toml``), so each run
broadcasts three values, one per node.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODES = ROOT / "examples" / "nodes"
BSS = ROOT / "models" / "bss-3.toml"


def node_cmd(script: Path) -> str:
    return f"{sys.executable} -S {script}"


def test_a_correct_node_conforms_and_a_node_without_hold_back_does_not(run_cli, tmp_path):
    ok = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast.py"), "--broadcasts", "3", "--runs", "2",
                 "--properties", "causal", "--model", BSS, "--replay-out", tmp_path / "ok.json")
    assert ok.exit_code == 0, ok.output
    assert "schedule 2: 9 events, 3 peers: causal holds, conformance conforms" in ok.output
    assert f"conformance to {BSS}: the nodes n1, n2, n3 are the spec's peers a, b, c" in ok.output
    # a conformance search cut by its bound decides nothing: exit 3, never a pass
    cut = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast.py"), "--broadcasts", "3", "--runs", "1",
                  "--properties", "causal", "--model", BSS, "--max-states", "5", "--replay-out", tmp_path / "ok.json")
    assert cut.exit_code == 3, cut.output
    assert "conformance UNKNOWN (line 3)" in cut.output and "the search was cut by its max_states 5" in cut.output
    assert "bound: conformance undecided on 1 schedule (the search was cut by its bound); no verdict" in cut.output
    # only integrity asked for, which the node keeps: the failure is conformance alone, shrunk as a safety
    # property is, and reported with its line, in the output, the report and its verdicts.json
    report = tmp_path / "report"
    bad = run_cli("run", "--node-cmd", node_cmd(NODES / "causal_broadcast_no_hold_back.py"), "--broadcasts", "3",
                  "--runs", "1", "--properties", "integrity", "--model", BSS, "--replay-out", tmp_path / "r.json",
                  "--report", report)
    assert bad.exit_code == 1, bad.output
    assert "schedule 1: 9 events, 3 peers: integrity holds, conformance DOES NOT CONFORM (line 7)" in bad.output
    assert "shrunk from 9 to 4 steps" in bad.output
    assert ("schedule 1, shrunk: 4 events, 3 peers: integrity holds, conformance DOES NOT CONFORM (line 5)\n"
            "  conformance: no behaviour of spec 'bss' records n3 received 1 (line 5): the first 3 recorded events "
            "conform (up to line 4)") in bad.output
    [record] = json.loads((report / "verdicts.json").read_text())
    assert record["properties"] == {"integrity": {"status": "holds"}}
    assert (record["conformance"]["status"], record["conformance"]["line"]) == ("violated", 5)
    page = (report / "index.html").read_text()
    assert 'conformance to' in page and '<span class="verdict violated">violated</span>' in page
    assert f"{BSS}: the nodes n1, n2, n3 are its spec&#39;s peers a, b, c" in page
    assert "<h2>conformance</h2>" in page and "records n3 received 1 (line 5)" in page


def test_a_model_whose_spec_has_other_peers_than_the_nodes_is_one_line_exit_2(run_cli, tmp_path):
    r = run_cli("run", "--node-cmd", "never-started", "--nodes", "2", "--model", BSS)
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (f"ordercheck: error: {BSS}: constants: spec 'bss' has 3 peers (a, b, c) and the run "
                                "2 nodes: they are matched in order, n1 to a, so their numbers must be the same "
                                "(--nodes)")


def test_conformance_matches_the_logs_peers_to_the_specs_by_position_when_asked():
    import pytest

    from ordercheck.checker.api.errors import InputError
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.checker.validate.conformance import conformance
    from ordercheck.checker.validate.readers import read_text

    spec = load_model(BSS).spec

    def log(*peers: str):
        head = json.dumps({"format": "ordercheck-log", "version": 1, "peers": list(peers)})
        send = json.dumps({"peer": "n2", "kind": "send", "msg": 2, "to": [p for p in peers if p != "n2"]})
        return read_text(f"{head}\n{send}\n", "x.jsonl", "jsonl", None)

    assert conformance(spec, log("n1", "n2", "n3"), by_position=True).status == "conforms"
    with pytest.raises(InputError, match="'n1' is not a peer of spec 'bss'"):
        conformance(spec, log("n1", "n2", "n3"))  # by name, as validate matches them
    with pytest.raises(InputError, match=r"2 peers \(n1, n2\), but spec 'bss' has 3 \(a, b, c\); they are matched by "
                                         "position"):
        conformance(spec, log("n1", "n2"), by_position=True)
