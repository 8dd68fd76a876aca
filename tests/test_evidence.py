"""Non-vacuity, enforced: every "holds" of an ordering property comes with evidence.

A built-in model that expects an ordering property to hold must show that its
configuration could break it (``checker/loading/evidence.py``, ``docs/reference/evidence.md``): a sibling
model on the same configuration with ablation flags switched that expects the property
violated, or a ``sometimes`` witness of the situation the property constrains, checked
and expected to hold in the model itself. Loading enforces the rule for every model
(built-in or a user's, below); ``check --with-evidence`` runs the mutants. The tests of
the built-in models read the model files only; that every model gets the verdicts it expects is
``ordercheck check models/`` (and ``tests/test_causal_seeds.py``,
``tests/test_seed_total_order.py`` for the seeds' claims).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ordercheck.checker.api.model import Model
from ordercheck.checker.loading.evidence import ORDERING
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.specs.witnesses import WITNESSES_FOR, causal_race, fifo_race, total_race
from tests.conftest import MODELS
from tests.histories import history

PATHS = sorted(MODELS.glob("*.toml")) + sorted((MODELS / "large").glob("*.toml"))  # large: run on demand
_LOADED: dict[Path, Model] = {}


def model(path: Path) -> Model:
    if path not in _LOADED:
        _LOADED[path] = load_model(path)
    return _LOADED[path]


def claims() -> list[tuple[Path, str]]:
    """Every (model, ordering property) a built-in model expects to hold."""
    out = []
    for path in PATHS:
        for prop, verdict in model(path).expect.items():
            if prop in ORDERING and verdict == "holds":
                out.append((path, prop))
    return out


CLAIMS = claims()


def configuration(m: Model) -> dict[str, Any]:
    """The model's constants that say what runs: every constant but the spec's ablation
    flags and the constants that only shape an ablation (``ablation_parameters``)."""
    cls = type(m.spec)
    skip = {*cls.ablations(), *getattr(cls, "ablation_parameters", ())}
    return {k: v for k, v in m.constants.items() if k not in skip}


def send_plan(m: Model) -> tuple:
    """Who may send what: a peer spec's fixed plan, or its destination choices and count."""
    spec: Any = m.spec
    return (getattr(spec, "plan", None), getattr(spec, "choices", None), getattr(spec, "sends", None))


def same_configuration(a: Model, b: Model) -> str | None:
    """``None`` when ``b`` runs ``a``'s configuration (same spec: equal constants but the
    ablations; another spec: equal peers, send plan and shared constants), else why not."""
    ca, cb = configuration(a), configuration(b)
    if a.spec_name == b.spec_name:
        if ca != cb:
            diff = sorted(k for k in ca.keys() | cb.keys() if ca.get(k) != cb.get(k))
            return f"constants differ beyond ablations: {', '.join(diff)}"
        return None
    shared = ca.keys() & cb.keys()
    if "peers" not in shared:
        return "another spec without a shared peers constant"
    diff = sorted(k for k in shared if ca[k] != cb[k])
    if diff:
        return f"shared constants differ: {', '.join(diff)}"
    if send_plan(a) != send_plan(b):
        return "the two specs send different messages"
    return None


def test_there_are_claims_to_check():
    """The parametrised test below must not pass by having nothing to check."""
    assert len(CLAIMS) > 100
    assert {prop for _path, prop in CLAIMS} == set(ORDERING)


