"""Reading one large JSON Lines log in parts, in parallel, into the log a sequential read gives.

A file is cut into byte ranges at line ends (:func:`plan`); each range is read on its
own (:func:`read_part`) into a *part*, a :class:`~ordercheck.checker.validate.log.Log` whose
peers and messages are numbered in the order the part first names them, with the
file's line numbers; :func:`join` then renumbers the parts into one log, carrying
across each cut what a sequential read carries: the peers and message ids already
named (first sight decides the number), how many messages each sender has sent (a
message's ``msg_seq``), which ids were sent (a second send of one id is an error)
and how many events and steps came before (event and step indices). The joined log
equals, field by field, the log :func:`~ordercheck.checker.validate.readers.read_log` reads
from the whole file, so every property's answer on it is the sequential one.

Only a part can see its own bad lines, and some faults span a cut (an id sent in two
parts); so a part that finds bad input, or a join that finds a conflict, answers
``None`` and the caller reads the file sequentially, which raises the error a
sequential read raises, at the same line with the same words. A file with a carriage
return is not cut: Python's universal newlines count a lone ``\\r`` as a line end, so
its line numbers would not be those of the byte ranges.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.inputs import bounded_lines
from ordercheck.checker.validate.jsonl import read_jsonl
from ordercheck.checker.validate.log import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, STEP, Log

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Part:
    """Bytes ``start`` to ``end`` (exclusive) of a file, whose first line is line
    ``first_line`` of the file; ``peers`` is what the file's header names (``None`` for
    the first part, which reads the header itself)."""

    start: int
    end: int
    first_line: int
    peers: tuple[str, ...] | None


def count_lines(path: str, above: int) -> int | None:
    """The number of lines of the file at ``path`` (its newline bytes, plus one for a
    last line without one), once it is known to be more than ``above``: ``None`` when
    it has at most ``above`` lines (known without reading a file of at most ``above``
    bytes), when it holds a carriage return (see the module's docstring), or when it
    cannot be read as a plain file (the sequential read names the problem)."""
    try:
        if os.path.getsize(path) <= above or not os.path.isfile(path):
            return None
        lines, last = 0, b"\n"
        with open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                if b"\r" in block:
                    return None
                lines += block.count(b"\n")
                last = block[-1:]
    except OSError:
        return None
    lines += last != b"\n"
    return lines if lines > above else None


def plan(path: str, parts: int) -> list[Part]:
    """``path`` cut into at most ``parts`` byte ranges of about equal size, each ending
    at a line end (or the file's end); the first holds at least the file's first
    non-blank line (a header, if it has one). Ranges with no bytes are left out."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head_end, head = _first_line_end(fh)
        cuts = [0]
        for k in range(1, parts):
            at = max(size * k // parts, head_end, cuts[-1])
            if at >= size:
                break
            fh.seek(at)
            # a cut lies just after a newline: the newline at or after the aimed-at byte
            while True:
                block = fh.read(1 << 16)
                if not block:
                    at = size
                    break
                nl = block.find(b"\n")
                if nl >= 0:
                    at += nl + 1
                    break
                at += len(block)
            if at >= size:
                break
            if at > cuts[-1]:
                cuts.append(at)
    return parts_at(path, cuts[1:])


def parts_at(path: str, cuts: list[int]) -> list[Part]:
    """The parts of the file at ``path`` cut at the byte offsets ``cuts`` (increasing,
    each just after a newline and past the file's first non-blank line): the first from
    byte 0, the last to the file's end."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        _end, head = _first_line_end(fh)
        peers = _header_peers(head)
        bounds = [0, *cuts, size]
        out = []
        line = 1
        for a, b in zip(bounds, bounds[1:]):
            out.append(Part(a, b, line, None if a == 0 else peers))
            fh.seek(a)
            line += fh.read(b - a).count(b"\n")
    return out


def _first_line_end(fh: io.BufferedReader) -> tuple[int, bytes]:
    """The byte just past the first non-blank line of the open file, and that line."""
    at = 0
    for raw in fh:
        at += len(raw)
        if raw.strip():
            return at, raw
    return at, b""


def _header_peers(head: bytes) -> tuple[str, ...]:
    """The peers a header line names (none when it is not a header or names none).
    A header that is not well-formed is refused by the first part's read, so what this
    answers for it does not matter."""
    try:
        rec = json.loads(head)
    except ValueError:
        return ()
    if not isinstance(rec, dict) or "format" not in rec:
        return ()
    peers = rec.get("peers")
    if isinstance(peers, list) and all(isinstance(p, str) for p in peers):
        return tuple(peers)
    return ()


def read_part(path: str, part: Part) -> Log | None:
    """The part of the file at ``path`` that ``part`` names, read as JSON Lines with the
    file's line numbers (see the module's docstring), or ``None`` when it holds bad
    input (the caller's sequential read reports it)."""
    with open(path, "rb") as fh:
        fh.seek(part.start)
        data = fh.read(part.end - part.start)
    try:
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8") as text:
            return read_jsonl(bounded_lines(text, path, "one line of a log"), path, first_line=part.first_line,
                              peers=part.peers)
    except (InputError, UnicodeDecodeError):
        return None


def join(parts: list[Log]) -> Log | None:
    """The log read from the parts of one file, in the file's order (see the module's
    docstring), or ``None`` when one id is sent in two parts (the sequential read
    reports it)."""
    import numpy as np

    first = parts[0]
    out = Log(first.source, [], header=first.header)
    peer_of: dict[str, int] = {}
    msg_of: dict[str, int] = {}
    sender = np.zeros(0, dtype=np.int64)  # per message, as in Log; lists again at the end
    seq = np.zeros(0, dtype=np.int64)
    send = np.zeros(0, dtype=np.int64)
    sends = np.zeros(0, dtype=np.int64)  # per peer: messages sent in the parts joined so far
    for part in parts:
        pmap = [peer_of.setdefault(name, len(peer_of)) for name in part.peers]
        out.peers += [name for name, p in zip(part.peers, pmap) if p >= len(out.peers)]
        sends = np.concatenate([sends, np.zeros(len(peer_of) - len(sends), dtype=np.int64)])
        pm = np.asarray(pmap, dtype=np.int64)
        identity = pmap == list(range(len(pmap)))
        offset = len(out.kind)
        known = len(msg_of)
        mm = np.asarray([msg_of.setdefault(name, len(msg_of)) for name in part.msg_name], dtype=np.int64)
        new = len(msg_of) - known
        out.msg_name += [name for name, g in zip(part.msg_name, mm.tolist()) if g >= known]
        out.msg_dests += [()] * new
        sender = np.concatenate([sender, np.full(new, -1, dtype=np.int64)])
        seq = np.concatenate([seq, np.full(new, -1, dtype=np.int64)])
        send = np.concatenate([send, np.full(new, -1, dtype=np.int64)])
        local_send = np.asarray(part.msg_send, dtype=np.int64)
        sent = np.flatnonzero(local_send >= 0)
        if len(sent):
            g = mm[sent]
            if (send[g] >= 0).any():
                return None
            who = pm[np.asarray(part.msg_sender, dtype=np.int64)[sent]]
            sender[g] = who
            seq[g] = sends[who] + np.asarray(part.msg_seq, dtype=np.int64)[sent]
            send[g] = local_send[sent] + offset
            sends += np.bincount(who, minlength=len(sends))
            cache: dict[tuple[int, ...], tuple[int, ...]] = {}
            for x, m in zip(g.tolist(), sent.tolist()):
                d = part.msg_dests[m]
                if not identity:
                    d = cache.get(d) or cache.setdefault(d, tuple(sorted(pmap[q] for q in d)))
                out.msg_dests[x] = d
        if not len(part):
            continue
        kind = np.asarray(part.kind, dtype=np.int64)
        arg = np.asarray(part.arg, dtype=np.int64)
        message = (kind == SEND) | (kind == DELIVER) | (kind == DROP)
        signal = (kind == SIGNAL_OUT) | (kind == SIGNAL_IN)
        step = kind == STEP
        new_arg = arg.copy()
        if len(mm):
            new_arg[message] = mm[arg[message]]
        new_arg[signal] = pm[arg[signal]]
        new_arg[step] = arg[step] + len(out.actions)
        out.peer += part.peer if identity else pm[np.asarray(part.peer, dtype=np.int64)].tolist()
        out.kind += part.kind
        out.arg += new_arg.tolist()
        out.line += part.line
        out.actions += part.actions
        for i, meta in part.meta.items():
            out.meta[offset + i] = meta
    out.msg_sender = sender.tolist()
    out.msg_seq = seq.tolist()
    out.msg_send = send.tolist()
    return out
