"""Deciding properties on states as an engine meets them.

Shared by every engine: the local breadth-first search, the Spark engine and random
simulation all hand states to an :class:`Evaluator` and get back the properties that a
state decides (a violated invariant, a reached ``sometimes`` target, an outstanding
``eventually`` at a terminal state).

History properties with a :attr:`~ordercheck.checker.api.spec.Property.monitor` (the ordering
properties) are decided by their monitors (``ordercheck.checker.monitors``), incrementally: the
evaluator keeps, per history key, the history laid out as a log and the monitors that
have read it (a :class:`_Entry`); a successor's entry is its parent's with the events
its history adds appended to a copy of the log and stepped through forks of the
parent's monitors, or, for the parent's last new successor when nothing else needs the
parent's entry (the caller says ``last``), appended to the parent's own log and stepped
through its own monitors. When the parent's entry is not at hand (an initial state, another
process's parent, an entry evicted, Spark), the history is laid out whole and the
monitors read it from the start. A one-process search whose level outgrows the two
generations of entries keeps the entries of the states met after that *packed*
(:meth:`Evaluator._pack`: the log and monitors as plain values, marshalled, about a
seventh of the memory) and unpacks one when its state is expanded, up to
:data:`PACKED_LIMIT` bytes. The verdict is the same either way (monitors decide on
what happened, not on the order the log lists concurrent events in); the sentence of a
violation is always the one read on the whole history laid out afresh, so it does not
depend on the path the search took.
"""

from __future__ import annotations

import marshal
from collections.abc import Hashable, Sequence
from typing import Any

from ordercheck.checker.api.spec import Property, Spec, State

CACHE_LIMIT = 1 << 12
ENTRY_LIMIT = 10_240
"""How many states' logs and monitors make one generation of the evaluator's entries; it
keeps two (between one and two generations' worth), and drops the older when the
current one is full: a breadth-first search needs a state's entry when it expands the
state, about one level after it met it. (An entry of BSS 2x5 is about 7.6 KB: two
generations hold about 150 MB.)"""
PACKED_OVERHEAD = 240
"""About how many bytes a packed entry holds beside its marshalled data (the entry, the
tuple that holds the packed parts, the table's slot)."""
PACKED_LIMIT = 192 << 20
"""About how many bytes the packed entries (:meth:`Evaluator._pack`) may hold: a
one-process search packs the entries of the states it meets once the two generations
are full of states yet to be expanded, up to this, and drops the rest (their successors
then read the history whole)."""


class _Entry:
    """One history as the monitors have read it: its log, the monitors of the open
    properties it has not violated (by property name), and the names it violates.

    An entry may be *lazy* (``log`` is ``None``): the history extends its ``parent``
    entry's by events that cannot change an open verdict (their kinds are outside every
    open monitored property's ``changed_by``), so it violates what its parent violates;
    the log and monitors are made (from ``state``'s history) only when a successor
    needs them."""

    __slots__ = ("log", "monitors", "violated", "parent", "state", "users", "handed", "packed", "key", "h")

    def __init__(self, log: Any, monitors: dict[str, Any] | None, violated: frozenset[str],
                 parent: _Entry | None = None, state: State = None) -> None:
        self.log = log
        self.monitors = monitors
        self.violated = violated
        self.parent = parent
        self.state = state
        self.users = 1  # the states met with this history and not yet released (Evaluator.release)
        # whether the log and monitors may be handed to a successor (Evaluator._hand_on):
        # not once a lazy entry extends this one, nor for monitors that read the history
        # whole without laying their state out for further steps (Evaluator._afresh)
        self.handed = True
        # the log and monitors packed (Evaluator._pack) while the entry waits, else None
        self.packed: tuple | None = None
        # the history key the evaluator's tables hold the entry under, and its hash (the
        # tables' own key); None for an entry outside them
        self.key: Any = None
        self.h: int | None = None


