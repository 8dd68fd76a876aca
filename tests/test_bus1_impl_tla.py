"""TLA+ export of bus1_impl configurations beyond the defaults.

The template mirrors ``liveness`` (the code's timestamp rule and the full-key fix),
``addresses`` (both orders of the handles' queue nodes), ``acquire`` (payload handles in
one step or one each), ``ties = "with_release"`` (release groups among the
transactions'), ``fresh`` nodes and scripts whose operations wait for a handle passed to
the peer (a second release among them), handle transfers (``transfer``, atomic or in two
steps, and ``transfer_check``), ``join_failure``, ``stale_handle`` and ``join_sealed``; TLC must
find the same state counts and verdicts as our engine on them (needs TLA2TOOLS_JAR and java,
else skipped).
Every other setting it does not mirror is refused in one line naming each such constant.
"""

from __future__ import annotations

import re

import pytest

from ordercheck.checker.loading.modelfile import load_model
from ordercheck.tla.export import NoTemplate, export_model
from ordercheck.tla.tlc import TlcUnavailable, find_tlc
from tests.conftest import MODELS, model_checking
from tests.tla_helpers import Reader

try:
    find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available: {exc}"

HANDLE_PROPS = ["causal", "delivered_iff_before_destroy", "handle_valid_iff_before_destroy",
                "valid_handle_notified", "no_warn", "dequeue_increasing"]


def variants():
    """Finding C's passed-handle tie (bus1-impl-handle-tie) with the liveness fix, the same
    with descending addresses, and payload handles acquired one by one while one of their
    nodes is destroyed (bus1-impl-life-acquire-each with one node destroyed: 1,312 states;
    the acquire_split bit is part of the state, so the counts compare it too), release
    groups ranked among the transactions (ties = "with_release"), a node created by the send
    that names it with its receiver waiting for the handle (bus1-impl-life-create-pass), and
    a handle received twice and released twice, each release waiting for it
    (bus1-impl-life-refs-multi with refs = "holder")."""
    return [
        ("handle-tie, liveness key", model_checking("bus1-impl-handle-tie", HANDLE_PROPS, liveness="key")),
        ("handle-tie, descending", model_checking("bus1-impl-handle-tie", ["dequeue_increasing", "no_warn"],
                                                  addresses="descending")),
        ("acquire-each", model_checking("bus1-impl-life-acquire-each", ["no_warn"],
                                        script={"a": ["destroy 0"], "c": ["send 2 +0,1"]})),
        ("release-ties", load_model(MODELS / "bus1-impl-life-release-ties.toml")),
        ("fresh node, waits", model_checking("bus1-impl-life-create-pass", ["no_warn"])),
        ("second release, waits", model_checking("bus1-impl-life-refs-multi", ["no_warn"], refs="holder")),
    ]


IDS = [name for name, _m in variants()]


def assert_tlc_agrees(cc) -> None:
    """A cross-check with no mismatch: TLC's distinct states are ours, every property has
    our verdict, and every counterexample of ours is replayed by TLC."""
    assert cc.mismatches == []
    assert cc.final is not None and cc.final.distinct == cc.ours_counts.distinct
    for prop, mine in cc.ours.properties.items():
        assert cc.tlc[prop].status == mine.status
        if mine.trace:
            assert cc.confirmed[prop] is True


@pytest.mark.parametrize("case", range(6), ids=IDS)
def test_the_template_renders_the_constant(case):
    """The protocol module is the same for every model: the configuration's constants and
    the model module's definitions choose the branch."""
    name, model = variants()[case]
    export = export_model(model, symmetry=False)
    module, protocol, cfg = export.module, export.protocol or "", export.config
    assert export.files["Bus1Impl.tla"] == protocol and "EXTENDS Bus1Impl\n" in module
    if "liveness key" in name:
        assert 'Liveness = "key"' in cfg
        assert 'IF Liveness = "key" THEN KeyLeq(k, <<H[p][n].ts, H[p][n].grp, HAddr(p, n)>>)' in protocol
    elif "fresh" in name:
        assert "MCFreshNodes == {0}" in module and "new == Range(op.creates)" in protocol
        assert "waits |-> <<0>>" in module
    elif "second release" in name:
        assert module.count('[kind |-> "release", nodes |-> <<0>>, payload |-> <<>>, target |-> NoPeer, '
                            'waits |-> <<0>>') == 2
    elif "release" in name:
        assert 'Ties = "with_release"' in cfg and "MCReleaseOwners == {a}" in module
        assert 'ReleaseGroup(o) == IF Ties = "with_release" THEN relRanks[o]' in protocol
    elif "acquire" in name:
        assert 'AcquireMode = "each"' in cfg
        assert "Acquire(AcquireObjects, p, dst, pl[j + 1])" in protocol
        assert 'NeverAcquireSplit == [][~Fails("acquire_split")]_vars' in protocol
    else:  # descending: a's handle to node 0 has the highest address, the last peer's last node 1
        spec = model.spec
        top, last = spec.peers * spec.n_nodes, export.adapter.names[spec.peers - 1]
        assert "Address <- MCAddress" in cfg and 'addresses = "descending"' in module
        assert f"    <<a, 0>> :> {top} @@ " in module and f"<<{last}, {spec.n_nodes - 1}>> :> 1\n" in module
        assert "HAddr(p, n) == Address[<<p, n>>]" in protocol


