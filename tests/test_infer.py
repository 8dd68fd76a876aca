"""``ordercheck new --symbolic`` writes an encoding that ``prove`` proves out of the box,
and ``prove --infer`` recovers an inductive invariant for it from the explicit search's
reachable states, re-checked by prove's own queries."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from click.testing import CliRunner

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.cli import main
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.checker.loading.registry import spec_class
from ordercheck.checker.symbolic import infer
from ordercheck.checker.symbolic.encodings import Stepper
from ordercheck.checker.symbolic.infer import infer_model
from ordercheck.checker.symbolic.prove import ProveOptions, prove_model
from ordercheck.specs.fifo_symbolic import SymbolicFifo


def scaffold(root: Path, name: str = "seqfifo") -> Path:
    result = CliRunner().invoke(main, ["new", name, "--base", "holdback", "--symbolic", "--dir", str(root)])
    assert result.exit_code == 0, result.output
    return root / "models" / f"{name}.toml"


def with_prove_table(model: Path, target: Path) -> Path:
    """The ablation model of the scaffold, with the main model's [prove] table."""
    table = model.read_text().split("[prove]", 1)[1]
    ablation = model.with_name(model.stem + "-no-hold-back.toml").read_text()
    target.write_text(ablation + "\n[prove]" + table)
    return target


def by_name(result):
    return {q.name: q for q in result.queries}


def test_the_scaffold_proves_fifo_out_of_the_box(tmp_path: Path) -> None:
    model = scaffold(tmp_path)
    assert 'encoding = "../specs/seqfifo_symbolic.py"' in model.read_text()
    result = CliRunner().invoke(main, ["prove", str(model)])
    assert result.exit_code == 0, result.output
    assert "proof: fifo" in result.output and "witness in 2 steps" in result.output
    queries = by_name(prove_model(load_model(model)))
    assert queries["inductive: pending_from_expected"].status == "proved"
    assert queries["implies: fifo_per_pair"].status == "proved"
    assert queries["proof: fifo"].status == "holds"


def test_the_scaffold_without_its_guard_fails_with_a_counterexample_to_induction(tmp_path: Path) -> None:
    model = with_prove_table(scaffold(tmp_path), tmp_path / "models" / "ablation-prove.toml")
    result = prove_model(load_model(model), ProveOptions(depth=0))
    q = by_name(result)["inductive: pending_from_expected"]
    assert q.status == "refuted" and q.outcome == "mismatch"
    before, after = q.trace
    assert before.action is None and "delivers" in after.action
    assert "proof: fifo" not in by_name(result)
    assert result.exit_code() == 1


def test_the_scaffold_without_a_lemma_is_not_inductive(tmp_path: Path) -> None:
    model = scaffold(tmp_path)
    result = prove_model(load_model(model), ProveOptions(depth=0, drop=("pending_sorted",)))
    assert by_name(result)["inductive: pending_from_expected"].status == "refuted"
    assert "proof: fifo" not in by_name(result)
    assert result.exit_code() == 1


def test_inference_recovers_the_fifo_invariant(tmp_path: Path) -> None:
    found = infer_model(load_model(scaffold(tmp_path)))
    assert found.samples > 100
    assert found.targets_kept == ["fifo_per_pair"]
    # the hand-written lemmas' content, found from templates
    for clause in ("last.1.0 < exp.1.0", "exp.1.0 <= out.0.1", "ch.1.len > 0 => exp.1.0 <= ch.1.0.seq",
                   "ch.1.len > 0 and ch.1.len > 1 => ch.1.0.seq < ch.1.1.seq"):
        assert clause in found.kept
    assert not any(c.endswith("<= 2") and c.startswith("out.") for c in found.kept)  # bounds of the bounded run: dropped
    queries = by_name(found.check)
    assert found.check.inductive
    assert queries["implies: fifo_per_pair"].status == "proved"
    assert queries["proof: fifo"].status == "holds"
    assert found.check.exit_code() == 0


