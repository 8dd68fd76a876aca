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
(* A "drop" is a message its destination knowingly discards and records   *)
(* with a reason (bus1's flushed queues); most protocols never drop. The   *)
(* library's properties, as the Python ones, count such a drop where they  *)
(* wait for a message: Fifo and Causal accept a later delivery once the    *)
(* earlier message was delivered or dropped, and AllDeliveredOrDropped     *)
(* holds once every message was. AllDelivered counts deliveries only: a    *)
(* protocol that drops everything violates it.                             *)
(*                                                                         *)
(* A spec instantiates this module with its own Peers, sent and logs.      *)
(* The definitions are those of docs/reference/properties.md, and decide   *)
(* each history as the Python library does, malformed ones included       *)
(* (repeated deliveries, deliveries of messages never sent).               *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANT Peers
VARIABLES sent, logs

Msgs == UNION {{<<p, k>> : k \in 1..Len(sent[p])} : p \in Peers}
Dests(m) == sent[m[1]][m[2]].dests
Past(m) == sent[m[1]][m[2]].past

(* Event e is a delivery, or a drop the destination records with a reason. *)
DeliversOrDrops(e) == e.kind \in {"deliver", "drop"}
IsDelivery(q, i) == logs[q][i].kind = "deliver"
(* q delivered or dropped m among its first j - 1 events.                  *)
DeliveredOrDroppedBefore(q, m, j) ==
    \E i \in 1..(j - 1) : DeliversOrDrops(logs[q][i]) /\ logs[q][i].arg = m

(* fifo: when q delivers m2, every message m2's sender sent before it and  *)
(* addressed to q was delivered, or dropped with a reason, at q already    *)
(* (whether or not it comes later: the run is violated at the delivery of  *)
(* m2).                                                                    *)
Fifo ==
    \A q \in Peers : \A j \in DOMAIN logs[q] :
        (IsDelivery(q, j) /\ logs[q][j].arg \in Msgs) =>
            LET m2 == logs[q][j].arg
            IN  \A k \in 1..(m2[2] - 1) :
                    q \in Dests(<<m2[1], k>>) => DeliveredOrDroppedBefore(q, <<m2[1], k>>, j)

(* causal: when q delivers m2, every message in m2's causal past addressed *)
(* to q was delivered, or dropped with a reason, at q already.             *)
Causal ==
    \A q \in Peers : \A j \in DOMAIN logs[q] :
        (IsDelivery(q, j) /\ logs[q][j].arg \in Msgs) =>
            \A m1 \in Past(logs[q][j].arg) \cap Msgs :
                q \in Dests(m1) => DeliveredOrDroppedBefore(q, m1, j)

(* Each peer's delivery order: the sent messages of S it delivered, each   *)
(* once, in the order of its first delivery of each.                       *)
RECURSIVE FirstsIn(_, _, _)
FirstsIn(log, S, seen) ==
    IF log = <<>> THEN <<>>
    ELSE IF Head(log).kind = "deliver" /\ Head(log).arg \in S \ seen
         THEN <<Head(log).arg>> \o FirstsIn(Tail(log), S, seen \cup {Head(log).arg})
         ELSE FirstsIn(Tail(log), S, seen)
Order(q, S) == FirstsIn(logs[q], S \cap Msgs, {})
Delivered(q) == {logs[q][i].arg : i \in {k \in DOMAIN logs[q] : IsDelivery(q, k)}} \cap Msgs

(* total (pairwise): two peers deliver the messages both delivered in one  *)
(* order.                                                                  *)
Total ==
    \A p, q \in Peers : p /= q =>
        LET common == Delivered(p) \cap Delivered(q)
        IN  Order(p, common) = Order(q, common)

(* total_prefix: of the messages addressed to both of two peers, one       *)
(* peer's delivery order is a prefix of the other's.                       *)
Min(x, y) == IF x <= y THEN x ELSE y
TotalPrefix ==
    \A p, q \in Peers : p /= q =>
        LET both == {m \in Msgs : p \in Dests(m) /\ q \in Dests(m)}
            sp == Order(p, both)
            sq == Order(q, both)
        IN  \A i \in 1..Min(Len(sp), Len(sq)) : sp[i] = sq[i]

RECURSIVE Acyclic(_, _)
(* Kahn's algorithm: remove the nodes without incoming edges until none is left. *)
Acyclic(nodes, edges) ==
    IF nodes = {} THEN TRUE
    ELSE LET sources == nodes \ {e[2] : e \in edges}
         IN  /\ sources /= {}
             /\ Acyclic(nodes \ sources, {e \in edges : e[1] \notin sources})

(* total_global: the union of all peers' delivery orders is acyclic.       *)
OrderEdges(q) ==
    LET o == Order(q, Msgs)
    IN  {<<o[i], o[i + 1]>> : i \in {k \in DOMAIN o : k + 1 \in DOMAIN o}}
TotalGlobal == Acyclic(Msgs, UNION {OrderEdges(q) : q \in Peers})

(* The pairs <<m, q>> of a message sent to q and q has not delivered, and   *)
(* those q has neither delivered nor dropped.                              *)
Undelivered ==
    {mq \in Msgs \X Peers :
        /\ mq[2] \in Dests(mq[1])
        /\ ~\E i \in DOMAIN logs[mq[2]] :
                logs[mq[2]][i].kind = "deliver" /\ logs[mq[2]][i].arg = mq[1]}
Unsettled ==
    {mq \in Undelivered :
        ~\E i \in DOMAIN logs[mq[2]] : logs[mq[2]][i].kind = "drop" /\ logs[mq[2]][i].arg = mq[1]}
(* eventual_delivery, as a state: every message sent to a peer has been    *)
(* delivered there.                                                        *)
AllDelivered == Undelivered = {}
(* eventual_delivery of a protocol that may drop (Python's property: "is   *)
(* eventually delivered or dropped with a reason"): every message sent to  *)
(* a peer has been delivered or dropped there.                             *)
AllDeliveredOrDropped == Unsettled = {}

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
ConsumedAt(q) == {i \in DOMAIN logs[q] : DeliversOrDrops(logs[q][i])}   \* delivered or dropped

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

(***************************************************************************)
(* integrity: each peer consumes (delivers or drops) a message at most     *)
(* once, only if it is addressed to it and was sent (its send is in its    *)
(* sender's log), and no delivery or drop happens before its own send:     *)
(* program order, each send to each delivery or drop of its message, and   *)
(* signals form no cycle.                                                  *)
(***************************************************************************)
HasSend(m) == \E i \in DOMAIN logs[m[1]] : logs[m[1]][i].kind = "send" /\ logs[m[1]][i].arg = m
WasSent(m) == m \in Msgs /\ HasSend(m)
SendToConsumption ==
    {<<SendEvent(logs[e[1]][e[2]].arg), e>> :
        e \in {x \in Events : DeliversOrDrops(logs[x[1]][x[2]]) /\ WasSent(logs[x[1]][x[2]].arg)}}
Integrity ==
    /\ \A q \in Peers : \A i \in DOMAIN logs[q] :
           DeliversOrDrops(logs[q][i]) =>
               /\ WasSent(logs[q][i].arg)
               /\ q \in Dests(logs[q][i].arg)
               /\ ~DeliveredOrDroppedBefore(q, logs[q][i].arg, i)
    /\ Acyclic(Events, ProgramOrder \cup SendToConsumption \cup SignalEdges)
=============================================================================
