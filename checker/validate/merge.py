"""One execution recorded as one log per process: merging the logs into one history.

Implementations usually write one log per process. :func:`merge_logs` takes the logs
of one execution (each peer's events all in one of them, in its program order) and
interleaves them into one :class:`~ordercheck.checker.validate.log.Log` in which every send comes
before the deliveries and drops of its message and the k-th signal from p to q before
the k-th receipt at q of a signal from p. Those are the only orders the properties
read across peers, so the merged log has the same verdicts as any single-file
recording of the same execution.

**The merge is deterministic.** The logs are taken in the order given, round robin:
from each, as many events as can come next (a delivery or drop whose send is already
merged, a signal receipt whose signal is, any other event), then the next log. A
delivery or drop whose message is sent in none of the logs, a receipt with no signal
for it, and logs that wait for each other (each one's next event waits for an event
further down another) are input errors naming the file and line.

:func:`per_peer_logs` does the opposite (for tests and demonstrations): one log per
peer, a one-line ``signal`` split into its ``signal_out`` and ``signal_in``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.validate.log import (
    DELIVER,
    DROP,
    MESSAGE_KINDS,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
    STEP,
    Log,
    LogBuilder,
)


def merge_logs(logs: Sequence[Log], source: str | None = None) -> Log:
    """The logs of one execution (one or more peers each) merged into one log, named
    ``source`` (default ``merge(first, second, ...)``); each event keeps its file
    (``origin``) and line. Raises :class:`~ordercheck.checker.InputError` naming a file and line
    when they cannot be merged (see the module's docstring)."""
    name = source or f"merge({', '.join(log.source for log in logs)})"
    builder = LogBuilder(name)
    out = builder.log
    out.sources = [log.source for log in logs]
    out.unit = logs[0].unit if logs else "line"
    out.fmt = logs[0].fmt if logs else "jsonl"
    out.header = {"merged": list(out.sources)}
    for log in logs:  # peers named by the logs' headers first, in order
        for p in log.peers:
            builder.peer_id(p)
    _check_one_file_per_peer(logs)
    sends: dict[str, tuple[int, int]] = {}  # message id -> (file, event) of its send
    outs_total: dict[tuple[str, str], int] = {}
    for f, log in enumerate(logs):
        for i in range(len(log)):
            k = log.kind[i]
            if k == SEND:
                sends.setdefault(log.msg_name[log.arg[i]], (f, i))
            elif k == SIGNAL_OUT:
                key = (log.peers[log.peer[i]], log.peers[log.arg[i]])
                outs_total[key] = outs_total.get(key, 0) + 1
    pos = [0] * len(logs)
    outs_done: dict[tuple[str, str], int] = {}
    ins_done: dict[tuple[str, str], int] = {}
    sent: set[str] = set()
    left = sum(len(log) for log in logs)
    while left:
        moved = False
        for f, log in enumerate(logs):
            i = pos[f]
            while i < len(log):
                k, a = log.kind[i], log.arg[i]
                who = log.peers[log.peer[i]]
                if k == DELIVER or k == DROP:
                    if log.msg_name[a] not in sent:
                        if log.msg_name[a] not in sends:
                            verb = "delivers" if k == DELIVER else "drops"
                            raise _bad(log, i, "msg", f"{who} {verb} {log.msg_name[a]}, which none of the merged "
                                                      "logs sends")
                        break
                elif k == SIGNAL_IN:
                    key = (log.peers[a], who)
                    n = ins_done.get(key, 0)
                    if n >= outs_total.get(key, 0):
                        raise _bad(log, i, "from", f"{who} receives signal number {n + 1} from {log.peers[a]}, "
                                                   f"which sends it only {outs_total.get(key, 0)} time(s) in the "
                                                   "merged logs")
                    if n >= outs_done.get(key, 0):
                        break
                    ins_done[key] = n + 1
                elif k == SIGNAL_OUT:
                    key = (who, log.peers[a])
                    outs_done[key] = outs_done.get(key, 0) + 1
                _copy(builder, log, f, i)
                if k == SEND:
                    sent.add(log.msg_name[a])
                i += 1
            if i != pos[f]:
                left -= i - pos[f]
                pos[f] = i
                moved = True
        if not moved:
            raise _deadlock(logs, pos, sends)
    return out


def _copy(builder: LogBuilder, log: Log, f: int, i: int) -> None:
    """Append event ``i`` of ``log`` (file ``f``) to the merged log."""
    out = builder.log
    k, a = log.kind[i], log.arg[i]
    p = builder.peer_id(log.peers[log.peer[i]])
    meta = log.meta.get(i)
    try:
        if k == SEND:
            dests = [builder.peer_id(log.peers[d]) for d in log.msg_dests[a]]
            builder.send(p, log.msg_name[a], dests, log.line[i], meta)
        elif k in MESSAGE_KINDS:
            builder.add(p, k, builder.message_id(log.msg_name[a]), log.line[i], meta)
        elif k == SIGNAL_OUT or k == SIGNAL_IN:
            builder.add(p, k, builder.peer_id(log.peers[a]), log.line[i], meta)
        elif k == STEP:
            builder.step(p, log.actions[a], log.line[i], meta)
        else:
            builder.add(p, k, a, log.line[i], meta)
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        raise _bad(log, i, field, message) from None
    out.origin.append(f)


def _bad(log: Log, i: int, field: str, message: str) -> InputError:
    where = f"{log.source}:{log.line[i]}" if log.unit == "line" else f"{log.source}: {log.unit} {log.line[i]}"
    return InputError(where, field, message)


def _check_one_file_per_peer(logs: Sequence[Log]) -> None:
    home: dict[str, int] = {}
    for f, log in enumerate(logs):
        for i in range(len(log)):
            who = log.peers[log.peer[i]]
            first = home.setdefault(who, f)
            if first != f:
                hint = (" (a one-line signal records the receipt too: write signal_out and signal_in)"
                        if log.kind[i] == SIGNAL_IN else "")
                raise _bad(log, i, "peer", f"{who}'s events are also in {logs[first].source}; each peer's events "
                                           f"must be in one of the merged logs{hint}")


def _deadlock(logs: Sequence[Log], pos: list[int], sends: dict[str, tuple[int, int]]) -> InputError:
    """The error for logs whose next events all wait: the first waiting delivery (or
    receipt) and the send (or signal) it waits for, which comes later in its log."""
    for f, log in enumerate(logs):
        i = pos[f]
        if i >= len(log):
            continue
        k, a = log.kind[i], log.arg[i]
        if k == DELIVER or k == DROP:
            g, j = sends[log.msg_name[a]]
            other = logs[g]
            return _bad(log, i, "msg", f"waits for the send of {log.msg_name[a]} ({other.source}:{other.line[j]}), "
                                       "which comes after an event that waits for this one: the logs cannot be merged "
                                       "in any order")
        return _bad(log, i, "from", f"waits for its signal from {log.peers[a]}, which comes after an event that "
                                    "waits for this one: the logs cannot be merged in any order")
    raise AssertionError("no log is waiting")


def per_peer_logs(log: Log) -> dict[str, Log]:
    """One log per peer (by name) with that peer's events, in order and with their
    lines; a signal's receipt goes to the receiving peer's log. Peers with no events
    get no log."""
    builders: dict[str, LogBuilder] = {}
    for i in range(len(log)):
        who = log.peers[log.peer[i]]
        b = builders.get(who)
        if b is None:
            b = builders[who] = LogBuilder(f"{log.source}.{who}")
        _copy_plain(b, log, i)
    return {who: b.log for who, b in builders.items()}


def _copy_plain(b: LogBuilder, log: Log, i: int) -> None:
    k, a = log.kind[i], log.arg[i]
    p = b.peer_id(log.peers[log.peer[i]])
    meta = log.meta.get(i)
    line = len(b.log) + 1
    if k == SEND:
        b.send(p, log.msg_name[a], [b.peer_id(log.peers[d]) for d in log.msg_dests[a]], line, meta)
    elif k in MESSAGE_KINDS:
        b.add(p, k, b.message_id(log.msg_name[a]), line, meta)
    elif k == SIGNAL_OUT or k == SIGNAL_IN:
        b.add(p, k, b.peer_id(log.peers[a]), line, meta)
    elif k == STEP:
        b.step(p, log.actions[a], line, meta)
    else:
        b.add(p, k, a, line, meta)
