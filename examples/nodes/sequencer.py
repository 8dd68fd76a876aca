"""A total-order broadcast node (a fixed sequencer) speaking Maelstrom's broadcast workload.

Run by ``ordercheck run --workload ordered --node-cmd "python3 examples/nodes/sequencer.py"``.
The first node of ``init``'s ``node_ids`` is the sequencer. A client's ``broadcast`` at
node X goes to the sequencer as an ``order`` request numbered by X's own counter; the
sequencer takes each node's requests in that order (a request that overtook an earlier
one waits), gives each the next sequence number and sends it as ``seq`` to every other
node. Every node, the sequencer and the broadcaster included, delivers the ``seq``
messages in sequence-number order, holding back one whose predecessor has not arrived.
``read`` lists the values delivered, in delivery order.

Two buggy variants (flags, or the two wrapper scripts beside this one):

- ``--no-numbering`` (sequencer_no_numbering.py): a node delivers a ``seq`` message as
  soon as it arrives, skipping the check of its number, so two nodes can deliver two
  values in opposite orders (``total`` breaks);
- ``--skip-a-number`` (sequencer_skips_a_number.py): the sequencer's numbering skips 2,
  so every node waits for it for ever and later values are never delivered
  (``eventual_delivery`` breaks).
"""

import json
import sys

NUMBERING = "--no-numbering" not in sys.argv
SKIP = "--skip-a-number" in sys.argv


def main() -> None:
    me, sequencer = "", ""
    ids: list[str] = []
    delivered: list[object] = []
    held: dict[int, object] = {}  # sequence number -> value, not yet delivered
    next_seq = 1  # the next sequence number this node delivers
    sent = 0  # this node's order requests so far
    # the sequencer's state: the last number given, each node's next request, requests waiting
    last = 0
    expect: dict[str, int] = {}
    waiting: dict[tuple[str, int], object] = {}

    def send(dest: str, body: dict) -> None:
        sys.stdout.write(json.dumps({"src": me, "dest": dest, "body": body}) + "\n")

    def reply(msg: dict, body: dict) -> None:
        body["in_reply_to"] = msg["body"].get("msg_id")
        send(msg["src"], body)

    def receive_seq(seq: int, value: object) -> None:
        nonlocal next_seq
        if not NUMBERING:
            delivered.append(value)
            return
        held[seq] = value
        while next_seq in held:
            delivered.append(held.pop(next_seq))
            next_seq += 1

    def order(origin: str, number: int, value: object) -> None:
        nonlocal last
        waiting[(origin, number)] = value
        while (origin, expect.get(origin, 1)) in waiting:
            v = waiting.pop((origin, expect.get(origin, 1)))
            expect[origin] = expect.get(origin, 1) + 1
            last += 2 if SKIP and last == 1 else 1
            for n in ids:
                if n != me:
                    send(n, {"type": "seq", "seq": last, "message": v})
            receive_seq(last, v)

    for line in sys.stdin:
        msg = json.loads(line)
        body = msg["body"]
        kind = body["type"]
        if kind == "init":
            me, ids = body["node_id"], body["node_ids"]
            sequencer = ids[0]
            reply(msg, {"type": "init_ok"})
        elif kind == "topology":
            reply(msg, {"type": "topology_ok"})
        elif kind == "broadcast":
            sent += 1
            if me == sequencer:
                order(me, sent, body["message"])
            else:
                send(sequencer, {"type": "order", "origin": me, "number": sent, "message": body["message"]})
            reply(msg, {"type": "broadcast_ok"})
        elif kind == "order":
            order(body["origin"], body["number"], body["message"])
        elif kind == "seq":
            receive_seq(body["seq"], body["message"])
        elif kind == "read":
            reply(msg, {"type": "read_ok", "messages": delivered})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
