"""The spec API: what a protocol specification gives the checker.

A spec is a Python class in the ``specs`` package. Like Stateright's ``Model`` it gives
initial states, the enabled actions of a state with their successor states, and the
properties to check. States are immutable values built only from ``int``, ``bool`` and
``tuple`` (and ``frozenset`` of those), so that their fingerprint is the same in every
process and on every machine (see :mod:`ordercheck.checker.engine.fingerprint`).

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

from ordercheck.checker.api.errors import ConstantError, HookError
from ordercheck.checker.api.fields import Fields
from ordercheck.checker.api.reductions import PARTIAL_ORDER_HOOKS, SYMMETRY_HOOKS, PartialOrder, Symmetry
from ordercheck.checker.api.rendering import RENDERING_HOOKS, Rendering
from ordercheck.checker.api.state import Action, State

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
    given, one of those values. That is how a model asks for a channel's behaviour
    (``channel = "unordered"``, ``lossy = true``, ``duplicates = 1``); it is refused
    when the spec lists the fault neither in :attr:`Spec.tolerates` nor in
    :attr:`Spec.breaks_under` (see :mod:`ordercheck.checker.api.faults`).
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
    spec's :class:`~ordercheck.specs.history.History` of the state (``"history"``). History checks
    are cached by the spec's ``history_key``, so many states that share one history
    are checked once.

    Two optional facts let partial-order reduction keep more of its savings
    (:mod:`ordercheck.checker.engine.reduce`): ``stable`` says that once the check fails (an ``always``)
    or succeeds (a ``sometimes``) on a state, it does so on every state reachable from
    it (true of ordering properties over a history that only grows); ``reads`` names the
    kinds of state variables the check looks at (see
    :meth:`~ordercheck.checker.api.reductions.PartialOrder.visible_mask`), where
    ``None`` means anything.

    One more lets engines skip work: ``changed_by``, for a check over the history, names
    the kinds of history events (``"deliver"``, ``"send"``...) whose arrival can change
    its outcome. When a successor's history only extends its parent's (see
    :meth:`Spec.history_growth`) by events of other kinds, the check is not run again:
    the successor's outcome is its parent's, which the engine already has. ``None``
    means any event can.

    A history property may name a ``monitor``: a ``ordercheck.checker.monitors.base.Monitor``
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
    """Base class of every specification: the model, and only the model.

    Subclasses set the class attributes and implement :meth:`init_states`,
    :meth:`next_states` and :meth:`properties`. Constant values are validated on
    construction and readable as attributes (``self.peers``).

    Everything here decides which runs exist or what a verdict is: the constants and
    :meth:`setup`, the initial states and steps, the properties and the history they
    read (:meth:`history`, :meth:`history_key`, :meth:`history_growth`), which ends are
    proper (:meth:`finished`), which runs count for ``eventually`` properties
    (:attr:`fairness`, :meth:`fairness_class`: fairness is part of the model, as in a
    TLA+ spec formula), and what the model claims of itself and the checker checks
    (:attr:`acyclic`, :meth:`action_kinds`, :attr:`tolerates`, :attr:`breaks_under`). What only makes the search
    cheaper or the output clearer is an optional protocol, a mixin the spec inherits to
    opt in: :class:`~ordercheck.checker.api.reductions.Symmetry` and
    :class:`~ordercheck.checker.api.reductions.PartialOrder` (reductions) and
    :class:`~ordercheck.checker.api.rendering.Rendering` (traces, reports and diagrams). A class
    that defines a hook of a protocol it does not inherit is refused when it is defined
    (see the spec API reference), rather than have the hook ignored.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    constants: ClassVar[tuple[Constant, ...]] = ()
    fields: ClassVar[Fields | None] = None
    """Names of a tuple state's items (:class:`ordercheck.checker.api.fields.Fields`), for reading them
    by name (``self.fields.read(state).holder``) and for the default
    :meth:`~ordercheck.checker.api.rendering.Rendering.describe`."""
    tolerates: ClassVar[frozenset[str]] = frozenset()
    """The channel faults the protocol is meant to handle, of ``"loss"``,
    ``"duplication"`` and ``"reordering"``: its steps deal with each as the protocol
    means to (a lost message retransmitted or waited for, a copy recognised and
    ignored, messages taken out of order). A claim about the protocol: under these
    faults a violation is a finding about it. A model may ask for them through its
    constants (the ``fault`` of a :class:`Constant`)."""
    breaks_under: ClassVar[frozenset[str]] = frozenset()
    """The channel faults the protocol is not meant to handle but that a model may
    still ask for, to show what it does then (Lamport's total order over unordered
    channels, which breaks its FIFO assumption). No fault is in both sets.

    A model whose constants ask for a fault in neither set is refused (exit code 2): a
    spec built on a base that offers every fault would otherwise give verdicts about
    behaviour nobody meant it to have. The one set these two replace, ``faults``, is
    refused with a line naming them (:mod:`ordercheck.checker.api.faults`)."""
    ablation_parameters: ClassVar[tuple[str, ...]] = ()
    """Constants that only shape what an ablation does instead of its step (Skeen's
    ``mutant_final``: what ``take_max = false`` takes instead of the maximum). A mutant
    model given as ``[evidence]`` may differ from its model in the ablation flags
    (:meth:`ablations`) and in these, and in nothing else
    (:mod:`ordercheck.checker.loading.evidence`)."""
    fairness: ClassVar[dict[str, str]] = {}
    """Fairness of actions, as TLA+ declares it: action name -> ``"weak"`` or
    ``"strong"``. Each (name, first argument) pair, i.e. one kind of step by one peer,
    is one fairness obligation (see :meth:`fairness_class`). Whatever is declared, a run
    never stops while an action is enabled (weak fairness of the whole next-state
    relation), so an ``eventually`` property fails only on a run that ends with it
    outstanding or on a fair cycle that keeps it outstanding for ever."""

    acyclic: ClassVar[bool] = False
    """True when no run revisits a state (every action advances a bounded measure), so
    every run ends in a terminal state. It belongs to the model (a claim about its state
    graph, which the checker checks); partial-order reduction then needs no
    visibility condition for ``stable`` properties, and ``eventually`` properties no
    fair-cycle search. Checked, not trusted: when a search meets an edge to a state
    visited at the edge's depth or shallower (one that can close a cycle), the state
    graph is searched for a cycle, and a cycle ends the run with exit code 2 naming its
    steps (:mod:`ordercheck.checker.engine.declarations`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        wrong = misplaced_hooks(cls)
        if wrong:
            raise HookError(wrong)

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

    # -- optional: the history the properties read, and proper ends -------------------

    def history(self, state: State) -> Any:
        """The observable history of ``state`` (a :class:`ordercheck.specs.history.History`)."""
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

    # -- optional: fairness and coverage ----------------------------------------------

    def action_kinds(self) -> Sequence[str]:
        """The action names (``label[0]``) this configuration can take, for coverage.

        A search that explores every reachable state records how often each action name
        fired; each name listed here that never fired is reported as a warning (the model
        may not exercise what it was written for). The default, ``()``, claims nothing and
        so warns of nothing.
        """
        return ()

    def fairness_class(self, action: Action) -> tuple[str, tuple] | None:
        """The fairness obligation ``action`` belongs to: ``(kind, key)`` with ``kind``
        ``"weak"`` or ``"strong"``, or ``None`` if the action need not be taken. The
        default key is the action's name and first argument (its peer)."""
        kind = self.fairness.get(action[0])
        if kind is None:
            return None
        return kind, tuple(action[:2])

    @classmethod
    def ablations(cls) -> tuple[str, ...]:
        """The names of the boolean constants that switch a step of the algorithm off."""
        return tuple(c.name for c in cls.constants if c.ablation)

    def property_map(self) -> dict[str, Property]:
        """Properties by name."""
        return {p.name: p for p in self.properties()}


