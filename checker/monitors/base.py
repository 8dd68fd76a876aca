"""What a property monitor is: one ordering property, decided event by event.

A monitor reads a :class:`~ordercheck.checker.monitors.log.Log` as it grows. The caller appends
events to the log and then calls :meth:`Monitor.step` with each new event's index, in
order; the monitor keeps the least state it needs to decide its property (fronts,
delivered sets, clocks) and answers, at the event that first breaks the property, with
a :class:`~ordercheck.checker.monitors.violation.Violation`: the sentence that explains it and the
window of events that shows it. The same monitor serves every place a property is
decided: ``validate`` feeds it a recording, the model checker a spec's history as the
search extends it, and a harness running real nodes what the nodes did.

Rules of the contract (every monitor keeps them; the tests check them):

- **Decisions read the past only.** Whether event ``i`` breaks the property depends on
  events ``0..i`` alone, so the verdict on a prefix is the verdict of the run cut there.
  A sentence may mention later events when the log already holds them (a recording is
  read whole), never a decision. The one wait: a signal received before it was sent is
  known as such when its line ends (a receipt later on the same line would be its
  own; :class:`~ordercheck.checker.monitors.log.SignalPairs`), so a monitor that reads it decides
  at the next line's first event, or at :meth:`Monitor.end`, with ``at`` the signal.
- **First violation, once.** :meth:`Monitor.step` returns a violation at most once for
  an ``always`` property; afterwards it returns ``None`` (the monitor is done).
- **Order-independent where the property is.** Two logs that order the same events
  differently but consistently with happened-before reach the same verdict.
- **Forkable.** :meth:`Monitor.fork` copies the monitor's state so that two extensions
  of one prefix can be followed apart (the model checker keeps one per state); the
  fork reads the log it is given, which starts with the same events.
- **Growing logs.** The log may grow under the monitor (events appended, messages
  entering its tables as events name them); its peers are fixed when the monitor is
  made.
"""

from __future__ import annotations

from typing import ClassVar

from ordercheck.checker.monitors.log import Log
from ordercheck.checker.monitors.violation import Violation


class Monitor:
    """One property over a growing :class:`~ordercheck.checker.monitors.log.Log`.

    Subclasses set :attr:`name`, :attr:`kind` and :attr:`changed_by`, keep their state
    in ``__slots__`` or plain attributes, and implement :meth:`step` or :meth:`run`
    (each is the other's default: a monitor whose rule reads best as one loop over the
    events writes :meth:`run`, which keeps its columns in local variables, and gets
    ``step(i) = run(i, i + 1)``), :meth:`end` for ``eventually`` properties, and
    :meth:`fork`.
    """

    name: ClassVar[str] = ""
    """The property's name, as models and reports spell it (``fifo``, ``causal``...)."""

    kind: ClassVar[str] = "always"
    """``always`` (decided at the event that breaks it) or ``eventually`` (decided at
    the end of a run: :meth:`end`)."""

    changed_by: ClassVar[frozenset[str] | None] = None
    """The event kinds (``send``, ``deliver``, ``drop``, ``signal_out``, ``signal_in``,
    ``fail``, ``restart``) whose arrival can break the property; ``None`` for any. The
    model checker skips a state whose new events are all of other kinds."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def step(self, i: int) -> Violation | None:
        """Event ``i`` was appended to the log (``i`` is one past the last event
        stepped). The violation when event ``i`` first breaks the property, else
        ``None``. By default, :meth:`run` over that one event."""
        return self.run(i, i + 1)

    def run(self, start: int, end: int) -> Violation | None:
        """Step events ``start`` to ``end - 1`` (``start`` is one past the last event
        stepped): the first violation among them, else ``None``; the same answer as
        calling :meth:`step` on each, which is what this does by default. A monitor may
        write its rule here instead, as one loop (``fifo``, ``causal``...), or decide a
        whole recording faster than step by step (``global_lock`` searches its
        prefixes)."""
        step = self.step
        for i in range(start, end):
            found = step(i)
            if found is not None:
                return found
        return None

    def read_to_fork(self, end: int) -> Violation | None:
        """Step events ``0`` to ``end - 1`` of a log read from its start, as :meth:`run`
        does (the same answer), for a monitor that is to be forked afterwards (the model
        checker reads a parent's history whole and forks it for each successor). By
        default :meth:`run`; a monitor whose :meth:`run` decides a whole log in a way
        that leaves state for :meth:`fork` to lay out (``global_lock``) steps instead."""
        return self.run(0, end)

    def end(self) -> Violation | None:
        """The run ends after the events stepped so far. For an ``eventually``
        property, the violation when what must happen has not; for an ``always``
        property, the violation its last line still held back (a late signal), else
        ``None``. Leaves the monitor as it was, so that it may go on stepping (a model
        checker asks at every state)."""
        return None

    def fork(self, log: Log) -> Monitor:
        """An independent copy of this monitor's state that reads ``log`` from now on;
        ``log`` holds the same events as far as this monitor has stepped."""
        raise NotImplementedError

    def pack(self) -> tuple | None:
        """This monitor's state as plain values (ints, strings, bytes, tuples, lists and
        dicts of them, ``None``), for a caller that keeps many monitors compactly (the
        model checker's states waiting to be expanded) and restores one with
        :meth:`unpack`; ``None`` where the monitor cannot be packed (the default), or
        cannot now (a violation held back). The value shares nothing the monitor may
        change."""
        return None

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> Monitor:
        """A monitor in the state :meth:`pack` gave (``state``), reading ``log``, which
        holds the same events as the packed monitor's log (a fork of it, as far as
        it goes)."""
        raise NotImplementedError
