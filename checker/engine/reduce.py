"""State-space reductions: symmetry over interchangeable processes, and partial-order
reduction driven by the read/write footprints a spec declares.

**Symmetry.** A spec lists the permutations of its processes under which the
configuration is symmetric (:meth:`ordercheck.checker.api.reductions.Symmetry.symmetries`) and renames processes
in a state (:meth:`~ordercheck.checker.api.reductions.Symmetry.permute`). The engine stores, for each state, the
smallest fingerprint over the state's orbit, so one state per orbit is expanded. The
frontier keeps the *concrete* state that was found first, and parent links record
positions among the concrete parent's actions, so a rebuilt trace is a real run of the
unreduced model and replays as before.

**Partial-order reduction** (stubborn sets over processes). For a state, the spec gives
each process's footprint now and later (:meth:`~ordercheck.checker.api.reductions.PartialOrder.footprints`). The
enabled actions of a set ``T`` of processes are explored instead of all when

* *independence* (C1, the stubborn-set conditions): nothing any process outside ``T``
  may do, now or later, writes what a member's next actions read or write, or reads
  what they write; and updates (commuting writes such as ``x := max(x, v)``) on either
  side meet no read or plain write on the other (``T`` is closed under that conflict,
  starting from one process). Then every sequence of outside actions commutes with
  ``T``'s enabled actions and neither enables nor disables any action of ``T``;
* *visibility* (C2): none of ``T``'s enabled actions writes or updates a variable that
  a property under visibility reads;
* *cycle proviso* (C3, for breadth-first search): a state is expanded fully when one of
  its ample successors was already discovered (earlier, or on the current level). Not
  for a spec that declares ``acyclic`` (:func:`needs_proviso`, below).

*Which* set is explored matters for the size of the reduced graph, not for soundness:
every closed ``T`` meeting C1 (and C2 where needed) will do, and the proofs never ask
that neighbouring states choose alike. ``T`` is closed from each process with enabled
actions in turn; among the candidates that leave some enabled action out, the one with
the fewest enabled actions wins (it branches least), then the one whose members have the
fewest variables in their *later* footprints (the processes nearest to done; the idea:
finishing work before starting new work keeps fewer transactions in flight, so fewer
conflicts later), then the lowest process. The choice is a function of the footprints, the owners
of the successors and the visible mask only, so it is memoised by them and is the same
in every worker. Measured on bus1, 3 peers multicasting: the later-footprint tie-break
saves 2-5% of states over the lowest process alone; preferring the process that acted
last costs 5-7% more, picking among the smallest candidates at random 20% more
(consistent choices let interleavings meet again); ``benchmarks/por_states.py``.

A property needs visibility (C2) unless it is decided at terminal states only
(``eventually``), or it is ``stable`` and the spec is ``acyclic``. Sets meeting C1
preserve every reachable terminal state; in an acyclic spec every run ends in one, and
a stable property that fails somewhere fails at every terminal state after it, so those
properties keep their verdicts with C1 alone. Counterexamples under reduction are
shortest within the reduced graph, not always shortest in the full one.

The cycle proviso (C3) goes with visibility, except on a spec that declares
``acyclic``: there it is skipped, because the declaration is checked
(:mod:`ordercheck.checker.engine.declarations`). C3 only stops the *ignoring* problem, a
step left out for ever along a cycle of the reduced graph; where the reduced graph has
no cycle, every reduced run ends in a terminal state and sets meeting C0 (a state with
enabled steps keeps one), C1 and C2 keep every property under visibility (the usual
induction: a step of a violating run that lies in the set is taken first, and commutes
to the front; a run with none of its steps in the set stays enabled after an invisible
step of the set, so the reduced path grows, which it can do only finitely often). A
cycle of the reduced graph is a cycle of the spec (its edges are real steps), and in
breadth-first order it shows as an edge to a state at its source's depth or shallower,
which every engine notices on a spec that declares ``acyclic`` (``maybe_cyclic``; no
reduced search runs under a depth bound); :func:`~ordercheck.checker.engine.declarations.check_acyclic` then
decides whether the reduced graph has a cycle from the edges the local search
logged (:mod:`ordercheck.checker.engine.edges`: one process's, or the shard workers'
gathered; none found: as if no such edge had been met), and otherwise (a cycle, or no log) searches the unreduced graph depth first, and a
cycle ends the run with bad input (exit code 2), a search it could not finish makes
every verdict without a trace ``unknown`` (exit code 3). A search cut by a bound (``max_states``, the time limit, memory) leaves
every verdict without a trace ``unknown`` anyway. So skipping C3 trusts nothing: a wrong
declaration whose cycle would have hidden a violation is still refused. (The converse
also holds without deferred steps: sets meeting C0 and C1 keep an infinite run from
every state that has one, so in a finite graph the reduced graph has a cycle exactly
when the spec has one.) Shard workers decide the same edges (a successor visited before
the level); the Spark engine searches unreduced.

With symmetry on, partial-order reduction is used only where no property needs
visibility (the combination is sound for terminal states and stable properties; the
visibility-and-proviso case is left unreduced by symmetry rather than argued about).

**Solo steps.** A spec may name, in a state, one step that is a stubborn set by itself
(:meth:`~ordercheck.checker.api.reductions.PartialOrder.solo_step`): no run of other steps disables it, and it
commutes with every such run (reaching the same state taken before it or after). The
set ``{t}`` then meets C1 over single actions (the key action ``t`` stays enabled, and
every outside run commutes with it), which is all the proofs above ask of a set when no
property needs visibility; so where none does, and no step is deferred, the engine
expands that step alone where the set of whole processes it found (if any) has more
than one enabled step. (Preferring solo steps even to a one-step set of processes
reduced less on small Lamport configurations: choices made alike in neighbouring
states let interleavings meet again.) It is how a peer
delivers a settled queue head while its own receipts wait (Lamport, Skeen): a set of
processes would have to take the peer's receipts too.

**Deferred steps.** A spec may call some steps *deferrable*
(:meth:`~ordercheck.checker.api.reductions.PartialOrder.deferrable`): they leave the history as it is, commute
with one another and enable nothing else, and whatever history a run reaches through
one, some run reaches without it, doing its work later in a step that is not deferred
(a hold-back peer's arrival of a message it cannot deliver yet: the message can as well
wait in its unordered channel and be taken by the step that delivers it). With partial-
order reduction on, every checked property reading the history alone, and the spec
``acyclic``, and no checked property an ``eventually`` one, such steps are left out wherever another step is enabled, and where only
they are, one is taken alone. The graph so pruned (the *lazy* graph) reaches every
history the full one does, and each of its terminal states is a terminal state of the
full graph with every history of one there; so every property over the history keeps
its verdict, and its traces are real runs. It need not keep a cycle of the spec, though
(one may lie behind an early deferred step), so the check of the ``acyclic`` declaration
can miss a cycle there (``LateLoop`` in the tests). No other verdict rests on the
declaration (the lazy graph keeps every history); an ``eventually`` verdict does (a fair
cycle violates one), which is why no step is deferred where one is checked. Stubborn sets are then sought among the steps
not deferred, with footprints read off all the successors: a deferred step is never
enabled in the lazy graph while a member's step is, so the outside runs that C1 speaks
of contain none, and the sets stay stubborn in the lazy graph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from ordercheck.checker.api.errors import SpecError
from ordercheck.checker.api.reductions import PartialOrder, partial_order_of, symmetry_of
from ordercheck.checker.api.spec import Property, Spec, State
from ordercheck.checker.engine.table import mix


@dataclass(frozen=True)
class Reductions:
    """The reductions a search applies: the symmetry group and the POR settings."""

    group: tuple[tuple[int, ...], ...] = ()
    por: bool = False
    visible: int = 0  # variable bits that properties under visibility read
    proviso: bool = False  # the cycle proviso is needed (needs_proviso)
    defer: bool = False  # leave the spec's deferrable steps out (PartialOrder.deferrable)
    check: bool = False  # check the declarations these reductions rest on (--check-reductions)

    @property
    def symmetry(self) -> bool:
        return bool(self.group)

    def as_dict(self, spec: Spec | None = None) -> dict[str, bool]:
        """What was applied, as ``--json`` reports it: symmetry, partial-order
        reduction, and, of the latter's refinements, deferred arrivals, (given the
        ``spec``) solo steps, and whether its cycle proviso ran (:func:`needs_proviso`)."""
        return {
            "symmetry": self.symmetry,
            "por": self.por,
            "deferred_arrivals": self.por and self.defer,
            "solo_steps": spec is not None and solo_steps(spec, self),
            "cycle_proviso": self.por and self.proviso,
        }


def solo_steps(spec: Spec, red: Reductions) -> bool:
    """Whether a search with ``red`` takes ``spec``'s solo steps
    (:meth:`~ordercheck.checker.api.reductions.PartialOrder.solo_step`): under partial-order reduction, where no
    property needs visibility and nothing is deferred (see the module docstring)."""
    return red.por and not red.defer and not red.visible and partial_order_of(spec).solos()


def needs_proviso(spec: Spec, visible: int) -> bool:
    """Whether partial-order reduction of ``spec`` with the visible mask ``visible``
    needs the cycle proviso: where some property needs visibility (``visible`` not 0),
    unless the spec declares ``acyclic``, a declaration every engine checks (see the
    module docstring)."""
    return visible != 0 and not spec.acyclic


def plan(spec: Spec, props: Sequence[Property], symmetry: bool, por: bool) -> tuple[Reductions, list[str]]:
    """Which reductions apply to ``spec`` for ``props``, and notes on any not applied."""
    notes: list[str] = []
    group: tuple[tuple[int, ...], ...] = ()
    if symmetry:
        sym = symmetry_of(spec)
        group = tuple(tuple(p) for p in sym.symmetries())
        if not group:
            notes.append(f"symmetry: {sym.symmetry_refusal()}; not applied")
    use_por = False
    visible = 0
    po = partial_order_of(spec)
    if por:
        refusal = po.por_refusal()
        if refusal is not None:
            notes.append(f"partial-order reduction: {refusal}; not applied")
        elif not spec.acyclic and any(p.kind == "eventually" for p in props):
            notes.append(
                "partial-order reduction: not applied with an `eventually` property on a spec that may "
                "have cycles (the reduced graph could hide one)"
            )
        else:
            for p in props:
                if p.kind == "eventually" or (p.stable and spec.acyclic):
                    continue
                visible |= po.visible_mask(p.reads if p.reads is not None else (p.over,) if p.over == "history" else None)
            if visible == -1:
                notes.append("partial-order reduction: a checked property may read every variable; not applied")
            elif visible and group:
                notes.append(
                    "partial-order reduction: not combined with symmetry when properties need visibility; "
                    "symmetry only"
                )
            else:
                use_por = True
    # The check of `acyclic` can miss a cycle behind a deferred step, and an `eventually`
    # verdict rests on that declaration: with one checked, nothing is deferred.
    defer = (use_por and spec.acyclic and po.defers() and all(_history_only(spec, p) for p in props)
             and not any(p.kind == "eventually" for p in props))
    return Reductions(group, use_por, visible, use_por and needs_proviso(spec, visible), defer), notes


def _history_only(spec: Spec, prop: Property) -> bool:
    """Whether ``prop`` reads nothing but the history (so a deferrable step, which
    leaves the history as it is, is invisible to it)."""
    reads = prop.reads if prop.reads is not None else (prop.over,) if prop.over == "history" else None
    return reads is not None and all(kind in ("history", "log", "sent") for kind in reads)


_MISSING = object()
_UNKNOWN = object()
_BY_FOOTPRINTS = object()
_DEFER = object()  # rkey for _choose: the reductions defer the spec's deferrable steps
_ONE_PROCESS = object()  # memo key marker of _choose_deferring: one process owns the steps not deferred
_MEMO_LIMIT = 1 << 16
_MEMOS: WeakKeyDictionary[Spec, dict[int, dict]] = WeakKeyDictionary()


def stubborn(
    spec: Spec, state: State, succ: Sequence[tuple[tuple, State]], visible: int
) -> tuple[list[int], int] | None:
    """The smallest stubborn set found: its positions in ``succ`` and the bitmask of its
    processes ``T`` (members with no enabled action included), or ``None``.

    For each process ``p`` with enabled actions, the set ``T`` of processes is closed
    from ``{p}``: a process ``q`` joins when what some member may do next conflicts with
    anything ``q`` may do later (a write against a read, write or update; a read against
    a write or update; an update against a read or write: two updates commute). No
    action of a process outside ``T`` can then touch what ``T``'s next actions read or
    write, so ``T``'s enabled actions commute with any sequence of outside actions, and
    none of them is enabled or disabled by it. The smallest proper set found wins (ties:
    the fewest variables in the members' later footprints, then the one closed from the
    lowest process; see the module docstring).
    """
    hit = _choose(partial_order_of(spec), _memo_for(spec, visible), state, succ, visible)
    return None if hit is None else (list(hit[0]), hit[1])


def _choose(
    po: PartialOrder, memo: dict, state: State, succ: Sequence[tuple[tuple, State]], visible: int, rkey: Any = _UNKNOWN
) -> tuple[tuple[int, ...], int] | None:
    """:func:`stubborn` with the spec's partial-order hooks ``po``, memoised in ``memo``
    (the spec's, for ``visible``), with the positions as a tuple (shared: not to be changed); ``rkey`` is ``state``'s reduction
    key when the caller has it.

    The choice depends on nothing but the footprints, who owns which successor, and the
    visible mask; states repeat those patterns endlessly, so it is computed once per
    pattern. The memo is keyed by the spec's reduction key when it has one (equal keys,
    equal footprints and owners), else by the footprints and owners themselves.
    """
    if rkey is _DEFER:
        return _choose_deferring(po, memo, state, succ, visible)
    if rkey is _UNKNOWN:
        rkey = po.reduction_key(state)
    if rkey is not None:
        hit = memo.get(rkey, _MISSING)
        if hit is _MISSING:
            hit = _remember(memo, rkey, _fresh(po, state, succ, visible))
        return hit
    actors = _actors(po, succ)
    if None in actors or len(set(actors)) < 2:
        return None
    fps = _six(po.successor_footprints(state, succ))
    key = (_BY_FOOTPRINTS, tuple(fps), actors)  # the marker: no reduction key holds it
    hit = memo.get(key, _MISSING)
    if hit is _MISSING:
        hit = _remember(memo, key, _stubborn(fps, actors, visible))
    return hit


def _choose_deferring(
    po: PartialOrder, memo: dict, state: State, succ: Sequence[tuple[tuple, State]], visible: int
) -> tuple[tuple[int, ...], int] | None:
    """:func:`_choose` with the spec's deferrable steps (:meth:`~ordercheck.checker.api.reductions.PartialOrder.deferrable`)
    left out: the stubborn set is sought among the other steps (footprints from every
    successor, so the deferred steps count in what their processes touch), and where no
    proper one is found every other step is taken. Where every step is deferrable, the
    first alone is taken (they commute and enable nothing else)."""
    deferrable = po.deferrable
    deferred = tuple([i for i, (label, _t) in enumerate(succ) if deferrable(label)])
    if not deferred:
        return _choose(po, memo, state, succ, visible, None)
    actors = _actors(po, succ)
    if len(deferred) == len(succ):
        who = actors[0]
        return (0,), (1 << who) if who is not None else 0
    skip = frozenset(deferred)
    if None in actors:
        return tuple(i for i in range(len(succ)) if i not in skip), 0
    if len({a for i, a in enumerate(actors) if i not in skip}) == 1:
        # One process owns every step not deferred: each set _stubborn closes holds them
        # all, so it takes every such step whatever the footprints say (only how many
        # processes there are counts, the same in every state): keyed without them.
        key = (_ONE_PROCESS, actors, deferred)
        hit = memo.get(key, _MISSING)
        if hit is _MISSING:
            hit = _remember(memo, key, _stubborn(_six(po.successor_footprints(state, succ)), actors, visible, skip))
        return hit
    fps = _six(po.successor_footprints(state, succ))
    key = (_BY_FOOTPRINTS, tuple(fps), actors, deferred)
    hit = memo.get(key, _MISSING)
    if hit is _MISSING:
        hit = _remember(memo, key, _stubborn(fps, actors, visible, skip))
    return hit


def _fresh(
    po: PartialOrder, state: State, succ: Sequence[tuple[tuple, State]], visible: int
) -> tuple[tuple[int, ...], int] | None:
    """The choice of :func:`stubborn` computed from scratch."""
    actors = _actors(po, succ)
    if None in actors or len(set(actors)) < 2:
        return None
    return _stubborn(_six(po.successor_footprints(state, succ)), actors, visible)


def _actors(po: PartialOrder, succ: Sequence[tuple[tuple, State]]) -> tuple[int | None, ...]:
    actor = po.actor
    return tuple([actor(label) for label, _t in succ])


def _remember(memo: dict, key: Any, hit: Any) -> Any:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = hit
    return hit


def _six(fps: Sequence[tuple[int, ...]]) -> list[tuple[int, int, int, int, int, int]]:
    """Footprints with the two update masks (zero when a spec declares only four)."""
    if fps and len(fps[0]) != 6:
        return [(*fp, 0, 0) for fp in fps]
    return list(fps)


def _memo_for(spec: Spec, visible: int) -> dict:
    """The stubborn-set memo of ``spec`` for the visible mask ``visible`` (a reduction
    key means something only to the spec instance that made it)."""
    memos = _MEMOS.get(spec)
    if memos is None:
        memos = _MEMOS[spec] = {}
    memo = memos.get(visible)
    if memo is None:
        memo = memos[visible] = {}
    return memo


def _stubborn(
    fps: Sequence[tuple[int, int, int, int, int, int]],
    actors: tuple[int, ...],
    visible: int,
    skip: frozenset[int] = frozenset(),
) -> tuple[tuple[int, ...], int] | None:
    """:func:`stubborn` on its inputs: footprints, each successor's process, visible
    mask; successors at the positions ``skip`` (deferred steps) are left out of every
    set, and with any left out the fallback is every other successor (not ``None``)."""
    by: dict[int, list[int]] = {}
    for i, a in enumerate(actors):
        if i not in skip:
            by.setdefault(a, []).append(i)
    n = len(fps)
    # conflicts[x]: the processes whose later actions conflict with x's next ones.
    later = [(fp[2] | fp[3] | fp[5], fp[3] | fp[5], fp[2] | fp[3]) for fp in fps]
    conflicts = []
    for x in range(n):
        nr, nw, _lr, _lw, nu, _lu = fps[x]
        m = 0
        for q in range(n):
            if q != x:
                any_q, wu_q, rw_q = later[q]
                if nw & any_q or nr & wu_q or nu & rw_q:
                    m |= 1 << q
        conflicts.append(m)
    best: list[int] | None = None
    best_members = 0
    best_key: tuple = ()
    total = len(actors) - len(skip)
    for p in by:
        if (fps[p][1] | fps[p][4]) & visible:
            continue
        members = 1 << p
        grown = conflicts[p] & ~members
        while grown:
            members |= grown
            new = 0
            for q in range(n):
                if grown >> q & 1:
                    new |= conflicts[q]
            grown = new & ~members
        chosen = [i for x in range(n) if members >> x & 1 for i in by.get(x, ())]
        if len(chosen) >= total:
            continue
        if visible and any((fps[x][1] | fps[x][4]) & visible for x in range(n) if members >> x & 1 and x in by):
            continue
        # Ties: the set whose processes have the least left to do (fewest variables in
        # their later footprints), then the lowest process.
        rest = 0
        for x in range(n):
            if members >> x & 1:
                rest |= later[x][0]
        key = (len(chosen), rest.bit_count(), p)
        if best is None or key < best_key:
            best, best_key, best_members = chosen, key, members
    if best is None:
        if skip:
            return tuple(i for i in range(len(actors)) if i not in skip), (1 << n) - 1
        return None
    best.sort()  # successors in the order next_states lists them
    return tuple(best), best_members


class Expander:
    """Expands states: enabled actions (reduced when POR applies) and fingerprints
    (canonical over the symmetry group when symmetry applies). With ``red.check``
    (``--check-reductions``) each state expanded is handed to ``checker`` (a
    :class:`ordercheck.checker.engine.declarations.ReductionCheck`), which checks the declarations
    its expansion used."""

    def __init__(self, spec: Spec, red: Reductions, checker: Any = None) -> None:
        self.spec = spec
        self.po = partial_order_of(spec)  # the spec itself when it declares partial-order hooks
        self.red = red
        self.fired: Counter[str] = Counter()  # successors generated per action name (coverage)
        self.checker = checker  # with red.check: a ordercheck.checker.engine.declarations.ReductionCheck

    def take_fired(self) -> dict[str, int]:
        """The successors generated per action name since the last call (coverage)."""
        out = dict(self.fired)
        self.fired.clear()
        return out

    def expand(self, states: Sequence[State]) -> tuple[list[int], list[int], list, list[int], list[bool]]:
        """Successors of ``states``: ``(owner, pos, succ, counts, reduced)``.

        ``owner`` the position in ``states`` of each successor's parent, ``pos`` its
        action position, ``succ`` the successor states, ``counts`` the number of
        successors per state, ``reduced`` whether each state got a proper ample set.
        With a reduction key (:meth:`ordercheck.checker.api.reductions.PartialOrder.reduction_key`) already in the
        memo, only the chosen processes' successors are generated; their positions are
        still those of the full :meth:`~ordercheck.checker.api.spec.Spec.next_states` list.
        """
        spec = self.spec
        po = self.po
        next_states = spec.next_states
        por = self.red.por
        if not por and self.checker is None:
            return self._expand_all(states)
        visible = self.red.visible
        memo = _memo_for(spec, visible)
        defer = por and self.red.defer
        solo = po.solo_step if por and solo_steps(spec, self.red) else None
        reduction_key = po.reduction_key if por and not defer and solo is None else None
        next_states_of = po.next_states_of
        fired = self.fired
        checker = self.checker
        owner: list[int] = []
        pos: list[int] = []
        succ: list = []
        counts: list[int] = []
        reduced: list[bool] = []
        for k, s in enumerate(states):
            rkey = reduction_key(s) if reduction_key is not None else None
            if rkey is not None and (found := memo.get(rkey, _MISSING)) is not _MISSING:
                # A known pattern: generate only the chosen processes' successors.
                out = None
                if checker is not None:
                    checker.state(s, found, rkey, None, "footprints")
                if found is not None:
                    chosen, members = found
                    some = next_states_of(s, members)
                    if len(some) != len(chosen):
                        raise SpecError(
                            f"{spec.name}: its reduction_key gives two states with different enabled processes "
                            "the same key, so a remembered reduction does not fit (make the key decide every "
                            "process's enabled steps, or run with --check-reductions to find the state)"
                        )
                    n = len(chosen)
                    for label, _t in some:
                        fired[label[0]] += 1
                    if n == 1:  # the common case: one process, one step
                        owner.append(k)
                        pos.append(chosen[0])
                        succ.append(some[0][1])
                    else:
                        owner.extend([k] * n)
                        pos.extend(chosen)
                        succ.extend([t for _l, t in some])
                    reduced.append(True)
                    counts.append(n)
                    continue
            else:
                out = next_states(s)
                if defer:
                    found = _choose(po, memo, s, out, visible, _DEFER) if out else None
                else:
                    found = _choose(po, memo, s, out, visible, rkey) if por and (len(out) > 1 or rkey is not None) else None
                how = "deferrable" if defer else "footprints"
                if solo is not None and len(out) > 1 and (found is None or len(found[0]) > 1):
                    i = solo(s, out)
                    if i is not None:
                        found = ((i,), 0)
                        how = "solo_step"
                if checker is not None:
                    checker.state(s, found, rkey if por else None, out, how)
            if found is None:
                if out is None:
                    out = next_states(s)
                n = len(out)
                for label, _t in out:
                    fired[label[0]] += 1
                owner.extend([k] * n)
                pos.extend(range(n))
                succ.extend([t for _l, t in out])
                reduced.append(False)
            else:
                chosen = found[0]
                n = len(chosen)
                for i in chosen:
                    fired[out[i][0][0]] += 1
                owner.extend([k] * n)
                pos.extend(chosen)
                succ.extend([out[i][1] for i in chosen])
                reduced.append(True)
            counts.append(n)
        return owner, pos, succ, counts, reduced

    def _expand_all(self, states: Sequence[State]) -> tuple[list[int], list[int], list, list[int], list[bool]]:
        """:meth:`expand` without a reduction or a check of one: every successor of
        every state, in the order ``next_states`` lists them (the action names counted
        as fired once for the whole batch)."""
        next_states = self.spec.next_states
        owner: list[int] = []
        pos: list[int] = []
        succ: list = []
        counts: list[int] = []
        kinds: list[str] = []
        add_kind, add_succ = kinds.append, succ.append
        for k, s in enumerate(states):
            out = next_states(s)
            n = len(out)
            for label, t in out:
                add_kind(label[0])
                add_succ(t)
            owner.extend([k] * n)
            pos.extend(range(n))
            counts.append(n)
        self.fired.update(kinds)
        return owner, pos, succ, counts, [False] * len(states)

    def complete(self, state: State, have: Sequence[int]) -> tuple[list[State], list[int]]:
        """The full expansion of ``state`` (the cycle proviso's), which already had the
        successors at the positions ``have`` (its reduced expansion's, a subset of the
        full list's positions): every successor in position order, and the positions not
        in ``have``. Only those are counted as fired (coverage counts each successor of a
        state's final expansion once)."""
        out = self.spec.next_states(state)
        had = set(have)
        fresh = [i for i in range(len(out)) if i not in had]
        if len(had) + len(fresh) != len(out):
            raise RuntimeError(f"{self.spec.name}: a reduced expansion's positions are not among the full expansion's")
        fired = self.fired
        for i in fresh:
            fired[out[i][0][0]] += 1
        return [t for _l, t in out], fresh

    def fingerprints(self, succ: Sequence[State]) -> np.ndarray:
        """Fingerprints (orbit minima under symmetry) of ``succ`` as ``uint64``."""
        if not self.red.group:
            return mix(np.fromiter(map(hash, succ), dtype=np.int64, count=len(succ)))
        permute = symmetry_of(self.spec).permute
        group = self.red.group
        hashes = []
        for t in succ:
            hashes.append(hash(t))
            for g in group:
                hashes.append(hash(permute(t, g)))
        fps = mix(np.asarray(hashes, dtype=np.int64)).reshape(len(succ), len(group) + 1)
        return fps.min(axis=1)