def test_the_inferred_invariant_is_rechecked_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Houdini that drops nothing would hand over the sample bounds; the re-check refutes them."""
    monkeypatch.setattr(infer, "houdini", lambda sym, cands, timeout=None: (cands, []))
    found = infer_model(load_model(scaffold(tmp_path)))
    assert by_name(found.check)["inductive: inferred"].status == "refuted"
    assert found.check.exit_code() == 1


def test_inference_on_a_broken_protocol_names_the_reachable_violation(tmp_path: Path) -> None:
    model = with_prove_table(scaffold(tmp_path), tmp_path / "models" / "ablation-prove.toml")
    found = infer_model(load_model(model))
    assert found.broken_on_samples and all(t.startswith("fifo_per_pair: ") for t in found.broken_on_samples)
    assert by_name(found.check)["implies: fifo_per_pair"].status == "refuted"
    assert found.check.exit_code() == 1


def test_a_target_houdini_drops_comes_with_its_counterexample_to_induction(tmp_path: Path) -> None:
    """With the initial state as the only sample, the templates are too weak: the target
    clause holds there but is not inductive, and its counterexample is two states and an action."""
    found = infer_model(load_model(scaffold(tmp_path)), limit=1)
    dropped = [d for d in found.dropped if d.target == "fifo_per_pair"]
    assert dropped, found.kept
    before, after = dropped[0].trace
    assert before.action is None and after.action
    assert found.check.exit_code() == 1


def test_inference_without_an_encoding_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(main, ["prove", "models/retransmit-strong.toml", "--infer"])
    assert result.exit_code == 2
    assert "retransmit has no symbolic encoding" in result.output
    assert "Traceback" not in result.output


def test_a_prove_encoding_that_is_not_there_is_refused(tmp_path: Path) -> None:
    model = scaffold(tmp_path)
    model.write_text(model.read_text().replace("seqfifo_symbolic.py", "missing_symbolic.py"))
    with pytest.raises(InputError) as info:
        prove_model(load_model(model))
    assert info.value.field == "prove.encoding"


# -- the naive FIFO spec (specs/fifo_symbolic.py) ---------------------------------------


def fifo_model(peers: int, prove: dict | None = None):
    data = {"spec": "fifo", "constants": {"peers": peers, "sends": 2}, "expect": {"fifo": "holds"}}
    if prove is not None:
        data["prove"] = prove
    return model_from_dict(data, "fifo.toml")


def reachable(spec):
    seen, frontier = set(), list(spec.init_states())
    while frontier:
        state = frontier.pop()
        if state in seen:
            continue
        seen.add(state)
        yield state
        frontier += [succ for _label, succ in spec.next_states(state)]


@pytest.mark.parametrize("peers", [2, 3])
def test_the_fifo_encoding_steps_as_the_spec_and_its_lemmas_hold_on_every_reachable_state(peers: int) -> None:
    spec = spec_class("fifo")(peers=peers, sends=2 if peers == 2 else 1)
    sym = SymbolicFifo(spec, bounded=True)
    stepper = Stepper(sym)
    lemmas = [c for _name, (_doc, fn) in sym.lemmas.items() for c in [fn]]
    checked = 0
    every = 2 if peers == 2 else 12  # three peers: a sample of the states, to stay cheap
    for k, state in enumerate(reachable(spec)):
        if k % every:
            continue
        values = sym.encode(state)
        want = {tuple(sorted(sym.encode(succ).items())) for _label, succ in spec.next_states(state)}
        want.discard(tuple(sorted(values.items())))  # a signal changes no variable here
        assert {post for _label, post in stepper.successors(values)} == want, spec.describe(state)
        for fn in lemmas:
            assert infer._holds_on(lambda s, fn=fn: z3.And([c for _t, c in fn(s)]), sym.schema, values), spec.describe(state)
        checked += 1
    assert checked > 50


def test_the_fifo_invariant_proves_fifo_and_needs_its_ordering_lemma() -> None:
    result = prove_model(fifo_model(2))
    assert by_name(result)["proof: fifo"].status == "holds"
    broken = prove_model(fifo_model(2), ProveOptions(drop=("in_order",)))
    assert by_name(broken)["implies: fifo_per_queue"].status == "refuted"
    assert broken.exit_code() == 1


def test_inference_recovers_the_fifo_specs_invariant() -> None:
    found = infer_model(fifo_model(2))
    assert found.targets_kept == ["fifo_per_queue"]
    for clause in ("q.1.len > 0 => q.1.0.seq < cnt.0", "last.1.0 < cnt.0", "q.0.len > 0 => last.0.1 < q.0.0.seq"):
        assert clause in found.kept
    assert by_name(found.check)["proof: fifo"].status == "holds"
    assert found.check.exit_code() == 0


def test_symbolic_needs_the_holdback_base_and_writes_nothing_else(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["new", "seqfifo", "--base", "async", "--symbolic", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "--symbolic" in result.output and "holdback" in result.output
    assert not list(tmp_path.iterdir())


def test_inference_recovers_the_sequencers_total_order_invariant() -> None:
    """A second, non-FIFO protocol: on sequencer-2, whose encoding's ghost (the last
    delivery) depends on the step that reached a state (``encode(state, prev)``),
    inference from 200 reachable states finds an inductive invariant that proves the
    three total orders; its equalities are the hand-written lemmas'
    (expect_counts_deliveries: each peer expects the number of its deliveries)."""
    found = infer_model(load_model("models/sequencer-2.toml"), limit=200)
    assert found.samples == 200
    assert {"E.0 == D.0", "E.1 == D.1", "last.0.num == last.0.pos", "last.1.num == last.1.pos"} <= set(found.kept)
    assert found.targets_kept == ["total_by_number"]
    proofs = {q.name for q in found.check.queries if q.kind == "proof" and q.status == "holds"}
    assert proofs == {"proof: total", "proof: total_global", "proof: total_prefix"}
    assert found.check.inductive and found.check.exit_code() == 0
