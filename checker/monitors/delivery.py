"""``eventual_delivery`` as a monitor: at the end of a run, every message reached every
live destination.

A message counts as reached at a peer that delivered or dropped it; a peer is down when
its last ``fail`` has no ``restart`` after it. Decided by :meth:`EventualDelivery.end`,
once the run is over: not prefix-safe (a recording that stops while messages travel
breaks it), so it is not among ``validate``'s default properties. O(1) per event, and
one pass over the sends at the end.
"""

from __future__ import annotations

from ordercheck.checker.monitors.base import Monitor
from ordercheck.checker.monitors.events import DELIVER, DROP, FAIL, RESTART, SEND
from ordercheck.checker.monitors.log import Log, pack_ints
from ordercheck.checker.monitors.violation import Violation, noun, place


class EventualDelivery(Monitor):
    """``eventual_delivery``: at the end, the first send (in log order) with a
    destination that neither delivered nor dropped the message and is not down.

    State: per message the peers that consumed it (a bitmask), the peers down (a
    bitmask), the sends in order and the number of events stepped.
    """

    name = "eventual_delivery"
    kind = "eventually"
    changed_by = frozenset({"send", "deliver", "drop", "fail", "restart"})

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.done = [0] * log.messages
        self.down = 0
        self.sends: list[int] = []
        self.stepped = 0

    def fork(self, log: Log) -> EventualDelivery:
        other = EventualDelivery.__new__(EventualDelivery)
        other.log, other.down, other.stepped = log, self.down, self.stepped
        other.done = self.done[:]
        other.sends = self.sends[:]
        return other

    def pack(self) -> tuple | None:
        if type(self).fork is not EventualDelivery.fork:  # a subclass with state of its own
            return None
        return (self.down, self.stepped, pack_ints(self.done), pack_ints(self.sends))

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> EventualDelivery:
        other = cls.__new__(cls)
        other.log = log
        other.down, other.stepped, done, sends = state
        other.done, other.sends = list(done), list(sends)
        return other

    def run(self, start: int, end: int) -> Violation | None:
        log = self.log
        kinds, peers, args = log.kind, log.peer, log.arg
        done, sends, down = self.done, self.sends, self.down
        for i in range(start, end):
            k = kinds[i]
            if k == DELIVER or k == DROP:
                m = args[i]
                if m >= len(done):
                    done.extend([0] * (m + 1 - len(done)))
                done[m] |= 1 << peers[i]
            elif k == SEND:
                sends.append(i)
            elif k == FAIL:
                down |= 1 << peers[i]
            elif k == RESTART:
                down &= ~(1 << peers[i])
        self.down = down
        if end > start:
            self.stepped = end
        return None

    def end(self) -> Violation | None:
        """Every (message, destination) pair still outstanding, named in one sentence;
        the window is the first such send."""
        return self._outstanding(ended=True)

    def outstanding(self) -> Violation | None:
        """As :meth:`end`, for a run that goes on (a fair loop, ``ordercheck.checker.engine.liveness``):
        the sentence says what is outstanding now, not that the run ends."""
        return self._outstanding(ended=False)

    def _outstanding(self, ended: bool) -> Violation | None:
        log = self.log
        done, down = self.done, self.down
        last = self.stepped - 1
        missing: list[tuple[int, int]] = []
        first = -1
        for i in self.sends:
            m = log.arg[i]
            for d in log.msg_dests[m]:
                bit = 1 << d
                if not (done[m] if m < len(done) else 0) & bit and not down & bit:
                    missing.append((m, d))
                    if first < 0:
                        first = i
        if not missing:
            return None
        m, d = missing[0]
        ends = f"and the {noun(log)} ends{place(log, last)}"
        if len(missing) == 1:
            tail = (f"{ends} without {log.peers[d]} delivering or dropping it" if ended
                    else f"and {log.peers[d]} has neither delivered nor dropped it")
            sentence = f"{log.msg_name[m]} to {log.peers[d]} is never delivered: {log.where(first)}, {tail}"
        else:
            pairs = [f"{log.msg_name[x]} to {log.peers[q]}" for x, q in missing]
            listing = ", ".join(pairs[:-1]) + " and " + pairs[-1]
            tail = (f"{ends} with none of them delivered or dropped" if ended
                    else "and none of them has been delivered or dropped")
            sentence = f"{listing} are never delivered: {log.where(first)}, {tail}"
        return Violation("eventual_delivery", last, sentence, (first,), (), tuple(missing))
