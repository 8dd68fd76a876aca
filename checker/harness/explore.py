"""Schedules over executions: random, PCT, systematic exploration (with or without
dynamic partial-order reduction), and shrinking a failing schedule.

Every schedule is a fresh execution of the nodes (:func:`~ordercheck.checker.harness.network.execute`);
exploration re-executes a recorded prefix (a node that offers other actions on the
replay is a :class:`~ordercheck.checker.harness.network.Divergence`).

**Systematic exploration** runs one execution per class of equivalent schedules. Two
actions are dependent when they touch a common location (the node they act on, or a
fault budget they spend: see :class:`~ordercheck.checker.harness.network.Action`);
deliveries to different nodes are independent, so two schedules that differ only in
the order of independent steps produce the same per-node histories and the same
verdicts (the properties read per-node order and the send-deliver relation, not the
interleaving). With ``dpor`` (the default) this is source-DPOR (Abdulla, Aronis, Jonsson,
Sagonas, POPL 2014) with sleep sets: after each execution every *race* (two dependent
steps whose order could be reversed: the later one was enabled, and not caused by the
earlier) adds a backtrack point where the reversal is explored. An action that a step
disables (a message dropped instead of delivered, a fault budget spent, a node crashed)
counts as racing with that step, so the alternatives the disabling cut off are
explored too. An execution whose every enabled action is asleep is cut short (it is
equivalent to one already run) and not judged. Without ``dpor`` every order of the
distinct enabled actions is run, depth first.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ordercheck.checker.harness.network import (
    FAULTS,
    Action,
    Divergence,
    Execution,
    Scenario,
    Spawn,
    Step,
    StepBound,
    execute,
)
from ordercheck.checker.harness.nodes import Node, NodeFailed

Judge = Callable[[Execution], bool]
"""Judges one execution: True when it violates a property."""


def random_runs(sc: Scenario, seed: int, runs: int, failing: Judge, *, spawn: Spawn = Node) -> Iterator[Execution]:
    """``runs`` executions, each picking uniformly among the enabled actions with a
    generator seeded by ``seed`` (the same seed, the same schedules); stops after the
    first one ``failing`` accepts."""
    rng = random.Random(seed)
    for _ in range(runs):
        run = execute(sc, lambda _step, enabled: rng.randrange(len(enabled)), spawn=spawn)
        bad = failing(run)
        yield run
        if bad:
            return


def pct_runs(sc: Scenario, seed: int, runs: int, depth: int, failing: Judge, *,
             spawn: Spawn = Node) -> Iterator[Execution]:
    """``runs`` PCT schedules (Burckhardt et al., ASPLOS 2010) of bug depth ``depth``,
    with the links as PCT's threads (as chains of messages in Ozkan et al., OOPSLA
    2018): the messages from one sender (or a node's client, or its timers) to one node
    form a chain, taken in the order sent. Each chain gets a random priority above
    ``depth`` when it first has an action enabled; each execution picks ``depth - 1``
    change points among its steps (the number of steps estimated by the longest
    execution so far); each step takes the oldest action of the enabled chain with the
    highest priority, and at the i-th change point that chain drops to priority i.
    Faults are not scheduled (the caller refuses them). Seeded by ``seed``: the same
    seed, the same schedules; stops after the first one ``failing`` accepts."""
    rng = random.Random(seed)
    steps = max(1, sc.broadcasts * sc.nodes)
    for _ in range(runs):
        points = sorted(rng.sample(range(steps), min(depth - 1, steps)))
        lowered = {p: i + 1 for i, p in enumerate(points)}
        prio: dict[tuple[str, str], float] = {}

        def choose(step: int, enabled: list[Action], prio: dict[tuple[str, str], float] = prio,
                   lowered: dict[int, int] = lowered) -> int:
            chains = [_chain(a) for a in enabled]
            for c in chains:
                if c not in prio:
                    prio[c] = depth + rng.random()
            best = max(range(len(enabled)), key=lambda k: (prio[chains[k]], -k))
            if step in lowered:
                prio[chains[best]] = lowered[step]
            return best

        run = execute(sc, choose, spawn=spawn)
        steps = max(steps, len(run.keys))
        bad = failing(run)
        yield run
        if bad:
            return


def _chain(a: Action) -> tuple[str, str]:
    """The PCT chain of an action: its link (sender, receiver), or the node's timers or
    restarts."""
    if a.kind in ("deliver", "client"):
        assert a.msg is not None
        return (a.msg["src"], a.dest)
    return (a.kind, a.dest)


@dataclass
class _State:
    """A state on the exploration's stack: the actions enabled there (key -> locations
    and enabling steps, in the order offered), its backtrack set, the actions explored
    from it in order, and its sleep set on arrival."""

    info: dict[str, tuple[frozenset[str], tuple[int, ...]]]
    backtrack: set[str] = field(default_factory=set)
    explored: list[str] = field(default_factory=list)
    sleep: set[str] = field(default_factory=set)


@dataclass
class Exploration:
    """What :func:`explore` ran: ``runs`` executions judged, ``blocked`` cut short as
    equivalent to one already run, and whether schedules were ``left`` unexplored when
    ``max_schedules`` stopped it."""

    runs: int = 0
    blocked: int = 0
    left: bool = False


def explore(sc: Scenario, max_schedules: int, failing: Judge, *, dpor: bool = True,
            stats: Exploration | None = None, spawn: Spawn = Node, root: Sequence[str] = ()) -> Iterator[Execution]:
    """Systematic exploration (see the module's docstring), depth first; yields every
    execution judged, and stops after the first one ``failing`` accepts, after
    ``max_schedules`` judged executions or as many cut short (``stats.left`` says
    whether any were left), or when none is left.

    With ``root`` (a schedule prefix, as :func:`schedule_prefixes` lists them), only the
    schedules that begin with it: its steps are taken as recorded (a node that offers
    other actions is a :class:`~ordercheck.checker.harness.network.Divergence`) and never
    reconsidered. With ``dpor`` the reduction works below the prefix alone: a race whose
    earlier step lies in the prefix calls for a reversal that begins with another
    prefix, which is left to that prefix's exploration. A ``root`` that is a whole
    execution (one shorter than the prefixes' length) is that one schedule."""
    st = stats if stats is not None else Exploration()
    stack: list[_State] = []
    prefix: list[str] = list(root)
    floor = len(prefix)
    while True:
        run = execute(sc, _chooser(stack, prefix, dpor, floor), prefix, spawn=spawn)
        start = max(0, len(prefix) - 1)
        if dpor:
            _races(run, stack, start)
        if run.end == "stopped":
            st.blocked += 1
        else:
            st.runs += 1
            bad = failing(run)
            yield run
            if bad:
                return
        nxt = _backtrack(stack, run, floor)
        if nxt is None:
            return
        if st.runs >= max_schedules or st.blocked >= max_schedules:
            st.left = True
            return
        prefix = nxt


def _chooser(stack: list[_State], prefix: list[str], dpor: bool,
             floor: int = 0) -> Callable[[int, list[Action]], int | None]:
    """Follow ``prefix``, then take the first action neither explored nor asleep, pushing
    each new state on ``stack``; the first ``floor`` steps (a root prefix) get a state
    on the first execution, with their action as the only one explored."""
    chosen = list(prefix)

    def choose(step: int, enabled: list[Action]) -> int | None:
        keys = [a.key for a in enabled]
        if step < len(prefix):
            if prefix[step] not in keys:
                raise Divergence(f"step {step + 1}: the schedule takes {prefix[step]} but the nodes do not offer "
                                 "it on replay: a node is not deterministic given its inputs")
            if step < floor and len(stack) == step:  # the root's states, for the races below it
                stack.append(_State(_info(enabled), explored=[prefix[step]]))
            return keys.index(prefix[step])
        info = _info(enabled)
        state = _State(info)
        if dpor and step > 0:
            parent, p = stack[step - 1], chosen[step - 1]
            ploc = parent.info[p][0]
            before = parent.explored[:parent.explored.index(p)]
            state.sleep = {q for q in parent.sleep | set(before)
                           if q != p and q in info and q in parent.info and not (parent.info[q][0] & ploc)}
        del stack[step:]
        stack.append(state)
        if not dpor:
            state.backtrack = set(info)
        for i, k in enumerate(keys):
            if k not in state.sleep:
                state.backtrack.add(k)
                state.explored.append(k)
                chosen.append(k)
                return i
        return None

    return choose


def _info(enabled: list[Action]) -> dict[str, tuple[frozenset[str], tuple[int, ...]]]:
    """The enabled actions by key (the first of equal keys), with their locations and
    enabling steps, in the order offered."""
    info: dict[str, tuple[frozenset[str], tuple[int, ...]]] = {}
    for a in enabled:
        info.setdefault(a.key, (a.locs, a.born))
    return info


def _past(steps: list[Step]) -> list[int]:
    """Each step's causal past, as a bit mask of the steps that happen before it (the
    steps that enabled it, the last earlier step on each of its locations, and theirs)."""
    hb: list[int] = []
    last: dict[str, int] = {}
    for j, s in enumerate(steps):
        m = 0
        for p in set(s.born) | {last[loc] for loc in s.locs if loc in last}:
            m |= hb[p] | (1 << p)
        hb.append(m)
        for loc in s.locs:
            last[loc] = j
    return hb


def _races(run: Execution, stack: list[_State], start: int) -> None:
    """Add the backtrack points the races of ``run``'s steps from ``start`` on call for."""
    steps = run.steps
    hb: list[int] = []
    last: dict[str, int] = {}

    def preds_of(locs: frozenset[str], born: tuple[int, ...]) -> set[int]:
        return set(born) | {last[loc] for loc in locs if loc in last}

    def mask_of(preds: set[int]) -> int:
        m = 0
        for p in preds:
            m |= hb[p] | (1 << p)
        return m

    def check(key: str, locs: frozenset[str], born: tuple[int, ...], end: int) -> None:
        # the event ``key`` placed at position ``end`` (a step, or a disabled action after one)
        preds = preds_of(locs, born)
        mask = mask_of(preds)
        for i in {last[loc] for loc in locs if loc in last}:
            if i in born or mask_of(preds - {i}) >> i & 1:
                continue
            v = [k for k in range(i + 1, end) if not hb[k] >> i & 1]
            vmask = 0
            for k in v:
                vmask |= 1 << k
            initials = [steps[k].key for k in v if not hb[k] & vmask]
            if not mask & vmask:
                initials.insert(0, key)
            state = stack[i]
            if any(k in state.backtrack for k in initials):
                continue
            usable = [k for k in initials if k in state.info]
            if usable:
                state.backtrack.add(usable[0])
            else:  # pragma: no cover - an initial is enabled there by construction; be conservative
                state.backtrack.update(state.info)

    for j, s in enumerate(steps):
        if j >= start:
            check(s.key, s.locs, s.born, j)
        hb.append(mask_of(preds_of(s.locs, s.born)))
        for loc in s.locs:
            last[loc] = j
        if j >= start:
            after = stack[j + 1].info if j + 1 < len(stack) else {}
            for q, (qlocs, qborn) in stack[j].info.items():
                if q != s.key and q not in after and qlocs & s.locs:
                    check(q, qlocs, qborn, j + 1)


def _backtrack(stack: list[_State], run: Execution, floor: int = 0) -> list[str] | None:
    """The next prefix to run: the deepest state (at ``floor`` or below: the root prefix's
    states are never reconsidered) with an action in its backtrack set neither explored
    nor asleep, that action taken there (None when none is left)."""
    for d in range(len(stack) - 1, floor - 1, -1):
        state = stack[d]
        todo = [k for k in state.info if k in state.backtrack and k not in state.explored and k not in state.sleep]
        if todo:
            state.explored.append(todo[0])
            del stack[d + 1:]
            return run.keys[:d] + [todo[0]]
    return None


def schedule_prefixes(sc: Scenario, depth: int, *, spawn: Spawn = Node) -> list[list[str]]:
    """Every schedule prefix of ``depth`` steps, in the order :func:`explore` without
    DPOR meets them (depth first, the actions in the order offered; equal keys once),
    and every whole execution shorter than ``depth``: the schedules that begin with
    each are disjoint, and together they are every schedule, so exploring below each
    (:func:`explore` with ``root``) and adding up the counts gives plain exploration's.
    Each prefix costs one execution stopped after it."""
    out: list[list[str]] = []
    todo: list[list[str]] = [[]]
    while todo:
        prefix = todo.pop()
        offered: list[list[str]] = []

        def choose(step: int, enabled: list[Action], prefix: list[str] = prefix,
                   offered: list[list[str]] = offered) -> int | None:
            keys = [a.key for a in enabled]
            if step < len(prefix):
                if prefix[step] not in keys:
                    raise Divergence(f"step {step + 1}: the schedule takes {prefix[step]} but the nodes do not "
                                     "offer it on replay: a node is not deterministic given its inputs")
                return keys.index(prefix[step])
            if step >= depth:
                return None
            offered.append(list(_info(enabled)))
            return 0

        run = execute(sc, choose, prefix, spawn=spawn)
        out.append(list(run.keys))
        for s in range(len(offered)):  # popped deepest first, each step's other actions in the order offered
            for k in reversed(offered[s][1:]):
                todo.append(run.keys[:len(prefix) + s] + [k])
    return out


Violated = Callable[[Execution], frozenset[str]]
"""The properties one execution violates."""


@dataclass
class Shrunk:
    """The result of :func:`shrink`: the smallest failing execution found and how many
    executions the search ran."""

    run: Execution
    tries: int


def _measure(run: Execution) -> tuple[int, int, int]:
    return (len(run.keys), sum(1 for s in run.steps if s.kind in FAULTS), sum(run.picks))


def shrink(sc: Scenario, run: Execution, violated: Violated, budget: int, *, spawn: Spawn = Node) -> Shrunk:
    """A failing execution no larger than ``run`` that still violates the property
    ``run`` violates first by name, found by re-executing. When that property is a
    safety property (any but ``eventual_delivery``): the shortest prefix that already
    violates it (the execution stopped there); then, the violation showing at its last
    step, only the clients' requests among the steps that led to the message that step
    takes, or else all of those steps, or else the step's whole causal past. Then each
    step removed in turn, and each step swapped with the one before it, until neither
    makes it smaller. A candidate schedule is followed step by step (see
    :func:`_following`; a complete execution goes on with the oldest action first) and
    taken when the property stays violated and the execution is smaller: fewer steps,
    then fewer faults, then earlier picks (closer to the oldest-first order). A
    candidate on which a node misbehaves or that reaches ``max_steps`` is not taken.
    At most ``budget`` executions."""
    target = sorted(violated(run))[0]
    tries = 0
    best = run
    partial = target != "eventual_delivery"

    def attempt(keys: list[str], stop: bool) -> Execution | None:
        nonlocal tries
        if tries >= budget:
            return None
        tries += 1
        try:
            ex = execute(sc, _following(keys, stop), spawn=spawn)
        except (Divergence, StepBound, NodeFailed):  # another failure than the one kept: not smaller
            return None
        return ex if target in violated(ex) else None

    if partial:
        lo, hi = 1, len(best.keys)
        while lo < hi and tries < budget:
            mid = (lo + hi) // 2
            ex = attempt(best.keys[:mid], True)
            if ex is not None:
                best, hi = ex, len(ex.keys)
            else:
                lo = mid + 1
    if partial and best.steps:  # the last step's causal past: what the violation there can depend on
        past = _past(best.steps)
        j = len(best.steps) - 1
        sent = 1 << j  # first only what led to the message or request it takes, not its node's history
        for b in best.steps[j].born:
            sent |= past[b] | (1 << b)
        requests = (1 << j) | sum(1 << i for i, st in enumerate(best.steps) if sent >> i & 1 and st.kind == "client")
        for mask in (requests, sent, past[j] | (1 << j)):
            ex = attempt([k for i, k in enumerate(best.keys) if mask >> i & 1], partial)
            if ex is not None and _measure(ex) < _measure(best):
                best = ex
                break
    changed = True
    while changed and tries < budget:
        changed = False
        for i in range(len(best.keys) - 1, -1, -1):
            if i >= len(best.keys):
                continue
            keys = best.keys[:i] + best.keys[i + 1:]
            ex = attempt(keys, partial)
            if ex is not None and _measure(ex) < _measure(best):
                best, changed = ex, True
        for i in range(1, len(best.keys)):
            if i >= len(best.keys):
                break
            keys = best.keys[:i - 1] + [best.keys[i], best.keys[i - 1]] + best.keys[i + 1:]
            ex = attempt(keys, partial)
            if ex is not None and _measure(ex) < _measure(best):
                best, changed = ex, True
    return Shrunk(best, tries)


def _following(keys: list[str], stop: bool) -> Callable[[int, list[Action]], int | None]:
    """Take ``keys`` in order: the action with that key, or else the first offered with
    the same kind, sender, receiver and body ``type`` and ``message`` (the same message
    carrying other metadata, such as a vector clock, once other steps are gone); a key
    with neither is skipped. After them, stop (``stop``) or take the first enabled
    action."""
    pos = [0]

    def choose(_step: int, enabled: list[Action]) -> int | None:
        offered = [a.key for a in enabled]
        while pos[0] < len(keys):
            k = keys[pos[0]]
            pos[0] += 1
            if k in offered:
                return offered.index(k)
            loose = [_loose(o) for o in offered]
            if _loose(k) in loose:
                return loose.index(_loose(k))
        return None if stop else 0

    return choose


def key_body(key: str) -> tuple[str, dict | None]:
    """An action's key split into its head (``c1->n1``, ``crash n2``) and its JSON body
    (``None`` when it has none, or none that is a JSON object)."""
    at = key.find(" {")
    if at < 0:
        return key, None
    try:
        body = json.loads(key[at + 1:])
    except ValueError:
        return key, None
    return (key[:at], body) if isinstance(body, dict) else (key, None)


def _loose(key: str) -> str:
    """``key`` with its body cut to its ``type`` and ``message``."""
    head, body = key_body(key)
    return key if body is None else head + " " + json.dumps([body.get("type"), body.get("message")])
