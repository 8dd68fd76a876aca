"""Reading TLC's verdicts from its output (no TLC needed): several temporal properties
violated at once, and a violation exit code whose report cannot be read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import ordercheck.tla.tlc
from ordercheck.tla.tlc import TlcFailed, parse_output, run_tlc
from tests.conftest import MODELS

COUNTS = "329 states generated, 184 distinct states found, 0 states left on queue.\n"
TRACE = (
    "Error: The following behavior constitutes a counter-example:\n\n"
    "State 1: <Initial predicate>\n/\\ x = 0\n\n"
    "State 2: <Next line 1, col 1 to line 1, col 2 of module M>\n/\\ x = 1\n\n"
    "State 3: Stuttering\n"
)


@pytest.mark.parametrize(
    "line,first",
    [
        ("Error: Temporal property DeadlockFree was violated.", "DeadlockFree"),
        ("Error: Temporal properties EventualDelivery and DeadlockFree were violated.", "EventualDelivery"),
        ("Error: Temporal properties AllRead, EventualDelivery and DeadlockFree were violated.", "AllRead"),
        ("Error: Temporal properties were violated.", "temporal"),
    ],
)
def test_temporal_violation_is_read_with_its_first_property(line, first):
    run = parse_output(f"{line}\n\n{TRACE}{COUNTS}", 13)
    assert run.kind == "temporal" and run.violated == first
    assert [s.values for s in run.trace if s.values] == [{"x": 0}, {"x": 1}]  # then the stuttering step


def test_unreadable_violation_is_no_completed_run(monkeypatch, tmp_path):
    """TLC exits 13 (a liveness violation) but names it in words we cannot read: the
    run must fail loudly, not pass for a complete exploration with every property
    holding (its counts may even be those of a search TLC broke off)."""
    monkeypatch.setattr(ordercheck.tla.tlc, "find_tlc", lambda: ("java", "tla2tools.jar"))
    output = f"Error: Temporal thing went wrong.\n\n{TRACE}{COUNTS}"

    def fake_run(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 13, stdout=output, stderr="")

    monkeypatch.setattr(ordercheck.tla.tlc.subprocess, "run", fake_run)
    with pytest.raises(TlcFailed, match="TLC exited with 13"):
        run_tlc(tmp_path, "M", "M.cfg")
    # The same output with exit code 0 is an ordinary complete run.
    monkeypatch.setattr(ordercheck.tla.tlc.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0, COUNTS, ""))
    assert run_tlc(tmp_path, "M", "M.cfg").complete


def test_tlc_leaves_nothing_in_the_temporary_directory(monkeypatch, tmp_path):
    """TLC makes an empty ``tlc-NNN`` folder in the JVM's temporary directory on every
    run and leaves it there: the JVM is pointed at the run's own scratch directory, which
    is removed when the run ends."""
    monkeypatch.setattr(ordercheck.tla.tlc, "find_tlc", lambda: ("java", "tla2tools.jar"))
    seen: list[Path] = []

    def fake_run(cmd, **kwargs):
        tmpdirs = [a.split("=", 1)[1] for a in cmd if a.startswith("-Djava.io.tmpdir=")]
        assert len(tmpdirs) == 1, cmd
        meta = cmd[cmd.index("-metadir") + 1]
        assert tmpdirs[0] == meta and Path(meta).is_dir()
        seen.append(Path(meta))
        (Path(meta) / "tlc-123").mkdir()  # what TLC does there
        return subprocess.CompletedProcess(cmd, 0, stdout=COUNTS, stderr="")

    monkeypatch.setattr(ordercheck.tla.tlc.subprocess, "run", fake_run)
    assert run_tlc(tmp_path, "M", "M.cfg").complete
    assert seen and not seen[0].exists()


# -- a TLC trace the Python spec cannot follow ------------------------------------------

RECORDED = Path(__file__).parent / "data" / "tlc" / "fifo-3-causal.out"


def one_based_mid(self, msg):
    """The adapter bug the reference warns of: TLA+ numbers a sender's messages from 1,
    Python message ids count from 0, and this forgets the ``- 1``."""
    return self.ids[msg[0]] * self.stride + msg[1]


def test_the_recorded_trace_reads_back_with_the_right_adapter():
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.tla.export import export_model
    from ordercheck.tla.traces import from_tlc

    adapter = export_model(load_model(MODELS / "fifo-3.toml")).adapter
    run = parse_output(RECORDED.read_text(encoding="utf-8"), 12)
    assert run.kind == "invariant" and run.violated == "Causal"
    steps = from_tlc(adapter, run.trace)
    assert [s.action for s in steps] == [None, "a starts sending a1 to b,c", "append a1 to b's queue", "b receives a1",
                                         "b starts sending b1 to c", "append b1 to c's queue", "c receives b1"]


def test_a_wrong_decode_is_shown_beside_the_python_successors(monkeypatch):
    """The mismatch carries TLC's state where replay stops, as printed and as decoded,
    and the Python successors of the state before, each with the items it differs in."""
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.tla.adapters.fifo import FifoAdapter
    from ordercheck.tla.export import export_model
    from ordercheck.tla.traces import TraceMismatch, from_tlc, mismatch_lines

    monkeypatch.setattr(FifoAdapter, "mid", one_based_mid)
    adapter = export_model(load_model(MODELS / "fifo-3.toml")).adapter
    run = parse_output(RECORDED.read_text(encoding="utf-8"), 12)
    with pytest.raises(TraceMismatch) as err:
        from_tlc(adapter, run.trace)
    exc = err.value
    assert exc.position == 2 and str(exc) == "TLC's state 2 is no successor of state 1 in the Python spec"
    assert exc.decoded[1][0] == (1, 0)  # a's transaction holds "message 1": b's message, not a's first
    lines = mismatch_lines(exc)
    assert lines[:2] == [str(exc), "TLC's state 2, as TLC printed it:"]
    assert "  /\\ txs = (a :> [msg |-> <<a, 1>>, i |-> 1] @@ b :> [msg |-> <<>>, i |-> 0] @@ c :> [msg |-> <<>>, i |-> 0])" \
        in lines
    at = lines.index("TLC's state 2, decoded by the adapter:")
    assert lines[at + 1] == f"  {exc.decoded!r}"
    assert lines[at + 2].startswith("the Python spec's successors of state 1 (") and len(exc.candidates) > 1
    shown = lines[at + 3:]
    assert len(shown) == len(exc.candidates)
    first_send = next(line for line in shown if line.startswith("  a starts sending a1 to b,c: "))
    assert first_send.endswith("(differs in items 1, 2)")  # the transaction and the ghost's sent record


def test_a_decode_that_raises_is_a_mismatch_not_a_traceback(monkeypatch):
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.tla.adapters.fifo import FifoAdapter
    from ordercheck.tla.export import export_model
    from ordercheck.tla.traces import TraceMismatch, from_tlc, mismatch_lines

    def decode(self, values):
        return (values["no_such_variable"],)

    monkeypatch.setattr(FifoAdapter, "decode", decode)
    adapter = export_model(load_model(MODELS / "fifo-3.toml")).adapter
    with pytest.raises(TraceMismatch) as err:
        from_tlc(adapter, parse_output(RECORDED.read_text(encoding="utf-8"), 12).trace)
    lines = mismatch_lines(err.value)
    assert lines[0] == "the adapter's decode raised KeyError: 'no_such_variable' on TLC's state 1"
    assert "TLC's state 1, decoded by the adapter: decode raised KeyError: 'no_such_variable'" in lines
    assert lines[-2] == "the Python spec's initial states (1):" and lines[-1].startswith("  initial state: (((), (), ()), (0, 0, 0), ")


def test_tlc_show_traces_prints_the_state_where_replay_stops(monkeypatch, tmp_path, run_cli):
    """``ordercheck tlc --show-traces`` end to end, TLC's runs answered from the recorded
    output: with an adapter that decodes wrongly, the command prints TLC's state beside
    the Python successors; without ``--show-traces`` it says how to see them."""
    from ordercheck.tla.adapters.fifo import FifoAdapter

    model = tmp_path / "fifo-3-causal.toml"
    model.write_text('spec = "fifo"\n[constants]\npeers = 3\nsends = 1\ndestinations = "subsets"\n'
                     '[check]\nproperties = ["causal"]\n[expect]\ncausal = "violated"\n', encoding="utf-8")
    recorded = RECORDED.read_text(encoding="utf-8")
    answers: list[tuple[int, str]] = []

    real_run = subprocess.run

    def fake_run(cmd, **kwargs):  # TLC's runs only (others, such as git's, run for real)
        if cmd[0] != "java":
            return real_run(cmd, **kwargs)
        code, out = answers.pop(0) if answers else (0, COUNTS)
        return subprocess.CompletedProcess(cmd, code, stdout=out, stderr="")

    monkeypatch.setattr(ordercheck.tla.tlc, "find_tlc", lambda: ("java", "tla2tools.jar"))
    monkeypatch.setattr(ordercheck.tla.tlc.subprocess, "run", fake_run)
    monkeypatch.setattr(FifoAdapter, "mid", one_based_mid)
    for flag in ("--show-traces", None):
        answers[:] = [(0, COUNTS), (12, recorded)]  # the main configuration, then causal's own
        out = run_cli("tlc", model, *([flag] if flag else []))
        assert out.exit_code == 1, out.output
        assert "MISMATCH: causal: TLC's trace does not replay in the Python spec: TLC's state 2 is no successor" \
            in out.output
        block = "      TLC's trace does not replay in the Python spec:\n" \
                "        TLC's state 2 is no successor of state 1 in the Python spec\n" \
                "        TLC's state 2, as TLC printed it:\n"
        if flag:
            assert block in out.output and "        TLC's state 2, decoded by the adapter:\n" in out.output
            assert "the Python spec's successors of state 1" in out.output
            assert "a starts sending a1 to b,c: " in out.output
        else:
            assert block not in out.output and "--show-traces prints TLC's state" in out.output


# -- what the adapter reference says ----------------------------------------------------


def test_message_ids_are_0_based_and_tla_numbers_from_1():
    """The reference's example: ``a``'s first message is id 0 and ``<<a, 1>>``; with
    stride 2, ``b``'s second is id 3 and ``<<b, 2>>``."""
    from ordercheck.checker.loading.modelfile import model_from_dict
    from ordercheck.tla.adapters.fifo import FifoAdapter
    from ordercheck.tla.values import ModelValue

    spec = model_from_dict({"spec": "fifo", "constants": {"peers": 3, "sends": 2}}).spec
    adapter = FifoAdapter(spec)
    assert adapter.stride == 2 and adapter.names == ("a", "b", "c")
    assert adapter.msg(0) == (ModelValue("a"), 1) and adapter.msg(3) == (ModelValue("b"), 2)
    assert [adapter.mid(adapter.msg(i)) for i in range(6)] == list(range(6))