def test_the_message_entries_addresses_are_written_out():
    """The model module writes the message entries' addresses out as it does the handles':
    each send's entry on each destination (MCMsgAddress: Python's msg_addr) and, with shared
    group tags, the reverse-order addresses on the queues two of the thread's peers send to
    (MCFlippedMsgAddress; none, <<>>, without); the module computes no address."""
    race = export_model(load_model(MODELS / "bus1-impl-destroy-race.toml"), symmetry=False)
    assert ("MCMsgAddress ==    \\* <<s, k, d>> :> the address of s's k-th message's entry on d\n"
            "    <<b, 1, a>> :> 5\n") in race.module
    assert race.module.split("MCFlippedMsgAddress ==", 1)[1].split("\n")[1] == "    <<>>"
    model = load_model(MODELS / "bus1-impl-shared-groups.toml")
    shared, spec = export_model(model, symmetry=False), model.spec
    assert spec.both_orders() == [2, 3]   # c and d: a and b (one thread) send to both
    direct, flipped = shared.module.split("MCMsgAddress ==", 1)[1].split("MCFlippedMsgAddress ==")
    for mid, (s, k) in enumerate([("a", 1), ("b", 1)]):
        for d in (2, 3):
            entry = f"<<{s}, {k}, {'abcd'[d]}>> :> "
            assert entry + str(spec.msg_addr(mid * spec.stride, d)) in direct
            assert entry + str(spec.msg_addr(mid * spec.stride, d, True)) in flipped
    for text in (race, shared):
        assert "MsgAddress <- MCMsgAddress" in text.config and "FlippedMsgAddress <- MCFlippedMsgAddress" in text.config
    assert ("MsgAddr(m, dst) == IF dst \\in flips THEN FlippedMsgAddress[<<m[1], m[2], dst>>] "
            "ELSE MsgAddress[<<m[1], m[2], dst>>]") in shared.protocol
    assert "MBase" not in shared.protocol and "Stride" not in shared.protocol


ONE_MODULE = ["bus1-impl-lock-stage-race", "bus1-impl-lock-install-fixed", "bus1-impl-life-transfer-window",
              "bus1-impl-synthetic-causality-fixed", "bus1-impl-late-join-failed-fixed",
              "bus1-impl-life-stale-handle-fixed", "bus1-impl-life-release-ties", "bus1-impl-destroy-race",
              "bus1-impl-life-refs-multi-mutant"]


def test_bus1impl_is_one_module_for_the_lock_level_lifecycle_and_fix_models():
    """A lock-level model, a lifecycle model, findings and fixes render the same
    Bus1Impl.tla (tests/test_tla_export.py::test_one_module_per_protocol checks every model
    file), each model's own module under 40 lines, and each configuration gives every
    constant of Bus1Impl a value."""
    texts = set()
    constants: list[str] = []
    for name in ONE_MODULE:
        export = export_model(load_model(MODELS / f"{name}.toml"), symmetry=False)
        texts.add(export.files["Bus1Impl.tla"])
        assert len(export.module.splitlines()) < 40, name
        if not constants:
            block = export.protocol.split("CONSTANTS", 1)[1].split("ASSUME", 1)[0]
            constants = re.findall(r"^\s*(?:CONSTANTS)?\s*([A-Z][A-Za-z]+),?\s*(?:\\\*|$)", block, re.M)
        cfg_names = [line.split()[0] for line in export.config.split("CONSTANTS", 1)[1].split("SPECIFICATION")[0]
                     .splitlines() if line.strip()]
        assert set(constants) <= set(cfg_names), name
    assert len(texts) == 1
    assert len(constants) == 29


def test_the_liveness_fix_decides_finding_c_differently():
    """The exported constant matters: on the passed-handle tie the code's rule breaks
    handle_valid_iff_before_destroy (finding C) and the fix does not; TLC, below, agrees
    with the fixed verdict."""
    from ordercheck.checker.engine.run import Options, check_model

    quiet = Options(progress=False, stop_when_decided=False)
    code = check_model(model_checking("bus1-impl-handle-tie", HANDLE_PROPS), quiet)
    fixed = check_model(variants()[0][1], quiet)
    assert code.properties["handle_valid_iff_before_destroy"].status == "violated"
    assert fixed.properties["handle_valid_iff_before_destroy"].status == "holds"


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
@pytest.mark.parametrize("case", range(6), ids=IDS)
def test_tlc_agrees_on_non_default_constants(case):
    """One TLC run each, with its counterexamples replayed in TLC (5-16 s each: the reason
    these are six small cases with few properties, not more)."""
    from ordercheck.checker.cli.tla import cross_check

    _name, model = variants()[case]
    assert_tlc_agrees(cross_check(model))


REFUSED = [
    # (base model, its text replaced (old, new), what the refusal names)
    ("bus1-impl-lock-refs", ("stage_lock = true", "stage_lock = false"),
     ["locks = True (at lock level no send that creates a node, and with payload handles, destructions, "
      "releases, transfers, signals, a reset or a disconnect only with stage_lock = True)"]),
    ("bus1-impl-lock-refs-mutant", ('b = ["release 0", "destroy 1"]', 'b = ["reset", "release 0"]'),
     ["script.b (at lock level only a reset last)"]),
]


