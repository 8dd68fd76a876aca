"""bus1 as implemented: the queue operations, the spec's steps, its findings and the refinement."""

from __future__ import annotations

import functools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker.engine.bfs import Bounds, search
from ordercheck.checker.engine.fingerprint import check_vocabulary
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.specs import bus1_queue as bq
from ordercheck.specs.bus1_impl import Bus1Impl
from ordercheck.specs.bus1_refinement import Bus1Refinement
from tests import bus1_diagrams
from tests.conftest import MODELS, ROOT

QUIET = Options(progress=False)

# -- the queue, function by function ----------------------------------------------------


def consistent(q: bq.Queue) -> bool:
    """front/leftmost agree with the tree (what bus1_queue_remove maintains)."""
    _c, _f, left, front, entries = q
    want_left = entries[0][2] if entries else 0
    want_front = want_left if entries and not entries[0][0] & 1 else 0
    return left == want_left and front == want_front


def test_tick_is_by_two_and_sync_takes_the_maximum():
    q, ts = bq.tick(bq.EMPTY)
    assert ts == 2 and q[0] == 2
    q, clock, warn = bq.sync(q, 6)
    assert clock == 6 and warn == 0
    q, clock, warn = bq.sync(q, 4)
    assert clock == 6 and warn == 0
    assert bq.sync(q, 7)[2] & bq.W_ODD_TS


def test_stage_inserts_odd_above_the_clock_and_blocks():
    q, _ = bq.tick(bq.EMPTY)  # clock 2
    q, _w = bq.add(q, 9, 0, 1, 2)  # a committed entry at 2
    assert q[3] == 9  # readable
    q, clock, warn = bq.stage(q, 10, 2, 4)
    assert (clock, warn) == (4, 0)
    assert bq.key_of(q[4], 10) == (5, 2, 10)
    assert q[3] == 9  # the staging entry sits behind the committed one
    q, warn = bq.remove(q, 9)
    assert warn == 0 and q[2] == 10 and q[3] == 0  # only a staging entry left: not readable
    q, warn = bq.commit_staged(q, 10, 6)
    assert warn & bq.W_ADD_GUARD  # the clock was not synced to 6: the commit is skipped
    q, _c, _w = bq.sync(q, 6)
    q, warn = bq.commit_staged(q, 10, 6)
    assert warn == 0 and q[3] == 10 and bq.key_of(q[4], 10) == (6, 2, 10)


def test_commit_unstaged_ticks_the_queue_and_commits():
    q, ts, warn = bq.commit_unstaged(bq.EMPTY, 3, 7)
    assert (ts, warn, q[0], q[3]) == (2, 0, 2, 3)


def test_commit_synthetic_refuses_on_an_empty_queue_and_when_it_would_be_front():
    q, _c, _w = bq.sync(bq.EMPTY, 4)
    q2, queued, warn = bq.commit_synthetic(q, 5, 3, 4)
    assert not queued and q2 == q and warn == 0
    q, _w = bq.add(q, 8, 0, 1, 2)
    q2, queued, _w = bq.commit_synthetic(q, 5, 3, 4)
    assert queued and q2[3] == 8  # behind the existing front
    # Equal (ts, group) and a lower address: the code's test lets it in, and it becomes front.
    q, _w = bq.add(bq.sync(bq.EMPTY, 4)[0], 8, 0, 3, 4)
    q2, queued, warn = bq.commit_synthetic(q, 5, 3, 4)
    assert queued and q2[3] == 5 and warn & bq.W_SYNTH_FRONT and warn & bq.W_BEFORE_FRONT


def test_flush_leaves_front_null_above_a_committed_survivor():
    q, _c, _w = bq.sync(bq.EMPTY, 6)
    q, _w = bq.add(q, 1, 0, 1, 2)
    q, _w = bq.add(q, 2, 0, 2, 6)
    q, removed, warn = bq.flush(q, 2)
    assert [e[2] for e in removed] == [1] and warn == 0
    assert q[2] == 2 and q[3] == 0 and not consistent(q)


