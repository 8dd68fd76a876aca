"""The kinds of events a run is made of, shared by logs, histories and monitors.

An event is one thing one peer did: started sending a message, delivered or dropped
one, sent or received a side-channel signal, crashed or came back. ``arg`` is the
message for the first three, the other peer for signals, unused for the last two.
"""

from __future__ import annotations

# Event kinds (specs keep them in the low three bits of an encoded event).
SEND = 0  # the peer started sending message ``arg``
DELIVER = 1  # the peer delivered message ``arg``
SIGNAL_OUT = 2  # the peer sent a side-channel signal to peer ``arg``
SIGNAL_IN = 3  # the peer received a side-channel signal from peer ``arg``
DROP = 4  # the peer dropped message ``arg`` (a reason is recorded beside it)
FAIL = 5  # the peer crashed; ``arg`` is unused
RESTART = 6  # the peer came back after a crash; ``arg`` is unused

KIND_NAMES = {
    SEND: "send",
    DELIVER: "deliver",
    SIGNAL_OUT: "signal_out",
    SIGNAL_IN: "signal_in",
    DROP: "drop",
    FAIL: "fail",
    RESTART: "restart",
}

MESSAGE_KINDS = frozenset((SEND, DELIVER, DROP))
SIGNAL_KINDS = frozenset((SIGNAL_OUT, SIGNAL_IN))
