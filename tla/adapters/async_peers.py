"""The shared adapter of specs on :mod:`ordercheck.specs.async_peers` (template piece ``_channels.tla.j2``).

Such a state starts ``(ghost, know, signals_left, duplicates_left, chans, ...)``.

**Messages in transit, both ways.** In Python, ``chans`` is the canonical form of
:mod:`ordercheck.specs.channels`: a sorted tuple of ``((src, dst), messages)`` pairs, one per
channel that holds something (empty channels are left out), ``src`` and ``dst`` process
numbers, ``messages`` the wire messages in send order on a FIFO channel and sorted on an
unordered one. The TLA+ module keeps ``chans`` as a function from *every* pair
``<<src, dst>>`` of :attr:`AsyncAdapter.procs` (both model values) to its channel: a
sequence of wire messages for FIFO channels, a bag (wire message -> number of copies)
for unordered ones. :meth:`AsyncAdapter.encode_chans` and
:meth:`AsyncAdapter.decode_chans` translate between the two; a subclass says how one
wire message looks in TLA+ (:meth:`AsyncAdapter.wire`, :meth:`AsyncAdapter.unwire`),
and encodes its own state items after the shared ones
(:meth:`AsyncAdapter.encode_shared`, :meth:`AsyncAdapter.decode_shared`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from ordercheck.tla.adapters.base import PeerAdapter, _seq
from ordercheck.tla.values import ModelValue


class AsyncAdapter(PeerAdapter):
    """A :class:`~ordercheck.tla.adapters.base.PeerAdapter` with the channels and the duplication
    budget; :attr:`shared_variables` are the variables ``_channels.tla.j2`` declares."""

    shared_variables: ClassVar[tuple[str, ...]] = ("sent", "logs", "know", "signalsLeft", "chans", "dupsLeft")
    """The variables of the shared state items, in :meth:`encode_shared`'s order: start a
    subclass's :attr:`~ordercheck.tla.adapters.base.Adapter.variables` with them."""
    predicates = {"eventual_delivery": "AllDelivered"}
    self_channels: ClassVar[bool] = True
    """Whether ``chans`` has a channel from each process to itself (a spec whose
    processes send to themselves, such as a broadcast to the whole group); ``False``
    leaves them out, for a spec whose processes never do."""
    send_action: ClassVar[dict[str, str]] = {"send": "Send(p)"}
    """The ``send`` action's TLA+ form, for a subclass's :attr:`~ordercheck.tla.adapters.base.Adapter.actions`."""
    shared_actions: ClassVar[dict[str, str]] = {
        "signal": "\\E q \\in Peers : Signal(p, q)",
        "lose": "\\E pq \\in Pairs : Lose(pq)",
        "duplicate": "\\E pq \\in Pairs : Duplicate(pq)",
    }
    """The TLA+ forms of the steps ``_channels.tla.j2`` defines (signals, losses,
    duplications), for a subclass's :attr:`~ordercheck.tla.adapters.base.Adapter.actions`."""

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self.ordered: bool = spec.chan.ordered
        """Whether the channels are FIFO (``channel = "fifo"``): a channel is a sequence
        in TLA+, else a bag."""
        self.procs: tuple[ModelValue, ...] = self.peers
        """The processes that own channels, by process number: the peers, and after them
        any process of the spec's own (the sequencer's model value); a subclass with
        more sets this and :attr:`proc_ids` in its ``__init__``."""
        self.proc_ids: dict[ModelValue, int] = {p: i for i, p in enumerate(self.procs)}
        """A process's model value -> its process number (the inverse of :attr:`procs`)."""

    def context(self) -> dict[str, Any]:
        spec: Any = self.spec
        script = None
        if spec.plan is not None:
            script = [(self.names[p], [self._set_text(m) for m in masks]) for p, masks in enumerate(spec.plan) if masks]
        # A broadcast spec has no destination mode: its plan sends to the whole group.
        destinations = getattr(spec, "destinations", "others")
        return {"peers": list(self.names), "script": script, "destinations": destinations, "ordered": self.ordered,
                "self_channels": self.self_channels, "parameterised": self.protocol_module is not None}

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [
            *super().cfg_constants(),
            ("FifoChannels", "TRUE" if self.ordered else "FALSE"),
            ("Lossy", "TRUE" if spec.lossy else "FALSE"),
            ("Duplicates", str(spec.duplicates)),
        ]

    # -- wire messages: subclasses ------------------------------------------------------

    def wire(self, msg: Any) -> Any:
        """A Python wire message (an item of a channel's ``messages``) as a TLA+ value;
        message ids in it become ``<<sender, k>>`` through :meth:`msg`."""
        raise NotImplementedError

    def unwire(self, value: Any) -> Any:
        """A decoded TLA+ wire message as the Python one (the inverse of :meth:`wire`)."""
        raise NotImplementedError

    # -- channels both ways ----------------------------------------------------------------

    def encode_chans(self, chans: tuple) -> dict[tuple, Any]:
        """The Python channels (the canonical sorted tuple) as the TLA+ ``chans``: every
        pair ``(src, dst)`` of :attr:`procs` (of two processes, without :attr:`self_channels`) -> a tuple of wire messages (FIFO) or a bag,
        a dict wire message -> copies (unordered); empty channels included."""
        contents = dict(chans)
        out: dict[tuple, Any] = {}
        for i, src in enumerate(self.procs):
            for j, dst in enumerate(self.procs):
                if i == j and not self.self_channels:
                    continue  # no process sends to itself: no self-channels
                msgs = contents.get((i, j), ())
                if self.ordered:
                    out[(src, dst)] = tuple(self.wire(m) for m in msgs)
                else:
                    out[(src, dst)] = dict(Counter(self.wire(m) for m in msgs))
        return out

    def decode_chans(self, value: dict) -> tuple:
        """TLC's ``chans`` as the Python channels (the inverse of :meth:`encode_chans`):
        empty channels left out, an unordered channel's messages sorted."""
        out = []
        for (src, dst), chan in value.items():
            if self.ordered:
                msgs = tuple(self.unwire(m) for m in _seq(chan))
            else:
                bag = chan if isinstance(chan, dict) else {}
                msgs = tuple(sorted(self.unwire(m) for m, n in bag.items() for _ in range(n)))
            if msgs:
                out.append(((self.proc_ids[src], self.proc_ids[dst]), msgs))
        return tuple(sorted(out))

    def encode_shared(self, state: tuple) -> dict[str, Any]:
        """The variables of the state's first five items: the ghost history (see
        :meth:`~ordercheck.tla.adapters.base.PeerAdapter.encode_ghost`), ``chans`` and ``dupsLeft``."""
        ghost, know, signals, dups, chans = state[:5]
        return {**self.encode_ghost(ghost, know, signals), "chans": self.encode_chans(chans), "dupsLeft": dups}

    def decode_shared(self, values: dict[str, Any]) -> tuple:
        """The state's first five items from a decoded TLC state (the inverse of
        :meth:`encode_shared`)."""
        ghost, know, signals = self.decode_ghost(values)
        return (ghost, know, signals, values["dupsLeft"], self.decode_chans(values["chans"]))

    def real_messages(self) -> list[int]:
        """Message ids of the messages the model can send (the TLA+ ``Messages``)."""
        spec: Any = self.spec
        out = []
        for p in range(len(self.names)):
            count = len(spec.plan[p]) if spec.plan is not None else spec.sends
            out.extend(p * self.stride + k for k in range(count))
        return out


class StampedAdapter(AsyncAdapter):
    """An :class:`AsyncAdapter` whose wire messages are ``(kind, mid, timestamp)``;
    ``kinds`` names each kind number as the TLA+ string it is there."""

    kinds: tuple[str, ...] = ()

    def wire(self, msg: tuple) -> tuple:
        kind, mid, ts = msg
        return (self.kinds[kind], self.msg(mid), ts)

    def unwire(self, value: tuple) -> tuple:
        kind, msg, ts = value
        return (self.kinds.index(kind), self.mid(msg), ts)