@pytest.mark.parametrize(("model", "change", "named"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_refusal_names_each_unsupported_constant(model, change, named, run_cli, tmp_path):
    """What the lock-level export still does not mirror is refused in one line, exit 2,
    nothing written."""
    text = (MODELS / f"{model}.toml").read_text(encoding="utf-8")
    assert change[0] in text
    path = tmp_path / f"{model}.toml"
    path.write_text(text.replace(change[0], change[1]), encoding="utf-8")
    loaded = load_model(path)
    with pytest.raises(NoTemplate) as refused:
        export_model(loaded, symmetry=False)
    message = str(refused.value)
    for what in named:
        assert what in message
    assert "liveness" not in message and "addresses" not in message and "refs =" not in message
    res = run_cli("export-tla", path, "-o", tmp_path / "out")
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and named[0] in res.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_traffic_after_a_reset_is_refused_at_lock_level_only():
    """A reset before other operations exports at the section level (TLC agrees on
    bus1-impl-life-reset-then-traffic, the findings page) but not at lock level, which no TLC
    run has checked: the refusal names the script."""
    export_model(load_model(MODELS / "bus1-impl-life-reset-then-traffic.toml"), symmetry=False)
    locked = model_checking("bus1-impl-lock-install-fixed", ["lockdep_held"], nodes="aba", fresh=[2],
                            handles=["bc", "c"], script={"a": ["reset", "send 2"], "c": ["send 1 +0"]})
    with pytest.raises(NoTemplate, match=r"script\.a \(at lock level only a reset last\)"):
        export_model(locked, symmetry=False)


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_agrees_on_findings_a_and_b_at_lock_level():
    """The lock-level export (sends and destructions): finding A's fix model
    (bus1-impl-lock-stage-fixed, 426 states) and its model (bus1-impl-lock-stage-race, 1,336
    states) on one_writer and lockdep_held, and finding B's model and fix model
    (bus1-impl-lock-install, 3,164 states, -fixed, 3,394) on lockdep_held: TLC finds the same
    states and verdicts, and replays our counterexamples."""
    from ordercheck.checker.cli.tla import cross_check

    both = ["one_writer", "lockdep_held"]
    for model, verdict in ((model_checking("bus1-impl-lock-stage-fixed", both), "holds"),
                           (model_checking("bus1-impl-lock-stage-race", both), "violated"),
                           (model_checking("bus1-impl-lock-install", ["lockdep_held"]), "violated"),
                           (model_checking("bus1-impl-lock-install-fixed", ["lockdep_held"]), "holds")):
        cc = cross_check(model)
        assert_tlc_agrees(cc)
        assert {v.status for v in cc.ours.properties.values()} == {verdict}


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_agrees_on_finding_h_at_lock_level():
    """Finding H's reset model at lock level without the steps past the assertion
    (bus1-impl-lock-owner-gone with owner_gone_steps = false, 7,732 states) on lockdep_held:
    TLC finds the same states, the violation at the same depth, and replays ours."""
    from ordercheck.checker.cli.tla import cross_check

    cc = cross_check(model_checking("bus1-impl-lock-owner-gone", ["lockdep_held"], owner_gone_steps=False))
    assert_tlc_agrees(cc)
    assert cc.ours.properties["lockdep_held"].status == cc.tlc["lockdep_held"].status == "violated"
    assert cc.confirmed["lockdep_held"] is True


def test_h_past_its_assertion_exports_with_its_steps_and_properties():
    """owner_gone_steps (finding H past its assertion) exports: the configuration sets
    OwnerGoneSteps as the model does (TRUE on bus1-impl-lock-owner-gone and its fix model,
    FALSE with owner_gone_steps = false) and defines map_one_writer, no_leaked_pin and
    no_use_after_free as invariants, checked where the model expects them to hold; the
    module has the walk, the reset and the join's push
    (TLC agrees on both models: tests/test_bus1_findings_tlc.py)."""
    for name in ("bus1-impl-lock-owner-gone", "bus1-impl-lock-owner-gone-fixed"):
        export = export_model(load_model(MODELS / f"{name}.toml"), symmetry=False)
        assert re.search(r"OwnerGoneSteps = TRUE", export.config), name
        for inv in ("MapOneWriter", "NoLeakedPin", "NoUseAfterFree"):
            assert f'{inv} == [][~Fails("' in export.protocol, (name, inv)
            # the configuration checks the action properties the model expects to hold (the fix: all three)
            expected = name.endswith("fixed") or inv == "NoUseAfterFree"
            assert bool(re.search(rf"^PROPERTY {inv}$", export.config, re.M)) == expected, (name, inv)
        assert '![n] = @ \\cup {"walk"}' in export.protocol and 'THEN [W1 EXCEPT !.pj =' in export.protocol
    off = export_model(model_checking("bus1-impl-lock-owner-gone", ["lockdep_held"], owner_gone_steps=False),
                       symmetry=False)
    assert "OwnerGoneSteps = FALSE" in off.config and "MapOneWriter" not in off.config


def test_the_template_renders_a_transfer_in_steps_and_its_fix():
    """Finding J's model exports the transfer's two steps; its fix model decides from the
    acquire (TransferCheck = "join"), the code's model from the DESTROYED bit: one module,
    the configuration's constants differ."""
    code = export_model(load_model(MODELS / "bus1-impl-life-transfer-window.toml"), symmetry=False)
    fixed = export_model(load_model(MODELS / "bus1-impl-life-transfer-window-fixed.toml"), symmetry=False)
    assert code.protocol == fixed.protocol
    assert "\\/ TransferAcquire(p, chk)" in code.protocol and 'ELSE IF TransferMode = "steps"' in code.protocol
    assert 'IF TransferCheck = "bit" /\\ Destroyed(nodeFlags, n)' in code.protocol
    assert 'IF TransferCheck = "join" /\\ Destroyed(nodeFlags, n) /\\ Owner(n) /= x' in code.protocol
    for export, check in ((code, "bit"), (fixed, "join")):
        assert f'TransferCheck = "{check}"' in export.config and 'TransferMode = "steps"' in export.config


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_agrees_on_finding_j_and_its_fix():
    """The lifecycle export (a transfer in two steps, a destruction in its window): finding J's
    model (bus1-impl-life-transfer-window, 84 states) breaks valid_handle_notified and its fix
    model (-fixed, transfer_check = "join", 76 states) does not; TLC finds the same states and
    verdicts and replays our counterexample. The larger I, K and G pairs were run by hand
    (docs/explanation/bus1-implementation.md, "Two engines")."""
    from ordercheck.checker.cli.tla import cross_check

    for name, verdict in (("bus1-impl-life-transfer-window", "violated"),
                          ("bus1-impl-life-transfer-window-fixed", "holds")):
        cc = cross_check(model_checking(name, ["valid_handle_notified"]))
        assert_tlc_agrees(cc)
        assert cc.ours.properties["valid_handle_notified"].status == verdict
        assert cc.tlc["valid_handle_notified"].status == verdict
        if verdict == "violated":
            assert cc.confirmed["valid_handle_notified"] is True


def test_counted_references_export_at_the_life_level():
    """refs = "counted" exports at the life level: the configuration sets Refs (and the
    one_user_ref mutant), the counts variable is typed, and release_when_unreferenced is an
    invariant where the model expects it to hold (TLC agrees on the three life-refs models:
    docs/explanation/tla.md's table); at lock level counted references stay refused."""
    export = export_model(load_model(MODELS / "bus1-impl-life-refs.toml"), symmetry=False)
    assert 'Refs = "counted"' in export.config and 'Mutant = "none"' in export.config
    assert re.search(r"^PROPERTY ReleaseWhenUnreferenced$", export.config, re.M)
    assert "counts \\in [Peers -> [Nodes -> [refs : Nat, users : Nat]]]" in export.protocol
    mutant = export_model(load_model(MODELS / "bus1-impl-life-refs-multi-mutant.toml"), symmetry=False)
    assert 'Mutant = "one_user_ref"' in mutant.config
    assert not re.search(r"^PROPERTY ReleaseWhenUnreferenced$", mutant.config, re.M)
    holder = export_model(load_model(MODELS / "bus1-impl-life-release-ties.toml"), symmetry=False)
    assert 'Refs = "holder"' in holder.config


# -- counted references, releases, transfers and signals at lock level ---------------------

LOCK_REFS_RESET = {"b": ["reset"], "c": ["send 1 +0", "release 0"]}
"""bus1-impl-lock-refs with b resetting instead of releasing and destroying (3,530 states):
the reset releases b's handle to node 0 with no lock while c's message holds a reference,
and flushes that message, whose handle it then releases in a lock2 section of its own."""


def test_the_lock_level_export_of_counted_references():
    """bus1-impl-lock-refs and its mutant export: the configuration sets LockLevel, the
    staging and install locks, Refs = "counted" and the mutant; the model module has the
    releases; the module has the release's fast path (no lock) and slow path (lock2), the
    deferred unref (a thread of its own after the section) and the lockdep assertions of
    bus1_handle_queue_release and bus1_handle_flush_release."""
    for name, mutant in (("bus1-impl-lock-refs", "none"), ("bus1-impl-lock-refs-mutant", "one_user_ref")):
        export = export_model(load_model(MODELS / f"{name}.toml"), symmetry=False)
        for setting in ("LockLevel = TRUE", "StageLock = TRUE", "InstallLock = TRUE", 'Refs = "counted"',
                        f'Mutant = "{mutant}"'):
            assert re.search(rf"^    {re.escape(setting)}$", export.config, re.M), (name, setting)
        assert export.module.count('[kind |-> "release", nodes |-> <<0>>') == 2, name
        assert any(re.search(r"^PROPERTY ReleaseWhenUnreferenced$", text, re.M)
                   for file, text in export.files.items() if file.endswith(".cfg")), name
    for piece in ("IF StaysReferenced(p, CurOp(p).nodes[1], FALSE)",
                  "THEN HandleReleaseBody(p, chk) /\\ LThread(p, NoThread, locks)",
                  'ELSE MutexLock(p, Section("start", Lock2(p, OwnerLock(CurOp(p).nodes[1], p))), chk)',
                  "ELSE IF LockLevel THEN [W1 EXCEPT !.un = Append(@, n)]",
                  'ELSE IF th.what = "unref" THEN UnrefBody(p, chk)',
                  'Held(o, a, "ld_queue_release")', 'Held(o, a, "ld_flush_release")'):
        assert piece in export.protocol, piece


def test_every_state_of_a_lock_level_reset_with_counted_references_round_trips():
    """Every state of LOCK_REFS_RESET encodes as TLA+ values and decodes back, distinct
    states staying distinct (tests/test_tla_export.py round-trips each model's first 200
    states only, before any unref): among them the unref thread after a peek's drop (resume
    1) and after the reset's flush (resume 0), and counted references in flight."""
    from ordercheck.specs import bus1_locks as bl
    from ordercheck.specs.bus1_impl import THREADS
    model = model_checking("bus1-impl-lock-refs", ["lockdep_held"], script=LOCK_REFS_RESET)
    spec = model.spec
    adapter = export_model(model, symmetry=False).adapter
    seen = set(spec.init_states())
    todo = list(seen)
    while todo:
        for _label, t in spec.next_states(todo.pop()):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert len(seen) == 3530
    texts = set()
    resumes = set()
    read = Reader()
    for state in seen:
        text = adapter.encode_text(state)
        assert adapter.view(adapter.decode(read.state(text))) == adapter.view(state)
        texts.add(tuple(sorted(text.items())))
        resumes |= {th[3][0] for th in state[THREADS] if th and th[0] == bl.W_UNREF}
    assert len(texts) == len(seen)
    assert resumes == {0, 1}
    assert any(any(state[spec.refs_at]) for state in seen)


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_agrees_on_counted_references_at_lock_level_with_a_reset():
    """LOCK_REFS_RESET (the flush's deferred unref, a reset's release with no lock; the
    findings page's rows cover bus1-impl-lock-refs and its mutant): TLC finds our 3,530
    states and verdicts."""
    from ordercheck.checker.cli.tla import cross_check

    cc = cross_check(model_checking("bus1-impl-lock-refs", ["release_when_unreferenced", "lockdep_held"],
                                    script=LOCK_REFS_RESET))
    assert_tlc_agrees(cc)
    assert cc.final.distinct == 3530
    assert {p: r.status for p, r in cc.ours.properties.items()} == {"release_when_unreferenced": "holds",
                                                                    "lockdep_held": "holds"}


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_agrees_on_a_signal_and_a_transfer_at_lock_level():
    """A signal (no data lock) and a transfer (a section under lock2(target, owner)) at lock
    level while the owner destroys the node (197 states): TLC finds our states and verdicts."""
    from ordercheck.checker.cli.tla import cross_check

    model = model_checking("bus1-impl-lock-refs", ["causal", "valid_handle_notified", "lockdep_held"], refs="holder",
                           nodes="a", handles=["b"], script={"a": ["destroy 0"], "b": ["signal c", "transfer 0 c"]})
    cc = cross_check(model)
    assert_tlc_agrees(cc)
    assert cc.final.distinct == 197


TEMPLATE_MUTATIONS = [
    ("the last release without lock2",
     'ELSE MutexLock(p, Section("start", Lock2(p, OwnerLock(CurOp(p).nodes[1], p))), chk)',
     'ELSE MutexLock(p, Section("start", <<p>>), chk)'),
    ("the deferred unref inside the peek section",
     "ELSE IF LockLevel THEN [W1 EXCEPT !.un = Append(@, n)]",
     "ELSE IF FALSE THEN [W1 EXCEPT !.un = Append(@, n)]"),
]


def cross_check_mutated(old: str, new: str, model, tmp_path, monkeypatch):
    """The cross-check of ``model`` with Bus1Impl.tla's template changed: its one ``old`` text
    replaced by ``new`` (in a copy of the templates under ``tmp_path``)."""
    import shutil

    from ordercheck.checker.cli.tla import cross_check
    from ordercheck.tla import export as tla_export

    templates = tmp_path / "templates"
    shutil.copytree(tla_export.TEMPLATES, templates)
    path = templates / "bus1_impl.tla.j2"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setattr(tla_export, "TEMPLATES", templates)
    tla_export._environment.cache_clear()
    try:
        return cross_check(model, confirm=False)
    finally:
        tla_export._environment.cache_clear()


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
@pytest.mark.parametrize(("what", "old", "new"), TEMPLATE_MUTATIONS, ids=[m[0] for m in TEMPLATE_MUTATIONS])
def test_a_template_mutation_of_the_lock_level_releases_makes_tlc_disagree(what, old, new, tmp_path, monkeypatch):
    """The cross-check is not vacuous on the lock-level references: with the template's
    last release taking only the holder's lock, or a dropped message's handles released
    inside the peek section, TLC finds lockdep_held violated (handle.c:171, the owner's lock
    not held) where our engine finds it holds, and the cross-check reports a mismatch."""
    cc = cross_check_mutated(old, new, model_checking("bus1-impl-lock-refs-mutant", ["lockdep_held"]),
                             tmp_path, monkeypatch)
    assert cc.ours.properties["lockdep_held"].status == "holds"
    assert cc.tlc["lockdep_held"].status == "violated", what
    assert cc.mismatches, what


# -- each action writes what it changes ---------------------------------------------------

WORLD_VARIABLES = {"queues", "handles", "nodeFlags", "txs", "pcs", "sent", "logs", "drops", "know", "notes",
                   "valid", "dequeued", "counts"}
"""The variables a step changes (the others: the Init choices, which no step changes, and the
lock level's locks and threads, which LStep's bodies set)."""


PER_VARIABLE_BODIES = {"IoctlSendBody", "SignalBody", "PeerDisconnectBody", "MessageStageBody", "TxStageSyncBody", "QueueTickBody",
                       "QueueSyncBody", "QueueCommitStagedBody", "JoinPushBody", "StageStore", "StageAdd",
                       "HandleReleaseBody", "PeerFlush", "RelAllBody", "ReleaseBody", "UnrefBody", "HandleDestroyLockedBody",
                       "QueueFlushBody", "InstallBody", "RecvFrom", "PeekFrom", "AcquireFrom", "TransferFrom"}
"""The operators that set variables, each for its step: from the current ones (``queues' =
[queues EXCEPT ...]``) or from the record of the objects its step changes (``queues' = r.q``:
a release's, a flush's, a peek's, a receive's, an acquire's, a transfer's)."""


def partition(protocol: str, name: str, body: str) -> None:
    """``body`` (operator ``name``'s text) sets some of the variables and lists every other
    one as UNCHANGED, each exactly once (NoWrites: a step of checks only sets none)."""
    ghost = re.search(r"^ghostVars == <<([^>]*)>>", protocol, re.M)
    assert ghost, "no ghostVars tuple"
    tuples = {"ghostVars": [v.strip() for v in ghost.group(1).split(",")]}
    assigned = [v for v in re.findall(r"(\w+)' = ", body) if v in WORLD_VARIABLES]
    listed = re.findall(r"UNCHANGED <<([^>]*)>>", body)
    assert len(listed) == 1, name
    unchanged = [x for v in listed[0].split(",") for x in tuples.get(v.strip(), [v.strip()])]
    assert sorted(assigned + unchanged) == sorted(WORLD_VARIABLES), name
    assert unchanged and (assigned or name == "NoWrites"), name


def definitions(protocol: str) -> dict[str, str]:
    """Each top-level operator of ``protocol`` and its text (its line and the indented ones
    after it)."""
    out: dict[str, str] = {}
    name = None
    for line in protocol.splitlines(keepends=True):
        head = re.match(r"^(\w+)(?:\([^=]*\))? ==", line)
        if head:
            name = head.group(1)
            out[name] = line
        elif name is not None and line.startswith(" "):
            out[name] += line
        else:
            name = None
    return out


def test_each_action_sets_some_variables_and_leaves_the_others_unchanged():
    """Every operator of Bus1Impl.tla that sets a variable is a step's (PER_VARIABLE_BODIES):
    it sets some of the variables and lists every other one as UNCHANGED, each exactly once,
    none sets them all, and its last conjunct is its checks (StepChecks), once every variable
    is set. No step is composed on a record of every variable (no WorldOf, no ...Writes
    operator from one); NoWrites (a step that only takes a lock or fails a check) sets none."""
    export = export_model(load_model(MODELS / "bus1-impl-lock-refs.toml"), symmetry=False)
    protocol = export.protocol
    defs = definitions(protocol)
    writers = {name for name, text in defs.items() if set(re.findall(r"(\w+)' = ", text)) & WORLD_VARIABLES}
    assert writers == PER_VARIABLE_BODIES, writers ^ PER_VARIABLE_BODIES
    for name in sorted(PER_VARIABLE_BODIES):
        body = defs[name]
        assert "W." not in body and "WorldOf" not in body, name
        assert re.search(r"/\\ chk \\subseteq StepChecks\(p, [^\n]*\n$", body), name   # the last conjunct
        partition(protocol, name, body)
    no_writes = re.search(r"^NoWrites == (UNCHANGED <<[^>]*>>)$", protocol, re.M)
    assert no_writes, "no NoWrites"
    partition(protocol, "NoWrites", no_writes.group(1))
    assert "WorldOf" not in protocol and not re.search(r"^\w+Writes\(", protocol, re.M)
    assert "Commit(" not in protocol.replace("CommitStaged(", "").replace("CommitUnstaged(", "") \
        .replace("CommitSynthetic(", "").replace("CommitHandle(", "")


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_an_action_that_leaves_a_variable_it_changes_unchanged_makes_tlc_disagree(tmp_path, monkeypatch):
    """The cross-check sees an action's writes: with the commit round's handles (a destroyed
    anchor's commit timestamp, Stamp) listed as UNCHANGED instead of set in QueueCommitStagedBody,
    TLC's states are not our engine's on bus1-impl-destroy-race and the cross-check reports a
    mismatch."""
    old = ("        /\\ handles' = Stamp(handles, addr, tx.T, tx.grp)\n"
           "        /\\ txs' = [txs EXCEPT ![p] = Finished(rest)]\n"
           "        /\\ pcs' = IF Ends(rest) THEN Advance(pcs, p) ELSE pcs\n"
           "        /\\ know' = IF Ends(rest) THEN Knowing(know, p, {tx.msg}) ELSE know\n"
           "        /\\ UNCHANGED <<nodeFlags, sent,")
    new = ("        /\\ txs' = [txs EXCEPT ![p] = Finished(rest)]\n"
           "        /\\ pcs' = IF Ends(rest) THEN Advance(pcs, p) ELSE pcs\n"
           "        /\\ know' = IF Ends(rest) THEN Knowing(know, p, {tx.msg}) ELSE know\n"
           "        /\\ UNCHANGED <<handles, nodeFlags, sent,")
    cc = cross_check_mutated(old, new, model_checking("bus1-impl-destroy-race", ["clock_parity"]), tmp_path, monkeypatch)
    assert cc.mismatches

# -- join_sealed = "wait" (G's fix) at lock level -------------------------------------------


def sealed_model(constants: dict, join_sealed: str, properties: list[str]):
    """A lock-level configuration of tests/test_bus1_fixes.py where an acquire races a sealed
    destruction, with ``join_sealed`` and ``properties``."""
    from ordercheck.checker.loading.modelfile import model_from_dict

    return model_from_dict({"spec": "bus1_impl", "constants": {**constants, "join_sealed": join_sealed},
                            "check": {"properties": properties}}, "sealed.toml")


def test_the_lock_level_export_sets_join_sealed():
    """A lock-level model exports with JoinSealed as set, no refusal: the configuration has
    LockLevel and JoinSealed = "wait" (the code's "synthetic" without the fix), and the module
    guards the acquire section's first lock and its body with LSealedAcq."""
    from tests.test_bus1_fixes import SEALED_SEND

    for setting in ("wait", "synthetic"):
        export = export_model(sealed_model(SEALED_SEND, setting, ["deadlock_free"]), symmetry=False)
        assert "LockLevel = TRUE" in export.config and f'JoinSealed = "{setting}"' in export.config
    protocol = export.protocol or ""
    assert 'ELSE IF th.what \\in {"tx", "start"} /\\ LSealedAcq(p) THEN SealedBackOff(p, th, chk)' in protocol
    assert "ELSE IF LSealedAcq(p) THEN FALSE" in protocol and "ELSE ~LSealedAcq(p) /\\ MutexLock(" in protocol


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_agrees_on_g_fix_at_lock_level():
    """join_sealed = "wait" at lock level on a's transfer racing c's destruction
    (tests/test_bus1_fixes.py's SEALED_TRANSFER: 191 states with the fix, where the transfer
    both waits before its first lock and drops its locks on finding the destruction sealed;
    208 with the code's J2): TLC finds the same states. (The payload-handle case, SEALED_SEND,
    4,346 states, was run by hand: docs/explanation/bus1-implementation.md.)"""
    from ordercheck.checker.cli.tla import cross_check
    from tests.test_bus1_fixes import SEALED_TRANSFER

    cc = cross_check(sealed_model(SEALED_TRANSFER, "wait", ["deadlock_free"]))
    assert_tlc_agrees(cc)
    assert cc.final.distinct == 191 and cc.tlc["deadlock_free"].status == "holds"


# -- the per-step checks: each one the template raises can fail in TLC -----------------------

STEP_CHECK_MODELS = [
    # (what, a model whose Python spec fails each of its properties, the operators whose step fails them)
    ("handle_valid at the section level",
     lambda: model_checking("bus1-impl-handle-tie", ["handle_valid_iff_before_destroy"]), ["InstallOne"]),
    ("handle_valid at lock level",
     lambda: model_checking("bus1-impl-lock-install-fixed", ["handle_valid_iff_before_destroy"], liveness="code"),
     ["InstallBody"]),
    ("queue checks at lock level",
     lambda: model_checking("bus1-impl-lock-stage-race",
                            ["clock_monotonic", "no_insert_before_front", "dequeue_increasing", "no_warn"]),
     ["Dequeue", "WarnChecks"]),
    ("destroy rules at the section level",
     lambda: model_checking("bus1-impl-destroy-race", ["delivered_iff_before_destroy", "owner_no_message_after_destroy"]),
     ["IoctlRecv", "DataDropped"]),
    ("destroy rules at lock level",
     lambda: model_checking("bus1-impl-lock-refs", ["delivered_iff_before_destroy", "owner_no_message_after_destroy"]),
     ["PeekBody", "DataDropped"]),
]
"""Finding C's model (the code's is_live_at, section level: InstallOne), the same race at lock
level with the code's is_live_at (bus1-impl-lock-install-fixed with liveness = "code":
InstallBody, the liveness check under the receiver's lock), and finding A's model (two
unlocked stagers on one queue: a clock moved back, an insert before the front, a dequeue out
of order and the queue's other WARN_ONs), and a message received after its node's destruction
and after the owner saw the destroy notification, section level (bus1-impl-destroy-race:
IoctlRecv, a data message received; DataDropped, one dropped) and lock level
(bus1-impl-lock-refs: PeekBody, DataDropped)."""


def operator(protocol: str, name: str) -> str:
    """The definition of TLA+ operator ``name`` in ``protocol``: its first line (at column
    0) and the indented lines after it."""
    lines = protocol.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"{name}(\(.*\))? ==", line))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), len(lines))
    return "\n".join(lines[start:end])


