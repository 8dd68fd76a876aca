"""A causal broadcast node (vector clocks) speaking Maelstrom's broadcast workload.

Run by ``ordercheck run --node-cmd "python3 examples/nodes/causal_broadcast.py"``. A
client's ``broadcast`` is stamped with the node's vector clock and sent to every other
node (``cb`` messages); a received ``cb`` is held back until every message that
causally precedes it has been delivered here. ``read`` lists the values delivered, in
delivery order. Two buggy variants: with ``--no-hold-back``
(causal_broadcast_no_hold_back.py) a ``cb`` is delivered as soon as it arrives; with
``--fifo-only`` (causal_broadcast_fifo_only.py) it waits only for its sender's earlier
messages, not for those its sender had delivered from others.
"""

import json
import sys

HOLD_BACK = "--no-hold-back" not in sys.argv
FIFO_ONLY = "--fifo-only" in sys.argv


def main() -> None:
    me, ids = "", []
    clock: dict[str, int] = {}
    delivered: list[object] = []
    held: list[dict] = []
    next_id = 0

    def send(dest: str, body: dict) -> None:
        sys.stdout.write(json.dumps({"src": me, "dest": dest, "body": body}) + "\n")
        sys.stdout.flush()

    def reply(msg: dict, body: dict) -> None:
        body["in_reply_to"] = msg["body"].get("msg_id")
        send(msg["src"], body)

    def deliverable(b: dict) -> bool:
        vc, sender = b["vc"], b["sender"]
        if not HOLD_BACK:
            return True
        if FIFO_ONLY:
            return vc[sender] == clock[sender] + 1
        return vc[sender] == clock[sender] + 1 and all(vc[k] <= clock[k] for k in ids if k != sender)

    for line in sys.stdin:
        msg = json.loads(line)
        body = msg["body"]
        kind = body["type"]
        if kind == "init":
            me, ids = body["node_id"], body["node_ids"]
            clock = {n: 0 for n in ids}
            reply(msg, {"type": "init_ok"})
        elif kind == "topology":
            reply(msg, {"type": "topology_ok"})
        elif kind == "broadcast":
            clock[me] += 1
            delivered.append(body["message"])
            for n in ids:
                if n != me:
                    next_id += 1
                    send(n, {"type": "cb", "message": body["message"], "sender": me, "vc": dict(clock)})
            reply(msg, {"type": "broadcast_ok"})
        elif kind == "cb":
            held.append(body)
            progress = True
            while progress:
                progress = False
                for b in list(held):
                    if deliverable(b):
                        held.remove(b)
                        delivered.append(b["message"])
                        clock[b["sender"]] = max(clock[b["sender"]], b["vc"][b["sender"]])
                        progress = True
        elif kind == "read":
            reply(msg, {"type": "read_ok", "messages": delivered})


if __name__ == "__main__":
    main()
