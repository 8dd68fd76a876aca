"""``eventual_delivery`` on a finished log: every message reached every live destination.

Read at the end of the log in one pass: a message counts as reached at a peer that
delivered or dropped it; a peer is down when its last ``fail`` has no ``restart`` after
it. Not prefix-safe (a recording that stops while messages travel breaks it), so it is
not among ``validate``'s default properties.
"""

from __future__ import annotations

from checker.validate.log import DELIVER, DROP, FAIL, RESTART, SEND, Log
from checker.validate.violation import Violation


def eventual_delivery(log: Log) -> Violation | None:
    """At the end of the log, the first send (in log order) with a destination that
    neither delivered nor dropped the message and is not down (its last ``fail`` has no
    ``restart`` after it); ``None`` if every message reached every live destination.
    Not prefix-safe: a recording that stops while messages travel breaks it."""
    kinds, peers, args = log.kind, log.peer, log.arg
    done = [0] * log.messages
    down = 0
    for i in range(len(kinds)):
        k = kinds[i]
        if k == DELIVER or k == DROP:
            done[args[i]] |= 1 << peers[i]
        elif k == FAIL:
            down |= 1 << peers[i]
        elif k == RESTART:
            down &= ~(1 << peers[i])
    for i in range(len(kinds)):
        if kinds[i] != SEND:
            continue
        m = args[i]
        for d in log.msg_dests[m]:
            bit = 1 << d
            if not done[m] & bit and not down & bit:
                sentence = (
                    f"{log.msg_name[m]} to {log.peers[d]} is never delivered: {log.where(i)}, and the log "
                    f"ends ({log.at(len(kinds) - 1)}) without {log.peers[d]} delivering or dropping it"
                )
                return Violation("eventual_delivery", len(kinds) - 1, sentence, (i,), (), ((m, d),))
    return None