OPS = st.lists(
    st.tuples(st.sampled_from(["stage", "commit", "remove", "unstaged", "pop"]), st.integers(1, 6), st.integers(0, 6)),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_queue_operations_keep_front_consistent(ops):
    """Every operation but flush keeps the cached pointers equal to the tree's (queue.c)."""
    q = bq.EMPTY
    stamps: dict[int, int] = {}
    for kind, addr, arg in ops:
        k = bq.key_of(q[4], addr)
        if kind == "stage" and k is None and addr not in stamps:
            q, _clock, warn = bq.stage(q, addr, addr, 2 * arg)
            stamps[addr] = bq.key_of(q[4], addr)[0]
        elif kind == "commit" and k is not None and k[0] & 1:
            ts = k[0] + 1 + 2 * arg
            q, _c, _w = bq.sync(q, ts)
            q, warn = bq.commit_staged(q, addr, ts)
            assert not warn & bq.W_ADD_GUARD  # synced first, so the commit is never skipped
        elif kind == "remove" and k is not None:
            q, warn = bq.remove(q, addr)
            assert warn == 0
        elif kind == "unstaged" and k is None and addr not in stamps:
            q, ts, warn = bq.commit_unstaged(q, addr, 0)
            stamps[addr] = ts
        elif kind == "pop" and q[3]:
            q, warn = bq.remove(q, q[3])
            assert warn == 0
        assert consistent(q), q
        assert q[0] % 2 == 0
        assert all(e[0] <= q[0] + 1 for e in q[4])


# -- the spec -------------------------------------------------------------------------------


def impl(**constants) -> Bus1Impl:
    return Bus1Impl(**constants)


def test_states_hold_only_ints_and_describe_is_json():
    spec = impl(peers=3, nodes="ab", handles=["c", "c"], script={"a": ["destroy 0"], "c": ["send 1 +0"]})
    frontier = list(spec.init_states())
    seen = 0
    while frontier and seen < 300:
        s = frontier.pop()
        assert check_vocabulary(s) is None
        json.dumps(spec.describe(s))
        for label, t in spec.next_states(s):
            assert label[0].startswith("bus1_") or label[0] == "signal"
            frontier.append(t)
        seen += 1


def test_ties_all_explores_every_group_order():
    spec = impl(peers=3, nodes="abc", handles=["bc", "ac", "ab"], script={"a": ["send 1,2"], "b": ["send 0,2"]})
    assert len(spec.init_states()) == 2
    fixed = impl(**{**spec.values, "ties": "fixed"})
    assert len(fixed.init_states()) == 1


@pytest.mark.parametrize(
    "constants, field",
    [
        ({"nodes": "az"}, "constants.nodes"),
        ({"handles": ["a"]}, "constants.handles"),
        ({"script": {"b": ["send 5"]}}, "constants.script.b[0]"),
        ({"script": {"b": ["destroy 0"]}}, "constants.script.b[0]"),
        ({"script": {"a": ["reset", "send 0"]}}, "constants.script.a[1]"),  # the reset released node 0
        ({"script": {"a": ["destroy 0", "destroy 0"]}}, "constants.script.a[1]"),
        ({"fresh": [7]}, "constants.fresh"),
        ({"script": {"a": ["send 1"]}}, "constants.script.a[0]"),  # a holds no handle to node 1
        ({"script": {"a": ["jump"]}}, "constants.script.a[0]"),
        ({"shared_groups": "a"}, "constants.shared_groups"),
        ({"shared_groups": "az"}, "constants.shared_groups"),
        ({"shared_groups": "aa"}, "constants.shared_groups"),
        ({"shared_groups": "ab", "locks": True}, "constants.shared_groups"),
        ({"mutant": "shared_unserialized"}, "constants.mutant"),
        ({"join_failure": "lost"}, "constants.join_failure"),
        ({"transfer": "steps", "locks": True}, "constants.transfer"),
    ],
)
def test_bad_constants_name_the_field(constants, field):
    from ordercheck.checker.api.errors import InputError

    data = {"spec": "bus1_impl", "constants": {"peers": 2, "nodes": "ab", **constants}}
    with pytest.raises(InputError) as info:
        model_from_dict(data, "m.toml")
    assert info.value.field == field


def test_bad_script_on_the_command_line_exits_2_with_one_line(run_cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('spec = "bus1_impl"\n[constants]\nnodes = "ab"\nscript = { a = ["send 7"] }\n')
    result = run_cli("check", path)
    assert result.exit_code == 2
    assert "constants.script.a[0]" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


# -- the models and their findings ------------------------------------------------------------

SLOW = ("bus1-impl-synthetic-causality", "bus1-impl-synthetic-causality-fixed")
"""G's model and its fix model (over 100,000 states each): G's by its own test below, the fix
model's by ``ordercheck check models/`` only."""
FAST = sorted(p.stem for p in MODELS.glob("bus1-impl-*.toml") if p.stem not in SLOW)

PAGE = ROOT / "docs" / "explanation" / "bus1-implementation.md"
ROW = re.compile(
    r"^\| (?P<finding>[^|]+?) \| `(?P<model>[\w-]+)\.toml` \((?P<states>[\d,]+)\) \| `(?P<prop>\w+)` violated, "
    r"(?P<steps>\d+) steps \| [^|]+ \| (?:`(?P<fix>[\w-]+)\.toml` \((?P<fix_states>[\d,]+)\): holds|-) \|$", re.M)
PROSE = re.compile(r"`(bus1-impl-[\w-]+)\.toml`(?: \(|,)((?:(?!bus1-impl-)[^()])*?)([\d,]+)\s+states\b")


@functools.cache
def page_claims() -> tuple[dict[str, set[int]], list[re.Match]]:
    """The findings page's numbers: per model, every state count the page gives it (the
    table's and the prose's "`MODEL.toml` (..., N states"), and the evidence table's rows
    (finding model, states, property violated, steps of the shortest trace, fix model where
    it holds, its states)."""
    text = PAGE.read_text(encoding="utf-8")
    states: dict[str, set[int]] = {}
    rows = list(ROW.finditer(text))
    for r in rows:
        states.setdefault(r["model"], set()).add(int(r["states"].replace(",", "")))
        if r["fix"]:
            states.setdefault(r["fix"], set()).add(int(r["fix_states"].replace(",", "")))
    for m in PROSE.finditer(text):
        states.setdefault(m[1], set()).add(int(m[3].replace(",", "")))
    return states, rows


def test_the_findings_page_has_its_evidence_table():
    states, rows = page_claims()
    assert len(rows) >= 16 and {r["finding"].split(",")[0] for r in rows} >= set("CFDEGABHI")
    assert set(states) <= set(FAST) | set(SLOW), set(states) - set(FAST)


@pytest.mark.parametrize("name", FAST)
def test_model_meets_its_expectations(name):
    """Each model's verdicts are its [expect]'s, and the numbers the findings page gives for it
    (docs/explanation/bus1-implementation.md: distinct states, the shortest trace's steps, the
    fix model's verdict) are this run's."""
    model = load_model(MODELS / f"{name}.toml")
    result = check_model(model, QUIET)
    assert result.exit_code() == 0, {n: (p.status, p.expected) for n, p in result.properties.items()}
    assert result.stats.bound is None
    states, rows = page_claims()
    assert states.get(name, {result.stats.distinct_states}) == {result.stats.distinct_states}, "the page's states"
    for r in rows:
        if r["model"] == name:
            v = result.properties[r["prop"]]
            assert (v.status, len(v.trace) - 1) == ("violated", int(r["steps"])), r[0]
        if r["fix"] == name:
            assert result.properties[r["prop"]].status == "holds", r[0]
    assert_diagrams_current(result, name)


def assert_diagrams_current(result, name: str) -> None:
    """The findings page's diagrams of ``name`` are what its shortest counterexamples draw."""
    for _finding, model, prop in bus1_diagrams.DIAGRAMS:
        if model == name:
            kept = bus1_diagrams.path(model, prop).read_text(encoding="utf-8")
            assert kept == bus1_diagrams.drawing(result, model, prop), "stale: run python -m tests.bus1_diagrams"


def test_the_findings_page_embeds_each_diagram():
    """Each finding's section embeds its diagram, and no other drawing is kept."""
    text = PAGE.read_text(encoding="utf-8")
    for finding, model, prop in bus1_diagrams.DIAGRAMS:
        section = re.search(rf"^## {finding}\. (.*?)(?=^## )", text, re.M | re.S)
        assert section is not None and f"](bus1/{model}--{prop}.svg)" in section[0], finding
    kept = {p.name for p in bus1_diagrams.OUT.glob("*.svg")}
    assert kept == {bus1_diagrams.path(m, p).name for _f, m, p in bus1_diagrams.DIAGRAMS}


def verdict(name: str, prop: str):
    model = load_model(MODELS / f"{name}.toml")
    result = check_model(model, Options(progress=False))
    return model, result.properties[prop]


def actions(trace) -> list[str]:
    return [s.label[0] for s in trace[1:]]


def test_finding_c_message_after_destroy_notification():
    _m, v = verdict("bus1-impl-destroy-race", "owner_no_message_after_destroy")
    assert v.status == "violated"
    last, before = v.trace[-1], v.trace[-2]
    assert last.label[0] == "bus1_peer_ioctl_recv"
    assert before.label[0] == "bus1_peer_peek" and "destroy notification" in before.label[2]
    assert last.label[3] == before.label[3]  # equal timestamps: is_live_at's <= lets it through


def test_finding_c_for_handles():
    _m, v = verdict("bus1-impl-handle-tie", "handle_valid_iff_before_destroy")
    assert v.status == "violated"
    assert v.trace[-1].label[-1] == "n0"  # reported valid
    assert "destroy notification n0" in v.trace[-2].label[2]


def test_finding_f_failed_late_join():
    _m, v = verdict("bus1-impl-late-join-failed", "valid_handle_notified")
    assert v.status == "violated"
    joins = [s.label for s in v.trace[1:] if s.label[0] == "bus1_handle_acquire"]
    assert joins and joins[0][-1] == "J3 failed"


def test_finding_d_synthetic_entry_becomes_front():
    _m, v = verdict("bus1-impl-synthetic-front", "no_insert_before_front")
    assert v.status == "violated"
    assert v.trace[-1].label[0] == "bus1_handle_acquire" and v.trace[-1].label[-1] == "J2"
    assert "synthetic entry became front" in v.explanation


def test_finding_e_flush_leaves_the_queue_unreadable():
    _m, v = verdict("bus1-impl-reset-race", "front_consistent")
    assert v.status == "violated" and v.trace[-1].label[0] == "bus1_queue_flush"
    _m, v = verdict("bus1-impl-reset-race", "queue_drained")
    assert v.status == "violated" and "front is NULL" in v.explanation


def test_finding_g_synthetic_join_breaks_causality():
    """The model's shortest causal counterexample is finding G at c (30 steps): d's J2 join
    sees the destruction INVALID, signals c, and c receives its own later message before its
    destroy notification. (Before issue 35 it was a failed join at d, made a causality break
    only by recording the late joiner d as a destination of the destruction.)"""
    model = load_model(MODELS / "bus1-impl-synthetic-causality.toml")
    result = check_model(model, Options(progress=False))
    g = result.properties["causal"]
    assert g.status == "violated"
    states, rows = page_claims()  # the findings page's numbers for G are this run's
    (row,) = [r for r in rows if r["model"] == "bus1-impl-synthetic-causality"]
    assert (int(row["steps"]), states["bus1-impl-synthetic-causality"]) == (len(g.trace) - 1,
                                                                          {result.stats.distinct_states})
    labels = [s.label for s in g.trace[1:]]
    assert any(lab[0] == "bus1_handle_acquire" and lab[-1] == "J2" for lab in labels)
    assert not any(lab[0] == "bus1_handle_acquire" and "failed" in lab[-1] for lab in labels)
    assert any(lab[0] == "signal" for lab in labels)
    assert labels[-1][0] == "bus1_peer_ioctl_recv" and labels[-1][1] == 2  # c receives
    assert g.explanation.startswith("c delivered c1 while a1, which happened before it, had not been delivered")
    assert len(labels) == 30
    assert_diagrams_current(result, "bus1-impl-synthetic-causality")


def test_counterexamples_are_shortest():
    model = load_model(MODELS / "bus1-impl-destroy-race.toml")
    prop = model.spec.property_map()["owner_no_message_after_destroy"]
    found = search(model.spec, [prop])
    _init, path = found.store.path(found.decisions[prop.name].index)
    depth = len(path)
    assert prop.name not in search(model.spec, [prop], Bounds(max_depth=depth - 1)).decisions


def with_liveness(name: str, liveness: str, extra: tuple = ()) -> dict:
    """Search model ``name`` with the given liveness rule for its C-finding properties, the
    ``destroy_notified`` witness and ``extra``; returns the decisions (violations of the
    ``always`` properties, witnesses of the ``sometimes`` ones)."""
    import tomllib

    data = tomllib.loads((MODELS / f"{name}.toml").read_text())
    spec = model_from_dict({"spec": "bus1_impl", "constants": {**data["constants"], "liveness": liveness}}, name).spec
    wanted = {"owner_no_message_after_destroy", "delivered_iff_before_destroy", "handle_valid_iff_before_destroy",
              "destroy_notified"}
    props = [p for p in spec.properties() if p.name in wanted] + list(extra)
    return search(spec, props, stop_when_decided=False).decisions


def dropped_as_destroyed():
    from ordercheck.checker import Property
    from ordercheck.specs.bus1_impl import DROPS, R_DESTROYED

    return Property.sometimes(
        "dropped_as_destroyed", lambda s: "dropped" if any(r == R_DESTROYED for _q, _m, r in s[DROPS]) else None
    )


@pytest.mark.parametrize(
    "name, finding",
    [("bus1-impl-destroy-race", "owner_no_message_after_destroy"),
     ("bus1-impl-handle-tie", "handle_valid_iff_before_destroy")],
)
def test_comparing_the_full_key_removes_finding_c_and_still_notifies(name, finding):
    """The fix the findings doc states for C: ``bus1_handle_is_live_at`` compares the entry's
    whole queue key ``(ts, group, address)`` with the destruction entry's. Under the code's
    rule the finding shows; under the fix it is gone, while destroy notifications are still
    received (``destroy_notified``: a rule that dropped every notification would also "remove"
    the finding) and, for the destination, the racing message is sometimes dropped as ordered
    after the destruction (the race is still run, and decided the other way)."""
    code = with_liveness(name, "code")
    assert finding in code
    fixed = with_liveness(name, "key", (dropped_as_destroyed(),))
    for prop in ("owner_no_message_after_destroy", "delivered_iff_before_destroy", "handle_valid_iff_before_destroy"):
        assert prop not in fixed, f"{prop} still broken under the key comparison"
    assert "destroy_notified" in fixed, "no destroy notification is ever received: the fix is vacuous"
    if name == "bus1-impl-destroy-race":
        assert "dropped_as_destroyed" in fixed


# -- refinement ----------------------------------------------------------------------------------


def test_refinement_holds_and_breaks_where_expected():
    for name, expected in [
        ("bus1-impl-refines-multicast", "holds"),
        ("bus1-impl-refines-destroy", "violated"),
        ("bus1-impl-mutant-no-staging", "violated"),
    ]:
        _m, v = verdict(name, "refines_bus1")
        assert v.status == expected, name


def test_a_broken_projection_is_caught(monkeypatch):
    """Swap deliveries to the wrong peer in the projection: the product search must object."""
    spec = Bus1Refinement(peers=3, nodes="abc", handles=["bc", "ac", "ab"], script={"a": ["send 1,2"]}, ties="fixed")
    original = spec.impl.observe

    def wrong(before, label, after):
        return tuple(("deliver", (e[1] + 1) % 3, e[2]) if e[0] == "deliver" else e for e in original(before, label, after))

    props = spec.properties()
    assert not search(spec, props, stop_when_decided=False).decisions
    monkeypatch.setattr(spec.impl, "observe", wrong)
    spec._cache.clear()
    assert "refines_bus1" in search(spec, props).decisions


def test_abstract_side_is_the_wiki_spec():
    spec = Bus1Refinement(peers=2, nodes="ab", handles=["b", "a"], script={"a": ["send 1"]})
    (a,) = [spec.abstract_init()]
    after = spec.advance(frozenset([a]), ("send", 0, 0, 0b10))
    (b,) = after
    assert b[0][2][0] == (0, 0, 0, 0)  # bus1's transaction slot: message 0, blocking
    delivered = spec.advance(after, ("deliver", 1, 0))
    assert delivered and all(x[0][3][1][1] for x in delivered)  # b logged the delivery
    assert not spec.advance(after, ("deliver", 0, 0))  # a is no destination


def test_model_file_round_trip():
    m = load_model(MODELS / "bus1-impl-unicast.toml")
    assert m.spec_name == "bus1_impl" and m.expect["fifo"] == "holds"


ATOMIC = [n for n in FAST if "-lock-" not in n and "refines" not in n and "mutant" not in n]


def test_front_is_always_linked_with_atomic_sections():
    """front_linked (a dangling front, bus1_queue_peek returning a removed entry) holds in every
    model with atomic critical sections; at lock level it breaks by the unlocked stage
    (tests/test_bus1_locks.py)."""
    for name in ATOMIC:
        model = load_model(MODELS / f"{name}.toml")
        props = [p for p in model.spec.properties() if p.name == "front_linked"]
        assert not search(model.spec, props, stop_when_decided=False).decisions, name
