"""``integrity`` on a log, in one pass: each message is delivered at most once at each
peer, only at its destinations, and only after it was sent.

As in the property library, a drop counts as a delivery here: a peer consumes a
message (delivers or drops it) at most once, and only if it is addressed to it.
"After it was sent" reads the log's order, which is the order events happened in (see
docs/reference/log-format.md): a delivery or drop must come after its message's send,
and a signal's receipt after its signal (paired by
:func:`~checker.validate.log.signal_sources`). (The
library, which sees no order across peers, asks instead that happened-before have no
cycle; a log in which every such event comes after its cause has none.) Time
O(events), memory one int per message (a bitmask of the peers that consumed it).
"""

from __future__ import annotations

from checker.validate.log import DELIVER, DROP, SIGNAL_IN, SIGNAL_OUT, Log, signal_sources
from checker.validate.violation import Violation, chain


def integrity(log: Log) -> Violation | None:
    """The first delivery (or drop) that repeats an earlier one at the same peer,
    reaches a peer the message is not addressed to, or comes before (or without) the
    message's send, or the first signal receipt that comes before its signal; ``None``
    if there is none."""
    kinds, peers, args = log.kind, log.peer, log.arg
    msg_send, dests = log.msg_send, log.msg_dests
    got = [0] * log.messages
    late = {s: r for r, s in signal_sources(log).items() if s > r}  # signal -> its receipt, which came first
    for i in range(len(kinds)):
        k = kinds[i]
        if k == SIGNAL_OUT:
            receipt = late.get(i)
            if receipt is not None:
                why = (f"{log.peers[peers[receipt]]} got a signal from {log.peers[args[receipt]]} "
                       f"({log.at(receipt)}) before it was sent ({log.where(i)})")
                return Violation("integrity", i, why, (receipt, i), (receipt,))
            continue
        if k == SIGNAL_IN:
            continue
        if k != DELIVER and k != DROP:
            continue
        m, p = args[i], peers[i]
        name, who = log.msg_name[m], log.peers[p]
        verb = "delivered" if k == DELIVER else "dropped"
        sent_at = msg_send[m]
        if sent_at < 0:
            why = f"{who} {verb} {name} ({log.at(i)}), which is never sent in the log"
            return Violation("integrity", i, why, (i,), (i,))
        if sent_at > i:
            # the violation shows once the send appears: this prefix holds a message never sent
            why = f"{who} {verb} {name} ({log.at(i)}) before it was sent ({log.where(sent_at)})"
            return Violation("integrity", i, why, (i, sent_at), (i,))
        if p not in dests[m]:
            to = ",".join(log.peers[d] for d in dests[m])
            why = f"{who} {verb} {name} ({log.at(i)}), which is addressed to {to} only: {chain(log, [sent_at, i])}"
            return Violation("integrity", i, why, (sent_at, i), (i,))
        bit = 1 << p
        if got[m] & bit:
            first = next(j for j in range(sent_at, i)
                         if (kinds[j] == DELIVER or kinds[j] == DROP) and args[j] == m and peers[j] == p)
            again = "twice" if kinds[first] == k else f"after {'delivering' if kinds[first] == DELIVER else 'dropping'} it"
            why = f"{who} {verb} {name} {again}: {chain(log, [sent_at, first, i])}"
            return Violation("integrity", i, why, (sent_at, first, i), (first, i))
        got[m] |= bit
    return None