@pytest.mark.parametrize("printed, value", [
    ("3", 3), ('"send"', "send"), ("TRUE", True), ("a", "model value a"), ("<<a, 1>>", ("model value a", 1)),
    ("{a, b}", frozenset({"model value a", "model value b"})), ('[kind |-> "send", arg |-> 1]', {"kind": "send", "arg": 1}),
    ("(a :> 1 @@ b :> 2)", {"model value a": 1, "model value b": 2}), ("<<>>", ()),
])
def test_decode_receives_the_types_the_reference_lists(printed, value):
    """The table under ``Adapter``: each TLA+ form as TLC prints it, parsed into the
    Python type ``decode`` receives (an empty sequence, function or bag is ``()``)."""
    from ordercheck.tla.values import ModelValue, parse_value

    def expected(v):
        if isinstance(v, str) and v.startswith("model value "):
            return ModelValue(v.removeprefix("model value "))
        if isinstance(v, tuple):
            return tuple(expected(x) for x in v)
        if isinstance(v, frozenset):
            return frozenset(expected(x) for x in v)
        if isinstance(v, dict):
            return {expected(k): expected(x) for k, x in v.items()}
        return v

    got = parse_value(printed)
    assert got == expected(value) and type(got) is type(expected(value))


# -- the happened-before configuration in `ordercheck tlc` ------------------------------

