"""Reductions for peers that talk over channels, written once for the message-passing bases.

The bases :class:`~ordercheck.specs.holdback.HoldBackSpec`, :class:`~ordercheck.specs.async_peers.AsyncPeerSpec`
and the synchronous spec share one picture: each process (a peer, or an extra process
such as a sequencer) owns its part of the state, and processes interact only through
channels (:mod:`ordercheck.specs.channels`) and, optionally, side-channel signals and a shared
duplication budget. This module turns that picture into what the engine's reductions
need (:mod:`ordercheck.checker.engine.reduce`).

**Footprints.** Variables, one bit each (``P`` processes):

* ``L(p)``: everything ``p`` owns (its algorithm state, buffers, knowledge);
* ``G(p)``: ``p``'s part of the observable history (its log and its sent messages), kept
  apart so that a property over the history makes only the steps that change it visible;
* ``SIG`` and ``DUPS``: the signal and duplication budgets;
* ``E(s, d)``: channel ``s -> d`` as its receiver sees it (what may be taken from it);
* ``H(s, d)``: the receiving end of channel ``s -> d`` (only ``d`` touches it).

A step of ``p`` reads and writes ``L(p)`` and ``G(p)``; what it changes elsewhere is read
off its successors (appends to ``p``'s outgoing channels write ``E``, takes, losses and
copies on its incoming ones write ``H``, signals write the other peer's ``L`` and ``G``).
An append commutes with every take, loss or copy by the receiver (they act at the head,
or on other messages of a multiset), and never disables one; so an outside process's
later steps need not read ``E``. What an append *does* is enable new steps of the
receiver, so a process reads ``E(s, p)`` in its next steps whenever a message ``s`` may
still add could give it a new step: always on an unordered, lossy or duplicating channel,
and on a plain FIFO channel when it is empty (otherwise its head is fixed). A spec may
narrow that down per process (``hears``): a process whose own state rules out taking
anything a given sender can still append, in every run of the other processes, does not
read that sender's channel (a passive peer of the synchronous spec takes only its
partner's answer, ``Synchronous.hears`` in ``specs/synchronous.py``).

A step that changes a channel not its own, or another process's state, breaks the
picture; :func:`channel_footprints` then gives that process every variable (sound, no
reduction), and ``tests/test_peer_reductions.py`` checks that no built-in spec does.

**Symmetry.** A configuration is symmetric under a renaming of peers when every peer's
sends map to the renamed peer's (:func:`config_symmetries`); the state is renamed item by
item from *shapes* (:func:`rename`) the spec declares for its own data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations
from typing import Any

Shape = Any
"""How to rename peers in a value: ``None`` (unchanged), ``"peer"``, ``"mid"``,
``"peers"`` (a mask of peers), ``"mids"`` (a mask of message ids), ``("byp", inner)`` (a
tuple indexed by peer, empty stays empty), ``("bymid", inner)`` (a tuple indexed by
message id), ``("tuple", s1, s2, ...)`` (items by position), ``("sorted", inner)`` (a
sorted tuple of items), ``("each", inner)`` (a tuple of items in order), or a callable
``f(value, perm)``."""


class Bits:
    """The variable bits of :func:`channel_footprints` for ``procs`` processes."""

    def __init__(self, procs: int, peers: int) -> None:
        P = self.procs = procs
        self.peers = peers
        self.L = tuple(1 << p for p in range(P))
        self.G = tuple(1 << (P + p) for p in range(P))
        self.SIG = 1 << (2 * P)
        self.DUPS = 1 << (2 * P + 1)
        base = 2 * P + 2
        self.E = {(s, d): 1 << (base + s * P + d) for s in range(P) for d in range(P)}
        self.H = {(s, d): 1 << (base + P * P + s * P + d) for s in range(P) for d in range(P)}
        self.incoming = tuple(_or(self.E[(s, d)] for s in range(P) if s != d) for d in range(P))
        self.outgoing = tuple(_or(self.E[(s, d)] for d in range(P) if s != d) for s in range(P))
        self.receiving = tuple(_or(self.H[(s, d)] for s in range(P)) for d in range(P))
        self.every = (1 << (base + 2 * P * P)) - 1
        self.all_L = _or(self.L[:peers])
        self.all_G = _or(self.G[:peers])


def _or(masks: Any) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


def channel_actor(action: tuple) -> int | None:
    """The process of a base action: ``lose``/``duplicate`` belong to the receiving end
    (``(kind, src, dst, ...)``), every other label names its process second."""
    if action[0] in ("lose", "duplicate"):
        return action[2]
    who = action[1] if len(action) > 1 else None
    return who if isinstance(who, int) else None


def channel_footprints(
    spec: Any,
    state: tuple,
    succ: Sequence[tuple[tuple, tuple]],
    layout: tuple[int, int, int, int, int | None],
    later_sends: Callable[[tuple, int], int],
    deaf: int = 0,
    hears: Sequence[int] | None = None,
) -> list[tuple[int, int, int, int, int, int]]:
    """Six masks per process (see :meth:`ordercheck.checker.api.reductions.PartialOrder.footprints`) for a state
    of a channel spec whose items sit at ``layout = (chans, ghost, know, signals, dups)``
    (``dups`` ``None`` when the spec keeps no budget), from its successors ``succ``.

    ``later_sends(state, p)`` is a mask of the processes ``p`` may still send to, now or
    later (a superset does). ``deaf`` is a mask of processes whose own state rules out
    every take from a channel in their next steps (a hold-back peer with a deliverable
    message does nothing else); they read no channel unless a loss or copy, which their
    state cannot rule out, may come to them.

    ``hears``, finer, gives per process a mask of the processes whose channel to it it
    may take from in its next steps (``deaf`` is the all-zero row): it reads only those
    incoming channels. A row may leave out a sender only if no run of the *other*
    processes can append to that channel a message this process could take as its state
    stands (its state changes by its own steps alone), nor change what taking one it
    already may take does. Losses and copies, which any message in transit allows, void
    every row as they void ``deaf``.
    """
    bits: Bits = spec.reduction_bits
    P = bits.procs
    n = bits.peers
    ch_at, gh_at, kn_at, sg_at, dp_at = layout
    chans = state[ch_at]
    ghost = state[gh_at]
    know = state[kn_at]
    signals = state[sg_at]
    dups = state[dp_at] if dp_at is not None else 0
    net = spec.channel_semantics
    E, L, G = bits.E, bits.L, bits.G
    nonempty = 0
    for key, _m in chans:
        nonempty |= E[key]
    strict = not (net.ordered and not net.lossy and not dups)
    if net.lossy or dups:
        deaf = 0
        hears = None
    shared_r = (bits.SIG if signals else 0) | (bits.DUPS if dups else 0)
    now_r = []
    for p in range(P):
        r = L[p] | G[p] | shared_r
        if not deaf >> p & 1:
            inc = bits.incoming[p] if hears is None else _or(E[(s, p)] for s in range(P) if hears[p] >> s & 1 and s != p)
            r |= inc if strict else inc & ~nonempty
        now_r.append(r)
    now_w = [L[p] for p in range(P)]
    before = None
    actor = spec.actor
    for label, t in succ:
        a = actor(label)
        if a is None:
            continue
        w = now_w[a]
        tc = t[ch_at]
        if tc is not chans:
            if before is None:
                before = dict(chans)
            kept = 0
            for k, m in tc:
                old = before.get(k)
                if old is None:
                    w |= _channel_write(bits, k, a)
                else:
                    kept += 1
                    if old is not m:
                        w |= _channel_write(bits, k, a)
            if kept < len(before):  # channels emptied by this step
                left = {k for k, _m in tc}
                for k in before:
                    if k not in left:
                        w |= _channel_write(bits, k, a)
        tg = t[gh_at]
        if tg is not ghost:
            sent0, logs0 = ghost
            sent1, logs1 = tg
            for i in range(n):
                if sent1[i] is not sent0[i] or logs1[i] is not logs0[i]:
                    w |= G[i]
        tk = t[kn_at]
        if tk is not know:
            for i in range(n):
                if tk[i] != know[i]:
                    w |= L[i]
        if t[sg_at] != signals:
            w |= bits.SIG
        if dp_at is not None and t[dp_at] != dups:
            w |= bits.DUPS
        now_w[a] = w
    out = []
    everything = bits.every
    for p in range(P):
        w = now_w[p]
        if w == everything:
            out.append((everything,) * 4 + (0, 0))
            continue
        lr = L[p] | G[p] | shared_r
        lw = w | L[p] | G[p]
        dests = later_sends(state, p)
        for d in range(P):
            if dests >> d & 1 and d != p:
                lw |= E[(p, d)]
        if signals:
            lw |= bits.SIG | bits.all_L | bits.all_G
            lr |= bits.SIG
        if dups:
            lw |= bits.DUPS
        # Nobody but p touches H(., p): leave those bits out of the later masks.
        lw &= ~bits.receiving[p]
        out.append((now_r[p], w, lr | (now_r[p] & ~bits.incoming[p]), lw, 0, 0))
    return out


def _channel_write(bits: Bits, key: tuple[int, int], a: int) -> int:
    """What a step of ``a`` that changed channel ``key`` writes: ``E`` for an append on
    its own outgoing channel, ``H`` for a change at its own receiving end, and every
    variable for a channel it has no business changing."""
    s, d = key
    if d == a:
        return bits.H[key]
    if s == a:
        return bits.E[key]
    return bits.every


def history_mask(bits: Bits, reads: Any) -> int:
    """The bits a property reading ``reads`` sees: the history (``G``) or, for anything
    else, every variable (``-1``)."""
    if reads is None:
        return -1
    out = 0
    for kind in reads:
        if kind in ("history", "log", "sent"):
            out |= bits.all_G
        else:
            return -1
    return out


# -- symmetry ----------------------------------------------------------------------------


def config_symmetries(spec: Any, limit: int = 5) -> list[tuple[int, ...]]:
    """The peer permutations (identity excluded) that map the configuration to itself:
    each peer's sends (script, broadcast plan, or destination choices) become the
    renamed peer's. Empty for more than ``limit`` peers (the orbit of every state would
    cost ``peers!`` hashes)."""
    n = spec.peers
    if n > limit:
        return []
    ident = tuple(range(n))
    out = []
    for g in permutations(range(n)):
        if g == ident:
            continue
        if spec.plan is not None:
            ok = all(spec.plan[g[p]] == tuple(spec.perm_peers(m, g) for m in spec.plan[p]) for p in range(n))
        else:
            ok = all(set(spec.choices[g[p]]) == {spec.perm_peers(m, g) for m in spec.choices[p]} for p in range(n))
        if ok:
            out.append(g)
    return out


def rename(shape: Shape, value: Any, spec: Any, g: tuple[int, ...]) -> Any:
    """``value`` with peer ``i`` renamed ``g[i]``, as ``shape`` (see :data:`Shape`) says."""
    if shape is None:
        return value
    if isinstance(shape, str):
        if shape == "peer":
            return g[value] if value < len(g) else value
        if shape == "mid":
            return spec.perm_mid(value, g)
        if shape == "peers":
            return spec.perm_peers(value, g)
        if shape == "mids":
            return spec.perm_mids(value, g)
        raise ValueError(f"unknown shape {shape!r}")
    if callable(shape):
        return shape(value, g)
    tag = shape[0]
    if tag == "byp":
        if not value:
            return value
        out: list = [None] * len(value)
        inner = shape[1]
        for p, x in enumerate(value):
            out[g[p] if p < len(g) else p] = rename(inner, x, spec, g)
        return tuple(out)
    if tag == "bymid":
        out = [None] * len(value)
        for i, x in enumerate(value):
            out[spec.perm_mid(i, g)] = rename(shape[1], x, spec, g)
        return tuple(out)
    if tag == "tuple":
        return tuple(rename(s, x, spec, g) for s, x in zip(shape[1:], value))
    if tag == "sorted":
        return tuple(sorted(rename(shape[1], x, spec, g) for x in value))
    if tag == "each":
        return tuple(rename(shape[1], x, spec, g) for x in value)
    raise ValueError(f"unknown shape {shape!r}")


_MEMO_LIMIT = 1 << 19
"""The most entries all of a spec's renaming memos (:func:`memo_tables`) keep together;
when they hold that many, every one of them starts over."""


class _Shared:
    """What a spec's renaming memos share: how many entries they hold together, and the
    memos themselves (plain dicts, to empty them all at once). Nothing here refers back
    to the tables, so the memos form no reference cycle: the collector never has to
    scan them for the memory to be freed."""

    __slots__ = ("count", "memos")

    def __init__(self) -> None:
        self.count = 0
        self.memos: list[dict] = []


class _Tables(dict):
    """The memos of one renaming by kind of part, each a plain dict made on first use."""

    __slots__ = ("shared",)

    def __init__(self, shared: _Shared) -> None:
        super().__init__()
        self.shared = shared

    def __missing__(self, what: str) -> dict:
        memo: dict = {}
        self[what] = memo
        self.shared.memos.append(memo)
        return memo


class _ByPerm(dict):
    """A spec's renaming memos: the :class:`_Tables` of each renaming, and what they share."""

    __slots__ = ("shared",)

    def __init__(self) -> None:
        super().__init__()
        self.shared = _Shared()


