"""The spec API without traps: state-aware sending, named state fields, opt-in channel
faults, the fairness warning, spec errors as one line with exit 5, refusals that say
what to do, and `.venv/bin/pytest` working like `python -m pytest`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ordercheck.checker import Fields
from ordercheck.checker.api.result import EXIT_SPEC
from ordercheck.checker.engine.fingerprint import check_vocabulary, fingerprint
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "token_ring"
RING = EXAMPLE / "models" / "token-ring-3.toml"
QUIET = Options(progress=False)


def cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ordercheck.checker.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


def reachable(spec, limit: int = 100_000):
    """Every reachable state with its enabled labels (breadth-first)."""
    seen = {s: None for s in spec.init_states()}
    todo = list(seen)
    while todo:
        s = todo.pop()
        out = spec.next_states(s)
        yield s, [label for label, _t in out]
        for _label, t in out:
            if t not in seen:
                seen[t] = None
                todo.append(t)
        assert len(seen) < limit


# -- state-aware sending -----------------------------------------------------------------


def test_only_the_token_holder_sends():
    spec = load_model(RING).spec
    senders = set()
    for state, labels in reachable(spec):
        holder = spec.own(state).holder
        for label in labels:
            if label[0] == "send":
                assert label[1] == holder, (label, holder)
                senders.add(label[1])
    assert senders == {0, 1}  # a and b do send (c has nothing to send), each when it holds the token


def test_without_the_hook_anyone_would_send():
    spec = load_model(RING).spec
    free = type("Free", (type(spec),), {"may_send": lambda self, state, p: True})(**spec.values)
    assert any(
        label[0] == "send" and label[1] != free.own(state).holder for state, labels in reachable(free) for label in labels
    )


def test_a_holdback_spec_gates_its_sends_by_state():
    from ordercheck.specs.bss import BSS
    from ordercheck.specs.holdback import LOCAL

    class AfterDelivery(BSS):  # b may send only once it has delivered something
        def may_send(self, state, p):
            return p != 1 or any(state[LOCAL][1])

    spec = AfterDelivery(peers=2, sends=1)
    sends = [(s, label) for s, labels in reachable(spec) for label in labels if label[0] == "send" and label[1] == 1]
    assert sends and all(any(s[LOCAL][1]) for s, _label in sends)
    assert any(label == ("send", 1, 1, 1) for _s, labels in reachable(BSS(peers=2, sends=1)) for label in labels)


# -- named state fields --------------------------------------------------------------------


def test_fields_read_and_set_by_name_and_store_plain_tuples():
    local = Fields("holder", "number", "expect")
    t = local.new(holder=1, number=2, expect=(0, 1))
    assert type(t) is tuple and t == (1, 2, (0, 1))
    assert local.read(t).number == 2 and local.holder == 0 and local.get(t, "expect") == (0, 1)
    assert local.set(t, number=3) == (1, 3, (0, 1))
    assert local.describe(t) == {"holder": 1, "number": 2, "expect": (0, 1)}
    with pytest.raises(TypeError):
        local.new(holder=1)  # every field, by name
    with pytest.raises(TypeError):
        local.set(t, nubmer=3)
    with pytest.raises(AttributeError):
        local.read(t).nubmer  # noqa: B018
    with pytest.raises(ValueError):
        Fields("set")  # a method's name
    assert check_vocabulary(local.read(t)) is not None  # a view is not a state value


FINGERPRINTS = textwrap.dedent('''
    import json, sys
    from ordercheck.checker import Fields
    from ordercheck.checker.engine.fingerprint import fingerprint
    from ordercheck.checker.loading.modelfile import load_model
    local = Fields("holder", "number", "expect", "held")
    named = local.new(holder=1, number=2, expect=(0, 1, 0), held=((3, 4), (5, 6)))
    spec = load_model(sys.argv[1]).spec
    states = sorted(spec.next_states(spec.init_states()[0]) + spec.next_states(spec.next_states(spec.init_states()[0])[0][1]))
    print(json.dumps({"named": fingerprint(named), "ring": [fingerprint(t) for _l, t in states]}))
''')


def test_named_fields_give_the_tuple_forms_fingerprints_in_every_process(tmp_path):
    script = tmp_path / "fp.py"
    script.write_text(FINGERPRINTS)
    runs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, str(script), str(RING)], capture_output=True, text=True, env=env, cwd=ROOT)
        assert run.returncode == 0, run.stderr
        runs.append(json.loads(run.stdout))
    assert runs[0] == runs[1]  # string hashing changes with the seed; fingerprints do not
    assert runs[0]["named"] == fingerprint((1, 2, (0, 1, 0), ((3, 4), (5, 6))))  # the tuple form's, here too
    assert len(set(runs[0]["ring"])) > 1


# -- channel faults are opt-in ---------------------------------------------------------


def test_a_fault_the_spec_does_not_model_is_refused_naming_the_constant(tmp_path):
    model = tmp_path / "ses-dup.toml"
    model.write_text('spec = "ses"\n[constants]\npeers = 2\nduplicates = 1\n')
    run = cli("check", model, "--quiet")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ordercheck: error: {model}: constants.duplicates: = 1 asks for")
    assert "duplication" in lines[0] and "ses does not model" in lines[0] and "docs/howto/channels-and-faults.md" in lines[0]
    assert 'it tolerates: {"loss", "reordering"}; breaks under: none' in lines[0]
    assert "tolerates = {..., \"duplication\"}" in lines[0] and "breaks_under = {..., \"duplication\"}" in lines[0]


def test_faults_a_spec_declares_are_accepted():
    model = model_from_dict({"spec": "lamport_total", "constants": {"peers": 2, "duplicates": 1, "lossy": True}})
    assert model.spec.duplicates == 1
    ring = model_from_dict({"spec": str(EXAMPLE / "token_ring.py"), "constants": {"channel": "unordered"}})
    assert ring.spec.channel == "unordered"


def test_a_default_that_asks_for_a_fault_needs_a_declaration_too(tmp_path):
    (tmp_path / "quiet.py").write_text(textwrap.dedent('''
        from ordercheck.specs.async_peers import AsyncPeerSpec
        from ordercheck.specs.base import peer_constants
        from ordercheck.specs.channels import channel_constants

        class Quiet(AsyncPeerSpec):
            name = "quiet"
            constants = (*peer_constants(), *channel_constants("unordered"))

            def protocol_steps(self, state):
                return []

            def on_send(self, state, p, mid, dmask):
                return state
    '''))
    from ordercheck.checker.api.errors import InputError

    with pytest.raises(InputError) as err:
        model_from_dict({"spec": str(tmp_path / "quiet.py")}, str(tmp_path / "m.toml"))
    assert err.value.field == "constants.channel" and "(the spec's default)" in err.value.message
    with pytest.raises(InputError) as err:
        model_from_dict({"spec": str(tmp_path / "quiet.py"), "constants": {"channel": "fifo", "lossy": True}})
    assert err.value.field == "constants.lossy"
    assert model_from_dict({"spec": str(tmp_path / "quiet.py"), "constants": {"channel": "fifo"}}).spec.channel == "fifo"


def test_the_builtin_specs_declare_their_faults_honestly():
    from ordercheck.checker.api.faults import declaration_errors
    from ordercheck.checker.loading.registry import spec_class, spec_names
    from ordercheck.specs.lamport_total import LamportTotal
    from ordercheck.specs.sequencer import Sequencer
    from ordercheck.specs.ses import SES
    from ordercheck.specs.synchronous import Synchronous

    for name in spec_names():
        cls = spec_class(name)
        assert declaration_errors(cls) is None, name
        if any(c.fault for c in cls.constants):
            own = {k for klass in cls.__mro__[:-1] if klass.__module__ == cls.__module__ for k in vars(klass)}
            assert own & {"tolerates", "breaks_under"}, name
    assert "duplication" not in SES.tolerates | SES.breaks_under  # SES delivers a copy a second time
    # Faults a model asks for to show the protocol fails are not claimed as handled.
    assert "reordering" in LamportTotal.breaks_under and "reordering" not in LamportTotal.tolerates
    assert "duplication" in Sequencer.breaks_under and "duplication" in Synchronous.breaks_under


QUIET_SPEC = """
from ordercheck.specs.async_peers import AsyncPeerSpec
from ordercheck.specs.base import peer_constants
from ordercheck.specs.channels import channel_constants

