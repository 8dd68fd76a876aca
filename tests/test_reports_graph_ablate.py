"""`ordercheck graph` (DOT, GraphML) and `ordercheck ablate` (table, JSON, report)."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from click.testing import CliRunner
from reports_helpers import MODELS

from ordercheck.checker.cli import main
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.reports import load_items
from ordercheck.reports.view import Ablation

SMALL = """
spec = "fifo"
description = "a multicasts to b and c, b reacts to c: c may get the reaction first"
[constants]
peers = 3
script = { a = ["bc"], b = ["c"] }
[check]
properties = ["fifo", "causal", "eventual_delivery"]
[expect]
causal = "violated"
"""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot's parser on newer pyparsing
def test_graph_exports_dot_and_graphml_with_the_counterexample_marked(tmp_path):
    model = tmp_path / "small.toml"
    model.write_text(SMALL)
    res = CliRunner().invoke(main, ["graph", str(model), "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    full = check_model(load_model(model), Options(progress=False, stop_when_decided=False, symmetry=False, por=False))
    assert f"{full.stats.distinct_states} states" in res.output and "causal (6 steps)" in res.output
    gm = nx.read_graphml(tmp_path / "small.graphml", force_multigraph=True)
    assert gm.number_of_nodes() == full.stats.distinct_states
    assert gm.number_of_edges() == full.stats.transitions
    causal = full.properties["causal"].trace
    on_causal = [n for n, d in gm.nodes(data=True) if "causal" in d["on_path"].split(",")]
    assert len(on_causal) == len(causal)  # one node per state of the trace
    ends = [n for n, d in gm.nodes(data=True) if "causal" in d["ends"].split(",")]
    assert len(ends) == 1
    assert json.loads(gm.nodes[ends[0]]["state"]) == causal[-1].state
    edges = [d for _u, _v, d in gm.edges(data=True) if "causal" in d["on_path"].split(",")]
    assert len(edges) == len(causal) - 1
    assert sorted(d["label"] for d in edges) == sorted(s.action for s in causal[1:])
    initial = [n for n, d in gm.nodes(data=True) if d["initial"]]
    assert len(initial) == 1 and initial[0] in on_causal
    dot = nx.nx_pydot.read_dot(tmp_path / "small.dot")
    assert dot.number_of_nodes() == gm.number_of_nodes()
    assert dot.number_of_edges() == gm.number_of_edges()
    red = [d for _u, _v, d in dot.edges(data=True) if d.get("color", "").strip('"') == "#d62728"]
    assert len(red) == len({(u, v, k) for u, v, k, d in gm.edges(keys=True, data=True) if d["on_path"]})
    assert {d.get("label", "").strip('"') for d in red} >= {causal[-1].action}


def test_graph_refuses_a_large_model_politely(tmp_path):
    res = CliRunner().invoke(main, ["graph", str(MODELS / "bus1-3.toml"), "-o", str(tmp_path), "--max-states", "500"])
    assert res.exit_code == 2
    assert "more than 500 reachable states" in res.output and "Traceback" not in res.output
    assert not list(tmp_path.iterdir())
    res = CliRunner().invoke(main, ["graph", str(MODELS / "fifo-4.toml"), "-o", str(tmp_path), "--max-states", "200000"])
    assert res.exit_code == 2 and "above the limit" in res.output


def test_ablate_table_json_and_report(tmp_path):
    model = str(MODELS / "bus1-mutant-tiebreak-by-arrival.toml")
    res = CliRunner().invoke(
        main, ["ablate", model, "--quiet", "--json", str(tmp_path / "a.json"), "--report", str(tmp_path / "rep")]
    )
    assert res.exit_code == 0, res.output
    lines = res.output.split("\n\n")[1].splitlines()  # the table, between blank lines
    header = next(line for line in lines if line.startswith("step switched off"))
    assert header.split() == [
        "step", "switched", "off", "total", "total_global", "total_prefix", "global_lock", "eventual_delivery"]
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.split() and line.split()[0] in (
        "block_destinations", "sync_sender", "sync_receivers_before_queueing", "tiebreak_by_sender")}
    assert rows["sync_receivers_before_queueing"] == ["holds"] * 5
    assert rows["tiebreak_by_sender"][0:2] == ["BREAKS", "20"]  # total breaks, with a 20-step trace
    assert "the table starts from the full algorithm" in res.output
    (record,) = load_items([tmp_path / "a.json"])
    assert isinstance(record, Ablation)
    assert [f for f, _d, _r in record.mutants] == [
        "block_destinations", "sync_sender", "sync_receivers_before_queueing", "tiebreak_by_sender"]
    assert record.baseline.properties["total"].status == "holds"
    total = dict((f, r) for f, _d, r in record.mutants)["tiebreak_by_sender"].properties["total"]
    assert total.status == "violated" and len(total.trace) == 21
    html = (tmp_path / "rep" / "index.html").read_text()
    table = html.split('<table class="ablation">', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == 1 + 1 + 4
    assert "order equal timestamps by sender id" in table
    assert 'href="#trace-bus1-mutant-tiebreak-by-arrival-without-tiebreak_by_sender--total"' in table
    assert 'id="trace-bus1-mutant-tiebreak-by-arrival-without-tiebreak_by_sender--total"' in html


def test_ablate_refuses_a_spec_without_ablations():
    res = CliRunner().invoke(main, ["ablate", str(MODELS / "fifo-4.toml"), "--quiet"])
    assert res.exit_code == 2
    assert "names no ablation steps" in res.output