def memo_tables(spec: Any, g: tuple[int, ...]) -> dict[str, dict]:
    """The memos of ``spec`` for renaming by ``g``, one per kind of part: a dict from a
    part to its renaming. States share most of their parts (a message in transit, a
    peer's clock, the history), and hashing a part is much cheaper than renaming it
    again; one dict per kind of part and renaming, so a lookup hashes the part alone.
    All of a spec's memos together keep at most ``_MEMO_LIMIT`` entries (:func:`remember`)."""
    by_perm = spec.__dict__.get("_rename_memo")
    if by_perm is None:
        by_perm = spec.__dict__["_rename_memo"] = _ByPerm()
    tables = by_perm.get(g)
    if tables is None:
        tables = by_perm[g] = _Tables(by_perm.shared)
    return tables


def remember(tables: Any, table: dict, value: Any, out: Any) -> Any:
    """``out``, stored in ``table`` (one of the memos ``tables`` of :func:`memo_tables`)
    as the renaming of ``value``; every memo of the spec is emptied first when together
    they hold ``_MEMO_LIMIT`` entries."""
    shared = tables.shared
    if shared.count >= _MEMO_LIMIT:
        for memo in shared.memos:
            memo.clear()
        shared.count = 0
    table[value] = out
    shared.count += 1
    return out