@pytest.mark.parametrize("case", range(len(STEP_CHECK_MODELS)), ids=[c[0] for c in STEP_CHECK_MODELS])
def test_each_step_check_our_engine_finds_failing_is_raised_in_the_module(case):
    """Without TLC: our engine finds each property of the case's model violated, the
    configuration checks it as an action property ``[][~Fails("check")]_vars`` (or
    ClockMonotonic's own step formula) in one of the export's configurations (a model
    expecting it violated: its own), and the operator of the step that fails it in the
    code raises it (Dequeue: dequeue_increasing; WarnChecks: the queue's WARN_ONs; InstallOne
    and InstallBody through HandleValidChecks; IoctlRecv and PeekBody through RecvChecks): a
    template with that raise dropped fails here."""
    from ordercheck.checker.engine.run import Options, check_model

    _what, make, operators = STEP_CHECK_MODELS[case]
    model = make()
    names = [prop.name for prop in model.properties]
    result = check_model(model, Options(progress=False, stop_when_decided=False))
    assert {p: r.status for p, r in result.properties.items()} == dict.fromkeys(names, "violated")
    export = export_model(model, symmetry=False)
    protocol = export.protocol or ""
    configs = "\n".join(text for file, text in export.files.items() if file.endswith(".cfg"))
    raised = "\n".join(operator(protocol, name) for name in operators)
    if "InstallOne" in operators or "InstallBody" in operators:
        raised += "\n" + operator(protocol, "HandleValidChecks")
        assert all("HandleValidChecks(" in operator(protocol, name) for name in operators)
    if "IoctlRecv" in operators or "PeekBody" in operators:
        raised += "\n" + operator(protocol, "RecvChecks")
        assert all("RecvChecks(" in operator(protocol, name) for name in operators if name != "DataDropped")
    for prop in names:
        if prop == "clock_monotonic":
            step = operator(protocol, "ClockMonotonicStep")
            assert "queues'[p].clock >= queues[p].clock" in step and "queues'[p].flush >= queues[p].flush" in step
            assert re.search(r"^PROPERTY ClockMonotonic$", configs, re.M)
            continue
        name = next(m[1] for m in re.finditer(r'^([A-Z]\w*) == \[\]\[~Fails\("(\w+)"\)\]_vars$', protocol, re.M)
                    if m[2] == prop)
        assert re.search(rf"^PROPERTY {name}$", configs, re.M), prop
        assert f'"{prop}"' in raised, (prop, operators)


