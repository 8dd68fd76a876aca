"""The reduction protocols: what a spec declares so that the engine may search less.

Two mixins, each a base class a spec inherits to opt in (``class Fifo(PeerSpec,
Symmetry)``), next to :class:`~ordercheck.checker.api.spec.Spec`, which is the model alone:

- :class:`Symmetry`: the renamings of processes under which the configuration is
  symmetric, and how to rename a state. The engine then stores one state per orbit.
- :class:`PartialOrder`: who performs each action and what each process reads and writes
  (its footprints), plus the refinements built on them (a reduction key, deferrable and
  solo steps, the variables properties read). The engine then expands a stubborn subset
  of a state's actions.

Neither changes what a property means: both are optimisations whose soundness rests on
the declarations, which ``check --check-reductions`` checks on every state searched
(:mod:`ordercheck.checker.engine.declarations`). A spec that inherits neither gets no reduction, and
the run says why in one note. The engine reaches the hooks only through
:func:`symmetry_of` and :func:`partial_order_of`, which give a spec that does not
implement a protocol its default behaviour (no reduction).

A hook of either protocol defined on a spec that does not inherit it is refused when the
class is defined (see :func:`ordercheck.checker.api.spec.misplaced_hooks`): ignoring it would drop a
reduction without a word.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from ordercheck.checker.api.state import Action, State


class Symmetry:
    """Symmetry reduction: a mixin for a :class:`~ordercheck.checker.api.spec.Spec` whose processes
    are interchangeable in some configurations.

    A spec inherits it (``class MySpec(Spec, Symmetry)``) and implements
    :meth:`symmetries` and :meth:`permute`; it may override :meth:`symmetry_refusal` to say
    why a configuration has no symmetry. The search then fingerprints each state as the
    least fingerprint of its images under the group (:mod:`ordercheck.checker.engine.reduce`).
    """

    name: str

    def symmetries(self) -> Sequence[tuple[int, ...]]:
        """The permutations of process ids (``perm[i]`` is the new id of process ``i``),
        identity excluded, under which this configuration is symmetric: the image of
        every run under each is a run, and every checked property gives the same verdict
        on a state and its image. Empty (the default): no symmetry reduction.
        ``--check-reductions`` checks this, with :meth:`permute`, on every state searched."""
        return ()

    def permute(self, state: State, perm: tuple[int, ...]) -> State:
        """``state`` with process ``i`` renamed ``perm[i]``, in canonical form (the state
        the spec itself would build for the renamed run)."""
        raise NotImplementedError(f"{self.name} declares no symmetry")

    def symmetry_refusal(self) -> str:
        """Why :meth:`symmetries` is empty for this configuration, in a phrase the run
        prints once (a spec that breaks symmetry on purpose names what breaks it)."""
        return f"this {self.name} configuration has no interchangeable processes"


class PartialOrder:
    """Partial-order reduction: a mixin for a :class:`~ordercheck.checker.api.spec.Spec` whose
    processes take steps that often commute.

    A spec inherits it (``class MySpec(Spec, PartialOrder)``) and implements :meth:`actor`
    and :meth:`footprints` (or :meth:`successor_footprints`), and :meth:`visible_mask`
    when its properties read only some variables. The rest refine the reduction and
    default to doing nothing: :meth:`reduction_key` with :meth:`next_states_of` (memoise
    the choice, generate only the chosen steps), :meth:`deferrable` with :meth:`defers`
    (leave lazy steps out), :meth:`solo_step` (take one step alone), and
    :meth:`por_refusal` (say why a configuration gets no reduction). The search then
    expands a stubborn subset of each state's actions (:mod:`ordercheck.checker.engine.reduce`).
    """

    name: str

    def actor(self, action: Action) -> int | None:
        """The process that performs ``action``; ``None`` (the default) turns
        partial-order reduction off for this spec."""
        return None

    def footprints(self, state: State) -> Sequence[tuple[int, ...]]:
        """Per process ``p``, bitmasks of state variables ``(reads_now, writes_now,
        reads_later, writes_later)``: what any action ``p`` could take next from
        ``state`` (enabled or not, guards included) reads and writes, and what every
        action ``p`` may take at any later point reads and writes (a superset).
        Two actions are independent when neither writes a variable the other reads or
        writes; independent actions must commute (same state either order, neither
        enabling nor disabling the other); ``--check-reductions`` checks that the steps the
        reduction takes as independent commute, on every state where it does.

        A spec may add two more masks, ``(updates_now, updates_later)``: variables
        changed by *commuting updates* such as ``x := max(x, v)``. Two updates of one
        variable are independent of each other (they must commute, and neither may
        enable or disable the other); an update conflicts with a read or a write."""
        raise NotImplementedError(f"{self.name} declares no footprints")

    def successor_footprints(self, state: State, succ: Sequence[tuple[Action, State]]) -> Sequence[tuple[int, ...]]:
        """:meth:`footprints` when the successors ``succ`` (``next_states`` of
        ``state``) are at hand, as the engine has them; a spec that reads what its steps
        write off the successors implements this, the default calls :meth:`footprints`."""
        return self.footprints(state)

    def visible_mask(self, reads: Sequence[str] | None) -> int:
        """The variable bits (as in :meth:`footprints`) behind the variable kinds
        ``reads`` names (:attr:`ordercheck.checker.api.spec.Property.reads`); ``None`` or an unknown
        kind means every variable (``-1``, the default)."""
        return -1

    def por_refusal(self) -> str | None:
        """Why partial-order reduction does not apply to this configuration, in a phrase
        the run prints once (``None``: it applies). The default: a spec that gives no
        :meth:`actor` declares no footprints."""
        if type(self).actor is PartialOrder.actor:
            return f"{self.name} declares no footprints"
        return None

    def reduction_key(self, state: State) -> Hashable | None:
        """Optional: a small hashable summary of ``state`` that decides both
        :meth:`footprints` and the process (:meth:`actor`) of every successor
        ``next_states`` lists, in order: two states with equal keys have equal
        footprints and equal actor sequences. Partial-order reduction then memoises its
        choice by the key and generates only the chosen successors
        (:meth:`next_states_of`). ``None`` (the default): the footprints and actors are
        computed for every state and are the key themselves."""
        return None

    def next_states_of(self, state: State, processes: int) -> list[tuple[Action, State]]:
        """The entries of ``next_states`` whose :meth:`actor` is in the bitmask
        ``processes``, in the same order. A spec may generate them directly (the
        default filters the full list)."""
        out = []
        for a, t in self.next_states(state):  # type: ignore[attr-defined]  # the Spec's
            who = self.actor(a)
            if who is not None and processes >> who & 1:
                out.append((a, t))
        return out

    def deferrable(self, action: Action) -> bool:
        """Whether partial-order reduction may leave ``action`` out of a state's
        expansion while some step :meth:`deferrable` calls false is enabled there (and
        take one deferrable step alone where every enabled step is one). A spec says
        true only of steps that (a) change nothing a property over the history reads,
        (b) commute with one another and enable nothing but one another, and (c) are
        *lazy*: every history reached through such a step is reached without it, the
        step's work done later by a step the spec does not defer (a hold-back buffer's
        arrival, :class:`ordercheck.specs.holdback.HoldBackSpec`). The engine defers them only when
        every checked property reads the history alone, none is an ``eventually`` one
        (whose verdict rests on ``acyclic``, a declaration whose check a deferred step
        can hide a cycle from) and the spec is ``acyclic``
        (:mod:`ordercheck.checker.engine.reduce`). The default: nothing is deferrable."""
        return False

    def defers(self) -> bool:
        """Whether some step of this configuration is :meth:`deferrable` (the default:
        none)."""
        return False

    def solo_step(self, state: State, succ: Sequence[tuple[Action, State]]) -> int | None:
        """Optional: the position in ``succ`` (``next_states`` of ``state``) of a step
        that is a stubborn set on its own, or ``None``. A spec names a step here only if
        (a) every run of other steps from ``state`` (this one left out) keeps it enabled,
        and taking it before such a run reaches the same state as taking it after; and (b)
        it is invisible to every property under visibility (the engine asks only when no
        checked property needs visibility and no step is deferred). A delivery of a queue
        head that nothing can still overtake, by a peer with nothing left to send, is the
        typical one (Lamport total order, Skeen). Partial-order reduction
        then expands that step alone. The default: none."""
        return None

    def solos(self) -> bool:
        """Whether this spec names :meth:`solo_step` steps (it overrides the method)."""
        return type(self).solo_step is not PartialOrder.solo_step


SYMMETRY_HOOKS = ("symmetries", "permute", "symmetry_refusal")
"""The hooks of :class:`Symmetry`: a spec that defines one must inherit it."""

PARTIAL_ORDER_HOOKS = ("actor", "footprints", "successor_footprints", "visible_mask", "por_refusal", "reduction_key",
                       "next_states_of", "deferrable", "defers", "solo_step", "solos")
"""The hooks of :class:`PartialOrder`: a spec that defines one must inherit it."""


class _NoSymmetry(Symmetry):
    """:class:`Symmetry`'s defaults for a spec that does not inherit it."""

    def __init__(self, spec: Any) -> None:
        self.name = spec.name


class _NoPartialOrder(PartialOrder):
    """:class:`PartialOrder`'s defaults for a spec that does not inherit it."""

    def __init__(self, spec: Any) -> None:
        self.name = spec.name
        self._spec = spec

    def next_states(self, state: State) -> Sequence[tuple[Action, State]]:
        """The spec's own ``next_states``."""
        return self._spec.next_states(state)


def symmetry_of(spec: Any) -> Symmetry:
    """``spec``'s :class:`Symmetry` hooks: the spec itself when it inherits the protocol,
    else an object giving the defaults (no symmetries, the default refusal)."""
    return spec if isinstance(spec, Symmetry) else _NoSymmetry(spec)


def partial_order_of(spec: Any) -> PartialOrder:
    """``spec``'s :class:`PartialOrder` hooks: the spec itself when it inherits the
    protocol, else an object giving the defaults (no actor, so no partial-order
    reduction, and the default refusal)."""
    return spec if isinstance(spec, PartialOrder) else _NoPartialOrder(spec)