def renamed(spec: Any, what: str, value: Any, g: tuple[int, ...], fn: Callable[[Any], Any]) -> Any:
    """``fn(value)``, the renaming of ``value`` by ``g``, memoised in ``spec``'s
    :func:`memo_tables` for ``g``, under ``what``."""
    tables = memo_tables(spec, g)
    table = tables[what]
    out = table.get(value)
    if out is None:
        out = remember(tables, table, value, fn(value))
    return out


def rename_chans(spec: Any, chans: tuple, g: tuple[int, ...], wire: Shape, tables: Any = None) -> tuple:
    """Channels with peers renamed: keys, messages (by ``wire``), unordered ones re-sorted,
    the channel list in its canonical order (:mod:`ordercheck.specs.channels`). Memoised
    whole, and channel by channel for a list not seen yet, in ``tables`` (by default
    :func:`memo_tables` of ``spec`` and ``g``)."""
    if tables is None:
        tables = memo_tables(spec, g)
    whole = tables["chans"]
    out = whole.get(chans)
    if out is not None:
        return out
    n = len(g)
    ordered = spec.channel_semantics.ordered
    table = tables["channel"]
    fresh = []
    for channel in chans:
        one = table.get(channel)
        if one is None:
            (s, d), msgs = channel
            ms = tuple(rename(wire, m, spec, g) for m in msgs)
            key = (g[s] if s < n else s, g[d] if d < n else d)
            one = remember(tables, table, channel, (key, ms if ordered else tuple(sorted(ms))))
        fresh.append(one)
    fresh.sort()
    return remember(tables, whole, chans, tuple(fresh))


