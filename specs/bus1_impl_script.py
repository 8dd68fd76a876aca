"""The operations script of the ``bus1_impl`` spec: what each peer does, in order.

A model gives, per peer, a list of operations, each one ioctl of the bus1 code::

    script = { a = ["send 0 +1", "reset"], b = ["destroy 1"] }

* ``send D[,D...] [+H[,H...]]``: ``BUS1_CMD_SEND`` to the nodes ``D`` (each owned by a
  different peer), carrying handles to the nodes ``H``;
* ``destroy N[,N...]``: ``BUS1_CMD_NODES_DESTROY`` of the peer's own nodes, in one
  transaction;
* ``release N``: ``BUS1_CMD_HANDLE_RELEASE`` of one user reference to the peer's handle to
  node ``N`` (a handle received in several messages has that many with ``refs = "counted"``);
  a release of a handle passed to the peer in a message, or released before, waits until the
  user holds it;
* ``reset``: ``BUS1_CMD_PEER_RESET`` with the flush flag: every live node of the peer is
  destroyed and every handle it holds released; later operations may follow;
* ``disconnect``: ``BUS1_CMD_PEER_DISCONNECT`` (peer.c:252-262), the peer's last operation:
  it is deactivated (a send to one of its nodes then fails with ``ESHUTDOWN``, a release of
  a handle to one leaves it linked: the owner-gone paths), then cleaned up as by a reset, and
  never reads its queue again;
* ``signal X``: a side-channel signal to peer ``X``, outside the bus (when ``X`` is idle);
* ``transfer N X``: ``BUS1_CMD_HANDLE_TRANSFER`` of the peer's handle to node ``N`` to peer
  ``X`` (peer.c:455-531), whose user learns the new handle's ID from the sender out of band
  (a signal, when ``X`` is idle); a handle to a node whose destruction has started comes back
  ``BUS1_HANDLE_INVALID`` (peer.c:472-487).

Nodes are numbered from 0; ``nodes = "ab"`` says node 0 is owned by ``a`` and node 1 by
``b``; ``handles = ["b", ""]`` gives ``b`` a handle to node 0 from the start. Nodes listed in
``fresh`` do not exist at the start: the owner's first send naming one (as destination or
payload) creates it (``bus1_handle_import`` of a new local ID, handle.c:684-697).

A script is checked against what the peer holds: a peer sends only to nodes and with handles
it owns (and has not destroyed) or was given initially (and has not released), and destroys
only its own live nodes. A peer may also name a node that another peer's script passes to it
in a message: that operation waits until the handle is the peer's (received and valid).
"""

from __future__ import annotations

from dataclasses import dataclass

from ordercheck.checker import ConstantError

SEND, DESTROY, RELEASE, RESET, SIGNAL, TRANSFER = "send", "destroy", "release", "reset", "signal", "transfer"
DISCONNECT = "disconnect"
FLUSHING = (RESET, DISCONNECT)  # operations that run bus1_peer_flush


@dataclass(frozen=True)
class Op:
    """One scripted operation. ``nodes`` are the destinations (send), the nodes to
    destroy (destroy, reset) or the handle released (release)."""

    kind: str
    nodes: tuple[int, ...] = ()
    payload: tuple[int, ...] = ()
    target: int = -1  # the peer a signal goes to
    creates: tuple[int, ...] = ()  # fresh nodes of the sender this send creates
    waits: tuple[int, ...] = ()  # handles the peer must have received before it can start

    @property
    def makes_message(self) -> bool:
        """Sends, destroys and resets are transactions that the history records."""
        return self.kind in (SEND, DESTROY, RESET, DISCONNECT)


def parse_nodes(text: str, n_nodes: int, field: str) -> tuple[int, ...]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) >= n_nodes:
            raise ConstantError(field, f"{part!r} is not a node number (0..{n_nodes - 1})")
        if int(part) in out:
            raise ConstantError(field, f"node {part} is named twice")
        out.append(int(part))
    return tuple(out)


def parse_op(text: str, n_nodes: int, field: str, names: tuple[str, ...] = ()) -> Op:
    """One operation string, e.g. ``"send 0,1 +2"``."""
    if not isinstance(text, str):
        raise ConstantError(field, f"expected an operation string, got {text!r}")
    words = text.split()
    if not words:
        raise ConstantError(field, "empty operation")
    kind = words[0]
    if kind in FLUSHING and len(words) == 1:
        return Op(kind)
    if kind == SIGNAL and len(words) == 2:
        if words[1] not in names:
            raise ConstantError(field, f"{words[1]!r} is not a peer ({', '.join(names)})")
        return Op(SIGNAL, target=names.index(words[1]))
    if kind == TRANSFER and len(words) == 3:
        if words[2] not in names:
            raise ConstantError(field, f"{words[2]!r} is not a peer ({', '.join(names)})")
        (node,) = parse_nodes(words[1], n_nodes, field)
        return Op(TRANSFER, (node,), target=names.index(words[2]))
    if kind == SEND and len(words) in (2, 3):
        dests = parse_nodes(words[1], n_nodes, field)
        payload: tuple[int, ...] = ()
        if len(words) == 3:
            if not words[2].startswith("+"):
                raise ConstantError(field, f"handles are written +H[,H], got {words[2]!r}")
            payload = parse_nodes(words[2][1:], n_nodes, field)
        return Op(SEND, dests, payload)
    if kind in (DESTROY, RELEASE) and len(words) == 2:
        nodes = parse_nodes(words[1], n_nodes, field)
        if kind == RELEASE and len(nodes) != 1:
            raise ConstantError(field, "release takes one node")
        return Op(kind, nodes)
    raise ConstantError(
        field,
        f"cannot read {text!r}: expected 'send D[,D] [+H[,H]]', 'destroy N[,N]', 'release N', 'reset', "
        "'disconnect', 'signal X' or 'transfer N X'",
    )