class Evaluator:
    """Checks the still-undecided properties of a spec on states.

    History checks run on ``self.history(state)`` (``spec.history`` unless a caller
    that keeps histories itself replaces it). A successor whose history key is its
    parent's (the same object) is not re-checked, since its history is the parent's.

    Properties with a monitor are decided through per-key :class:`_Entry` objects (see
    the module's docstring); the others by their ``check`` on the whole history, cached
    by ``spec.history_key(state)``, and not re-run on a successor whose history extends
    its parent's only by events the check's
    :attr:`~ordercheck.checker.api.spec.Property.changed_by` leaves out (:meth:`Spec.history_growth`
    says which were appended): its outcome is the parent's, already reported.
    """

    def __init__(self, spec: Spec, props: Sequence[Property]) -> None:
        self.spec = spec
        self.props = list(props)
        self.open: set[str] = {p.name for p in props}
        self._cache: dict[Hashable, tuple[tuple[str, str], ...]] = {}
        self._terminal_cache: dict[Hashable, tuple[tuple[str, str], ...]] = {}
        # The entries by the hash of their history key (each entry holds its key: _get), so
        # that a key, a nested tuple whose hash Python does not keep, is hashed once per
        # lookup in all three tables, and not again to drop its entry.
        self._entries: dict[int, _Entry] = {}  # the current generation
        self._older: dict[int, _Entry] = {}  # the one before
        self._packed: dict[int, _Entry] = {}  # entries met once both are full, packed (Evaluator._pack)
        self._packed_bytes = 0  # about how much memory the packed entries hold
        self._classes: dict[tuple, tuple] = {}  # the classes of packed entries' logs and monitors, each tuple once
        self._last_key: Any = None  # the parent key looked up last, and its entry
        self._last: _Entry | None = None
        self._releasing = False  # whether the caller releases expanded states' entries
        self._sentences: dict[tuple[Hashable, str], str | None] = {}
        self._logs: bool | None = None  # whether the spec's histories lay out as logs (known on first use)
        self._extend_log: Any = None  # the spec's extend_history_log, where it reads self.history's histories
        self.history = spec.history
        self._growth_memo: dict[frozenset[str], list[Property]] = {}
        self._rebuild()

    def _rebuild(self) -> None:
        live = [p for p in self.props if p.name in self.open]
        monitored = self._logs is not False
        self.state_checks = [p for p in live if p.kind != "eventually" and p.over == "state"]
        self.history_checks = [p for p in live if p.kind != "eventually" and p.over == "history"]
        self.terminal_state = [p for p in live if p.kind == "eventually" and p.over == "state"]
        self.terminal_history = [p for p in live if p.kind == "eventually" and p.over == "history"]
        self.uses_history = bool(self.history_checks or self.terminal_history)
        self._plain = [p for p in self.history_checks if not (monitored and p.monitor is not None)]
        self._plain_terminal = [p for p in self.terminal_history if not (monitored and p.monitor is not None)]
        self._watch = [p for p in self.history_checks if monitored and p.monitor is not None]
        self._watch_end = [p for p in self.terminal_history if monitored and p.monitor is not None]
        self._monitor_of = {p.name: p.monitor for p in self._watch + self._watch_end}
        kinds: set[str] | None = set()
        for p in self._watch:
            if p.changed_by is None:
                kinds = None
                break
            kinds |= p.changed_by  # type: ignore[operator]
        self._watch_kinds = None if kinds is None else frozenset(kinds)
        self._growth_memo.clear()

    def _checks_for(self, grown: frozenset[str]) -> list[Property]:
        """The plain history checks an extension by events of kinds ``grown`` can affect."""
        checks = self._growth_memo.get(grown)
        if checks is None:
            checks = [p for p in self._plain if p.changed_by is None or not grown.isdisjoint(p.changed_by)]
            if len(checks) == len(self._plain):
                checks = self._plain
            self._growth_memo[grown] = checks
        return checks

    @property
    def done(self) -> bool:
        """Every property is decided; searching further changes no verdict."""
        return not self.open

    def decide(self, name: str) -> None:
        """Stop checking ``name``: its verdict is known."""
        if name in self.open:
            self.open.discard(name)
            self._rebuild()

    def history_key(self, state: State) -> Hashable | None:
        if not self.uses_history:
            return None
        return self.spec.history_key(state)

    def on_state(self, state: State, key: Any, parent_key: Any, parent: State = None,
                 last: bool = False) -> list[tuple[str, str]]:
        """The properties ``state`` decides: ``(name, sentence)`` pairs. ``parent``, the
        state ``state`` was reached from (its history key ``parent_key``), when the
        caller has it and the parent has other successors to check (a whole reading
        costs about two and a half extensions): without the parent's entry at hand, the
        parent's history is then laid out whole once and extended for each of its
        successors, rather than each successor's laid out whole. ``last``: the caller
        checks no other successor of that parent and releases it (:meth:`release`)
        next; when no other state met with the parent's history waits, ``state``'s
        entry is then the parent's log and monitors, extended in place rather than
        copied and forked."""
        found: list[tuple[str, str]] = []
        for p in self.state_checks:
            out = p.check(state)
            if out is not None and out is not False:
                found.append((p.name, _sentence(p, out)))
        if key is not None and key is parent_key:
            if self._watch or self._watch_end:
                if key is self._last_key and self._last is not None:
                    self._last.users += 1  # _use's usual case, without the call
                else:
                    self._use(key)
            return found
        if self._logs is None and (self._watch or self._watch_end):
            self._logs_known(state)
        if self._watch or self._watch_end:
            entry = self._entry(state, key, parent_key, parent, last)
            if entry.violated:
                for p in self._watch:
                    if p.name in entry.violated:
                        found.append((p.name, self._sentence_of(state, key, p)))
        if self._plain:
            cached = self._cache.get(key) if key is not None else None
            if cached is None:
                checks = self._plain
                grown = self.spec.history_growth(parent_key, key) if parent_key is not None else None
                if grown is not None:
                    checks = self._checks_for(grown)
                hits = []
                if checks:
                    h = self.history(state)
                    for p in checks:
                        out = p.check(h)
                        if out is not None and out is not False:
                            hits.append((p.name, _sentence(p, out)))
                cached = tuple(hits)
                # Only a verdict of every check may stand for the key's history.
                if key is not None and checks is self._plain:
                    if len(self._cache) >= CACHE_LIMIT:
                        self._cache.clear()
                    self._cache[key] = cached
            found.extend(hit for hit in cached if hit[0] in self.open)
        return found

    def on_terminal(self, state: State, key: Any) -> list[tuple[str, str]]:
        """The ``eventually`` properties still outstanding in a terminal state."""
        found: list[tuple[str, str]] = []
        for p in self.terminal_state:
            out = p.check(state)
            if out is not None and out is not False:
                found.append((p.name, _sentence(p, out)))
        if self._logs is None and self._watch_end:
            self._logs_known(state)
        if self._watch_end:
            entry = None
            if key is not None:
                entry = self._find(key, hash(key))
                if entry is not None:
                    entry = self._ready(entry)
            for p in self._watch_end:
                monitor = entry.monitors.get(p.name) if entry is not None else None  # type: ignore[union-attr]
                if monitor is not None and monitor.end() is None:
                    continue  # nothing outstanding (the same on the history laid out afresh)
                sentence = self._whole(state, key, p)
                if sentence is not None:
                    found.append((p.name, sentence))
        if self._plain_terminal:
            cached = self._terminal_cache.get(key) if key is not None else None
            if cached is None:
                h = self.history(state)
                hits = []
                for p in self._plain_terminal:
                    out = p.check(h)
                    if out is not None and out is not False:
                        hits.append((p.name, _sentence(p, out)))
                cached = tuple(hits)
                if key is not None:
                    if len(self._terminal_cache) >= CACHE_LIMIT:
                        self._terminal_cache.clear()
                    self._terminal_cache[key] = cached
            found.extend(hit for hit in cached if hit[0] in self.open)
        return found

    def release(self, key: Any) -> None:
        """A state with history key ``key`` has been expanded (its successors checked, or
        it is terminal): the entry is dropped once every state met with that history
        has been (a one-process search calls this; other callers rely on the two
        generations). Dropping too early costs time, never a verdict: a successor
        without its parent's entry lays its history out whole."""
        if key is None:
            return
        self._releasing = True
        if key is self._last_key and self._last is not None:
            entry = self._last  # the parent its successors just looked up (or counted)
        else:
            entry = self._find(key, hash(key))
            if entry is None:
                return
        entry.users -= 1
        if entry.users <= 0:
            h = entry.h
            for where in (self._entries, self._older, self._packed):
                if where and h is not None and where.get(h) is entry:
                    del where[h]
                    if entry.packed is not None and where is self._packed:
                        self._packed_bytes -= entry.packed[0]
                    break
            if self._last is entry:
                self._last_key = self._last = None
        elif entry.packed is not None and entry.log is not None:
            # unpacked for this state's successors; another state with this history
            # waits: it keeps the packed form only until then
            entry.log = entry.monitors = None

    # -- monitors ---------------------------------------------------------------------

    def _use(self, key: Any) -> None:
        """One more state met with history key ``key`` (its parent's): its entry is kept
        until that state is released too. The entry found is remembered as the last
        looked up (siblings with their parent's history follow one another)."""
        if key is self._last_key and self._last is not None:
            self._last.users += 1
            return
        entry = self._find(key, hash(key))
        if entry is not None:
            entry.users += 1
            self._last_key, self._last = key, entry

    def _find(self, key: Any, h: int) -> _Entry | None:
        """The entry kept for history key ``key`` (hash ``h``) in the tables (either
        generation, or packed), else ``None``."""
        entry = _get(self._entries, h, key)
        if entry is None:
            if self._older:
                entry = _get(self._older, h, key)
            if entry is None and self._packed:
                entry = _get(self._packed, h, key)
        return entry

    def _logs_known(self, state: State) -> None:
        """Find out whether the spec's histories lay out as logs; without, the monitored
        properties are decided by their ``check`` like the others."""
        self._logs = hasattr(self.history(state), "as_log")
        # a spec may extend a log without building the history (PeerSpec.extend_history_log);
        # only for its own histories, not those of a caller that replaced self.history
        extend = getattr(self.spec, "extend_history_log", None)
        self._extend_log = extend if extend is not None and self.history == self.spec.history else None
        self._rebuild()

    def _entry(self, state: State, key: Any, parent_key: Any, parent_state: State = None,
               last: bool = False) -> _Entry:
        """``state``'s entry: cached, else its parent's extended (lazily when the new
        events cannot change an open verdict; in place when ``last`` and nothing else
        needs the parent's), else built afresh. A parent whose entry is not at hand is
        read whole from ``parent_state`` (when given and the growth is known) and kept
        for its other successors, not in the table."""
        entries, older, packed = self._entries, self._older, self._packed
        h = 0
        if key is not None:
            h = hash(key)
            entry = self._find(key, h)
            if entry is not None:
                entry.users += 1
                return entry
        grown = self.spec.history_growth(parent_key, key) if parent_key is not None else None
        if grown is None:
            parent = None
        elif parent_key is self._last_key:  # a sibling's parent: found already
            parent = self._last
        else:
            ph = hash(parent_key)
            parent = _get(entries, ph, parent_key)
            if parent is None and older:
                parent = _get(older, ph, parent_key)
            if parent is None:
                parent = _get(packed, ph, parent_key) if packed else None
                if parent is not None:
                    if parent.log is None:
                        self._unpack(parent)
                elif parent_state is not None:
                    parent = self._afresh(parent_state, to_fork=True)
            self._last_key, self._last = parent_key, parent
        made = None
        if parent is None:
            made = self._afresh(state)
        elif last and parent.users <= 1 and parent.handed and parent.log is not None:
            # nothing else needs the parent's entry: extend it in place (cheaper than
            # copying it now, or later for a lazy entry, which a search mostly makes)
            made = self._hand_on(parent, parent_key, state)
        if made is not None:
            entry = made
        elif self._watch_kinds is not None and grown.isdisjoint(self._watch_kinds):  # type: ignore[union-attr]
            entry = _Entry(None, None, parent.violated, parent, state)  # type: ignore[union-attr]
            parent.handed = False  # type: ignore[union-attr]
        else:
            entry = self._extend(self._source(parent), state)  # type: ignore[arg-type]
            entry.violated |= parent.violated  # type: ignore[union-attr]
        if key is not None:
            if len(entries) >= ENTRY_LIMIT:
                if self._releasing:  # full of states yet to be expanded: keep them, this one packed
                    if len(older) + len(entries) >= 2 * ENTRY_LIMIT:
                        if self._packed_bytes < PACKED_LIMIT and self._pack(self._ready(entry)):
                            entry.key, entry.h = key, h
                            packed[h] = entry
                        return entry
                else:  # a generation full: the one before goes
                    self._older, self._entries = entries, {}
                    entries = self._entries
            entry.key, entry.h = key, h
            entries[h] = entry
            if key is self._last_key:  # the table's entry for the key, as _use and release find it
                self._last = entry
        return entry

    def _afresh(self, state: State, to_fork: bool = False) -> _Entry:
        """An entry for ``state`` read whole: its history laid out and the monitors run
        from the start (each through :meth:`~ordercheck.checker.monitors.base.Monitor.read_to_fork`
        when the entry is made to be forked; otherwise the entry is only ever forked,
        never handed on, since a monitor's :meth:`~ordercheck.checker.monitors.base.Monitor.run`
        may leave state for its fork to lay out)."""
        log = self.history(state).as_log()
        monitors = {name: cls(log) for name, cls in self._monitor_of.items()}
        entry = _Entry(log, monitors, frozenset())
        if to_fork:
            end = len(log)
            broken = [name for name, m in monitors.items() if m.read_to_fork(end) is not None]
            for name in broken:
                del monitors[name]
            entry.violated = frozenset(broken)
        else:
            self._step(entry, 0)
            entry.handed = False
        return entry

    def _extend(self, parent: _Entry, state: State) -> _Entry:
        """An entry for ``state``, whose history extends ``parent``'s (made)."""
        if self._extend_log is not None:
            log = self._extend_log(state, parent.log)
        else:
            log = self.history(state).extend_log(parent.log)
        open_ = self.open
        monitors = {name: m.fork(log) for name, m in parent.monitors.items() if name in open_}  # type: ignore[union-attr]
        entry = _Entry(log, monitors, parent.violated)
        self._step(entry, len(parent.log))
        return entry

    def _hand_on(self, parent: _Entry, parent_key: Any, state: State) -> _Entry | None:
        """An entry for ``state`` made of ``parent``'s own log and monitors, the events
        ``state``'s history adds appended and stepped in place; ``parent`` leaves the
        evaluator (its state is expanded and no other state met with its history
        waits). ``None``, with ``parent`` untouched, where the history cannot extend a
        log in place."""
        log = parent.log
        start = len(log)
        if self._extend_log is not None:
            if self._extend_log(state, log, True) is None:
                return None
        else:
            grow = getattr(self.history(state), "extend_log_in_place", None)
            if grow is None or not grow(log):
                return None
        h = parent.h
        if h is not None:
            for where in (self._entries, self._older, self._packed):
                if where.get(h) is parent:
                    del where[h]
        if parent.packed is not None:  # the log and monitors change in place: the packed form is stale
            self._packed_bytes -= parent.packed[0]
            parent.packed = None
        if self._last is parent:
            self._last_key = self._last = None
        monitors = parent.monitors
        open_ = self.open
        for name in [name for name in monitors if name not in open_]:  # type: ignore[union-attr]
            del monitors[name]  # type: ignore[union-attr]
        parent.log = parent.monitors = None  # handed on: nothing reads it as it was
        entry = _Entry(log, monitors, parent.violated)
        self._step(entry, start)
        return entry

    def _pack(self, entry: _Entry) -> bool:
        """Pack a made entry's log and monitors (each through its ``pack``: plain values,
        int columns as bytes) in place of the objects, so that a state met once the
        generations are full keeps its entry in a fraction of the memory until it is
        expanded (:meth:`_unpack`); ``False``, with the entry left as it was, where the
        log or a monitor cannot be packed."""
        log = entry.log
        pack = getattr(log, "pack", None)
        if pack is None or entry.parent is not None:
            return False
        monitors = []
        for name, monitor in entry.monitors.items():  # type: ignore[union-attr]
            state = monitor.pack()
            if state is None:
                return False
            monitors.append((name, type(monitor), state))
        shared, plain = pack()
        data = marshal.dumps((plain, tuple(state for _, _, state in monitors)))
        classes = (type(log), *((name, cls) for name, cls, _ in monitors))
        classes = self._classes.setdefault(classes, classes)  # one per model, mostly
        entry.packed = (len(data) + PACKED_OVERHEAD, shared, classes, data)
        entry.log = entry.monitors = None
        self._packed_bytes += entry.packed[0]
        return True

    def _unpack(self, entry: _Entry) -> None:
        """Give a packed entry its log and monitors back (as they were when packed)."""
        _size, shared, classes, data = entry.packed  # type: ignore[misc]
        plain, states = marshal.loads(data)
        log = classes[0].unpack(shared, plain)
        entry.log = log
        entry.monitors = {name: cls.unpack(log, state) for (name, cls), state in zip(classes[1:], states)}
        # the packed form stays: dropped with the entry, or the objects dropped again when
        # the entry is released while other states with its history wait (release)

    def _source(self, entry: _Entry) -> _Entry:
        """A made entry whose log a successor of ``entry`` may extend: ``entry`` itself
        (unpacked if packed), or for a lazy entry its nearest made ancestor, whose
        history its own extends by events that change no open verdict (so the lazy
        entry is not made for its successor: a log copy and forks saved)."""
        e = entry
        while e.log is None and e.packed is None and e.parent is not None:
            e = e.parent
        if e.log is None:
            return self._ready(e)
        return e

    def _ready(self, entry: _Entry) -> _Entry:
        """``entry`` made: a packed entry unpacked; a lazy entry (and the lazy entries it
        extends) gets its log and monitors from the nearest made ancestor."""
        if entry.log is not None:
            return entry
        if entry.packed is not None:
            self._unpack(entry)
            return entry
        chain = []
        e: _Entry | None = entry
        while e is not None and e.log is None and e.packed is None:
            chain.append(e)
            e = e.parent
        assert e is not None  # a lazy entry's ancestors end with a made (or packed) one
        if e.log is None:
            self._unpack(e)
        for lazy in reversed(chain):
            made = self._extend(e, lazy.state)
            lazy.log, lazy.monitors, lazy.violated = made.log, made.monitors, lazy.violated | made.violated
            lazy.parent = lazy.state = None
            e = lazy
        return entry

    def _step(self, entry: _Entry, start: int) -> None:
        """Step ``entry``'s monitors through its log's events from ``start``; a monitor
        that finds a violation leaves the entry, its property joins ``violated``."""
        monitors = entry.monitors
        end = len(entry.log)
        if start >= end or not monitors:
            return
        # run: the first violation among the new events, as stepping each would find it
        # (a monitor may search the prefixes of a whole history)
        broken = [name for name, m in monitors.items() if m.run(start, end) is not None]
        if broken:
            for name in broken:
                del monitors[name]
            entry.violated = entry.violated | frozenset(broken)

    def _whole(self, state: State, key: Any, p: Property) -> str | None:
        """``p``'s monitor on ``state``'s whole history laid out afresh: the sentence of
        its first violation (for an ``eventually`` property, what is outstanding at the
        end), or ``None``."""
        memo_key = (key, p.name)
        if key is not None and memo_key in self._sentences:
            return self._sentences[memo_key]
        log = self.history(state).as_log()
        monitor = p.monitor(log)
        found = monitor.run(0, len(log))
        if found is None:
            found = monitor.end()
        sentence = found.sentence if found is not None else None
        if key is not None:
            if len(self._sentences) >= CACHE_LIMIT:
                self._sentences.clear()
            self._sentences[memo_key] = sentence
        return sentence

    def _sentence_of(self, state: State, key: Any, p: Property) -> str:
        """The sentence of ``p``'s violation on ``state``'s history, read on the whole
        history laid out afresh (whatever path the entry was built along)."""
        return self._whole(state, key, p) or f"{p.name} does not hold"


def _get(table: dict[int, _Entry], h: int, key: Any) -> _Entry | None:
    """The entry ``table`` holds for history key ``key`` (hash ``h``), else ``None`` (also
    where it holds another key's entry under an equal hash)."""
    entry = table.get(h)
    if entry is not None and (entry.key is key or entry.key == key):
        return entry
    return None


def _sentence(p: Property, out: Any) -> str:
    if isinstance(out, str):
        return out
    if p.kind == "sometimes":
        return f"{p.name} is reached"
    return f"{p.name} does not hold"
