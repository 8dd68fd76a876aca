"""The documented log format: JSON Lines, one event per line (docs/reference/log-format.md).

::

    {"format": "ordercheck-log", "version": 1, "peers": ["a", "b", "c"]}
    {"peer": "a", "kind": "send", "msg": "a1", "to": ["b", "c"], "lamport": 1}
    {"peer": "b", "kind": "deliver", "msg": "a1", "time": "2024-05-01T10:00:00.120Z"}
    {"peer": "b", "kind": "signal", "to": "c"}
    {"peer": "c", "kind": "deliver", "msg": "a1", "vc": {"a": 1, "b": 1, "c": 1}}

The first line may be a header (``"format": "ordercheck-log"``); blank lines are
skipped; keys this page does not name are ignored. A line that breaks the format is
reported as ``FILE:LINE: FIELD: what is wrong`` (an :class:`~ordercheck.checker.InputError`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.inputs import parse_json
from ordercheck.checker.validate.log import (
    DELIVER,
    DROP,
    FAIL,
    RESTART,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
    STEP,
    Log,
    LogBuilder,
)

FORMAT = "ordercheck-log"
VERSION = 1
KINDS = ("send", "deliver", "drop", "signal", "signal_out", "signal_in", "fail", "restart", "step")
_KIND_LIST = ", ".join(KINDS)


EVENT_NESTING = 100
"""A line nested deeper than this is refused: an event nests two or three levels, and a
fixed limit answers the same whatever Python's recursion limit is at the time."""


def bad(source: str, line: int, field: str, message: str) -> InputError:
    """The input error for one line: ``FILE:LINE: FIELD: message``."""
    return InputError(f"{source}:{line}", field, message)


def read_jsonl(lines: Iterable[str], source: str, *, first_line: int = 1,
               peers: Sequence[str] | None = None) -> Log:
    """Read a log in the JSON Lines format; ``lines`` are the file's lines, ``source``
    names it in errors. Raises :class:`~ordercheck.checker.InputError` at the first bad line.

    A part of a file (:mod:`~ordercheck.checker.validate.chunks`) is read with
    ``first_line``, the number of its first line in the file, and ``peers``, the peers
    the file's header names (empty: no header, or one that names none): its lines are
    then read as lines after the first, where a header is refused."""
    builder: LogBuilder | None = None if peers is None else LogBuilder(source, peers)
    first = peers is None
    for number, text in enumerate(lines, first_line):
        if not text.strip():
            continue
        rec = parse_json(text, f"{source}:{number}", "an event", EVENT_NESTING)
        if not isinstance(rec, dict):
            raise bad(source, number, "", "is not a JSON object (one event per line)")
        if "format" in rec:
            if not first:
                raise bad(source, number, "format", "a header is only allowed on the first line")
            builder = LogBuilder(source, _header_peers(rec, source, number))
            builder.log.header = rec
            first = False
            continue
        if builder is None:
            builder = LogBuilder(source)
        first = False
        try:
            _event(builder, rec, number)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            raise bad(source, number, field, message) from None
    return builder.log if builder is not None else LogBuilder(source).log


def _header_peers(rec: dict[str, Any], source: str, number: int) -> list[str]:
    if rec.get("format") != FORMAT:
        raise bad(source, number, "format", f"expected {FORMAT!r}, got {rec.get('format')!r}")
    version = rec.get("version", VERSION)
    if type(version) is not int or version != VERSION:
        raise bad(source, number, "version", f"this reader knows version {VERSION}, the log says {version!r}")
    peers = rec.get("peers", [])
    if not isinstance(peers, list) or not all(isinstance(p, str) and p for p in peers):
        raise bad(source, number, "peers", "expected a list of peer names (non-empty strings)")
    if len(set(peers)) != len(peers):
        raise bad(source, number, "peers", "names a peer twice")
    if "peers" in rec and not peers:
        raise bad(source, number, "peers", "is empty: name the peers, or leave the key out")
    return peers


def _name(rec: dict[str, Any], key: str) -> str:
    value = rec.get(key)
    if value is None:
        raise ValueError(f"{key}: missing")
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key}: expected a peer name (a non-empty string), got {value!r}")
    return value


def _msg(rec: dict[str, Any]) -> str:
    value = rec.get("msg")
    if value is None:
        raise ValueError("msg: missing (the message id)")
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise ValueError(f"msg: expected a message id (a non-empty string or an integer), got {value!r}")
    return str(value)