@pytest.mark.parametrize("path,prop", CLAIMS, ids=[f"{p.stem}-{prop}" for p, prop in CLAIMS])
def test_every_holds_has_evidence(path: Path, prop: str):
    m = model(path)
    entry = m.evidence.get(prop)
    assert entry, f"{path.name} expects {prop} to hold but gives no [evidence] that it could fail here"
    (kind, name), = entry.items()
    if kind == "mutant":
        sibling_path = path.parent / name
        assert sibling_path.is_file(), f"{path.name}: evidence.{prop} names {name}, which does not exist"
        sibling = model(sibling_path)
        why = same_configuration(m, sibling)
        assert why is None, f"{path.name}: {name} is not on the same configuration: {why}"
        assert sibling.expect.get(prop) == "violated", f"{path.name}: {name} does not expect {prop} violated"
    else:
        assert name in WITNESSES_FOR.get(prop, ()), f"{path.name}: {name} is not a witness for {prop}"
        witness = m.spec.property_map()[name]
        assert witness.kind == "sometimes"
        assert m.expect.get(name) == "holds", f"{path.name}: witness {name} is not expected to hold"


def test_a_sibling_on_another_configuration_is_refused():
    """The configuration comparison can fail: a mutant with one more peer, a constant
    beyond the ablations, or another spec sending other messages."""
    base = model(MODELS / "lamport-2.toml")
    other = model(MODELS / "lamport-2-duplicating.toml")
    assert same_configuration(base, other) == "constants differ beyond ablations: duplicates"
    mutant = model(MODELS / "lamport-unordered.toml")
    assert same_configuration(base, mutant) is None  # fifo_links is an ablation
    assert "constants differ" in (same_configuration(model(MODELS / "skeen-4.toml"), model(MODELS / "skeen-3.toml")) or "")
    assert same_configuration(model(MODELS / "bss-3.toml"), model(MODELS / "fifo-3.toml")) is not None


# -- the loader validates the table ---------------------------------------------------------------

GOOD = """\
spec = "bss"
[constants]
peers = 3
script = { a = ["bc"], b = ["ac"] }
[check]
properties = ["causal", "causal_race", "eventual_delivery"]
[expect]
causal = "holds"
causal_race = "holds"
eventual_delivery = "holds"
"""

BAD = [
    ("evidence = 3\n", "evidence: expected a table [evidence]"),
    ("[evidence]\ncausal = \"bss-3.toml\"\n", "evidence.causal: expected one of"),
    ("[evidence]\ncausal = { proof = \"x\" }\n", "evidence.causal: expected one of"),
    ("[evidence]\ncausal = { mutant = \"a.toml\", witness = \"causal_race\" }\n", "evidence.causal: expected one of"),
    ("[evidence]\ncausal = { mutant = \"nowhere.toml\" }\n", "evidence.causal.mutant: no model file 'nowhere.toml' beside this one"),
    ("[evidence]\ncausal = { mutant = \"nowhere\" }\n", "evidence.causal.mutant: expected a model file name ending in .toml"),
    ("[evidence]\ncausal = { mutant = \"m.toml\" }\n", "evidence.causal.mutant: names this model itself"),
    ("[evidence]\ncausal = { witness = \"fifo\" }\n", "evidence.causal.witness: fifo is an always property"),
    ("[evidence]\ncausal = { witness = \"nope\" }\n", "evidence.causal.witness: the spec has no property 'nope'"),
    ("[evidence]\ncausal = { witness = \"total_race\" }\n", "evidence.causal.witness: a witness must be checked"),
    ("[evidence]\neventual_delivery = { witness = \"causal_race\" }\n", None),
    ("[evidence]\nfifo = { witness = \"fifo_race\" }\n", "evidence.fifo: fifo is not expected to hold here"),
    ("[evidence]\nlamport = { witness = \"fifo_race\" }\n", "evidence.lamport: the spec has no property 'lamport'"),
    ("[evidence]\ncausal = { witness = 7 }\n", "evidence.causal.witness: expected a non-empty string"),
]


