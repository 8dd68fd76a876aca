"""``integrity`` as a monitor: each message is delivered at most once at each peer, only
at its destinations, and only after it was sent; each signal is received after it was
sent.

As in the property library, a drop counts as a delivery here: a peer consumes a message
(delivers or drops it) at most once, and only if it is addressed to it. "After it was
sent" reads the log's order, which is the order events happened in (see
docs/reference/log-format.md): a delivery or drop must come after its message's send,
and a signal's receipt after its signal (paired by
:class:`~ordercheck.checker.monitors.log.SignalPairs`). (The library, which sees no order across
peers, asks instead that happened-before have no cycle; a log in which every such event
comes after its cause has none.) Time O(1) per event, memory one int per message (a
bitmask of the peers that consumed it).

A receipt recorded before its signal is known only when the signal's unit (its line)
closes, since a receipt later on the same line would be the signal's own: that
violation is reported at the first event of the next line, or at :meth:`end`, and a
violation found meanwhile on the same line waits for it (the earlier event wins).
"""

from __future__ import annotations

from ordercheck.checker.monitors.base import Monitor
from ordercheck.checker.monitors.events import DELIVER, DROP, SIGNAL_IN, SIGNAL_OUT
from ordercheck.checker.monitors.log import Log, SignalPairs, pack_ints
from ordercheck.checker.monitors.order import happened_before
from ordercheck.checker.monitors.violation import Violation, chain, noun, place


class Integrity(Monitor):
    """``integrity``: the first delivery (or drop) that repeats an earlier one at the
    same peer, reaches a peer the message is not addressed to, or comes before (or
    without) the message's send, or the first signal whose receipt came before it.

    State: per message the peers that consumed it (a bitmask), the pairing of signals,
    and a violation found on a line whose signals are not yet all paired.
    """

    name = "integrity"
    changed_by = None  # a late signal is known when its line closes, at an event of any kind

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.got = [0] * log.messages
        self.pairs = SignalPairs(log)
        self.pending: Violation | None = None
        self.done = False

    def fork(self, log: Log) -> Integrity:
        other = Integrity.__new__(Integrity)
        other.log, other.done, other.pending = log, self.done, self.pending
        other.got = self.got[:]
        other.pairs = self.pairs.copy(log)
        return other

    def pack(self) -> tuple | None:
        if type(self).fork is not Integrity.fork or self.pending is not None:  # a violation held back
            return None
        return (self.done, pack_ints(self.got), self.pairs.pack())

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> Integrity:
        other = cls.__new__(cls)
        done, got, pairs = state
        other.log, other.done, other.pending = log, done, None
        other.got = list(got)
        other.pairs = SignalPairs.unpack(log, pairs)
        return other

    def run(self, start: int, end: int) -> Violation | None:
        if self.done:
            return None
        log = self.log
        kinds, peers, args, msg_send, dests = log.kind, log.peer, log.arg, log.msg_send, log.msg_dests
        got, pairs = self.got, self.pairs
        for i in range(start, end):
            k = kinds[i]
            if self.pending is not None:
                if _unit(log, i) == _unit(log, self.pending.at):
                    if k == SIGNAL_OUT or k == SIGNAL_IN or pairs.unit_outs:
                        pairs.step(i)  # the same line: no late pair can form yet
                    continue
                # the line of the violation found closes: a signal on it may turn out late
                for r, s in pairs.step(i):
                    if s > r:
                        return self._found(_late_signal(log, r, s))
                return self._found(self.pending)
            if k == SIGNAL_OUT or k == SIGNAL_IN or pairs.unit_outs:
                for r, s in pairs.step(i):
                    if s > r:
                        return self._found(_late_signal(log, r, s))
            if k != DELIVER and k != DROP:
                continue
            m, p = args[i], peers[i]
            sent_at = msg_send[m]
            if m >= len(got):
                got.extend([0] * (m + 1 - len(got)))
            bit = 1 << p
            if 0 <= sent_at < i and p in dests[m] and not got[m] & bit:
                got[m] |= bit
                continue
            found = self._consume(i, k)
            assert found is not None
            if any(pairs.early.get(pair) for pair in pairs.unit_outs):
                self.pending = found  # a signal earlier on this line may yet turn out late
                continue
            return self._found(found)
        return None

    def end(self) -> Violation | None:
        """The violation the last line held back, if any (a late signal, or one found
        on that line); the monitor itself is left as it was."""
        if self.done:
            return None
        pending = self.pending
        for r, s in self.pairs.copy(self.log).flush():
            if s > r:
                late = _late_signal(self.log, r, s)
                return pending if pending is not None and pending.at < late.at else late
        return pending

    def _found(self, v: Violation) -> Violation:
        if self.pending is not None and self.pending.at < v.at:
            v = self.pending
        self.done = True
        self.pending = None
        return v

    def _consume(self, i: int, k: int) -> Violation | None:
        log = self.log
        m, p = log.arg[i], log.peer[i]
        name, who = log.msg_name[m], log.peers[p]
        verb = "delivered" if k == DELIVER else "dropped"
        sent_at = log.msg_send[m]
        if sent_at < 0:
            why = f"{who} {verb} {name}{place(log, i)}, which is never sent in the {noun(log)}"
            return Violation("integrity", i, why, (i,), (i,))
        if sent_at > i:
            # the violation shows once the send appears: this prefix holds a message never sent
            # a chain from this event to the send shows a cycle of happened-before, not
            # only a log that lists the send late
            try:
                path = happened_before(log, i, sent_at)
            except ValueError:
                path = []
            if len(path) > 2:
                why = f"{who} {verb} {name}{place(log, i)} before it was sent: {chain(log, path)}"
                return Violation("integrity", i, why, tuple(path), (i,))
            why = f"{who} {verb} {name}{place(log, i)} before it was sent ({log.where(sent_at)})"
            return Violation("integrity", i, why, (i, sent_at), (i,))
        dests = log.msg_dests[m]
        if p not in dests:
            to = ",".join(log.peers[d] for d in dests)
            why = f"{who} {verb} {name}{place(log, i)}, which is addressed to {to} only: {chain(log, [sent_at, i])}"
            return Violation("integrity", i, why, (sent_at, i), (i,))
        bit = 1 << p
        got = self.got
        if m >= len(got):
            got.extend([0] * (m + 1 - len(got)))
        if got[m] & bit:
            kinds, args, peers = log.kind, log.arg, log.peer
            first = next(j for j in range(sent_at, i)
                         if (kinds[j] == DELIVER or kinds[j] == DROP) and args[j] == m and peers[j] == p)
            again = ("twice" if kinds[first] == k
                     else f"after {'delivering' if kinds[first] == DELIVER else 'dropping'} it")
            why = f"{who} {verb} {name} {again}: {chain(log, [sent_at, first, i])}"
            return Violation("integrity", i, why, (sent_at, first, i), (first, i))
        got[m] |= bit
        return None


def _unit(log: Log, i: int) -> tuple[int, int]:
    return (log.origin[i] if log.origin else 0, log.line[i])


def _late_signal(log: Log, receipt: int, signal: int) -> Violation:
    why = (f"{log.peers[log.peer[receipt]]} got a signal from {log.peers[log.arg[receipt]]}"
           f"{place(log, receipt)} before it was sent ({log.where(signal)})")
    return Violation("integrity", signal, why, (receipt, signal), (receipt,))