def test_no_action_property_of_bus1impl_is_vacuous():
    """Every ``[][~Fails("check")]_vars`` of Bus1Impl.tla names a check some step raises
    (the name appears elsewhere in the module): an action property no step can fail would be
    a check that cannot fail."""
    protocol = export_model(load_model(MODELS / "bus1-impl-lock-stage-race.toml"), symmetry=False).protocol or ""
    checks = re.findall(r'^[A-Z]\w* == \[\]\[~Fails\("(\w+)"\)\]_vars$', protocol, re.M)
    assert len(checks) >= 14
    for check in checks:
        assert protocol.count(f'"{check}"') >= 2, check


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
@pytest.mark.parametrize("case", range(len(STEP_CHECK_MODELS)), ids=[c[0] for c in STEP_CHECK_MODELS])
def test_tlc_reports_each_step_check_our_engine_finds_failing(case):
    """Each property our engine finds violated on the case's model TLC reports violated
    too, as the action property of the same name, and replays our counterexample: a template
    that no longer raises it (or raises it on fewer steps) fails here."""
    from ordercheck.checker.cli.tla import cross_check

    _what, make, _operators = STEP_CHECK_MODELS[case]
    cc = cross_check(make())
    assert_tlc_agrees(cc)
    for prop, mine in cc.ours.properties.items():
        assert mine.status == cc.tlc[prop].status == "violated", prop
        assert cc.confirmed[prop] is True, prop