@pytest.mark.parametrize("extra,message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_evidence_is_one_line_and_exit_2(tmp_path, run_cli, extra, message):
    path = tmp_path / "m.toml"
    path.write_text(GOOD + extra if extra.startswith("[") else extra + GOOD, encoding="utf-8")
    result = run_cli("check", path)
    if message is None:  # evidence may back any property expected to hold
        assert result.exit_code == 0, result.output
        assert load_model(path).evidence == {"eventual_delivery": {"witness": "causal_race"}}
        return
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert lines[0].startswith(f"ordercheck: error: {path}: {message}")


def test_good_evidence_is_loaded(tmp_path):
    sibling = GOOD.replace("script = ", "condition_b = false\nscript = ").replace('causal = "holds"', 'causal = "violated"')
    (tmp_path / "sibling.toml").write_text(sibling, encoding="utf-8")
    path = tmp_path / "m.toml"
    path.write_text(GOOD + '[evidence]\ncausal = { mutant = "sibling.toml" }\n', encoding="utf-8")
    assert load_model(path).evidence == {"causal": {"mutant": "sibling.toml"}}


# -- the witnesses on hand-written histories ---------------------------------------------------------


def test_fifo_race_needs_a_second_send_before_the_first_is_known_delivered():
    race = history("ab", {"a": ["send a1", "send a2"], "b": ["recv a1", "recv a2"]}, {"a1": "b", "a2": "b"})
    assert fifo_race(race) == "a sent a2 to b while its earlier a1, also addressed to b, was not yet known to be delivered there"
    # b's delivery of a1 happened before a sent a2 (b told a with b1): no race.
    told = history(
        "ab", {"a": ["send a1", "recv b1", "send a2"], "b": ["recv a1", "send b1", "recv a2"]},
        {"a1": "b", "a2": "b", "b1": "a"},
    )
    assert fifo_race(told) is None
    # Different destinations: nothing to order.
    apart = history("abc", {"a": ["send a1", "send a2"]}, {"a1": "b", "a2": "c"})
    assert fifo_race(apart) is None


def test_causal_race_needs_a_chain_across_senders_to_one_destination():
    chain = history(
        "abc", {"a": ["send a1"], "b": ["recv a1", "send b1"]}, {"a1": "bc", "b1": "c"},
    )
    assert causal_race(chain) is not None and causal_race(chain).startswith("b1 is sent to c while a1")
    # c delivered a1 and told b (with c1) before b sent b1: the chain cannot overtake.
    safe = history(
        "abc",
        {"a": ["send a1"], "c": ["recv a1", "send c1", "recv b1"], "b": ["recv c1", "send b1"]},
        {"a1": "c", "c1": "b", "b1": "c"},
    )
    assert causal_race(safe) is None
    # One sender only: that is fifo_race's situation, not this one.
    same = history("ab", {"a": ["send a1", "send a2"]}, {"a1": "b", "a2": "b"})
    assert causal_race(same) is None


def test_total_race_needs_two_peers_delivering_two_concurrent_messages():
    both = history(
        "abcd", {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"], "d": ["recv b1", "recv a1"]},
        {"a1": "cd", "b1": "cd"},
    )
    assert total_race(both) == "peers c and d both delivered a1 and b1, which are concurrent (neither happened before the other)"
    one = history(
        "abcd", {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"], "d": ["recv b1"]},
        {"a1": "cd", "b1": "cd"},
    )
    assert total_race(one) is None
    ordered = history(
        "abcd",
        {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv a1", "recv b1"], "d": ["recv a1", "recv b1"]},
        {"a1": "bcd", "b1": "cd"},
    )
    assert total_race(ordered) is None  # a1 happened before b1: causality, not total order, orders them


# -- every model's mutants, built-in or not, are checked when it loads ------------------------------

BASE = """\
spec = "SPEC"
[constants]
peers = 3
script = { a = ["bc"], b = ["ac"] }
[check]
properties = ["causal", "fifo"]
[expect]
causal = "holds"
fifo = "holds"
[evidence]
causal = { mutant = "mut.toml" }
"""

MUTANT = """\
spec = "SPEC"
[constants]
peers = 3
script = { a = ["bc"], b = ["ac"] }
condition_b = false
[expect]
causal = "violated"
"""

USER_SPEC = """\
from ordercheck.specs.bss import BSS
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import CAUSAL_RACE


class Mine(BSS):
    name = "mine"

    def properties(self) -> list:
        return [*LIBRARY, CAUSAL_RACE]  # one line: a library witness in a spec of one's own
"""


def project(tmp_path: Path, base: str = BASE, mutant: str = MUTANT, spec: str = "bss") -> Path:
    """A user's directory: models ``m.toml`` and ``mut.toml`` (``SPEC`` replaced by
    ``spec``) and a spec file ``mine.py``; returns the path of ``m.toml``."""
    (tmp_path / "mine.py").write_text(USER_SPEC, encoding="utf-8")
    (tmp_path / "mut.toml").write_text(mutant.replace("SPEC", spec), encoding="utf-8")
    path = tmp_path / "m.toml"
    path.write_text(base.replace("SPEC", spec), encoding="utf-8")
    return path


FIELD = "evidence.causal.mutant: mut.toml"
WRONG_MUTANTS = [
    ("channel", MUTANT.replace("condition_b = false\n", 'condition_b = false\nchannel = "fifo"\n'),
     f"{FIELD} differs in constant 'channel' ('unordered' vs 'fifo'); a mutant may change only ablation flags "
     "(condition_a, condition_b)"),
    ("peers", MUTANT.replace("peers = 3", "peers = 4"), f"{FIELD} differs in constant 'peers' (3 vs 4)"),
    ("script", MUTANT.replace('b = ["ac"]', 'b = ["c"]'), f"{FIELD} differs in constant 'script'"),
    ("update", MUTANT.replace("condition_b = false\n", 'condition_b = false\nupdate = "increment"\n'), f"{FIELD} differs in constant 'update' ('max' vs 'increment')"),
    ("expects-holds", MUTANT.replace('causal = "violated"', 'causal = "holds"'),
     f"""{FIELD} expects causal 'holds'; a mutant must expect causal = "violated\""""),
    ("expects-nothing", MUTANT.replace('causal = "violated"', 'fifo = "holds"'),
     f"{FIELD} has no expectation for causal"),
    ("no-flag", MUTANT.replace("condition_b = false\n", ""), f"{FIELD} switches no ablation flag (condition_a, condition_b)"),
    ("other-spec", MUTANT.replace('spec = "SPEC"', 'spec = "ses"').replace("condition_b = false\n", ""),
     f"{FIELD} checks spec 'ses', not 'bss'"),
    ("user-spec", MUTANT.replace('spec = "SPEC"', 'spec = "mine.py"'), f"{FIELD} checks spec "),
    ("unloadable", MUTANT.replace("peers = 3", "peers = 1"), f"{FIELD} cannot be loaded ("),
]


@pytest.mark.parametrize("mutant,message", [w[1:] for w in WRONG_MUTANTS], ids=[w[0] for w in WRONG_MUTANTS])
def test_a_wrong_mutant_is_exit_2_naming_the_field(tmp_path, run_cli, mutant, message):
    """A user's model whose mutant is on another channel, other constants, another spec,
    expects the property to hold (or nothing of it), or is the configuration again: one
    line naming the model file and the field, exit 2, for ``check`` and ``list``-like loads."""
    path = project(tmp_path, mutant=mutant)
    result = run_cli("check", path)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith(f"ordercheck: error: {path}: {message}"), lines[0]


def test_a_good_mutant_loads_for_a_builtin_and_a_user_spec(tmp_path, run_cli):
    path = project(tmp_path)
    assert run_cli("check", path, "--quiet").exit_code == 0
    # The same user spec named by two spellings of its file is the same spec.
    other = tmp_path / "user"
    other.mkdir()
    path = project(other, BASE.replace('"SPEC"', '"mine.py"'), MUTANT.replace('"SPEC"', f'"{other / "mine.py"}"'))
    result = run_cli("check", path, "--quiet")
    assert result.exit_code == 0, result.output


def test_skeen_may_change_an_ablation_parameter_only(tmp_path):
    """``mutant_final`` (Skeen.ablation_parameters) only shapes the take_max ablation; the
    rule is the spec's declaration, not a list in the loader."""
    from ordercheck.specs.skeen import Skeen

    assert Skeen.ablation_parameters == ("mutant_final",)
    model = load_model(MODELS / "skeen-4.toml")
    assert model.evidence["total_global"] == {"mutant": "skeen-mutant-first.toml"}
    assert load_model(MODELS / "skeen-mutant-first.toml").constants["mutant_final"] == "first"


def test_a_mutant_naming_its_model_back_loads_once(tmp_path, run_cli):
    """A mutant's own evidence is not followed (no chains, no cycles): the model loads; the
    mutant, loaded itself, has its own evidence checked (here: wrong)."""
    back = MUTANT.replace('causal = "violated"', 'causal = "violated"\nfifo = "holds"') + \
        '[evidence]\nfifo = { mutant = "m.toml" }\n'
    path = project(tmp_path, mutant=back)
    assert run_cli("check", path, "--quiet").exit_code == 0
    result = run_cli("check", tmp_path / "mut.toml")
    assert result.exit_code == 2
    assert "evidence.fifo.mutant: m.toml expects fifo 'holds'" in result.output, result.output


WRONG_WITNESSES = [
    ('causal = { witness = "total_race" }', "total_race", "evidence.causal.witness: total_race is not a witness for "
     "causal (its witnesses: causal_race)"),
    ('integrity = { witness = "fifo_race" }', "fifo_race", "evidence.integrity.witness: fifo_race is not a witness for "
     "integrity (it has no witness; give a mutant)"),
]


@pytest.mark.parametrize("entry,witness,message", WRONG_WITNESSES, ids=["total-for-causal", "fifo-for-integrity"])
def test_a_library_witness_backs_only_what_it_stands_for(tmp_path, run_cli, entry, witness, message):
    path = tmp_path / "m.toml"
    path.write_text(
        'spec = "bss"\n[constants]\npeers = 3\nscript = { a = ["bc"], b = ["ac"] }\n'
        f'[expect]\ncausal = "holds"\nintegrity = "holds"\n{witness} = "holds"\n[evidence]\n{entry}\n',
        encoding="utf-8",
    )
    result = run_cli("check", path)
    assert result.exit_code == 2 and result.output.strip().endswith(message), result.output


def test_a_user_spec_backs_its_holds_with_a_library_witness(tmp_path, run_cli):
    """A spec of the user's own lists a witness of :mod:`ordercheck.specs.witnesses` with one line and
    names it as the evidence: exit 0, the witness reached."""
    (tmp_path / "mine.py").write_text(USER_SPEC, encoding="utf-8")
    path = tmp_path / "m.toml"
    path.write_text(
        'spec = "mine.py"\n[constants]\npeers = 3\nscript = { a = ["bc"], b = ["ac"] }\n'
        '[expect]\ncausal = "holds"\ncausal_race = "holds"\n[evidence]\ncausal = { witness = "causal_race" }\n',
        encoding="utf-8",
    )
    result = run_cli("check", path, "--with-evidence")
    assert result.exit_code == 0, result.output
    assert re.search(r"^  causal_race +reached +expected reached +ok$", result.output, re.M), result.output
    assert f"{path}: causal <- witness causal_race: reached  ok" in result.output
    # Without the witness in its properties, the entry is refused and says how to offer it.
    (tmp_path / "mine.py").write_text(USER_SPEC.replace(", CAUSAL_RACE]", "]"), encoding="utf-8")
    (tmp_path / "plain.py").write_text((tmp_path / "mine.py").read_text(), encoding="utf-8")
    path.write_text(path.read_text().replace("mine.py", "plain.py"), encoding="utf-8")
    result = run_cli("check", path)
    assert result.exit_code == 2
    assert "expect.causal_race: mine has no property 'causal_race' (it has: fifo, " in result.output
    assert result.output.strip().endswith(
        "(a spec offers the library's witnesses by listing ordercheck.specs.witnesses.WITNESSES in its properties())")


# -- check --with-evidence runs the mutants ---------------------------------------------------------


def test_with_evidence_runs_each_mutant_once_and_passes_when_it_violates(tmp_path, run_cli):
    path = project(tmp_path)
    second = tmp_path / "m2.toml"
    second.write_text(path.read_text(), encoding="utf-8")
    junit = tmp_path / "out.xml"
    # (no --quiet: on several models it would leave out the evidence lines that are ok)
    result = run_cli("check", path, second, tmp_path / "mut.toml", "--with-evidence", "--junit", junit)
    assert result.exit_code == 0, result.output
    assert result.output.count(f"{tmp_path / 'mut.toml'}: bss,") == 1  # named and twice evidence: run once
    assert "evidence: 2 of 2 shown" in result.output
    assert f"{path}: causal <- mutant mut.toml: violated  ok" in result.output
    suite = ET.parse(junit).getroot().find("testsuite[@name='evidence']")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "0"
    assert [c.get("name") for c in suite.iter("testcase")] == ["evidence of causal"] * 2
    # Without the flag, the mutant is loaded and checked as a file, but not run.
    plain = run_cli("check", path, "--quiet")
    assert plain.exit_code == 0 and "mut.toml: bss" not in plain.output and "evidence:" not in plain.output


def test_with_evidence_fails_when_a_mutant_does_not_violate(tmp_path, run_cli):
    """condition_a off leaves causal intact on this script: the mutant expects a violation
    it does not have, and the evidence line and the JUnit test case say so (exit 1)."""
    path = project(tmp_path, mutant=MUTANT.replace("condition_b", "condition_a"))
    assert run_cli("check", path, "--quiet").exit_code == 0  # the model alone is as expected
    junit = tmp_path / "out.xml"
    result = run_cli("check", path, "--quiet", "--with-evidence", "--junit", junit)
    assert result.exit_code == 1, result.output
    assert "evidence: 0 of 1 shown" in result.output
    assert f"{path}: causal <- mutant mut.toml: holds  UNEXPECTED" in result.output
    assert "mut.toml does not violate causal (holds): the evidence that causal could fail here is not shown" \
        in result.output
    case = ET.parse(junit).getroot().find("testsuite[@name='evidence']/testcase")
    assert case is not None and case.get("classname") == "m" and case.get("name") == "evidence of causal"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "causal <- mutant mut.toml: holds (wanted violated)"


def test_judging_the_evidence_reads_the_mutants_verdict_on_the_property(tmp_path):
    """The judgement itself, apart from the mutant's own [expect]: violated is shown, holds
    is not (1), unknown is a bound (3); a witness is shown when the model reaches it."""
    from ordercheck.checker.api.evidence import evidence_exit_code
    from ordercheck.checker.api.result import PropertyResult, Result
    from ordercheck.checker.loading.evidence import judge_evidence

    path = project(tmp_path)
    model = load_model(path)
    model.evidence["fifo"] = {"witness": "fifo_race"}

    def result(name: str, **statuses: str) -> Result:
        props = {k: PropertyResult(k, "always", v) for k, v in statuses.items()}  # type: ignore[arg-type]
        return Result(model=name, spec="bss", constants={}, engine="local", reductions={}, properties=props)

    for mutant, witness, code in (("violated", "holds", 0), ("holds", "holds", 1), ("unknown", "holds", 3),
                                  ("violated", "violated", 1), ("violated", "unknown", 3)):
        results = {path.resolve(): result("m", fifo_race=witness),
                   (tmp_path / "mut.toml").resolve(): result("mut", causal=mutant)}
        checks = judge_evidence([model], results)
        assert [(c.prop, c.kind, c.status) for c in checks] == [("causal", "mutant", mutant), ("fifo", "witness", witness)]
        assert evidence_exit_code(checks) == code, (mutant, witness)