HB_MODEL = 'spec = "fifo"\n[constants]\npeers = 2\nsends = 1\n[check]\nproperties = ["fifo"]\n[expect]\nfifo = "holds"\n'


def complete_output(distinct: int, generated: int, depth: int) -> str:
    return (f"Model checking completed. No error has been found.\n{generated} states generated, {distinct} distinct "
            f"states found, 0 states left on queue.\nThe depth of the complete state graph search is {depth}.\n")


def tlc_answering(monkeypatch, answer) -> list[str]:
    """TLC's runs answered by ``answer(config) -> (exit code, output)``; returns the
    configurations run, in order."""
    ran: list[str] = []
    real_run = subprocess.run

    def fake_run(cmd, **kwargs):
        if cmd[0] != "java":
            return real_run(cmd, **kwargs)
        config = cmd[cmd.index("-config") + 1]
        ran.append(config)
        code, out = answer(config)
        return subprocess.CompletedProcess(cmd, code, stdout=out, stderr="")

    monkeypatch.setattr(ordercheck.tla.tlc, "find_tlc", lambda: ("java", "tla2tools.jar"))
    monkeypatch.setattr(ordercheck.tla.tlc.subprocess, "run", fake_run)
    return ran


@pytest.fixture
def hb_model(tmp_path):
    """A small fifo model whose one property holds: its path, our distinct states, and
    TLC's output of a run that explores exactly our states."""
    from ordercheck.checker.cli.tla import CROSS_CHECK_OPTIONS
    from ordercheck.checker.engine.run import check_model
    from ordercheck.checker.loading.modelfile import load_model

    path = tmp_path / "hb-2.toml"
    path.write_text(HB_MODEL, encoding="utf-8")
    model = load_model(path)
    ours = check_model(model, CROSS_CHECK_OPTIONS)
    generated = ours.stats.transitions + len(set(model.spec.init_states()))
    return path, ours.stats.distinct_states, complete_output(ours.stats.distinct_states, generated, ours.stats.depth)


