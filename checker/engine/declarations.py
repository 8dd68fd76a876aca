"""Declarations a spec makes about itself, checked rather than trusted.

**Acyclic.** A spec that sets :attr:`~ordercheck.checker.api.spec.Spec.acyclic` claims that no run
revisits a state. The engines trust the claim where it saves work (partial-order
reduction drops its visibility condition for ``stable`` properties, its cycle proviso for
every property, and may defer steps; no fair-cycle search runs for ``eventually``
properties), so a wrong claim could make a property "hold" past a cycle. Every
engine notices, while it searches a spec that declares ``acyclic`` (or for an
``eventually`` property), an edge that can close a cycle: in breadth-first order, an
edge to a state visited before the level it leads to, i.e. at the depth of its source
or shallower, at the depth bound too (``maybe_cyclic`` of the search's outcome). Such an edge need not close one (two runs of different
lengths can meet in a state), so when a spec declaring ``acyclic`` has one,
:func:`check_acyclic` decides whether the graph the search explored has a cycle. The
local engine logged that graph's edges (:mod:`ordercheck.checker.engine.edges`; the shard
workers each their own, gathered into one after the search): when it has no cycle,
the declaration is confirmed as it would have been had no such edge been met (that
graph is the one the verdicts rest on). Otherwise (a cycle in the log, or no log to
decide from: Spark, a log the memory budget dropped, a checkpoint written without one) it searches
the state graph depth first for a cycle
(:func:`find_cycle`): without partial-order reduction, so over every edge the search
could have taken, with states identified as the search identified them (canonical
under its symmetry group), within a time and memory budget of its own. A cycle found
ends the check with bad input (exit code 2) naming the cycle's actions; none found
means the graph the search saw is acyclic, and no fair-cycle search is needed; a
search cut by its budget leaves the declaration unconfirmed, and every ``holds`` not
shown by a witness becomes ``unknown`` (:func:`undecided_verdicts`, exit code 3).
Specs that make no such claim keep the flag, which sends their ``eventually``
properties to the fair-cycle search (:mod:`ordercheck.checker.engine.liveness`).

**Reductions** (``--check-reductions``): :class:`ReductionCheck` is run by the
:class:`~ordercheck.checker.engine.reduce.Expander` on every state it expands, in every process
that expands (see its docstring); a failed check raises :class:`DeclarationBroken`
with the state, and :func:`declaration_error` turns it into one line with the
state's shortest trace.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.reductions import partial_order_of, symmetry_of
from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.spec import Action, Property, Spec, State

TRACE_STATES = 500_000
"""At most this many states are searched to find the shortest trace to a state named
in a failed check."""

TRACE_SECONDS = 120.0
"""Nor for longer than this."""


class DeclarationBroken(Exception):
    """A check of a spec's declaration failed on ``state`` (a concrete state, or
    ``None``). ``message`` says what was declared and what was found. It pickles as
    itself, so a worker process can report it."""

    def __init__(self, message: str, state: Any = None) -> None:
        super().__init__(message, state)
        self.message = message
        self.state = state

    def __str__(self) -> str:
        return self.message


def show(spec: Spec, action: Action) -> str:
    """An action label as a trace shows it (the spec's own reading, else the label)."""
    try:
        return rendering_of(spec).format_action(action)
    except Exception:  # a label the spec cannot format is shown as it is
        return repr(action)


# -- acyclic ------------------------------------------------------------------------------


CYCLE_SECONDS = 600.0
"""The cycle search of :func:`check_acyclic` runs at most this long (without a time
limit; with one, for what is left of it, at least :data:`CYCLE_MIN_SECONDS`)."""

CYCLE_MIN_SECONDS = 10.0
"""The least time the cycle search gets when the search used up the time limit."""

CYCLE_CHECK_EVERY = 1024
"""States the cycle search pushes between two looks at its clock and memory budget."""


class CycleSearchCut(Exception):
    """The cycle search stopped before it decided (``why``: what stopped it)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def find_cycle(
    spec: Spec,
    group: Sequence[tuple[int, ...]] = (),
    limit: int | None = None,
    deadline: float | None = None,
    budget: Any = None,
) -> tuple[list[Action] | None, list[Action], bool]:
    """A cycle of ``spec``'s state graph, searched depth first from the initial states
    over every enabled action, states identified by their fingerprints canonical under
    ``group`` (as the search that noticed the edge identified them).

    Returns ``(cycle, prefix, complete)``: the actions of the first cycle found (``None``
    if none), the actions of the run that leads to its first state, and whether the
    whole graph was searched (``False`` when ``limit`` states were reached first).
    Under a symmetry group, the cycle returns to a renaming of its first state, which
    is a real cycle of the spec when the group is (the renamed run repeats, and a
    renaming repeated returns to the identity).

    Raises :class:`CycleSearchCut` when ``deadline`` (a :func:`time.monotonic` time)
    passes or the memory ``budget`` (a :class:`~ordercheck.checker.engine.budget.MemoryBudget`)
    would be passed first (both looked at every :data:`CYCLE_CHECK_EVERY` states).
    """
    from ordercheck.checker.engine.budget import MemoryBoundReached
    from ordercheck.checker.engine.reduce import Expander, Reductions

    fingerprints = Expander(spec, Reductions(group=tuple(group))).fingerprints
    colour: dict[int, int] = {}  # 1: on the stack; 2: done (no cycle through it)
    on_stack: dict[int, int] = {}  # fingerprint -> depth on the stack
    next_states = spec.next_states
    # Each frame: [fingerprint, successors, their fingerprints, next position, action that led here].
    stack: list[list[Any]] = []
    watched = deadline is not None or budget is not None

    def push(state: State, fp: int, action: Action | None) -> None:
        out = list(next_states(state))
        fps = fingerprints([t for _a, t in out]).tolist() if out else []
        colour[fp] = 1
        on_stack[fp] = len(stack)
        stack.append([fp, out, fps, 0, action])
        if watched and len(colour) % CYCLE_CHECK_EVERY == 0:
            if deadline is not None and time.monotonic() > deadline:
                raise CycleSearchCut(f"its time ({_states(len(colour))} searched)")
            if budget is not None:
                try:
                    budget.check()
                except MemoryBoundReached as exc:
                    raise CycleSearchCut(f"the memory budget ({exc}; {_states(len(colour))} searched)") from None

    for init in spec.init_states():
        root = int(fingerprints([init])[0])
        if root in colour:
            continue
        push(init, root, None)
        while stack:
            frame = stack[-1]
            fp, out, fps, i, _how = frame
            if i == len(out):
                colour[fp] = 2
                del on_stack[fp]
                stack.pop()
                continue
            frame[3] = i + 1
            action, succ = out[i]
            nfp = fps[i]
            seen = colour.get(nfp)
            if seen == 1:
                start = on_stack[nfp]
                prefix = [f[4] for f in stack[1 : start + 1]]
                cycle = [f[4] for f in stack[start + 1 :]] + [action]
                return cycle, prefix, False
            if seen is None:
                if limit is not None and len(colour) >= limit:
                    return None, [], False
                push(succ, nfp, action)
    return None, [], True


def check_acyclic(model: Any, outcome: Any, group: Sequence[tuple[int, ...]], bounds: Any,
                  budget: Any = None) -> str | None:
    """Check the ``acyclic`` declaration of ``model``'s spec after a search whose
    ``outcome`` noticed an edge that can close a cycle (``outcome.maybe_cyclic``).

    A complete search whose logged graph (``outcome.edges``, an
    :class:`~ordercheck.checker.engine.edges.EdgeLog`: one process's, or the shard workers'
    gathered into one) has no cycle confirms the declaration
    at once: that graph is the one the search explored, in which meeting no such edge
    would have confirmed it too. Otherwise the state graph is searched for a cycle:

    Raises :class:`~ordercheck.checker.api.errors.InputError` naming the cycle when the spec
    declares ``acyclic`` and has one (a cycle found up to the symmetry ``group`` is
    searched for again without it, and a concrete one named). When it has none, clears
    ``maybe_cyclic`` (the graph is acyclic: no fair-cycle search is needed).

    Returns a warning when the cycle search stopped before it decided; the caller then
    turns every verdict that could rest on the declaration into ``unknown``
    (:func:`undecided_verdicts`). The cycle search walks the unreduced graph, so the
    model's ``max_states`` (a bound on the reduced search) is not its limit: it runs
    within the memory ``budget`` (a :class:`~ordercheck.checker.engine.budget.MemoryBudget`; the
    default one when ``None``) and for what is left of ``bounds.time_limit`` (at least
    :data:`CYCLE_MIN_SECONDS`; :data:`CYCLE_SECONDS` without a time limit); after a
    search cut short by a bound (whose graph may be infinite), also within four times
    the states it stored.

    Nothing is done for a spec that does not declare ``acyclic``, a search that
    noticed no such edge, or one stopped by the memory budget (which the graph search
    would pass; no verdict of it rests on the declaration, as none of it holds unless
    shown by a witness).
    """
    spec = model.spec
    edges, outcome.edges = getattr(outcome, "edges", None), None  # read here once, then freed
    if not spec.acyclic or not outcome.maybe_cyclic or outcome.bound == "memory":
        return None
    from ordercheck.checker.engine.budget import MemoryBudget, default_limit

    if edges is not None and outcome.complete and edges.acyclic(len(outcome.store)):
        outcome.maybe_cyclic = False  # the graph searched has no cycle (ordercheck.checker.engine.edges)
        return None
    del edges
    if budget is None:
        budget = MemoryBudget(default_limit())
    limit = None if outcome.complete else 4 * len(outcome.store) + 1000  # a cut search may have an infinite graph
    time_limit = getattr(bounds, "time_limit", None)
    seconds = CYCLE_SECONDS if time_limit is None else max(time_limit - outcome.seconds, CYCLE_MIN_SECONDS)
    deadline = time.monotonic() + seconds
    why = _states(limit) if limit is not None else ""
    renamed = bool(group)
    try:
        cycle, prefix, complete = find_cycle(spec, group, limit, deadline, budget)
    except CycleSearchCut as exc:
        cycle, prefix, complete, why = None, [], False, exc.why
    if cycle is not None and group:
        # A cycle up to renaming is a real one only if the group is a symmetry: name a
        # concrete one, and blame nothing on the declaration if the concrete graph has none
        # (undecided there, the cycle up to renaming is named).
        try:
            concrete, concrete_prefix, concrete_complete = find_cycle(spec, (), limit, deadline, budget)
        except CycleSearchCut:
            concrete, concrete_complete = None, False
        if concrete is not None:
            cycle, prefix, renamed = concrete, concrete_prefix, False
        elif concrete_complete:
            cycle, complete = None, True
    if cycle is not None:
        raise InputError(model.path, "", acyclic_message(spec, cycle, prefix, renamed))
    if not complete:
        return (f"acyclic: {spec.name} declares acyclic = True and the search met an edge to a state it had "
                f"visited at the same depth or shallower; whether it closes a cycle was not decided within "
                f"{why}, so every verdict that could rest on the declaration is unknown. To decide it, give the "
                f"run more time (time_limit, --time-limit) or memory (--memory-limit), or remove the declaration")
    outcome.maybe_cyclic = False
    return None


UNDECIDED = ("not decided: it could rest on the acyclic = True declaration, which the cycle search could not "
             "confirm (see the warning)")
"""The explanation of a verdict :func:`undecided_verdicts` turned into ``unknown``."""


def undecided_verdicts(result: Any) -> None:
    """After :func:`check_acyclic` could not decide the declaration: every verdict of
    ``result`` (a :class:`~ordercheck.checker.api.result.Result`) that no trace shows becomes
    ``unknown``: a ``holds`` not shown by a witness, and a ``violated`` without a
    counterexample (a ``sometimes`` property no reachable state was found to satisfy).
    Partial-order reduction spared ``stable`` properties its visibility condition, and
    ``eventually`` properties had no fair-cycle search, both on the declaration's word,
    so a wrong declaration can hide a witness as well as a counterexample. A verdict
    with its trace (a real run of the spec: a counterexample, a lasso, a witness)
    stands."""
    for prop in result.properties.values():
        if prop.status in ("holds", "violated") and not prop.trace:
            prop.status = "unknown"
            prop.explanation = UNDECIDED


def acyclic_message(spec: Spec, cycle: Sequence[Action], prefix: Sequence[Action], renamed: bool) -> str:
    """The line for a spec that declares ``acyclic`` and has ``cycle``."""
    loop = " -> ".join(show(spec, a) for a in cycle)
    n = len(prefix)
    start = (f"the state after {n} step{'s' if n != 1 else ''} ({'; '.join(show(spec, a) for a in prefix)})"
             if prefix else "an initial state")
    end = "a renaming of processes of that state" if renamed else "that state"
    return (f"spec {spec.name} declares acyclic = True but a run returns to a state: the cycle {loop} "
            f"starts at {start} and leads back to {end}; remove the declaration, or make every step "
            f"advance a bounded measure")


# -- failed reduction checks --------------------------------------------------------------


def trace_to(spec: Spec, state: State, max_states: int = TRACE_STATES,
             seconds: float = TRACE_SECONDS) -> list[Action] | None:
    """The actions of a shortest run from an initial state to ``state`` (breadth
    first, without reductions), or ``None`` when it is not found within the limits."""
    deadline = time.monotonic() + seconds
    parent: dict[State, tuple[State | None, Action | None]] = {}
    queue: deque = deque()
    for s in spec.init_states():
        if s not in parent:
            parent[s] = (None, None)
            queue.append(s)
    while queue:
        s = queue.popleft()
        if s == state:
            steps: list[Action] = []
            while True:
                prev, action = parent[s]
                if prev is None:
                    return steps[::-1]
                steps.append(action)
                s = prev
        if len(parent) > max_states or time.monotonic() > deadline:
            return None
        for action, t in spec.next_states(s):
            if t not in parent:
                parent[t] = (s, action)
                queue.append(t)
    return None


def declaration_error(model: Any, exc: DeclarationBroken) -> InputError:
    """The one line (exit code 2) for a failed check of ``model``'s declarations: what
    failed and the shortest trace to the state it failed on."""
    spec = model.spec
    where = ""
    if exc.state is not None:
        steps = trace_to(spec, exc.state)
        if steps is None:
            where = "; the state was not found again within the search's limits"
        elif not steps:
            where = "; at an initial state"
        else:
            n = len(steps)
            where = f"; at the state after {n} step{'s' if n != 1 else ''}: " + "; ".join(show(spec, a) for a in steps)
    return InputError(model.path, "--check-reductions", f"spec {spec.name}: {exc.message}{where}")


# -- reductions ---------------------------------------------------------------------------


def needs_visibility(spec: Spec, prop: Property) -> bool:
    """Whether partial-order reduction keeps ``prop`` only with the visibility
    condition (as :func:`ordercheck.checker.engine.reduce.plan` decides)."""
    return not (prop.kind == "eventually" or (prop.stable and spec.acyclic))


class ReductionCheck:
    """``--check-reductions``: the reductions' declarations, checked on each state the
    search expands (:meth:`state`), in the process that expands it.

    * **Independence** (partial-order reduction): where the search explores a proper
      subset of a state's enabled steps, each explored step and each step left out
      (but for steps the spec calls :meth:`~ordercheck.checker.api.reductions.PartialOrder.deferrable`, which
      need not commute with the others) must commute there: each stays enabled after
      the other, and both orders reach the same states. A solo step
      (:meth:`~ordercheck.checker.api.reductions.PartialOrder.solo_step`) is checked against every other step.
    * **Reduction keys**: a choice taken from the memo by the spec's
      :meth:`~ordercheck.checker.api.reductions.PartialOrder.reduction_key` must be the one computed afresh
      from the state's own footprints.
    * **Visibility**: with properties under the visibility condition, a step whose
      footprint writes nothing they read (by :meth:`~ordercheck.checker.api.reductions.PartialOrder.visible_mask`)
      must leave each one's outcome as it was.
    * **Deferral**: a step the spec calls deferrable must leave every checked
      property's outcome as it was (it leaves the history as it was).
    * **Stability** (on an acyclic spec, where it spares a property the visibility
      condition): a ``stable`` ``always`` property that fails on the state fails on
      each successor, a ``stable`` ``sometimes`` property met there stays met.
    * **Symmetry**: each renaming ``g`` of the group must give the state's renamed
      form (:meth:`~ordercheck.checker.api.reductions.Symmetry.permute`) the state's own canonical
      fingerprint, and every property the same outcome; and for one renaming (chosen
      by the state's hash, so the same in every process) the renamed state's
      successors must be the renamed successors (equal as sets of canonical
      fingerprints).

    A check that fails raises :class:`DeclarationBroken` with the state.
    """

    def __init__(self, spec: Spec, red: Any, props: Sequence[Property] = ()) -> None:
        from ordercheck.checker.engine.reduce import Expander, Reductions

        self.spec = spec
        self.po = partial_order_of(spec)  # the spec's partial-order hooks
        self.sym = symmetry_of(spec)  # the spec's symmetry hooks
        self.red = red
        self.props = list(props)
        self.visible_props = [p for p in self.props if needs_visibility(spec, p)] if red.por else []
        # `stable` spares a property the visibility condition on an acyclic spec (reduce.plan).
        self.stable_props = [p for p in self.props if p.stable and p.kind != "eventually"] if red.por and spec.acyclic else []
        self.canonical = Expander(spec, Reductions(group=red.group)).fingerprints
        self.states = 0  # states checked
        self.pairs = 0  # pairs of steps checked for commuting

    # -- a state --------------------------------------------------------------------------

    def state(self, state: State, found: tuple[tuple[int, ...], int] | None, rkey: Any,
              out: Sequence[tuple[Action, State]] | None, how: str) -> None:
        """Check ``state``, whose expansion chose ``found`` (positions and process mask,
        or ``None``: expanded fully) among ``out`` (its :meth:`~ordercheck.checker.api.spec.Spec.next_states`,
        ``None`` when not computed); ``rkey`` is the reduction key the choice was taken
        by (``None``: none); ``how`` names what chose it (``"footprints"``,
        ``"solo_step"``, ``"deferrable"``)."""
        spec = self.spec
        self.states += 1
        if out is None:
            out = spec.next_states(state)
        if rkey is not None:
            from ordercheck.checker.engine.reduce import _fresh

            fresh = _fresh(self.po, state, out, self.red.visible)
            if (None if fresh is None else tuple(fresh[0])) != (None if found is None else tuple(found[0])):
                raise DeclarationBroken(
                    f"reduction_key {rkey!r} does not decide the footprints and actors of its states: the "
                    f"search chose the steps at positions {_positions(found)} by it, the state's own "
                    f"footprints choose {_positions(fresh)}", state)
        if self.red.por and found is not None and len(found[0]) < len(out):
            chosen = found[0]
            if how == "deferrable":
                self._lazy(state, out, [i for i, (a, _t) in enumerate(out) if self.po.deferrable(a)])
            self._independence(state, out, chosen, how)
        if self.red.por and self.visible_props and out:
            self._visibility(state, out)
        if self.stable_props and out:
            self._stable(state, out)
        if self.red.group:
            self._symmetry(state, out)

    def _independence(self, state: State, out: Sequence[tuple[Action, State]], chosen: Sequence[int], how: str) -> None:
        spec = self.spec
        taken = set(chosen)
        left = [i for i in range(len(out)) if i not in taken]
        if how == "deferrable":
            deferrable = self.po.deferrable
            if not all(deferrable(a) for a, _t in out):
                left = [i for i in left if not deferrable(out[i][0])]  # deferred steps need not commute
        by_label: dict[Action, list[State]] = {}
        for a, t in out:
            by_label.setdefault(a, []).append(t)
        after: dict[int, dict[Action, set[State]]] = {}

        def steps_from(i: int) -> dict[Action, set[State]]:
            got = after.get(i)
            if got is None:
                got = {}
                for a, t in spec.next_states(out[i][1]):
                    got.setdefault(a, set()).add(t)
                after[i] = got
            return got

        positions: dict[Action, list[int]] = {}
        for i, (a, _t) in enumerate(out):
            positions.setdefault(a, []).append(i)
        what = {"footprints": "independent by its footprints", "solo_step": "a solo step, independent of every other step",
                "deferrable": "independent by its footprints"}[how]

        def then(first: Action, second: Action, pair: tuple[Action, Action]) -> set[State]:
            """Every state ``second`` reaches after ``first`` (both steps of ``out``)."""
            reached: set[State] = set()
            for k in positions[first]:
                nxt = steps_from(k).get(second)
                if not nxt:
                    found = f"{show(spec, second)} is not enabled after {show(spec, first)}"
                    raise DeclarationBroken(self._pair(*pair, what, found), state)
                reached |= nxt
            return reached

        for i in chosen:
            a = out[i][0]
            for j in left:
                b = out[j][0]
                if a == b:
                    continue
                self.pairs += 1
                ab, ba = then(a, b, (a, b)), then(b, a, (a, b))
                if ab != ba:
                    raise DeclarationBroken(self._pair(a, b, what, "the two orders reach different states"), state)

    def _pair(self, a: Action, b: Action, what: str, found: str) -> str:
        spec = self.spec
        return (f"steps {show(spec, a)} and {show(spec, b)} do not commute, but partial-order reduction took "
                f"{show(spec, a)} alone as {what}: {found}")

    def _visibility(self, state: State, out: Sequence[tuple[Action, State]]) -> None:
        """Each step whose process's footprint writes (or updates) nothing the properties
        under visibility read (:meth:`~ordercheck.checker.api.reductions.PartialOrder.visible_mask`) must leave
        their outcomes as they were: partial-order reduction may take it as invisible."""
        from ordercheck.checker.engine.reduce import _six

        spec = self.spec
        po = self.po
        fps = _six(po.successor_footprints(state, out))
        visible = self.red.visible
        before = None
        for a, t in out:
            who = po.actor(a)
            if who is None or (fps[who][1] | fps[who][4]) & visible:
                continue
            if before is None:
                before = self._outcomes(state, self.visible_props)
            for p, x, y in zip(self.visible_props, before, self._outcomes(t, self.visible_props)):
                if x != y:
                    raise DeclarationBroken(
                        f"step {show(spec, a)} changes the outcome of {p.name}, but its footprint writes nothing "
                        f"{p.name} reads (as visible_mask says), so partial-order reduction may take it as "
                        f"invisible", state)

    def _stable(self, state: State, out: Sequence[tuple[Action, State]]) -> None:
        """A ``stable`` property keeps its decision along every step: an ``always`` that
        fails on the state fails on each successor, a ``sometimes`` that is met stays met."""
        props = self.stable_props
        # A check that returns a sentence decides the property: an always violated, a sometimes met.
        decided = [(p, ok) for p, ok in zip(props, self._outcomes(state, props)) if not ok]
        if not decided:
            return
        now = [p for p, _ok in decided]
        for a, t in out:
            for (p, ok), after in zip(decided, self._outcomes(t, now)):
                if after != ok:
                    raise DeclarationBroken(
                        f"{p.name} is declared stable but step {show(self.spec, a)} undoes its "
                        f"{'witness' if p.kind == 'sometimes' else 'violation'} (partial-order reduction relies on it "
                        f"on an acyclic spec)", state)

    def _lazy(self, state: State, out: Sequence[tuple[Action, State]], deferred: Sequence[int]) -> None:
        """Deferred steps must leave the history, so every property's outcome, as it was."""
        if not deferred:
            return
        before = self._outcomes(state, self.props)
        for i in deferred:
            a, t = out[i]
            for p, x, y in zip(self.props, before, self._outcomes(t, self.props)):
                if x != y:
                    raise DeclarationBroken(
                        f"step {show(self.spec, a)} is declared deferrable but changes the outcome of {p.name} "
                        f"(a deferrable step must leave the history as it was)", state)

    def _outcomes(self, state: State, props: Sequence[Property]) -> list[bool]:
        """For each of ``props``: whether its check returns nothing on ``state`` (an
        ``always`` holds there, a ``sometimes`` is not met there)."""
        spec = self.spec
        history = None
        outcomes = []
        for p in props:
            if p.over == "history":
                history = spec.history(state) if history is None else history
                got = p.check(history)
            else:
                got = p.check(state)
            outcomes.append(got is None or got is False)
        return outcomes

    def _symmetry(self, state: State, out: Sequence[tuple[Action, State]]) -> None:
        spec = self.spec
        group = self.red.group
        canonical = self.canonical
        own = int(canonical([state])[0])
        outcomes = self._outcomes(state, self.props) if self.props else []
        for g in group:
            image = self.sym.permute(state, g)
            if int(canonical([image])[0]) != own:
                raise DeclarationBroken(
                    f"symmetry: the state renamed by {g} (permute) has another canonical fingerprint than the "
                    f"state itself (permute must return the renamed state in the form the spec builds, and "
                    f"symmetries() must list a whole group)", state)
            if self.props:
                for p, x, y in zip(self.props, outcomes, self._outcomes(image, self.props)):
                    if x != y:
                        raise DeclarationBroken(
                            f"symmetry: {p.name} {'passes' if x else 'fails'} on the state but "
                            f"{'passes' if y else 'fails'} on it renamed by {g}", state)
        g = group[hash(state) % len(group)]
        mine = set(canonical([t for _a, t in out]).tolist()) if out else set()
        image_out = spec.next_states(self.sym.permute(state, g))
        theirs = set(canonical([t for _a, t in image_out]).tolist()) if image_out else set()
        if mine != theirs:
            raise DeclarationBroken(
                f"symmetry: the state renamed by {g} has {len(theirs)} successors up to renaming, the state "
                f"{len(mine)}, {len(mine & theirs)} in common (the renaming is not a symmetry of next_states)", state)


def _states(n: int) -> str:
    return f"{n:,} state{'s' if n != 1 else ''}"


def _positions(found: Any) -> str:
    return "all" if found is None else ", ".join(str(i) for i in found[0])