def rename_common(
    spec: Any, state: tuple, g: tuple[int, ...], ghost_at: int, know_at: int, tables: Any = None
) -> list:
    """``state`` as a list with the ghost and knowledge renamed (the rest untouched),
    memoised in ``tables`` (by default :func:`memo_tables` of ``spec`` and ``g``)."""
    if tables is None:
        tables = memo_tables(spec, g)
    out = list(state)
    ghost = state[ghost_at]
    table = tables["ghost"]
    new = table.get(ghost)
    out[ghost_at] = new if new is not None else remember(tables, table, ghost, _rename_ghost(spec, ghost, g, tables))
    know = state[know_at]
    table = tables["know"]
    new = table.get(know)
    if new is None:
        new = remember(tables, table, know, spec.perm_vector(tuple(spec.perm_mids(k, g) for k in know), g))
    out[know_at] = new
    return out


def _rename_ghost(spec: Any, ghost: tuple, g: tuple[int, ...], tables: Any) -> tuple:
    """The ghost ``(sent, logs)`` renamed (as :meth:`ordercheck.specs.base.PeerSpec.perm_ghost`), each
    peer's outbox and log memoised apart (they change one at a time, and how one is
    renamed does not depend on whose it is)."""
    sent, logs = ghost
    n = len(sent)
    nsent: list = [()] * n
    nlogs: list = [()] * n
    sent_table = tables["sent"]
    log_table = tables["log"]
    for p in range(n):
        q = g[p]
        box = sent_table.get(sent[p])
        if box is None:
            box = remember(tables, sent_table, sent[p], _one_ghost(spec, (sent[p],), ((),), p, g)[0][0])
        nsent[q] = box
        log = log_table.get(logs[p])
        if log is None:
            log = remember(tables, log_table, logs[p], _one_ghost(spec, ((),), (logs[p],), p, g)[1][0])
        nlogs[q] = log
    return (tuple(nsent), tuple(nlogs))


