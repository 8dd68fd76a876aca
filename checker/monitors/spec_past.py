"""``causal`` with the causal pasts a log may carry (a spec's own, for the model checker).

A log laid out from a spec's history (:mod:`ordercheck.specs.history`) says so with
``spec_pasts = True`` and carries ``msg_past`` (per log message, a bitmask of the spec's
message ids) with ``ids`` (a spec's message id to its log index):
each message's causal past as the spec computed it, which may hold more than the
events show (bus1_impl lets a user that sees ``BUS1_HANDLE_INVALID`` join a
destruction's past with no event to record it). :class:`CausalPast` decides ``causal``
with those pasts when the log has them, and as :class:`~ordercheck.checker.monitors.order.Causal`
does (vector clocks) otherwise.
"""

from __future__ import annotations

from ordercheck.checker.monitors.events import DELIVER, DROP
from ordercheck.checker.monitors.log import Log, pack_ints
from ordercheck.checker.monitors.order import Causal, _grow, _violation, happened_before
from ordercheck.checker.monitors.violation import Violation


class CausalPast(Causal):
    """``causal``, reading ``log.msg_past`` (per message, a set of message indices)
    when the log carries one: a delivery of m2 at p breaks it while a message of
    m2's past addressed to p is neither delivered nor dropped at p yet."""

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.pasts = bool(getattr(log, "spec_pasts", False))

    def fork(self, log: Log) -> CausalPast:
        if self.pasts:  # the pasts are the log's: only the consumed messages are state
            other = CausalPast.__new__(CausalPast)
            other.log, other.n, other.done, other.pasts = log, self.n, self.done, True
            other.got = self.got[:]
            return other
        other = super().fork(log)
        assert isinstance(other, CausalPast)
        other.pasts = self.pasts
        return other

    def pack(self) -> tuple | None:
        if type(self).fork is not CausalPast.fork:  # a subclass with state of its own
            return None
        if self.pasts:  # as fork: only the consumed messages are state
            return (True, self.n, self.done, pack_ints(self.got))
        return (False, self._pack_causal())

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> CausalPast:
        other = cls.__new__(cls)
        if state[0]:
            _, other.n, other.done, got = state
            other.log, other.pasts, other.got = log, True, list(got)
        else:
            other._unpack_causal(log, state[1])
            other.pasts = False
        return other

    def run(self, start: int, end: int) -> Violation | None:
        if not self.pasts:
            return super().run(start, end)
        if self.done:
            return None
        kinds = self.log.kind
        for i in range(start, end):
            k = kinds[i]
            if k == DELIVER or k == DROP:
                found = self._consume_past(i, k)
                if found is not None:
                    return found
        return None

    def _consume_past(self, i: int, k: int) -> Violation | None:
        """A drop, or a delivery of m2 at its peer p: the first message of m2's past in
        the spec, addressed to p and not yet consumed there, breaks ``causal``."""
        log = self.log
        m, p = log.arg[i], log.peer[i]
        got = self.got
        if m >= len(got):
            _grow(got, m, 0)
        bit = 1 << p
        if k == DROP:
            got[m] |= bit
            return None
        sent_at = log.msg_send[m]
        if sent_at < 0 or sent_at > i:
            return None
        dests, send = log.msg_dests, log.msg_send
        waiting = []
        mask = log.msg_past[m]  # type: ignore[attr-defined]
        if mask:
            ids = log.ids  # type: ignore[attr-defined]
            while mask:
                low = mask & -mask
                mask ^= low
                m1 = ids.get(low.bit_length() - 1)
                if m1 is not None and p in dests[m1] and not (m1 < len(got) and got[m1] & bit):
                    waiting.append(m1)
        got[m] |= bit
        if not waiting:
            return None
        m1 = min(waiting, key=lambda x: (send[x] < 0, send[x], x))
        self.done = True
        try:
            path = happened_before(log, send[m1], sent_at) if send[m1] >= 0 else [sent_at]
        except ValueError:  # the spec knows of m1 with no event showing how
            path = [send[m1], sent_at]
        return _violation(log, "causal", i, m1, [*path, i], f"{log.msg_name[m1]}, which happened before it")