def test_tlc_runs_the_happened_before_configuration_and_reports_it(monkeypatch, run_cli, hb_model):
    path, distinct, complete = hb_model
    ran = tlc_answering(monkeypatch, lambda config: (0, complete))
    out = run_cli("tlc", path)
    assert out.exit_code == 0, out.output
    assert ran == ["hb_2.cfg", "hb_2_happened_before.cfg"]
    assert (f"  happened-before: AgreesWithHappenedBefore, StoredPastIsCausalPast hold in all {distinct} states "
            "(hb_2_happened_before.cfg, ") in out.output
    assert "agree: same states" in out.output


def test_a_happened_before_violation_fails_the_cross_check(monkeypatch, run_cli, hb_model):
    """TLC finding the library and HappenedBefore.tla apart is a mismatch (exit 1), and
    so is a happened-before run that explores other states than the main one."""
    path, distinct, complete = hb_model
    violated = ("Error: Invariant AgreesWithHappenedBefore is violated.\n"
                "Error: The behavior up to this point is:\nState 1: <Initial predicate>\n/\\ x = 0\n\n"
                "3 states generated, 2 distinct states found, 1 states left on queue.\n")
    tlc_answering(monkeypatch, lambda config: (12, violated) if config.endswith("_happened_before.cfg") else (0, complete))
    out = run_cli("tlc", path)
    assert out.exit_code == 1, out.output
    assert "  happened-before: TLC reports AgreesWithHappenedBefore violated on hb_2_happened_before.cfg" in out.output
    assert ("MISMATCH: happened-before: hb_2_happened_before.cfg: expected no error, "
            "TLC reports AgreesWithHappenedBefore violated after 0 steps") in out.output
    fewer = complete.replace(f" {distinct} distinct", f" {distinct - 1} distinct")
    tlc_answering(monkeypatch, lambda config: (0, fewer) if config.endswith("_happened_before.cfg") else (0, complete))
    out = run_cli("tlc", path)
    assert out.exit_code == 1, out.output
    assert (f"MISMATCH: happened-before: hb_2_happened_before.cfg: expected {distinct} distinct states, "
            f"TLC explored {distinct - 1}") in out.output


def test_no_happened_before_leaves_the_configuration_out_and_says_so(monkeypatch, run_cli, hb_model):
    path, _distinct, complete = hb_model
    ran = tlc_answering(monkeypatch, lambda config: (0, complete))
    out = run_cli("tlc", path, "--no-happened-before")
    assert out.exit_code == 0, out.output
    assert ran == ["hb_2.cfg"]
    assert "  happened-before: hb_2_happened_before.cfg not run (--no-happened-before)" in out.output