def _one_ghost(spec: Any, sent: tuple, logs: tuple, p: int, g: tuple[int, ...]) -> tuple:
    """:meth:`~ordercheck.specs.base.PeerSpec.perm_ghost` of one peer's outbox and log (``p``'s,
    placed at index 0 of one-peer tuples)."""
    n = len(g)
    full_sent = tuple(sent[0] if i == p else () for i in range(n))
    full_logs = tuple(logs[0] if i == p else () for i in range(n))
    out_sent, out_logs = spec.perm_ghost((full_sent, full_logs), g)
    return (out_sent[g[p]],), (out_logs[g[p]],)


def rename_by_peer(
    spec: Any, what: str, values: tuple, shape: Shape, g: tuple[int, ...], tables: Any = None
) -> tuple:
    """A tuple indexed by peer with peers renamed, each entry renamed by ``shape``;
    memoised whole (under ``what`` in ``tables``, by default :func:`memo_tables` of
    ``spec`` and ``g``), and entry by entry for a tuple not seen yet."""
    if tables is None:
        tables = memo_tables(spec, g)
    whole = tables[what]
    out = whole.get(values)
    if out is not None:
        return out
    table = tables[what + " entry"]
    fresh: list = [None] * len(values)
    for p, x in enumerate(values):
        one = table.get(x)
        if one is None:
            one = remember(tables, table, x, rename(shape, x, spec, g))
        fresh[g[p]] = one
    return remember(tables, whole, values, tuple(fresh))
