"""An export's TLC configurations end as its manifest says.

``export-tla --counts`` writes the main configuration (every property expected to hold),
one configuration per violation and per witness, and ``Name.manifest.json``. Without TLC
the split is checked on the files; with ``TLA2TOOLS_JAR`` set, TLC runs on every
configuration of a few small models through the manifest's own command line (the one the
docs show), and each run must end as the manifest expects: the main one with no error
and the manifest's distinct-state count and depth, each other with its one property
violated after the manifest's number of steps.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess

import pytest

from ordercheck.tla.tlc import TlcUnavailable, find_tlc, parse_output
from tests.conftest import MODELS

try:
    find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available: {exc}"

# Small models covering each kind of configuration: fifo-4 (invariant violations),
# ses-2 (a witness), retransmit-weak (a temporal violation, a lasso),
# bus1-impl-late-join-failed (an action property violated: a per-step check); with
# ORDERCHECK_TLC_ALL=1, every model (hours: bus1-3's main configuration alone takes TLC
# about six minutes), those without an export skipped saying why.
SMALL = ["fifo-4", "ses-2", "retransmit-weak", "bus1-impl-late-join-failed"]
ALL = os.environ.get("ORDERCHECK_TLC_ALL") == "1"
MODELS_RUN = sorted(p.stem for p in MODELS.glob("*.toml")) if ALL else SMALL


def export(run_cli, tmp_path, name: str) -> dict:
    out = run_cli("export-tla", MODELS / f"{name}.toml", "-o", tmp_path, "--counts")
    assert out.exit_code == 0, out.output
    return json.loads((tmp_path / f"{name.replace('-', '_')}.manifest.json").read_text())


def test_main_config_checks_only_what_holds(run_cli, tmp_path):
    manifest = export(run_cli, tmp_path, "lamport-2")
    configs = {c["config"]: c for c in manifest["configs"]}
    main = manifest["configs"][0]
    assert main["config"] == "lamport_2.cfg" and main["expect"] == "no error"
    assert main["distinct_states"] == 233 and main["depth"] == 13
    text = (tmp_path / "lamport_2.cfg").read_text()
    assert "INVARIANT TypeOK" in text and "INVARIANT Causal\n" in text and "PROPERTY EventualDelivery" in text
    assert "Synchronous" not in text.split("SPECIFICATION")[1] and "Never" not in text
    assert configs["lamport_2_violates_synchronous.cfg"]["expect"] == "invariant violated"
    assert configs["lamport_2_witness_causal_race.cfg"]["checks"] == ["NeverCausalRace"]
    assert configs["lamport_2_witness_causal_race.cfg"]["steps"] == 5
    witness = (tmp_path / "lamport_2_witness_causal_race.cfg").read_text()
    assert "INVARIANT NeverCausalRace" in witness and "TypeOK" not in witness
    for entry in manifest["configs"]:
        assert (tmp_path / entry["config"]).is_file()


def test_without_counts_the_model_files_expectations_decide(run_cli, tmp_path):
    out = run_cli("export-tla", MODELS / "fifo-3.toml", "-o", tmp_path)
    assert out.exit_code == 0, out.output
    manifest = json.loads((tmp_path / "fifo_3.manifest.json").read_text())
    assert [(c["config"], c["expect"]) for c in manifest["configs"]] == [
        ("fifo_3.cfg", "no error"),
        ("fifo_3_violates_causal.cfg", "invariant violated"),
        ("fifo_3_violates_global_lock.cfg", "invariant violated"),
        ("fifo_3_happened_before.cfg", "no error"),
    ]
    assert "distinct_states" not in manifest["configs"][0]


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
@pytest.mark.parametrize("name", MODELS_RUN)
def test_every_config_ends_as_the_manifest_says(run_cli, tmp_path, name):
    if ALL:
        from ordercheck.checker.loading.modelfile import load_model
        from ordercheck.tla.export import NoTemplate, adapter_of

        try:
            adapter_of(load_model(MODELS / f"{name}.toml"))
        except NoTemplate as refused:
            pytest.skip(str(refused))
    manifest = export(run_cli, tmp_path, name)
    assert len(manifest["configs"]) > 1 or ALL
    for entry in manifest["configs"]:
        command = manifest["command"].replace("$TLA2TOOLS_JAR", os.environ["TLA2TOOLS_JAR"])
        argv = [entry["config"] if word == "CONFIG" else word for word in shlex.split(command)]
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        run = parse_output(proc.stdout + proc.stderr, proc.returncode)
        where = f"{entry['config']}: {proc.stdout[-2000:]}"
        if entry["expect"] == "no error":
            assert proc.returncode == 0 and run.complete, where
            assert (run.distinct, run.depth) == (entry["distinct_states"], entry["depth"]), where
        elif entry["expect"] in ("invariant violated", "action property violated"):
            kind = "invariant" if entry["expect"] == "invariant violated" else "action"
            assert (run.kind, run.violated) == (kind, entry["checks"][0]), where
            assert len(run.trace) - 1 == entry["steps"], where
        else:
            assert entry["expect"] == "temporal property violated", where
            assert run.kind == "temporal" and run.trace, where


DROPPED = r"""---- MODULE Dropped ----
EXTENDS Naturals, Sequences
CONSTANTS a, b
VARIABLES sent, logs
Peers == {a, b}
(* a sends <<a, 1>> to b, and b drops it (a flushed queue): nothing is delivered. *)
Init ==
    /\ sent = [p \in Peers |-> IF p = a THEN <<[dests |-> {b}, past |-> {}]>> ELSE <<>>]
    /\ logs = [p \in Peers |-> IF p = a THEN <<[kind |-> "send", arg |-> <<a, 1>>]>>
                                      ELSE <<[kind |-> "drop", arg |-> <<a, 1>>]>>]