def test_every_configuration_is_judged_by_its_manifest_outcome():
    """:func:`judge` holds a run to the outcome, counts and steps the manifest gives."""
    from ordercheck.tla.adapters import ExportedProperty
    from ordercheck.tla.crosscheck import judge
    from ordercheck.tla.export import INVARIANT_VIOLATED, NO_ERROR, TEMPORAL_VIOLATED, UNKNOWN, TlcConfig
    from ordercheck.tla.tlc import TlcRun, TlcState

    inv = ExportedProperty("causal", "always", "Causal", "Causal")
    live = ExportedProperty("eventual_delivery", "eventually", "AllDelivered", "EventualDelivery")
    main = TlcConfig("m.cfg", "main", (inv,), NO_ERROR, distinct_states=10, depth=4)
    trace = [TlcState("", {}) for _ in range(4)]
    assert judge(main, TlcRun(0, "", distinct=10, depth=4)) is None
    assert judge(main, TlcRun(0, "", distinct=9, depth=4)) == "m.cfg: expected 10 distinct states, TLC explored 9"
    assert judge(main, TlcRun(0, "", distinct=10, depth=5)) == "m.cfg: expected depth 4, TLC 5"
    assert judge(main, TlcRun(12, "", violated="Causal", kind="invariant", trace=trace)) == \
        "m.cfg: expected no error, TLC reports Causal violated after 3 steps"
    violation = TlcConfig("v.cfg", "violation", (inv,), INVARIANT_VIOLATED, steps=3)
    assert judge(violation, TlcRun(12, "", violated="Causal", kind="invariant", trace=trace)) is None
    assert judge(violation, TlcRun(12, "", violated="Causal", kind="invariant", trace=trace[:3])) == \
        "v.cfg: expected a 3-step counterexample, TLC's has 2"
    assert judge(violation, TlcRun(0, "", distinct=10)) == "v.cfg: expected Causal violated, TLC reports no error"
    assert judge(violation, TlcRun(12, "", violated="Fifo", kind="invariant", trace=trace)) == \
        "v.cfg: expected Causal violated, TLC reports Fifo violated"
    temporal = TlcConfig("t.cfg", "violation", (live,), TEMPORAL_VIOLATED)
    assert judge(temporal, TlcRun(13, "", violated="EventualDelivery", kind="temporal", trace=trace)) is None
    assert judge(temporal, TlcRun(0, "", distinct=10)) == \
        "t.cfg: expected EventualDelivery violated (a temporal property), TLC reports no error"
    assert judge(TlcConfig("u.cfg", "unknown", (inv,), UNKNOWN), TlcRun(0, "", distinct=10)) is None


def test_an_action_property_violation_is_read_and_judged():
    """TLC's "Action property P is violated." (a per-step check, ExportedProperty.step) is
    read as kind "action" naming P, with its trace; a configuration expecting it is judged
    by the property and the counterexample's steps, and an invariant violation there is a
    mismatch."""
    from ordercheck.tla.adapters import ExportedProperty
    from ordercheck.tla.crosscheck import judge
    from ordercheck.tla.export import ACTION_VIOLATED, TlcConfig
    from ordercheck.tla.tlc import TlcRun

    # TLC ends an action property's counterexample at the offending step (no stuttering state).
    trace = TRACE.replace("State 3: Stuttering\n", "")
    run = parse_output(f"Error: Action property NoWarn is violated.\n{trace}{COUNTS}", 13)
    assert run.kind == "action" and run.violated == "NoWarn"
    assert [s.values for s in run.trace] == [{"x": 0}, {"x": 1}]
    step = ExportedProperty("no_warn", "always", '~Fails("no_warn")', "NoWarn", step=True)
    assert step.listed_as_property and not step.temporal
    config = TlcConfig("a.cfg", "violation", (step,), ACTION_VIOLATED, steps=1)
    assert config.checks == ["NoWarn"]
    assert judge(config, run) is None
    assert judge(TlcConfig("a.cfg", "violation", (step,), ACTION_VIOLATED, steps=2), run) == \
        "a.cfg: expected a 2-step counterexample, TLC's has 1"
    assert judge(config, TlcRun(12, "", violated="NoWarn", kind="invariant", trace=run.trace)) == \
        "a.cfg: expected action property NoWarn violated, TLC reports NoWarn violated"
    assert judge(config, TlcRun(0, "", distinct=10)) == \
        "a.cfg: expected action property NoWarn violated, TLC reports no error"
