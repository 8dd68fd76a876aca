"""``integrity`` on a log, in one pass: each message is delivered at most once at each
peer, only at its destinations, and only after it was sent.

"After it was sent" reads the log's order: the send must come before the delivery in
the log (a log lists events in the order they happened; see
docs/reference/log-format.md). Time O(events), memory one int per message (a bitmask
of the peers that delivered it).
"""

from __future__ import annotations

from checker.validate.log import DELIVER, Log
from checker.validate.violation import Violation, chain


def integrity(log: Log) -> Violation | None:
    """The first delivery that repeats an earlier one at the same peer, reaches a peer
    the message is not addressed to, or comes before (or without) the message's send;
    ``None`` if there is none."""
    kinds, peers, args = log.kind, log.peer, log.arg
    msg_send, dests = log.msg_send, log.msg_dests
    got = [0] * log.messages
    for i in range(len(kinds)):
        if kinds[i] != DELIVER:
            continue
        m, p = args[i], peers[i]
        name, who = log.msg_name[m], log.peers[p]
        sent_at = msg_send[m]
        if sent_at < 0 or sent_at > i:
            if sent_at < 0:
                why = f"{who} delivered {name} ({log.at(i)}), which is never sent in the log"
                return Violation("integrity", i, why, (i,), (i,))
            why = (f"{who} delivered {name} ({log.at(i)}) before it was sent "
                   f"({log.where(sent_at)})")
            return Violation("integrity", i, why, (i, sent_at), (i,))
        if p not in dests[m]:
            to = ",".join(log.peers[d] for d in dests[m])
            why = f"{who} delivered {name} ({log.at(i)}), which is addressed to {to} only: {chain(log, [sent_at, i])}"
            return Violation("integrity", i, why, (sent_at, i), (i,))
        bit = 1 << p
        if got[m] & bit:
            first = next(j for j in range(sent_at, i) if kinds[j] == DELIVER and args[j] == m and peers[j] == p)
            why = f"{who} delivered {name} twice: {chain(log, [sent_at, first, i])}"
            return Violation("integrity", i, why, (sent_at, first, i), (first, i))
        got[m] |= bit
    return None