PROTOCOLS: tuple[tuple[type, tuple[str, ...], str], ...] = (
    (Symmetry, SYMMETRY_HOOKS, "Symmetry"),
    (PartialOrder, PARTIAL_ORDER_HOOKS, "PartialOrder"),
    (Rendering, RENDERING_HOOKS, "Rendering"),
)
"""Each optional protocol of a spec: its mixin, its hooks, and its name in :mod:`ordercheck.checker`."""


def misplaced_hooks(cls: type) -> str | None:
    """Why the spec class ``cls`` is refused, or ``None``: the hooks it defines (or
    inherits from a class other than the protocol) of a protocol it does not inherit,
    and which mixins to inherit. Before the protocols these hooks were methods of
    :class:`Spec`; a spec written so would otherwise lose its reductions or its
    rendering without a word."""
    missing: list[str] = []
    found: list[str] = []
    for mixin, hooks, public in PROTOCOLS:
        if issubclass(cls, mixin):
            continue
        here = [h for h in hooks if hasattr(cls, h)]
        if here:
            found.extend(here)
            missing.append(public)
    if not found:
        return None
    bases = ", ".join([*(b.__name__ for b in cls.__bases__), *missing])
    one = len(found) == 1
    mixins = " and ".join(f"ordercheck.{m}" for m in missing)
    return (f"spec class {cls.__name__} defines {', '.join(found)}, {'a hook' if one else 'hooks'} of {mixins}, "
            f"without inheriting {'it' if len(missing) == 1 else 'them'}, so {'it' if one else 'they'} would be "
            f"ignored: write class {cls.__name__}({bases}) (from ordercheck import {', '.join(missing)})")


def iter_properties(props: Iterable[Property], kind: str, over: str) -> list[Property]:
    """The properties of one kind evaluated over one kind of argument."""
    return [p for p in props if p.kind == kind and p.over == over]


def _kinds(changed_by: Iterable[str] | None) -> frozenset[str] | None:
    if changed_by is None:
        return None
    if isinstance(changed_by, str):
        raise TypeError("changed_by takes a collection of event kinds, e.g. ('deliver',), not one string")
    return frozenset(changed_by)