# -- ClockMonotonic's flush clause, on a step that moves only the flush timestamp back ------

FLUSH_HARNESS = """---- MODULE FlushBack ----
(* Bus1Impl's ClockMonotonic on a one-peer-at-a-time spec of its own: a queue's flush *)
(* timestamp moves from 0 to 2 (Up) and, with Back, from 2 to 0 again; its clock and  *)
(* every other variable stay unchanged, so a Back step moves only the flush back.     *)
EXTENDS {module}
Up(p) == queues[p].flush = 0 /\\ queues' = [queues EXCEPT ![p].flush = 2] /\\ UNCHANGED <<{others}>>
Back(p) == queues[p].flush = 2 /\\ queues' = [queues EXCEPT ![p].flush = 0] /\\ UNCHANGED <<{others}>>
HarnessNext == \\E p \\in Peers : {steps}
HarnessSpec == Init /\\ [][HarnessNext]_vars
====
"""


def declared_variables(protocol: str) -> list[str]:
    """The names of a module's ``VARIABLES`` declaration (one per line, each followed by
    its comment)."""
    block = protocol.split("\nVARIABLES ", 1)[1].split("\n\n", 1)[0]
    return [m[1] for line in block.splitlines() if (m := re.match(r"\s*(\w+)", line))]


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
@pytest.mark.parametrize(("steps", "violated"), [("Up(p) \\/ Back(p)", True), ("Up(p)", False)],
                         ids=["flush moved back", "flush moved up only"])