Next == UNCHANGED <<sent, logs>>
Spec == Init /\ [][Next]_<<sent, logs>>
H == INSTANCE OrderingProperties
NotDelivered == ~H!AllDelivered
DeliveredOrDropped == H!AllDeliveredOrDropped
NoDelivery == H!Delivered(b) = {}
====
"""


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_a_drop_is_no_delivery(tmp_path):
    """The library separates delivered from delivered-or-dropped: a protocol that drops
    every message violates AllDelivered and satisfies AllDeliveredOrDropped."""
    from ordercheck.tla.export import LIBRARY_MODULE, TEMPLATES
    from ordercheck.tla.tlc import run_tlc

    (tmp_path / LIBRARY_MODULE).write_text((TEMPLATES / LIBRARY_MODULE).read_text())
    (tmp_path / "Dropped.tla").write_text(DROPPED)
    (tmp_path / "Dropped.cfg").write_text(
        "CONSTANTS a = a\n    b = b\nSPECIFICATION Spec\n"
        "INVARIANT NotDelivered\nINVARIANT DeliveredOrDropped\nINVARIANT NoDelivery\n"
    )
    run = run_tlc(tmp_path, "Dropped", "Dropped.cfg", timeout=120)
    assert run.complete and run.distinct == 1, run.output[-2000:]


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_fairness_leaves_sends_optional(run_cli, tmp_path):
    """Under the export's Spec no send is forced (a behaviour may stop before every peer
    has sent), while eventual delivery of what was sent still holds."""
    from ordercheck.tla.tlc import run_tlc

    export(run_cli, tmp_path, "fifo-2")
    (tmp_path / "Sends.tla").write_text(
        "---- MODULE Sends ----\nEXTENDS fifo_2\n"
        "EverySendMade == <>(\\A p \\in Peers : Len(sent[p]) = MaxSends(p))\n====\n"
    )
    cfg = (tmp_path / "fifo_2.cfg").read_text().split("SPECIFICATION")[0]
    (tmp_path / "Sends.cfg").write_text(cfg + "SPECIFICATION Spec\nPROPERTY EventualDelivery\nPROPERTY EverySendMade\n")
    run = run_tlc(tmp_path, "Sends", "Sends.cfg", timeout=300)
    assert (run.kind, run.violated) == ("temporal", "EverySendMade"), run.output[-2000:]


HISTORIES = r"""---- MODULE Histories ----
EXTENDS Naturals, Sequences, TLC
CONSTANTS a, b, c
VARIABLES sent, logs, case
Peers == {a, b, c}
S(m) == [kind |-> "send", arg |-> m]
D(m) == [kind |-> "deliver", arg |-> m]
Msg(p, dests, past) == <<[dests |-> dests, past |-> past]>>
(* "signal": a sends <<a, 1>> to c and signals b, which then sends <<b, 1>> to c; c   *)
(* delivers <<b, 1>> first, a causal violation that only the signal makes one.       *)
(* "drop": a sends <<a, 1>> to b, b drops it and sends <<b, 1>> to c: a drop is no   *)
(* receive, so <<a, 1>> is not in the causal past of <<b, 1>>.                       *)
(* "repeat": a sends a1 and a2 to b and c; b delivers a1, a2; c delivers a1, a2, a1: *)
(* first deliveries agree, so total order holds (the repeat is integrity's).       *)
(* "opposite": the same sends; b delivers a1, a2, c delivers a2, a1: total broken. *)
Two == <<[dests |-> {b, c}, past |-> {}], [dests |-> {b, c}, past |-> {<<a, 1>>}]>>
TwoSends == <<S(<<a, 1>>), S(<<a, 2>>)>>
Init ==
    \/ /\ case = "signal"
       /\ sent = (a :> Msg(a, {c}, {})) @@ (b :> Msg(b, {c}, {<<a, 1>>})) @@ (c :> <<>>)
       /\ logs = (a :> <<S(<<a, 1>>), [kind |-> "signal_out", arg |-> b]>>)
                 @@ (b :> <<[kind |-> "signal_in", arg |-> a], S(<<b, 1>>)>>)
                 @@ (c :> <<D(<<b, 1>>), D(<<a, 1>>)>>)
    \/ /\ case = "drop"
       /\ sent = (a :> Msg(a, {b}, {})) @@ (b :> Msg(b, {c}, {})) @@ (c :> <<>>)
       /\ logs = (a :> <<S(<<a, 1>>)>>) @@ (b :> <<[kind |-> "drop", arg |-> <<a, 1>>], S(<<b, 1>>)>>)
                 @@ (c :> <<D(<<b, 1>>)>>)
    \/ /\ case = "repeat"
       /\ sent = (a :> Two) @@ (b :> <<>>) @@ (c :> <<>>)
       /\ logs = (a :> TwoSends) @@ (b :> <<D(<<a, 1>>), D(<<a, 2>>)>>) @@ (c :> <<D(<<a, 1>>), D(<<a, 2>>), D(<<a, 1>>)>>)
    \/ /\ case = "opposite"
       /\ sent = (a :> Two) @@ (b :> <<>>) @@ (c :> <<>>)
       /\ logs = (a :> TwoSends) @@ (b :> <<D(<<a, 1>>), D(<<a, 2>>)>>) @@ (c :> <<D(<<a, 2>>), D(<<a, 1>>)>>)
Next == UNCHANGED <<sent, logs, case>>
Spec == Init /\ [][Next]_<<sent, logs, case>>
H == INSTANCE OrderingProperties
HB == INSTANCE HappenedBefore
Expected ==
    /\ HB!StoredPastIsCausalPast /\ HB!Causal = H!Causal /\ HB!Total = H!Total
    /\ HB!Fifo = (case /= "opposite") /\ HB!Total = (case /= "opposite")
    /\ case \in {"signal", "drop"} =>
           IF case = "signal"
           THEN ~HB!Causal /\ HB!CausalPast(HB!VectorClocks, <<b, 1>>) = {<<a, 1>>}
           ELSE HB!Causal /\ HB!CausalPast(HB!VectorClocks, <<b, 1>>) = {}
====
"""


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_happened_before_follows_signals_and_not_drops(tmp_path):
    """HappenedBefore.tla's causal past goes through a signal and not through a drop, and
    its Causal decides both histories as the library's does; its Total reads first
    deliveries (a repeated delivery breaks nothing) and fails on two opposite orders."""
    from ordercheck.tla.export import HAPPENED_BEFORE_MODULE, LIBRARY_MODULE, TEMPLATES
    from ordercheck.tla.tlc import run_tlc

    for module in (LIBRARY_MODULE, HAPPENED_BEFORE_MODULE):
        (tmp_path / module).write_text((TEMPLATES / module).read_text())
    (tmp_path / "Histories.tla").write_text(HISTORIES)
    (tmp_path / "Histories.cfg").write_text("CONSTANTS a = a b = b c = c\nSPECIFICATION Spec\nINVARIANT Expected\n")
    run = run_tlc(tmp_path, "Histories", "Histories.cfg", timeout=120)
    assert run.complete and run.distinct == 4, run.output[-2000:]