class Quiet(AsyncPeerSpec):
    name = "quiet"
    constants = (*peer_constants(), *channel_constants("fifo"))
    {declaration}

    def protocol_steps(self, state):
        return []

    def on_send(self, state, p, mid, dmask):
        return state
"""


def test_breaks_under_lets_a_model_ask_for_a_fault(tmp_path):
    (tmp_path / "quiet.py").write_text(QUIET_SPEC.format(declaration='breaks_under = frozenset({"loss"})'))
    model = model_from_dict({"spec": str(tmp_path / "quiet.py"), "constants": {"lossy": True}}, str(tmp_path / "m.toml"))
    assert model.spec.lossy is True


def test_the_old_faults_set_is_refused_in_one_line_naming_the_new_attributes(tmp_path):
    """Even when the model asks for no fault at all: exit 2, one line, no traceback."""
    (tmp_path / "quiet.py").write_text(QUIET_SPEC.format(declaration='faults = frozenset({"loss"})'))
    model = tmp_path / "m.toml"
    model.write_text('spec = "quiet.py"\n[constants]\npeers = 2\n')
    run = cli("check", model, "--quiet")
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f'ordercheck: error: {model}: spec: quiet declares faults = {{"loss"}} (in Quiet), a spelling no longer read: '
        "write tolerates = {...} for the faults its protocol handles and breaks_under"), lines
    assert not run.stdout


@pytest.mark.parametrize("declaration, said", [
    ('tolerates = frozenset({"loss"}); breaks_under = frozenset({"loss", "duplication"})',
     'quiet declares {"loss"} both in tolerates and in breaks_under'),
    ('breaks_under = frozenset({"reorder"})', "quiet declares unknown faults ['reorder'] in breaks_under"),
])
def test_a_bad_fault_declaration_is_refused(tmp_path, declaration, said):
    """A fault in both sets, and a name that is no fault, are refused on the field ``spec``."""
    from ordercheck.checker.api.errors import InputError

    (tmp_path / "quiet.py").write_text(QUIET_SPEC.format(declaration=declaration))
    with pytest.raises(InputError) as err:
        model_from_dict({"spec": str(tmp_path / "quiet.py"), "constants": {"peers": 2}}, str(tmp_path / "m.toml"))
    assert err.value.field == "spec" and err.value.message.startswith(said), err.value.message


# -- the fairness warning --------------------------------------------------------------


def fairness_notes(result) -> list[str]:
    return [w for w in result.warnings if w.startswith("fairness:")]


def test_a_looping_spec_without_fairness_is_warned_naming_the_loop():
    result = check_model(load_model(EXAMPLE / "models" / "token-ring-3-unfair.toml"), QUIET)
    (note,) = fairness_notes(result)
    assert "token_ring declares no fairness" in note and "eventual_delivery" in note
    assert "a passes the token to b; b takes the token from a" in note  # the loop's actions
    assert "docs/howto/fairness-and-liveness.md" in note
    assert not fairness_notes(check_model(load_model(RING), QUIET))  # declared: no warning


def test_the_warning_names_a_loop_even_when_no_property_fails_on_it():
    model = model_from_dict({"spec": str(EXAMPLE / "token_ring.py"), "constants": {"sends": 0, "fair": False},
                             "expect": {"eventual_delivery": "holds"}})
    result = check_model(model, QUIET)
    assert result.properties["eventual_delivery"].status == "holds"
    (note,) = fairness_notes(result)
    assert "passes the token" in note


def test_no_warning_without_a_loop_or_an_eventually_property():
    acyclic = check_model(load_model(ROOT / "models" / "fifo-3.toml"), QUIET)
    assert not fairness_notes(acyclic)
    safety_only = model_from_dict({"spec": str(EXAMPLE / "token_ring.py"), "constants": {"fair": False, "senders": "a"},
                                   "expect": {"total": "holds"}})
    assert not fairness_notes(check_model(safety_only, QUIET))


# -- spec errors: one line, exit 5 ------------------------------------------------------

BUGGY_RING = '''
import importlib.util
spec = importlib.util.spec_from_file_location("ring_base", {path!r})
base = importlib.util.module_from_spec(spec)
spec.loader.exec_module(base)


class Buggy(base.TokenRing):
    name = "buggy_ring"

    def on_send(self, state, p, mid, dmask):
        if self.own(state).number == 1:
            return [][1]  # the second broadcast indexes an empty list
        return super().on_send(state, p, mid, dmask)
'''


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_exception_in_a_spec_is_one_line_with_action_and_trace_exit_5(tmp_path, workers):
    (tmp_path / "buggy.py").write_text(BUGGY_RING.format(path=str(EXAMPLE / "token_ring.py")))
    model = tmp_path / "m.toml"
    model.write_text('spec = "buggy.py:Buggy"\n[constants]\nsenders = "ab"\n[expect]\ntotal = "holds"\n')
    run = cli("check", model, "--workers", workers, "--quiet", "--json", tmp_path / "out.json")
    assert run.returncode == EXIT_SPEC == 5
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    line = lines[0]
    assert line.startswith(f"ordercheck: spec error: {model}: spec buggy_ring raised IndexError: list index out of range")
    assert "at buggy.py:13" in line and "in action b broadcasts b1 (next_states)" in line
    assert line.endswith("taken from the state after 3 steps: a broadcasts a1; a passes the token to b; b takes the token from a")
    assert not (tmp_path / "out.json").exists()


def test_a_spec_of_its_own_next_states_names_the_label_it_was_computing(tmp_path):
    (tmp_path / "boom.py").write_text(textwrap.dedent('''
        from ordercheck.checker import Property, Spec

        class Boom(Spec):
            name = "boom"

            def init_states(self):
                return [(0, 0)]

            def next_states(self, s):
                a, b = s
                out = []
                if a < 3:
                    label = ("inc_a", a)
                    out.append((label, (a + 1, b)))
                if b < 2:
                    label = ("inc_b", b)
                    out.append((label, (a, b + 1 + 1 // (a - 2))))
                return out

            def properties(self):
                return [Property.always("ok", lambda s: None), Property.always("picky", lambda s: None if s != (3, 1) else {}["x"])]
    '''))
    (tmp_path / "m.toml").write_text('spec = "boom.py"\n[expect]\nok = "holds"\n')
    run = cli("check", tmp_path / "m.toml", "--quiet")
    assert run.returncode == 5
    assert "raised ZeroDivisionError" in run.stderr and "in action inc_b(0) (next_states)" in run.stderr
    assert run.stderr.strip().endswith("after 2 steps: inc_a(0); inc_a(1)")


def test_a_property_that_raises_is_named(tmp_path):
    (tmp_path / "p.py").write_text(textwrap.dedent('''
        from ordercheck.checker import Property, Spec

        class Picky(Spec):
            name = "picky"

            def init_states(self):
                return [0]

            def next_states(self, s):
                return [(("inc",), s + 1)] if s < 3 else []

            def properties(self):
                return [Property.always("even", lambda s: None if s < 2 else {}["nope"])]
    '''))
    (tmp_path / "m.toml").write_text('spec = "p.py"\n')
    run = cli("check", tmp_path / "m.toml", "--quiet")
    assert run.returncode == 5
    assert "raised KeyError: 'nope'" in run.stderr and "in action inc() (property even)" in run.stderr
    assert run.stderr.strip().endswith("after 1 step: inc()")


# -- refusals that say what to do ---------------------------------------------------------


def test_a_builtin_spec_without_template_names_the_files_and_the_guide(run_cli, tmp_path, monkeypatch):
    import ordercheck.tla.export

    monkeypatch.setattr(ordercheck.tla.export, "adapter_for", lambda name: None)
    out = run_cli("export-tla", ROOT / "models" / "fifo-3.toml", "-o", tmp_path)
    assert out.exit_code == 2
    assert "tla/templates/fifo.tla.j2" in out.output and "tla/adapters/fifo.py" in out.output
    assert "docs/howto/export-tla.md" in out.output


def test_reduction_notes_name_the_guide_and_are_printed_once_per_run(tmp_path, run_cli):
    models = [ROOT / "models" / "lamport-2.toml", ROOT / "models" / "lamport-3.toml"]
    out = tmp_path / "r.json"
    res = run_cli("check", *models, "--json", out)  # (--quiet on a suite would count the warnings in one line)
    assert res.exit_code == 0
    # Lamport's tie-break by process id rules symmetry out, in both runs (specs/peer_reductions.py).
    notes = [ln for ln in res.output.splitlines() if "warning: symmetry" in ln]
    assert len(notes) == 1 and "docs/howto/reductions.md" in notes[0]
    for record in json.loads(out.read_text()):  # each result still records its own notes
        assert any("symmetry" in w and "docs/howto/reductions.md" in w for w in record["warnings"])


# -- pytest as a script --------------------------------------------------------------------


def test_the_pytest_script_finds_the_tests_package():
    script = Path(sys.executable).with_name("pytest")
    if not script.exists():
        pytest.skip("no pytest script beside this Python")
    run = subprocess.run(
        [str(script), "-q", "-p", "no:cacheprovider", "tests/test_cli.py::test_list_shows_specs_and_models"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


# A spec's exception on a Spark executor: tests/test_spark.py (in the test
# session's Spark context).
