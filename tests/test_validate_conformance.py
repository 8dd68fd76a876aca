"""Conformance (trace validation): is a log a behaviour of the spec?

Walks of a model conform to it, with the spec's internal steps filled in by the search.
A mutant's counterexample, checked against the same configuration with the ablated
step put back (where a full search shows that configuration keeps the property), does
not conform, and the answer names the first event no spec step explains. A bound that
cuts the search gives ``unknown``, never a verdict.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.cli import main
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.checker.validate.conformance import conformance, parse_unrecorded
from ordercheck.checker.validate.generate import trace_logs, walk
from ordercheck.checker.validate.jsonl import read_jsonl, records, write_jsonl
from ordercheck.checker.validate.log import SIGNAL_IN, SIGNAL_OUT, STEP, sub_log

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


@pytest.mark.parametrize("name", ["bus1-3", "bus1-4-signal", "bss-3-signal", "sequencer-3", "skeen-4", "lamport-3",
                                  "ses-3", "matrix-3", "synchronous-3", "fifo-4"])
def test_walks_conform(name: str) -> None:
    model = load_model(MODELS / f"{name}.toml")
    for seed in range(4):
        w = walk(model, seed, 200)
        answer = conformance(model.spec, w.log)
        assert answer.status == "conforms", (seed, answer.sentence)
        assert answer.matched == answer.recorded == len(w.log) and answer.at is None


def _restored(model) -> dict:
    """The mutant's model file with every ablation flag of its spec switched back on, and
    without its expectations (nor the [evidence] that backs them: the restored model's
    verdicts come from its own search)."""
    raw = copy.deepcopy(model.raw)
    for flag in type(model.spec).ablations():
        raw.setdefault("constants", {})[flag] = True
    raw["expect"] = {}
    raw.pop("evidence", None)
    return raw


MUTANTS = sorted(
    p for p in MODELS.glob("*mutant*.toml")
    if any(load_model(p).constants.get(f) is False for f in type(load_model(p).spec).ablations())
)


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_mutant_counterexamples_do_not_conform(path: Path) -> None:
    mutant = load_model(path)
    try:
        mutant.spec.history(mutant.spec.init_states()[0])
    except NotImplementedError:
        pytest.skip("the spec keeps no history")
    # any "always" property over the history will do (validate's own and global_lock,
    # synchronous...): a faithful log (see Walk.faithful) that conforms ends in a state
    # of the restored spec with the log's history, so the restored spec could not keep
    # a property the log breaks
    names = [p.name for p in mutant.properties if p.kind == "always" and p.over == "history"]
    if not names:
        pytest.skip("the mutant checks no property over the history")
    raw = _restored(mutant)
    raw.setdefault("check", {})["properties"] = names
    base = model_from_dict(raw, str(path))
    kept = check_model(base, Options(progress=False))
    holds = {n for n, p in kept.properties.items() if p.status == "holds"}
    logs = [w for w in trace_logs(mutant, check_model(mutant, Options(progress=False)), {"check": True})
            if w.faithful and w.log.header["generated"]["property"] in holds]
    if not logs:
        pytest.skip("the ablated step protects none of the mutant's history properties here")
    for w in logs:
        answer = conformance(base.spec, w.log)
        assert answer.status == "violated", (w.log.source, answer.sentence)
        assert answer.at is not None and answer.matched < answer.recorded
        assert w.log.where(answer.at) in answer.sentence
        # the prefix before the unexplained event is a behaviour of the spec
        prefix, _ = sub_log(w.log, range(answer.at), all_peers=True)
        assert conformance(base.spec, prefix).status == "conforms"


def test_no_spec_step_explains_a_causal_inversion() -> None:
    text = (ROOT / "tests" / "data" / "validate" / "causal-relayed.jsonl").read_text()
    log = read_jsonl(io.StringIO(text), "relayed.jsonl")
    bss = model_from_dict({"spec": "bss", "constants": {"peers": 3, "script": {"a": ["bc"], "b": ["c"]}}}, "bss.toml")
    answer = conformance(bss.spec, log)
    assert answer.status == "violated"
    assert log.line[answer.at] == 5 and answer.matched == 3
    assert "c received b1 (line 5)" in answer.sentence
    assert any("c receives a1" in c for c in answer.could), answer.could


def test_bound_cut_is_unknown() -> None:
    model = load_model(MODELS / "bus1-3.toml")
    w = walk(model, 1, 200)
    answer = conformance(model.spec, w.log, bound=1)
    assert answer.status == "unknown" and answer.cut == "bound of 1 unrecorded steps"
    tiny = conformance(model.spec, w.log, max_states=50)
    assert tiny.status == "unknown" and tiny.cut.startswith("max_states")


def test_unrecorded_signals_are_filled_in() -> None:
    model = load_model(MODELS / "bus1-4-signal.toml")
    w = next(w for w in (walk(model, s, 200) for s in range(20)) if SIGNAL_OUT in w.log.kind)
    quiet, _ = sub_log(w.log, [i for i in range(len(w.log)) if w.log.kind[i] not in (SIGNAL_OUT, SIGNAL_IN)])
    filled = conformance(model.spec, quiet, unrecorded=parse_unrecorded("signal"))
    assert filled.status == "conforms"
    assert conformance(model.spec, w.log, unrecorded=parse_unrecorded("signal_in,signal_out")).status == "conforms"
    with pytest.raises(ValueError, match="unknown event kind 'sig'"):
        parse_unrecorded("sig")


def _with_step_line(w, k: int, action) -> str:
    """The walk's log as JSON Lines with a step line for its ``k``-th action (``k`` from
    1) placed before the events that action adds."""
    recs = list(records(w.log, header=False))
    # records() joins a signal and its receipt: map each record back to its first event
    starts, i = [], 0
    for rec in recs:
        starts.append(i)
        i += 2 if rec["kind"] == "signal" else 1
    lines = []
    placed = False
    for rec, first in zip(recs, starts):
        if not placed and w.step_of_event[first] >= k:
            lines.append(json.dumps({"peer": "a", "kind": "step", "action": action}))
            placed = True
        lines.append(json.dumps(rec))
    if not placed:
        lines.append(json.dumps({"peer": "a", "kind": "step", "action": action}))
    return "\n".join(lines) + "\n"


def test_step_lines_must_match_a_spec_step() -> None:
    model = load_model(MODELS / "bus1-3.toml")
    spec = model.spec
    w = walk(model, 2, 200)
    k = next(k for k, label in enumerate(w.labels, 1) if label[0] == "tick")  # an internal step
    for action in (spec.format_action(w.labels[k - 1]), list(w.labels[k - 1])):
        log = read_jsonl(io.StringIO(_with_step_line(w, k, action)), "s.jsonl")
        answer = conformance(spec, log)
        assert answer.status == "conforms", (action, answer.sentence)
        assert answer.recorded == len(w.log) + 1
    log = read_jsonl(io.StringIO(_with_step_line(w, k, "a ticks its clock twice")), "s.jsonl")
    wrong = conformance(spec, log)
    assert wrong.status == "violated" and log.kind[wrong.at] == STEP


def test_log_peer_unknown_to_the_spec() -> None:
    log = read_jsonl(io.StringIO('{"peer": "z", "kind": "send", "msg": "z1", "to": ["a"]}\n'), "z.jsonl")
    with pytest.raises(InputError) as err:
        conformance(load_model(MODELS / "bus1-3.toml").spec, log)
    assert err.value.line() == "z.jsonl: peer: 'z' is not a peer of spec 'bus1' (its peers are a, b, c)"


def test_cli_model(tmp_path: Path) -> None:
    model = tmp_path / "bss-relay.toml"
    model.write_text('spec = "bss"\n[constants]\npeers = 3\nscript = { a = ["bc"], b = ["c"] }\n')
    runner = CliRunner()
    data = ROOT / "tests" / "data" / "validate"
    r = runner.invoke(main, ["validate", "--model", str(model), str(data / "causal-relayed.jsonl")])
    assert r.exit_code == 1, r.output
    assert "conformance DOES NOT CONFORM (line 5)" in r.output and "the spec could record instead:" in r.output
    r = runner.invoke(main, ["validate", "--model", str(model), str(data / "causal-concurrent.jsonl")])
    assert r.exit_code == 0 and "conformance conforms" in r.output, r.output
    w = walk(load_model(MODELS / "bus1-3.toml"), 1, 200)
    path = tmp_path / "w.jsonl"
    with path.open("w") as fh:
        write_jsonl(w.log, fh)
    r = runner.invoke(main, ["validate", "--model", str(MODELS / "bus1-3.toml"), "--bound", "1", str(path)])
    assert r.exit_code == 3 and "conformance UNKNOWN" in r.output, r.output
    r = runner.invoke(main, ["validate", "--model", str(MODELS / "bus1-3.toml"), "-p", "causal", str(path)])
    assert r.exit_code == 0 and "causal holds, conformance conforms" in r.output, r.output
