"""The causal seed protocols: worked examples of the seeds, models, ablations.

Specs: BSS (``specs/bss.py``), SES (``specs/ses.py``), matrix clocks
(``specs/matrix.py``) and Garg's synchronous ordering (``specs/synchronous.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ordercheck.checker import ConstantError
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.specs.bss import BSS
from ordercheck.specs.holdback import BUFFERS, LOCAL
from ordercheck.specs.matrix import Matrix
from ordercheck.specs.ses import SES
from ordercheck.specs.synchronous import Synchronous

MODELS = Path(__file__).resolve().parent.parent / "models"
OURS = sorted(
    p for prefix in ("bss", "ses", "matrix", "synchronous") for p in MODELS.glob(f"{prefix}-*.toml")
)
A, B, C = 0, 1, 2


def enabled(spec, state) -> list[tuple]:
    return [label for label, _ in spec.next_states(state)]


def take(spec, state, label: tuple):
    """The successor of ``state`` by the action labelled ``label``, which must be enabled."""
    for lab, nxt in spec.next_states(state):
        if lab == label:
            return nxt
    raise AssertionError(f"{label} is not enabled; enabled: {enabled(spec, state)}")


def of_peer(labels: list[tuple], p: int) -> list[tuple]:
    return [lab for lab in labels if lab[0] in ("receive", "buffer", "deliver", "send", "signal") and lab[1] == p]


def run(data: dict):
    return check_model(model_from_dict(data), Options(progress=False))


# -- the seeds' worked examples ------------------------------------------------------------


def test_bss_three_process_example():
    """The bss seed's example, as it finally settles it: P1 broadcasts m1 with [1,0,0];
    P2 delivers it and broadcasts m2 with [1,1,0]; m2 reaches P3 first. Condition (a)
    holds (V_m2[2] = 0 + 1), (b) fails (V_m2[1] = 1 > 0): m2 is buffered. m1 arrives and
    is delivered; then m2 is delivered. Here P1, P2, P3 are a, b, c."""
    spec = BSS(peers=3, script={"a": ["bc"], "b": ["ac"]})
    a1, b1 = 0, 1
    s = spec.init_states()[0]
    s = take(spec, s, ("send", A, a1, 0b110))
    s = take(spec, s, ("receive", B, a1))
    s = take(spec, s, ("send", B, b1, 0b101))
    assert spec.describe(s)["in_transit"][-1] == {"from": "b", "to": "c", "message": "b1", "data": (1, 1, 0)}
    assert ("receive", C, b1) not in enabled(spec, s)
    s = take(spec, s, ("buffer", C, b1))
    assert s[BUFFERS][C] == ((b1, (1, 1, 0)),) and s[LOCAL][C] == (0, 0, 0)
    assert ("deliver", C, b1) not in enabled(spec, s), "b1 must wait for a1"
    s = take(spec, s, ("receive", C, a1))
    assert s[LOCAL][C] == (1, 0, 0)
    # c now delivers the held-back b1 before doing anything else.
    assert of_peer(enabled(spec, s), C) == [("deliver", C, b1)]
    s = take(spec, s, ("deliver", C, b1))
    assert s[LOCAL][C] == (1, 1, 0) and s[BUFFERS][C] == ()
    assert spec.history(s).deliveries(C) == [a1, b1]


def test_bss_example_without_condition_b_delivers_m2_first():
    spec = BSS(peers=3, script={"a": ["bc"], "b": ["ac"]}, condition_b=False, update="increment")
    s = spec.init_states()[0]
    for label in [("send", A, 0, 0b110), ("receive", B, 0), ("send", B, 1, 0b101), ("receive", C, 1), ("receive", C, 0)]:
        s = take(spec, s, label)
    assert spec.history(s).deliveries(C) == [1, 0]


@pytest.mark.parametrize("cls", [BSS, SES, Matrix])
def test_whatsapp_question_is_seen_before_the_answer(cls):
    """Bob asks "What time?" (b1 to Alice and Charlie); Alice receives it and answers
    "Noon" (a1 to Bob and Charlie). However the answer travels, Charlie delivers the
    question first: the answer is held back until the question arrives."""
    spec = cls(peers=3, destinations="subsets", script={"a": ["bc"], "b": ["ac"]})
    question, answer = 1, 0  # b1 and a1 (one send each: stride 1)
    s = spec.init_states()[0]
    s = take(spec, s, ("send", B, question, 0b101))
    s = take(spec, s, ("receive", A, question))
    s = take(spec, s, ("send", A, answer, 0b110))
    assert ("receive", C, answer) not in enabled(spec, s)
    s = take(spec, s, ("buffer", C, answer))
    assert ("deliver", C, answer) not in enabled(spec, s)
    s = take(spec, s, ("receive", C, question))
    s = take(spec, s, ("deliver", C, answer))
    assert spec.history(s).deliveries(C) == [question, answer]


@pytest.mark.parametrize("spec_name", ["bss", "ses", "matrix", "fifo"])
def test_whatsapp_answer_before_question_is_impossible_except_in_naive_fifo(spec_name):
    """Exhaustively: no run of the causal protocols lets Charlie see the answer first;
    the naive per-peer FIFO queues of specs/fifo.py do."""
    constants = {"peers": 3, "destinations": "subsets", "script": {"a": ["bc"], "b": ["ac"]}}
    result = run({"spec": spec_name, "constants": constants, "check": {"properties": ["causal"]}})
    verdict = result.properties["causal"]
    if spec_name == "fifo":
        assert verdict.status == "violated"
        # The script is symmetric; the shortest run has a ask and b answer.
        assert verdict.explanation == (
            "c delivered b1 while a1, which happened before it, had not been delivered there: "
            "a sent a1 to b,c, b received a1, b sent b1 to a,c, c received b1"
        )
    else:
        assert verdict.status == "holds"


def test_garg_causal_chat_reply_never_overtakes_the_query():
    """Garg's causal chat: P0 sends a query to P1 and P2, P1 replies to both; with the
    matrix algorithm the reply cannot reach P2 before the query."""
    constants = {"peers": 3, "destinations": "subsets", "script": {"a": ["bc"], "b": ["ac"]}}
    assert run({"spec": "matrix", "constants": constants, "check": {"properties": ["causal"]}}).properties[
        "causal"
    ].status == "holds"
    mutant = run(
        {"spec": "matrix", "constants": {**constants, "check_others": False},
         "check": {"properties": ["causal", "eventual_delivery"]}}
    )
    # Without the k != j test the reply is accepted first and the query starves.
    assert mutant.properties["eventual_delivery"].status == "violated"
    assert mutant.properties["eventual_delivery"].explanation == (
        "a1 to c is never delivered: a sent a1 to b,c, and the run ends without c delivering or dropping it"
    )


# -- SES details ------------------------------------------------------------------------------


def test_ses_buffer_carries_pairs_and_blocks_until_seen():
    spec = SES(peers=3, script={"a": ["c", "b"], "b": ["c"]})
    a1, a2, b1 = 0, 1, 2  # stride 2: a's messages 0, 1; b's 2
    s = spec.init_states()[0]
    s = take(spec, s, ("send", A, a1, 0b100))
    s = take(spec, s, ("send", A, a2, 0b010))
    # a2 carries a's buffer: the pair (c, t_a1).
    _clock, pairs = s[LOCAL][A]
    assert pairs == ((), (2, 0, 0), (1, 0, 0))
    s = take(spec, s, ("receive", B, a2))
    assert s[LOCAL][B][1][C] == (1, 0, 0), "b merged (c, t_a1)"
    s = take(spec, s, ("send", B, b1, 0b100))
    s = take(spec, s, ("buffer", C, b1))
    s = take(spec, s, ("receive", C, a1))
    s = take(spec, s, ("deliver", C, b1))
    assert spec.history(s).deliveries(C) == [a1, b1]


def test_ses_multicast_copies_carry_the_other_destinations():
    spec = SES(peers=3, destinations="subsets")
    clock, pairs = spec.init_local(A)
    (clock2, after), data = spec.stamp((clock, pairs), A, (B, C))
    assert after == ((), (1, 0, 0), (1, 0, 0))
    assert data == (((1, 0, 0), ((), (), (1, 0, 0))), ((1, 0, 0), ((), (1, 0, 0), ())))


# -- synchronous ordering -----------------------------------------------------------------------


def test_synchronous_small_message_needs_permission_and_big_needs_ack():
    spec = Synchronous(peers=2, sends=1)
    s = spec.init_states()[0]
    assert ("send", A, 0, 0b10) not in enabled(spec, s), "a small message needs permission first"
    s = take(spec, s, ("request", A, B))
    s = take(spec, s, ("grant", B, A))
    assert ("send", B, 1, 0b01) not in enabled(spec, s), "a passive peer sends nothing"
    s = take(spec, s, ("send", A, 0, 0b10))
    s = take(spec, s, ("deliver", B, 0))
    s = take(spec, s, ("send", B, 1, 0b01))
    assert ("deliver", A, 1) in enabled(spec, s)
    s = take(spec, s, ("deliver", A, 1))
    s = take(spec, s, ("ack", B, A))
    assert enabled(spec, s) == [] and spec.finished(s)


def test_synchronous_fifo_channels_deadlock_behind_a_request():
    """The finding of models/synchronous-3-fifo.toml, step by step with two peers."""
    for channel, stuck in (("fifo", True), ("unordered", False)):
        spec = Synchronous(peers=2, sends=1, channel=channel)
        s = spec.init_states()[0]
        s = take(spec, s, ("request", A, B))
        s = take(spec, s, ("send", B, 1, 0b01))
        s = take(spec, s, ("deliver", A, 1))
        if stuck:
            assert enabled(spec, s) == []
            assert not spec.finished(s)
            assert spec._stuck(s) == "the run stops with a waits for b's permission, b waits for a's ack"
        else:
            s = take(spec, s, ("ack", B, A))
            s = take(spec, s, ("grant", B, A))


def test_synchronous_rejects_multicast():
    with pytest.raises(ConstantError):
        Synchronous(peers=3, destinations="subsets")
    with pytest.raises(ConstantError):
        Synchronous(peers=3, script={"a": ["bc"]})


# -- models and ablations -----------------------------------------------------------------------


CHAIN = {"peers": 3, "script": {"a": ["c", "b", "c"], "b": ["c"]}}  # a1, a3 to c; a2 -> b -> b1 to c
SEEDS = [
    # spec, constants, what the seeds claim there, the witnesses that it is at stake, and
    # ablations of the same configuration with what each must break and what it keeps
    (
        "bss", {"peers": 3, "script": {"a": ["bc", "bc"], "b": ["ac", "ac"]}},
        ["fifo", "causal", "eventual_delivery"], ["fifo_race", "causal_race"],
        [({"condition_a": False}, ["fifo"], []),
         # "Forgetting condition (b) ... Without it, you only get FIFO" (with V[j] += 1)
         ({"condition_b": False, "update": "increment"}, ["causal"], ["fifo"])],
    ),
    (
        # "Total order ... also assigns an order to concurrent messages, which causal does not"
        "bss", {"peers": 4, "script": {"a": ["bcd"], "b": ["acd"]}},
        ["causal", "eventual_delivery"], ["causal_race", "total_race"], [],
    ),
    ("ses", CHAIN, ["fifo", "causal", "eventual_delivery"], ["fifo_race", "causal_race"],
     # without the merge, c delivers b1 early, its clock jumps past a1, and a3 gets through too
     [({"check_buffer": False}, ["fifo", "causal"], []), ({"merge_buffer": False}, ["causal", "fifo"], [])]),
    ("matrix", CHAIN, ["fifo", "causal", "eventual_delivery"], ["fifo_race", "causal_race"],
     [({"check_sender": False}, ["fifo"], []), ({"check_others": False}, ["causal"], [])]),
    (
        # Garg: synchronous order is "stronger than causal and FIFO ordering"; the algorithm
        # "cannot be totally symmetric"
        "synchronous", {"peers": 2, "sends": 2}, ["synchronous", "causal", "fifo", "eventual_delivery"], [],
        [({"request_permission": False}, ["synchronous", "fifo"], []),
         ({"wait_for_ack": False}, ["synchronous", "fifo"], [])],
    ),
]


def _verdicts(spec: str, constants: dict, props: list[str]) -> dict[str, str]:
    result = run({"spec": spec, "constants": constants, "check": {"properties": props}})
    assert result.stats.bound is None, "the search is exhaustive"
    return {n: result.properties[n].status for n in props}


@pytest.mark.parametrize("spec,constants,claims,witnesses,ablations", SEEDS,
                         ids=[f"{s[0]}-{i}" for i, s in enumerate(SEEDS)])
def test_the_seeds_claims_hold_where_they_are_at_stake(spec, constants, claims, witnesses, ablations):
    """The seeds' claims, on configurations built here (not read from models/): BSS, SES
    and matrix clocks deliver in causal order, hence FIFO, and deliver everything; Garg's
    synchronous ordering makes every message as if instantaneous. Each claim must hold
    where it is at stake (its witnesses are reached), and each step of the algorithm must
    be needed: switching it off breaks what the seed says it protects."""
    assert _verdicts(spec, constants, [*claims, *witnesses]) == dict.fromkeys([*claims, *witnesses], "holds")
    for ablation, breaks, keeps in ablations:
        got = _verdicts(spec, {**constants, **ablation}, [*breaks, *keeps])
        assert got == {**dict.fromkeys(breaks, "violated"), **dict.fromkeys(keeps, "holds")}, ablation


def test_causal_order_is_not_total_order():
    """The bss seed: total order "also assigns an order to concurrent messages, which
    causal does not". Two concurrent broadcasts reach c and d in different orders."""
    verdicts = _verdicts("bss", {"peers": 4, "script": {"a": ["bcd"], "b": ["acd"]}}, ["causal", "total"])
    assert verdicts == {"causal": "holds", "total": "violated"}