def _meta(rec: dict[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] | None = None
    if "vc" in rec:
        vc = rec["vc"]
        if not isinstance(vc, dict) or not all(
            isinstance(k, str) and type(v) is int and v >= 0 for k, v in vc.items()
        ):
            raise ValueError("vc: expected an object from peer names to non-negative integers")
        out = {"vc": vc}
    if "lamport" in rec:
        ts = rec["lamport"]
        if type(ts) is not int or ts < 0:
            raise ValueError(f"lamport: expected a non-negative integer, got {ts!r}")
        out = out or {}
        out["lamport"] = ts
    if "time" in rec:
        t = rec["time"]
        if isinstance(t, bool) or not isinstance(t, (str, int, float)):
            raise ValueError(f"time: expected a number or a string, got {t!r}")
        out = out or {}
        out["time"] = t
    return out


def _event(b: LogBuilder, rec: dict[str, Any], number: int) -> None:
    kind = rec.get("kind")
    if kind is None:
        raise ValueError(f"kind: missing (one of {_KIND_LIST})")
    peer = b.peer_id(_name(rec, "peer"))
    meta = _meta(rec) if ("vc" in rec or "lamport" in rec or "time" in rec) else None
    if kind == "deliver":
        b.add(peer, DELIVER, b.message_id(_msg(rec)), number, meta)
    elif kind == "send":
        to = rec.get("to")
        if to is None:
            raise ValueError("to: missing (the destinations of the send)")
        if not isinstance(to, list) or not to or not all(isinstance(d, str) and d for d in to):
            raise ValueError(f"to: expected a non-empty list of peer names, got {to!r}")
        if len(set(to)) != len(to):
            raise ValueError("to: names a destination twice")
        b.send(peer, _msg(rec), [b.peer_id(d, "to") for d in to], number, meta)
    elif kind == "drop":
        reason = rec.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise ValueError(f"reason: expected a string, got {reason!r}")
        if reason:
            meta = dict(meta or {}, reason=reason)
        b.add(peer, DROP, b.message_id(_msg(rec)), number, meta)
    elif kind in ("signal", "signal_out"):
        other = b.peer_id(_name(rec, "to"), "to")
        if other == peer:
            raise ValueError("to: a peer cannot signal itself")
        b.add(peer, SIGNAL_OUT, other, number, meta)
        if kind == "signal":
            b.add(other, SIGNAL_IN, peer, number, meta)
    elif kind == "signal_in":
        other = b.peer_id(_name(rec, "from"), "from")
        if other == peer:
            raise ValueError("from: a peer cannot signal itself")
        b.add(peer, SIGNAL_IN, other, number, meta)
    elif kind == "fail":
        b.add(peer, FAIL, 0, number, meta)
    elif kind == "restart":
        b.add(peer, RESTART, 0, number, meta)
    elif kind == "step":
        action = rec.get("action")
        if isinstance(action, list) and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in action) and action:
            b.step(peer, tuple(action), number, meta)
        elif isinstance(action, str) and action:
            b.step(peer, action, number, meta)
        else:
            raise ValueError(f"action: expected the spec step as text or as a list of names and integers, got {action!r}")
    else:
        raise ValueError(f"kind: unknown kind {kind!r} (one of {_KIND_LIST})")


# -- writing ------------------------------------------------------------------------------


def records(log: Log, *, header: bool = True) -> Iterator[dict[str, Any]]:
    """The log as JSON Lines records (the header first). A signal whose receipt is the
    next event with the same line becomes one ``signal`` record."""
    if header:
        head: dict[str, Any] = {"format": FORMAT, "version": VERSION, "peers": list(log.peers)}
        for key, value in log.header.items():
            if key not in head:
                head[key] = value
        yield head
    peers, names = log.peers, log.msg_name
    n = len(log)
    i = 0
    while i < n:
        p, k, a = log.peer[i], log.kind[i], log.arg[i]
        rec: dict[str, Any] = {"peer": peers[p]}
        if k == SEND:
            rec.update(kind="send", msg=names[a], to=[peers[d] for d in log.msg_dests[a]])
        elif k == DELIVER:
            rec.update(kind="deliver", msg=names[a])
        elif k == DROP:
            rec.update(kind="drop", msg=names[a])
        elif k == SIGNAL_OUT:
            joined = (
                i + 1 < n and log.kind[i + 1] == SIGNAL_IN and log.peer[i + 1] == a
                and log.arg[i + 1] == p and log.line[i + 1] == log.line[i]
            )
            rec.update(kind="signal" if joined else "signal_out", to=peers[a])
            if joined:
                i += 1
        elif k == SIGNAL_IN:
            rec.update(kind="signal_in", **{"from": peers[a]})
        elif k == STEP:
            action = log.actions[a]
            rec.update(kind="step", action=list(action) if isinstance(action, tuple) else action)
        else:
            rec["kind"] = "fail" if k == FAIL else "restart"
        extra = log.meta.get(i)
        if extra:
            rec.update(extra)
        yield rec
        i += 1


def write_jsonl(log: Log, out: IO[str], *, header: bool = True) -> None:
    """Write ``log`` to the text stream ``out`` in the JSON Lines format."""
    dumps = json.dumps
    for rec in records(log, header=header):
        out.write(dumps(rec, separators=(",", ":")))
        out.write("\n")
