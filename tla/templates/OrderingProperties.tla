------------------------- MODULE OrderingProperties -------------------------
(***************************************************************************)
(* The ordering properties every ordercheck spec shares, over the common   *)
(* ghost history (Python: specs/history.py and specs/properties.py).       *)
(*                                                                         *)
(*   sent[p][k]  the k-th message of peer p, the message <<p, k>>, as a    *)
(*               record [dests |-> set of peers, past |-> set of messages] *)
(*   logs[p]     p's events in program order: [kind |-> K, arg |-> X],     *)
(*               K one of "send", "deliver", "drop" (X a message) or       *)
(*               "signal_out", "signal_in" (X the other peer)              *)
(*                                                                         *)
(* A spec instantiates this module with its own Peers, sent and logs.      *)
(* The library's definitions speak of histories in which a peer delivers   *)
(* a message at most once, as every ordercheck spec guarantees.            *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANT Peers
VARIABLES sent, logs

Msgs == UNION {{<<p, k>> : k \in 1..Len(sent[p])} : p \in Peers}
Dests(m) == sent[m[1]][m[2]].dests
Past(m) == sent[m[1]][m[2]].past

Consumes(e) == e.kind \in {"deliver", "drop"}
IsDelivery(q, i) == logs[q][i].kind = "deliver"
DeliveredBefore(q, m1, m2) ==
    \E i, j \in DOMAIN logs[q] :
        /\ i < j
        /\ IsDelivery(q, i) /\ logs[q][i].arg = m1
        /\ IsDelivery(q, j) /\ logs[q][j].arg = m2

(* fifo: for each sender and receiver, deliveries follow send order.       *)
Fifo ==
    \A q \in Peers : \A i, j \in DOMAIN logs[q] :
        (/\ i < j /\ IsDelivery(q, i) /\ IsDelivery(q, j)
         /\ logs[q][i].arg[1] = logs[q][j].arg[1])
            => logs[q][i].arg[2] <= logs[q][j].arg[2]

(* causal: a peer never delivers m2 before a message in m2's causal past.  *)
Causal ==
    \A q \in Peers : \A i, j \in DOMAIN logs[q] :
        (i < j /\ IsDelivery(q, i) /\ IsDelivery(q, j))
            => logs[q][j].arg \notin Past(logs[q][i].arg)

(* total: two peers that both deliver m1 and m2 deliver them in one order: *)
(* their deliveries of the messages both deliver agree position by position *)
(* (as far as both go, so a message delivered twice, as a sequencer does   *)
(* with a duplicated copy, is read as Python's total reads it).            *)
Delivered(q) == {logs[q][i].arg : i \in {k \in DOMAIN logs[q] : IsDelivery(q, k)}}
RECURSIVE DeliveriesIn(_, _)
DeliveriesIn(log, S) ==
    IF log = <<>> THEN <<>>
    ELSE (IF Head(log).kind = "deliver" /\ Head(log).arg \in S THEN <<Head(log).arg>> ELSE <<>>)
         \o DeliveriesIn(Tail(log), S)
Total ==
    \A p, q \in Peers : p /= q =>
        LET common == Delivered(p) \cap Delivered(q)
            sp == DeliveriesIn(logs[p], common)
            sq == DeliveriesIn(logs[q], common)
        IN  \A i \in 1..Len(sp) : i <= Len(sq) => sp[i] = sq[i]

(* eventual_delivery: nothing sent to a peer stays undelivered.            *)
Outstanding ==
    {mq \in Msgs \X Peers :
        /\ mq[2] \in Dests(mq[1])
        /\ ~\E i \in DOMAIN logs[mq[2]] :
                Consumes(logs[mq[2]][i]) /\ logs[mq[2]][i].arg = mq[1]}
AllDelivered == Outstanding = {}

(***************************************************************************)
(* global_lock: the run could have happened under one global lock. Nodes   *)
(* are events <<p, i>> (the i-th event of p); edges are program order,     *)
(* each send to each delivery of its message, the k-th signal from p to q  *)
(* to the k-th signal q got from p, and for each receiving queue q:        *)
(* send(m1) -> send(m2) when q consumed m1 right before m2, and the send   *)
(* of the last message q consumed before the send of every message q has  *)
(* still to consume. The property: this graph is acyclic.                  *)
(***************************************************************************)
Events == UNION {{<<p, i>> : i \in DOMAIN logs[p]} : p \in Peers}
SendEvent(m) == <<m[1], CHOOSE i \in DOMAIN logs[m[1]] :
                          logs[m[1]][i].kind = "send" /\ logs[m[1]][i].arg = m>>
Count(p, i, kind, arg) ==
    Cardinality({k \in 1..i : logs[p][k].kind = kind /\ logs[p][k].arg = arg})
ConsumedAt(q) == {i \in DOMAIN logs[q] : Consumes(logs[q][i])}

EventsOf(kind) == {e \in Events : logs[e[1]][e[2]].kind = kind}
ProgramOrder == {<<<<p, i>>, <<p, i + 1>>>> : <<p, i>> \in {e \in Events : e[2] < Len(logs[e[1]])}}
SendToDelivery == {<<SendEvent(logs[e[1]][e[2]].arg), e>> : e \in EventsOf("deliver")}
SignalEdges ==
    {<<o, n>> \in EventsOf("signal_out") \X EventsOf("signal_in") :
        /\ logs[o[1]][o[2]].arg = n[1] /\ logs[n[1]][n[2]].arg = o[1]
        /\ Count(o[1], o[2], "signal_out", n[1]) = Count(n[1], n[2], "signal_in", o[1])}
ConsecutiveConsumed ==
    UNION {{<<p, i, j>> : <<i, j>> \in
              {ij \in ConsumedAt(p) \X ConsumedAt(p) :
                  /\ ij[1] < ij[2]
                  /\ ~\E k \in ConsumedAt(p) : ij[1] < k /\ k < ij[2]
                  /\ logs[p][ij[1]].arg /= logs[p][ij[2]].arg}} : p \in Peers}
ReceiveOrderEdges ==
    {<<SendEvent(logs[t[1]][t[2]].arg), SendEvent(logs[t[1]][t[3]].arg)>> : t \in ConsecutiveConsumed}
WaitingEdges ==
    UNION {
        LET last == logs[q][CHOOSE i \in ConsumedAt(q) : \A k \in ConsumedAt(q) : k <= i].arg
            done == {logs[q][i].arg : i \in ConsumedAt(q)}
        IN  {<<SendEvent(last), SendEvent(m)>> :
                m \in {x \in Msgs : q \in Dests(x) /\ x \notin done}}
        : q \in {p \in Peers : ConsumedAt(p) /= {}}}
LockEdges == ProgramOrder \cup SendToDelivery \cup SignalEdges \cup ReceiveOrderEdges \cup WaitingEdges

RECURSIVE Acyclic(_, _)
(* Kahn's algorithm: remove the nodes without incoming edges until none is left. *)
Acyclic(nodes, edges) ==
    IF nodes = {} THEN TRUE
    ELSE LET sources == nodes \ {e[2] : e \in edges}
         IN  /\ sources /= {}
             /\ Acyclic(nodes \ sources, {e \in edges : e[1] \notin sources})

GlobalLock == Acyclic(Events, LockEdges)

(***************************************************************************)
(* synchronous: no crown. m1 -> m2 when the send of m1 happened before a   *)
(* delivery of m2 (m1 /= m2), happened-before being program order, send to *)
(* delivery, and signals; the property: this relation is acyclic, so the   *)
(* run could have happened with every message instantaneous.               *)
(***************************************************************************)
HappenedBefore == ProgramOrder \cup SendToDelivery \cup SignalEdges
RECURSIVE ReachFrom(_, _)
ReachFrom(nodes, edges) ==
    LET more == nodes \cup {e[2] : e \in {x \in edges : x[1] \in nodes}}
    IN  IF more = nodes THEN nodes ELSE ReachFrom(more, edges)
CrownEdges ==
    UNION {
        LET reached == ReachFrom({SendEvent(m1)}, HappenedBefore)
        IN  {<<m1, logs[e[1]][e[2]].arg>> :
                e \in {x \in reached : IsDelivery(x[1], x[2]) /\ logs[x[1]][x[2]].arg /= m1}}
        : m1 \in Msgs}
Synchronous == Acyclic(Msgs, CrownEdges)
=============================================================================