def test_every_ablation_flag_has_a_model_that_expects_a_break():
    flagged = {}
    for path in OURS:
        model = load_model(path)
        for flag in type(model.spec).ablations():
            if model.constants[flag] is False:
                assert "violated" in model.expect.values(), path.name
                flagged.setdefault(model.spec_name, set()).add(flag)
    assert flagged == {
        "bss": {"condition_a", "condition_b"},
        "ses": {"check_buffer", "merge_buffer"},
        "matrix": {"check_others", "check_sender"},
        "synchronous": {"request_permission", "wait_for_ack"},
    }


MUTANTS = [
    # model, property, shortest trace as action labels, explanation
    (
        "bss-mutant-no-causal-condition", "causal",
        [["send", 0, 0, 6], ["receive", 1, 0], ["send", 1, 1, 5], ["receive", 2, 1]],
        "c delivered b1 while a1, which happened before it, had not been delivered there: "
        "a sent a1 to b,c, b received a1, b sent b1 to a,c, c received b1",
    ),
    (
        "bss-mutant-no-fifo-condition", "fifo",
        [["send", 1, 2, 5], ["receive", 0, 2], ["send", 0, 0, 6], ["send", 0, 1, 6], ["buffer", 2, 0],
         ["buffer", 2, 1], ["receive", 2, 2], ["deliver", 2, 1]],
        "c delivered a2 while a1, which a sent before it, had not been delivered there: "
        "a sent a1 to b,c, a sent a2 to b,c, c received a2",
    ),
    (
        "ses-mutant-no-buffer-check", "causal",
        [["send", 0, 0, 4], ["send", 0, 1, 2], ["receive", 1, 1], ["send", 1, 2, 4], ["receive", 2, 2]],
        "c delivered b1 while a1, which happened before it, had not been delivered there: "
        "a sent a1 to c, a sent a2 to b, b received a2, b sent b1 to c, c received b1",
    ),
    (
        "ses-mutant-no-merge", "causal",
        [["send", 0, 0, 4], ["send", 0, 1, 2], ["receive", 1, 1], ["send", 1, 2, 4], ["receive", 2, 2]],
        "c delivered b1 while a1, which happened before it, had not been delivered there: "
        "a sent a1 to c, a sent a2 to b, b received a2, b sent b1 to c, c received b1",
    ),
    (
        "matrix-mutant-no-causal-condition", "eventual_delivery",
        [["send", 0, 0, 4], ["send", 0, 1, 2], ["receive", 1, 1], ["send", 1, 2, 4], ["receive", 2, 2],
         ["buffer", 2, 0]],
        "a1 to c is never delivered: a sent a1 to c, and the run ends without c delivering or dropping it",
    ),
    (
        "matrix-mutant-no-fifo-condition", "fifo",
        [["send", 0, 0, 2], ["send", 0, 1, 2], ["receive", 1, 1]],
        "b delivered a2 while a1, which a sent before it, had not been delivered there: "
        "a sent a1 to b, a sent a2 to b, b received a2",
    ),
    (
        "synchronous-mutant-no-permission", "synchronous",
        [["send", 0, 0, 2], ["send", 0, 1, 2], ["deliver", 1, 1], ["deliver", 1, 0]],
        "messages a1, a2 form a crown, so they cannot all have been instantaneous: "
        "a sent a1 before b received a2; a sent a2 before b received a1",
    ),
    (
        "synchronous-mutant-no-ack", "synchronous",
        [["send", 1, 2, 1], ["send", 1, 3, 1], ["deliver", 0, 3], ["deliver", 0, 2]],
        "messages b1, b2 form a crown, so they cannot all have been instantaneous: "
        "b sent b1 before a received b2; b sent b2 before a received b1",
    ),
]


@pytest.mark.parametrize("name,prop,labels,explanation", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_mutant_caught_with_shortest_counterexample(name, prop, labels, explanation):
    model = load_model(MODELS / f"{name}.toml")
    verdict = check_model(model, Options(progress=False)).properties[prop]
    assert verdict.status == "violated"
    assert verdict.explanation == explanation
    assert [step.label for step in verdict.trace[1:]] == labels
    # Shortest: no run of fewer steps violates the property (a depth-bounded search
    # one step short finds nothing), and the full algorithm survives the same scenario.
    shorter = check_model(model, Options(progress=False, max_depth=len(labels) - 1))
    assert shorter.properties[prop].status != "violated"
    full = dict(model.raw)
    ablations = set(type(model.spec).ablations())
    full["constants"] = {k: v for k, v in model.raw["constants"].items() if k not in ablations}
    assert run(full).properties[prop].status == "holds"