def test_clock_monotonic_fails_a_step_that_moves_only_the_flush_timestamp_back(steps, violated, tmp_path):
    """No model moves a queue's flush timestamp back while its clock stays (finding A's
    lost update moves the clock back), so the cross-checks cannot see ClockMonotonicStep's
    flush clause. TLC evaluates it here on a harness module that extends an export
    (bus1-impl-late-join-failed) with a spec of its own: a step moving only one queue's flush
    timestamp back must violate the action property ClockMonotonic (a template without the
    flush clause fails here), and the same spec without that step must satisfy it (a
    property false of every step would fail here)."""
    from ordercheck.tla.tlc import run_tlc

    export = export_model(load_model(MODELS / "bus1-impl-late-join-failed.toml"), symmetry=False)
    export.write(tmp_path)
    protocol = export.protocol or ""
    names = declared_variables(protocol)
    assert names[:2] == ["queues", "handles"] and "counts" in names, names
    harness = FLUSH_HARNESS.format(module=export.name, others=", ".join(n for n in names if n != "queues"), steps=steps)
    (tmp_path / "FlushBack.tla").write_text(harness, encoding="utf-8")
    constants = export.files[f"{export.name}.cfg"].split("\nSPECIFICATION ", 1)[0]
    (tmp_path / "FlushBack.cfg").write_text(f"{constants}\nSPECIFICATION HarnessSpec\nPROPERTY ClockMonotonic\n",
                                            encoding="utf-8")
    run = run_tlc(tmp_path, "FlushBack", "FlushBack.cfg", timeout=300)
    if violated:
        assert (run.kind, run.violated) == ("action", "ClockMonotonic"), run.output[-2000:]
        assert len(run.trace) == 3, run.output[-2000:]  # the initial state, Up, Back
    else:
        assert run.complete, run.output[-2000:]
        assert run.distinct is not None and run.distinct > 1
