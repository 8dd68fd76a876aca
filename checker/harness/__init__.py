"""``ordercheck run``: ordercheck as the network of a user's running nodes.

The nodes are ordinary programs speaking Maelstrom's JSON envelope on stdin and stdout
(:mod:`ordercheck.checker.harness.nodes` starts and talks to them); :mod:`ordercheck.checker.harness.network`
is their network and their clients: it holds every message a node writes, picks which
one is delivered next (a schedule), records what the nodes deliver as an ordercheck log
and checks it with the monitors ``validate`` uses.
"""
