"""Checking a large log in parts, one per receiving peer, with the whole log's answers.

``fifo`` and ``integrity`` decide each event from the events of one receiving peer
alone: a delivery or drop at p is judged by p's earlier deliveries and drops and by
the sends of the messages addressed to p (or consumed at p), and a signal's receipt
at p by the signals sent to p. So the log splits by receiving peer: part p is the
sub-log (:func:`~ordercheck.checker.validate.log.sub_log`, every peer kept, lines kept) of those
events, and a check on part p finds exactly the violations at p's events that the
check on the whole log would find there, with the same sentence and window. The whole
log's first violation is the earliest of the parts' first violations
(:func:`combine`).

The other properties are not split: ``causal`` needs happened-before, whose vector
clocks come from one pass over the whole log in its order (each delivery's clock
depends on every event before it on any peer), and that pass is the whole check; the
three total orders compare deliveries across peers (every pair of peers), and
``global_lock``, ``synchronous`` and ``eventual_delivery`` read the whole log's graph
or end. They run in one task on the whole log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ordercheck.checker.validate.checks import CHECKS
from ordercheck.checker.validate.log import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, Log, sub_log

SPLITTABLE = ("fifo", "integrity")
"""The properties checked one receiving peer at a time when a log is split."""


def part_events(log: Log, peer: int) -> list[int]:
    """The events of part ``peer``: its deliveries, drops and signal receipts, the
    sends of the messages addressed to it or consumed by it, and the signals sent to it."""
    kinds, peers, args = log.kind, log.peer, log.arg
    wanted = [False] * log.messages
    for m in range(log.messages):
        if peer in log.msg_dests[m]:
            wanted[m] = True
    for i in range(len(kinds)):
        if (kinds[i] == DELIVER or kinds[i] == DROP) and peers[i] == peer:
            wanted[args[i]] = True
    out = []
    for i in range(len(kinds)):
        k = kinds[i]
        if k == SEND:
            if wanted[args[i]]:
                out.append(i)
        elif k == DELIVER or k == DROP or k == SIGNAL_IN:
            if peers[i] == peer:
                out.append(i)
        elif k == SIGNAL_OUT and args[i] == peer:
            out.append(i)
    return out


def check_part(log: Log, peer: int, props: Iterable[str], *, diagrams: bool = False) -> dict[str, Any]:
    """Each of ``props`` (among :data:`SPLITTABLE`) on part ``peer`` of ``log``: ``None``
    or ``(event, record, svg)``, the first violation's event in the whole log, its JSON
    record as the whole log's check gives it, and its window's diagram (with
    ``diagrams``; else ``None``)."""
    part, keep = sub_log(log, part_events(log, peer), all_peers=True)
    msg_of = {name: m for m, name in enumerate(log.msg_name)}
    out: dict[str, Any] = {}
    for name in props:
        if name not in SPLITTABLE:
            raise ValueError(f"{name} is not checked in parts (only {', '.join(SPLITTABLE)})")
        v = CHECKS[name](part)
        if v is None:
            out[name] = None
            continue
        whole = dataclasses.replace(
            v, at=keep[v.at], events=tuple(keep[i] for i in v.events), offending=tuple(keep[i] for i in v.offending),
            missing=tuple((msg_of[part.msg_name[m]], p) for m, p in v.missing),
        )
        svg = None
        if diagrams:
            import zlib

            from ordercheck.checker.validate.diagram import window_svg

            svg = window_svg(part, v, f"{name}-{zlib.crc32(log.source.encode()):08x}")
        out[name] = (whole.at, whole.to_json(log), svg)
    return out


def combine(parts: Iterable[dict[str, Any]], props: Iterable[str]) -> dict[str, Any]:
    """The whole log's answer per property from its parts' answers (as
    :func:`check_part` gives them): the earliest first violation, or ``None``."""
    best: dict[str, Any] = dict.fromkeys(props)
    for found in parts:
        for name, answer in found.items():
            if answer is not None and (best[name] is None or answer[0] < best[name][0]):
                best[name] = answer
    return best

