"""Non-vacuity, enforced: every "holds" of an ordering property comes with evidence.

A built-in model that expects an ordering property to hold must show that its
configuration could break it (``checker/loading/evidence.py``, ``docs/reference/evidence.md``): a sibling
model on the same configuration (an ablation, or a weaker protocol on the same script)
that expects the property violated, or a ``sometimes`` witness of the situation the
property constrains, checked and expected to hold in the model itself. The tests here
read the model files only; that every model gets the verdicts it expects is
``ordercheck check models/`` (and ``tests/test_causal_seeds.py``,
``tests/test_seed_total_order.py`` for the seeds' claims).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checker.api.model import Model
from checker.loading.evidence import ORDERING
from checker.loading.modelfile import load_model
from specs.witnesses import WITNESSES_FOR, causal_race, fifo_race, total_race
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
    (tmp_path / "sibling.toml").write_text(GOOD, encoding="utf-8")
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