def gifts_of(script: dict, names: tuple[str, ...], owners: tuple[int, ...], n_nodes: int) -> list[set[int]]:
    """Per peer, the nodes other peers' scripts pass to it as payload handles."""
    out: list[set[int]] = [set() for _ in names]
    for who, ops in script.items():
        if who not in names or not isinstance(ops, list):
            continue
        for k, text in enumerate(ops):
            op = parse_op(text, n_nodes, f"script.{who}[{k}]", names)
            if op.kind == SEND:
                for d in op.nodes:
                    if owners[d] != names.index(who):
                        out[owners[d]].update(op.payload)
            elif op.kind == TRANSFER:
                out[op.target].update(op.nodes)
    return out


def parse_script(
    script: dict, names: tuple[str, ...], owners: tuple[int, ...], holders: tuple[int, ...],
    fresh: tuple[int, ...] = (),
) -> tuple[tuple[Op, ...], ...]:
    """Per peer, its operations; ``holders[n]`` is the bitmask of initial remote holders and
    ``fresh`` the nodes that exist only once their owner's script creates them."""
    n_nodes = len(owners)
    gifts = gifts_of(script, names, owners, n_nodes)
    out: list[tuple[Op, ...]] = [() for _ in names]
    for who, ops in script.items():
        if who not in names:
            raise ConstantError("script", f"names peer {who!r}, but the peers are {', '.join(names)}")
        if not isinstance(ops, list):
            raise ConstantError(f"script.{who}", 'expected a list of operations such as ["send 0", "reset"]')
        p = names.index(who)
        own = {n for n in range(n_nodes) if owners[n] == p}
        held = {n for n in range(n_nodes) if holders[n] >> p & 1}
        alive = own - set(fresh)
        named = set(alive)  # own nodes whose anchor the peer still holds (destroyed or not)
        unborn = own & set(fresh)
        parsed = []
        for k, text in enumerate(ops):
            field = f"script.{who}[{k}]"
            op = parse_op(text, n_nodes, field, names)
            if parsed and parsed[-1].kind == DISCONNECT:
                raise ConstantError(field, "disconnect must be the peer's last operation")
            if op.kind == SEND:
                owners_hit = [owners[n] for n in op.nodes]
                if len(set(owners_hit)) != len(owners_hit):
                    raise ConstantError(field, "the destinations of one send must belong to different peers")
                creates, waits = [], []
                for n in op.nodes + op.payload:
                    if n in unborn:
                        creates.append(n)
                        unborn.discard(n)
                        alive.add(n)
                        named.add(n)
                    elif n in own:
                        if n not in named:
                            raise ConstantError(field, f"peer {who} released node {n} in a reset")
                    elif n not in held:
                        if n not in gifts[p]:
                            raise ConstantError(field, f"peer {who} holds no handle to node {n} at this point")
                        waits.append(n)
                op = Op(SEND, op.nodes, op.payload, creates=tuple(creates), waits=tuple(waits))
            elif op.kind == DESTROY:
                for n in op.nodes:
                    if owners[n] != p:
                        raise ConstantError(field, f"node {n} is owned by {names[owners[n]]}, not {who}")
                    if n not in alive:
                        raise ConstantError(field, f"node {n} is not alive (destroyed, or not yet created)")
                    alive.discard(n)
            elif op.kind == SIGNAL:
                if op.target == p:
                    raise ConstantError(field, f"peer {who} cannot signal itself")
            elif op.kind == TRANSFER:
                (n,) = op.nodes
                if op.target == p:
                    raise ConstantError(field, f"peer {who} cannot transfer a handle to itself")
                waits: list[int] = []
                if n in own:
                    if n not in named:
                        raise ConstantError(field, f"peer {who} released node {n} in a reset")
                elif n not in held:
                    if n not in gifts[p]:
                        raise ConstantError(field, f"peer {who} holds no handle to node {n} at this point")
                    waits.append(n)
                op = Op(TRANSFER, op.nodes, target=op.target, waits=tuple(waits))
            elif op.kind == RELEASE:
                (n,) = op.nodes
                if owners[n] == p or (n not in held and n not in gifts[p]):
                    raise ConstantError(field, f"peer {who} holds no remote handle to node {n} to release")
                # A handle released before, or passed in a message: the release waits until the
                # user holds it (again): a reference received in a message.
                op = Op(RELEASE, op.nodes, waits=() if n in held else (n,))
                held.discard(n)
            else:  # reset/disconnect destroys every live node of the peer and releases every handle it holds
                op = Op(op.kind, tuple(sorted(alive)))
                alive.clear()
                named.clear()
                held.clear()
            parsed.append(op)
        out[p] = tuple(parsed)
    return tuple(out)
