"""The spec API: what a protocol specification gives the checker.

A spec is a Python class in the ``specs`` package. Like Stateright's ``Model`` it gives
initial states, the enabled actions of a state with their successor states, and the
properties to check. States are immutable values built only from ``int``, ``bool`` and
``tuple`` (and ``frozenset`` of those), so that their fingerprint is the same in every
process and on every machine (see :mod:`checker.engine.fingerprint`).

A minimal spec::

    class Counter(Spec):
        name = "counter"
        constants = (Constant("limit", int, 3, "largest value"),)

        def init_states(self):
            return [0]

        def next_states(self, state):
            if state < self.limit:
                return [(("inc",), state + 1)]
            return []

        def properties(self):
            return [Property.always("small", lambda s: None if s <= 3 else f"{s} > 3")]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from checker.api.errors import ConstantError
from checker.api.fields import Fields

State = Hashable
"""A state: an immutable value of ints, bools and tuples."""

Action = tuple
"""An action label: ``(name, arg, ...)`` with int or str arguments; shown in traces."""

Kind = Literal["always", "sometimes", "eventually"]


@dataclass(frozen=True)
class Constant:
    """A model constant a spec is parameterised by.

    ``kind`` is the Python type a model file must give (``int``, ``bool``, ``str``,
    ``list`` or ``dict``). ``choices`` restricts a ``str`` constant; ``minimum`` bounds
    an ``int``. ``ablation`` marks a boolean constant that names a step of the
    algorithm: switching it off makes a mutant.

    ``fault`` names the channel fault (``"loss"``, ``"duplication"``, ``"reordering"``)
    this constant asks for: a true or non-zero value does, or, when ``fault_values`` is
    given, one of those values. A model is refused when it asks for a fault the spec
    does not declare in :attr:`Spec.faults` (see :mod:`checker.api.faults`).
    """

    name: str
    kind: type
    default: Any
    doc: str = ""
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    ablation: bool = False
    fault: str = ""
    fault_values: tuple[Any, ...] = ()

    def validate(self, value: Any) -> Any:
        """Return ``value`` if this constant can take it; raise :class:`ConstantError`."""
        kind = self.kind
        if kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConstantError(self.name, f"expected an integer, got {_show(value)}")
            if self.minimum is not None and value < self.minimum:
                raise ConstantError(self.name, f"must be at least {self.minimum}, got {value}")
            if self.maximum is not None and value > self.maximum:
                raise ConstantError(self.name, f"must be at most {self.maximum}, got {value}")
        elif kind is bool:
            if not isinstance(value, bool):
                raise ConstantError(self.name, f"expected true or false, got {_show(value)}")
        elif kind is str:
            if not isinstance(value, str):
                raise ConstantError(self.name, f"expected a string, got {_show(value)}")
            if self.choices and value not in self.choices:
                options = ", ".join(repr(c) for c in self.choices)
                raise ConstantError(self.name, f"expected one of {options}, got {value!r}")
        elif kind is list:
            if not isinstance(value, list):
                raise ConstantError(self.name, f"expected a list, got {_show(value)}")
        elif kind is dict:
            if not isinstance(value, dict):
                raise ConstantError(self.name, f"expected a table, got {_show(value)}")
        return value


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{type(value).__name__} {value!r}"


@dataclass(frozen=True)
class Property:
    """A named property the checker decides for a spec.

    Build one with :meth:`always`, :meth:`sometimes` or :meth:`eventually`. ``over``
    says what the check function receives: the state itself (``"state"``) or the
    spec's :class:`~specs.history.History` of the state (``"history"``). History checks
    are cached by the spec's ``history_key``, so many states that share one history
    are checked once.

    Two optional facts let partial-order reduction keep more of its savings
    (:mod:`checker.engine.reduce`): ``stable`` says that once the check fails (an ``always``)
    or succeeds (a ``sometimes``) on a state, it does so on every state reachable from
    it (true of ordering properties over a history that only grows); ``reads`` names the
    kinds of state variables the check looks at (see :meth:`Spec.visible_mask`), where
    ``None`` means anything.

    One more lets engines skip work: ``changed_by``, for a check over the history, names
    the kinds of history events (``"deliver"``, ``"send"``...) whose arrival can change
    its outcome. When a successor's history only extends its parent's (see
    :meth:`Spec.history_growth`) by events of other kinds, the check is not run again:
    the successor's outcome is its parent's, which the engine already has. ``None``
    means any event can.

    A history property may name a ``monitor``: a ``checker.monitors.base.Monitor``
    class deciding it event by event on the history laid out as a log (the history's
    ``as_log``/``extend_log``). Engines then feed each state the events its history adds
    to its parent's instead of calling ``check`` on the whole history; ``check`` stays
    the same decision for callers that hold a history.
    """

    name: str
    kind: Kind
    check: Callable[[Any], Any]
    over: Literal["state", "history"] = "state"
    doc: str = ""
    stable: bool = False
    reads: tuple[str, ...] | None = None
    changed_by: frozenset[str] | None = None
    monitor: Any = None

    @classmethod
    def always(
        cls, name: str, invariant: Callable[[Any], str | None], *, over: str = "state", doc: str = "", stable: bool = False,
        reads: tuple[str, ...] | None = None, changed_by: Iterable[str] | None = None, monitor: Any = None,
    ) -> Property:
        """Holds when ``invariant`` returns ``None`` on every reachable state.

        ``invariant`` returns ``None`` when its argument is fine and otherwise a sentence
        saying what is wrong; that sentence becomes the counterexample's explanation.
        """
        return cls(name, "always", invariant, over, doc, stable, reads, _kinds(changed_by), monitor)  # type: ignore[arg-type]

    @classmethod
    def sometimes(
        cls, name: str, condition: Callable[[Any], str | None], *, over: str = "state", doc: str = "", stable: bool = False,
        reads: tuple[str, ...] | None = None, changed_by: Iterable[str] | None = None,
    ) -> Property:
        """Holds when some reachable state satisfies ``condition``; reported with a witness.

        ``condition`` returns ``None`` for a state that is not the one sought, and a
        sentence describing the state when it is.
        """
        return cls(name, "sometimes", condition, over, doc, stable, reads, _kinds(changed_by))  # type: ignore[arg-type]

    @classmethod
    def eventually(
        cls, name: str, pending: Callable[[Any], str | None], *, over: str = "state", doc: str = "", stable: bool = False,
        reads: tuple[str, ...] | None = None, changed_by: Iterable[str] | None = None, monitor: Any = None,
    ) -> Property:
        """Holds when no fair run keeps ``pending`` non-``None`` for ever.

        ``pending`` returns ``None`` when nothing is awaited and otherwise a sentence
        saying what is still outstanding. A run violates the property if it stops
        (no action enabled) with something outstanding, or if it can loop for ever,
        fairly (see :attr:`Spec.fairness`), through states that all have something
        outstanding; the latter is reported as a lasso.
        """
        return cls(name, "eventually", pending, over, doc, stable, reads, _kinds(changed_by), monitor)  # type: ignore[arg-type]


class Spec:
    """Base class of every specification.

    Subclasses set the class attributes and implement :meth:`init_states`,
    :meth:`next_states` and :meth:`properties`. Constant values are validated on
    construction and readable as attributes (``self.peers``).
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    constants: ClassVar[tuple[Constant, ...]] = ()
    fields: ClassVar[Fields | None] = None
    """Names of a tuple state's items (:class:`checker.api.fields.Fields`), for reading them
    by name (``self.fields.read(state).holder``) and for :meth:`describe`."""
    faults: ClassVar[frozenset[str]] = frozenset()
    """The channel faults this spec models, of ``"loss"``, ``"duplication"`` and
    ``"reordering"``: those its steps handle as the protocol means to (a lost message
    retransmitted or waited for, a copy recognised and ignored, messages taken out of
    order). A model whose constants ask for a fault not declared here is refused (exit
    code 2), since the spec would give verdicts about behaviour it never meant to have."""
    ablation_parameters: ClassVar[tuple[str, ...]] = ()
    """Constants that only shape what an ablation does instead of its step (Skeen's
    ``mutant_final``: what ``take_max = false`` takes instead of the maximum). A mutant
    model given as ``[evidence]`` may differ from its model in the ablation flags
    (:meth:`ablations`) and in these, and in nothing else
    (:mod:`checker.loading.evidence`)."""
    fairness: ClassVar[dict[str, str]] = {}
    """Fairness of actions, as TLA+ declares it: action name -> ``"weak"`` or
    ``"strong"``. Each (name, first argument) pair, i.e. one kind of step by one peer,
    is one fairness obligation (see :meth:`fairness_class`). Whatever is declared, a run
    never stops while an action is enabled (weak fairness of the whole next-state
    relation), so an ``eventually`` property fails only on a run that ends with it
    outstanding or on a fair cycle that keeps it outstanding for ever."""

    def __init__(self, **values: Any) -> None:
        known = {c.name: c for c in self.constants}
        for key in values:
            if key not in known:
                names = ", ".join(sorted(known)) or "none"
                raise ConstantError(key, f"{self.name} has no such constant (it has: {names})")
        resolved: dict[str, Any] = {}
        for const in self.constants:
            resolved[const.name] = const.validate(values.get(const.name, const.default))
        self.values: dict[str, Any] = resolved
        for key, value in resolved.items():
            setattr(self, key, value)
        self.setup()

    # -- what a spec implements -------------------------------------------------------

    def setup(self) -> None:
        """Derive whatever the spec needs from its constants; raise ConstantError if bad."""

    def init_states(self) -> Sequence[State]:
        """The initial states, in a fixed order."""
        raise NotImplementedError

    def next_states(self, state: State) -> Sequence[tuple[Action, State]]:
        """The enabled actions of ``state`` with their successors, in a fixed order.

        The order must be deterministic: a trace is replayed from the positions of its
        actions in these lists.
        """
        raise NotImplementedError

    def properties(self) -> Sequence[Property]:
        """Every property this spec can be checked against, library ones included."""
        return []

    # -- optional ---------------------------------------------------------------------

    def history(self, state: State) -> Any:
        """The observable history of ``state`` (a :class:`specs.history.History`)."""
        raise NotImplementedError(f"{self.name} keeps no history")

    def history_key(self, state: State) -> Hashable:
        """The part of ``state`` its history is computed from; equal keys, equal histories.

        The engine skips history checks on a successor whose key *is* (by identity)
        its parent's, and caches verdicts by key.
        """
        return state

    def history_growth(self, parent_key: Hashable, key: Hashable) -> frozenset[str] | None:
        """How the history of ``key`` extends that of ``parent_key``, if it only does.

        Returns the kinds of the events appended (``"deliver"``, ``"send"``...) when the
        second history is the first with events appended to peers' logs, each appended
        ``"send"`` introducing a new message, and nothing else changed; ``None`` when
        that is not so or not known (the default). Engines use it with
        :attr:`Property.changed_by` to skip checks an extension cannot affect.
        """
        return None

    def finished(self, state: State) -> bool:
        """Whether a state with no enabled action is a proper end (not a deadlock)."""
        return True

    def action_kinds(self) -> Sequence[str]:
        """The action names (``label[0]``) this configuration can take, for coverage.

        A search that explores every reachable state records how often each action name
        fired; each name listed here that never fired is reported as a warning (the model
        may not exercise what it was written for). The default, ``()``, claims nothing and
        so warns of nothing.
        """
        return ()

    def describe(self, state: State) -> dict[str, Any]:
        """A JSON-friendly view of ``state`` for traces and reports (by field name when
        the spec names its fields)."""
        if self.fields is not None:
            return {k: _jsonable(v) for k, v in self.fields.describe(state).items()}
        return {"state": _jsonable(state)}

    def format_action(self, action: Action) -> str:
        """A short human reading of an action label."""
        name, *args = action
        return f"{name}({', '.join(str(a) for a in args)})"

    def action_site(self, action: Action) -> tuple[str, int, int | None] | None:
        """Where an action happens, for space-time diagrams: ``(kind, peer, message)``.

        Sends, deliveries and signals are drawn from the history; this places the other
        steps. ``kind`` is ``"stage"`` (a message is staged or blocked on ``peer``'s
        queue), ``"commit"`` (a message is committed to ``peer``'s queue) or ``"step"``
        (another local step at ``peer``); ``message`` is a message id or ``None``.
        ``None`` (the default) draws nothing for the action.
        """
        return None

    def internal_messages(self, action: Action) -> Sequence[tuple[str, int, int, str]]:
        """Protocol-internal messages ``action`` sends or receives, for space-time
        diagrams: messages outside the ordered history (a token, an acknowledgement, a
        request for a sequence number), drawn lighter than the application's messages.

        Each item is ``("send", peer, to, name)`` or ``("receive", peer, sender, name)``
        with peer numbers as in the history; a receipt is matched with the oldest
        unmatched send of that name from ``sender`` to ``peer``. Empty (the default):
        the action sends and receives none."""
        return ()

    def fairness_class(self, action: Action) -> tuple[str, tuple] | None:
        """The fairness obligation ``action`` belongs to: ``(kind, key)`` with ``kind``
        ``"weak"`` or ``"strong"``, or ``None`` if the action need not be taken. The
        default key is the action's name and first argument (its peer)."""
        kind = self.fairness.get(action[0])
        if kind is None:
            return None
        return kind, tuple(action[:2])

    # -- optional: what reductions need (see checker.engine.reduce) ------------------------

    acyclic: ClassVar[bool] = False
    """True when no run revisits a state (every action advances a bounded measure), so
    every run ends in a terminal state. Partial-order reduction then needs no
    visibility condition for ``stable`` properties, and ``eventually`` properties no
    fair-cycle search. Checked, not trusted: when a search meets an edge to a state
    visited at the edge's depth or shallower (one that can close a cycle), the state
    graph is searched for a cycle, and a cycle ends the run with exit code 2 naming its
    steps (:mod:`checker.engine.declarations`)."""

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
        """:meth:`footprints` when the successors ``succ`` (:meth:`next_states` of
        ``state``) are at hand, as the engine has them; a spec that reads what its steps
        write off the successors implements this, the default calls :meth:`footprints`."""
        return self.footprints(state)

    def por_refusal(self) -> str | None:
        """Why partial-order reduction does not apply to this configuration, in a phrase
        the run prints once (``None``: it applies). The default: a spec that gives no
        :meth:`actor` declares no footprints."""
        if type(self).actor is Spec.actor:
            return f"{self.name} declares no footprints"
        return None

    def symmetry_refusal(self) -> str:
        """Why :meth:`symmetries` is empty for this configuration, in a phrase the run
        prints once (a spec that breaks symmetry on purpose names what breaks it)."""
        return f"this {self.name} configuration has no interchangeable processes"

    def reduction_key(self, state: State) -> Hashable | None:
        """Optional: a small hashable summary of ``state`` that decides both
        :meth:`footprints` and the process (:meth:`actor`) of every successor
        :meth:`next_states` lists, in order: two states with equal keys have equal
        footprints and equal actor sequences. Partial-order reduction then memoises its
        choice by the key and generates only the chosen successors
        (:meth:`next_states_of`). ``None`` (the default): the footprints and actors are
        computed for every state and are the key themselves."""
        return None

    def next_states_of(self, state: State, processes: int) -> list[tuple[Action, State]]:
        """The entries of :meth:`next_states` whose :meth:`actor` is in the bitmask
        ``processes``, in the same order. A spec may generate them directly (the
        default filters the full list)."""
        out = []
        for a, t in self.next_states(state):
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
        arrival, :class:`specs.holdback.HoldBackSpec`). The engine defers them only when
        every checked property reads the history alone and the spec is ``acyclic``
        (:mod:`checker.engine.reduce`). The default: nothing is deferrable."""
        return False

    def solo_step(self, state: State, succ: Sequence[tuple[Action, State]]) -> int | None:
        """Optional: the position in ``succ`` (:meth:`next_states` of ``state``) of a step
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
        return type(self).solo_step is not Spec.solo_step

    def defers(self) -> bool:
        """Whether some step of this configuration is :meth:`deferrable` (the default:
        none)."""
        return False

    def visible_mask(self, reads: Sequence[str] | None) -> int:
        """The variable bits (as in :meth:`footprints`) behind the variable kinds
        ``reads`` names; ``None`` or an unknown kind means every variable (``-1``)."""
        return -1

    @classmethod
    def ablations(cls) -> tuple[str, ...]:
        """The names of the boolean constants that switch a step of the algorithm off."""
        return tuple(c.name for c in cls.constants if c.ablation)

    def property_map(self) -> dict[str, Property]:
        """Properties by name."""
        return {p.name: p for p in self.properties()}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(_jsonable(v) for v in value)
    return value


def iter_properties(props: Iterable[Property], kind: str, over: str) -> list[Property]:
    """The properties of one kind evaluated over one kind of argument."""
    return [p for p in props if p.kind == kind and p.over == over]


def _kinds(changed_by: Iterable[str] | None) -> frozenset[str] | None:
    if changed_by is None:
        return None
    if isinstance(changed_by, str):
        raise TypeError("changed_by takes a collection of event kinds, e.g. ('deliver',), not one string")
    return frozenset(changed_by)
