--------------------------- MODULE HappenedBefore ---------------------------
(***************************************************************************)
(* Ordering properties written from Lamport's happened-before relation     *)
(* over the peers' logs alone, independently of OrderingProperties (which  *)
(* decides causality by the causal past each spec stores with a message,   *)
(* sent[p][k].past). Every export checks that the two agree in every       *)
(* reachable state (its _happened_before configuration), and, where the    *)
(* spec stores a causal past, that the stored past is the happened-before  *)
(* past.                                                                   *)
(*                                                                         *)
(*   sent[p][k]  the k-th message p sent, the message <<p, k>>, as a       *)
(*               record [dests |-> set of peers, past |-> set of messages] *)
(*               (dests says whom it is addressed to; past is read only by *)
(*               StoredPastIsCausalPast, which compares it with the        *)
(*               happened-before past)                                     *)
(*   logs[p]     p's events in program order: [kind |-> K, arg |-> X], K   *)
(*               one of "send", "deliver", "drop" (X a message) or         *)
(*               "signal_out", "signal_in" (X the other peer)              *)
(*                                                                         *)
(* An event is <<p, i>>, the i-th event of p's log. Happened-before is the *)
(* smallest transitive relation in which each event precedes the next one  *)
(* of its peer, the send of a message precedes each delivery of it, and    *)
(* p's k-th signal to q precedes q's k-th signal from p. A drop is not a   *)
(* receive: the dropping peer learns nothing from the message.             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANT Peers
VARIABLES sent, logs

Ev(e) == logs[e[1]][e[2]]
Events == UNION {{<<p, i>> : i \in DOMAIN logs[p]} : p \in Peers}

(* The messages with a send event, and that event. *)
IsSent(m) == m[1] \in Peers /\ \E i \in DOMAIN logs[m[1]] : logs[m[1]][i] = [kind |-> "send", arg |-> m]
Sent == {Ev(e).arg : e \in {x \in Events : Ev(x).kind = "send"}}
SendOf(m) == <<m[1], CHOOSE i \in DOMAIN logs[m[1]] : logs[m[1]][i] = [kind |-> "send", arg |-> m]>>
Dests(m) == IF m[2] \in DOMAIN sent[m[1]] THEN sent[m[1]][m[2]].dests ELSE {}

(* How many events of a kind and argument p's log holds among its first i. *)
Count(p, i, kind, arg) == Cardinality({k \in 1..i : logs[p][k] = [kind |-> kind, arg |-> arg]})

(* The events that event e immediately follows: the previous event of its  *)
(* peer; the send of the message e delivers; the signal e receives.        *)
Preds(e) ==
    (IF e[2] > 1 THEN {<<e[1], e[2] - 1>>} ELSE {})
    \cup
    (IF Ev(e).kind = "deliver" /\ IsSent(Ev(e).arg) THEN {SendOf(Ev(e).arg)}
     ELSE IF Ev(e).kind = "signal_in" /\ Ev(e).arg \in Peers
     THEN LET p == Ev(e).arg
              k == Count(e[1], e[2], "signal_in", p)
          IN  {<<p, j>> : j \in {i \in DOMAIN logs[p] :
                                    /\ logs[p][i] = [kind |-> "signal_out", arg |-> e[1]]
                                    /\ Count(p, i, "signal_out", e[1]) = k}}
     ELSE {})

(* The vector clock of each event: VC[e][r] is how many of r's events      *)
(* happened before e, or are e. It is the least solution of: VC[e] is e's  *)
(* own position joined with the clocks of e's immediate predecessors,      *)
(* reached by iterating that equation from the positions alone.            *)
Max(S) == CHOOSE x \in S : \A y \in S : y <= x
JoinAll(V) == [r \in Peers |-> Max({v[r] : v \in V})]
RECURSIVE Fix(_, _)
Fix(preds, vc) ==
    LET next == [e \in DOMAIN vc |-> JoinAll({vc[e]} \cup {vc[d] : d \in preds[e]})]
    IN  IF next = vc THEN vc ELSE Fix(preds, next)
VectorClocks ==
    Fix([e \in Events |-> Preds(e)], [e \in Events |-> [r \in Peers |-> IF r = e[1] THEN e[2] ELSE 0]])

(* e1 happened before e2, by the vector clocks vc. *)
HappenedBefore(vc, e1, e2) == e1 /= e2 /\ e1[2] <= vc[e2][e1[1]]
(* m1 -> m2: the send of m1 happened before the send of m2. *)
CausallyBefore(vc, m1, m2) == HappenedBefore(vc, SendOf(m1), SendOf(m2))
(* The messages sent causally before m: m's causal past. *)
CausalPast(vc, m) == {m1 \in Sent : m1 /= m /\ CausallyBefore(vc, m1, m)}

(* q consumed (delivered, or dropped with a reason) m before its j-th event. *)
ConsumedBefore(q, m, j) == \E i \in 1..(j - 1) : logs[q][i].kind \in {"deliver", "drop"} /\ logs[q][i].arg = m
Deliveries(q) == {j \in DOMAIN logs[q] : logs[q][j].kind = "deliver" /\ IsSent(logs[q][j].arg)}

(* fifo: a peer delivers two messages of one sender addressed to it in the *)
(* order they were sent: when q delivers m2, each message m2's sender sent *)
(* to q before m2 was delivered or dropped at q already.                   *)
Fifo ==
    \A q \in Peers : \A j \in Deliveries(q) :
        LET m2 == logs[q][j].arg
        IN  \A m1 \in Sent :
                (m1[1] = m2[1] /\ SendOf(m1)[2] < SendOf(m2)[2] /\ q \in Dests(m1))
                    => ConsumedBefore(q, m1, j)

(* causal: a peer delivers two messages addressed to it in happened-before *)
(* order of their sends: when q delivers m2, each message sent to q        *)
(* causally before m2 (m1 in CausalPast(vc, m2)) was delivered or dropped *)
(* at q already.                                                           *)
Causal ==
    LET vc == VectorClocks
    IN  \A q \in Peers : \A j \in Deliveries(q) :
            \A m1 \in CausalPast(vc, logs[q][j].arg) : q \in Dests(m1) => ConsumedBefore(q, m1, j)

(* total (pairwise): no two peers deliver two messages in opposite orders. *)
(* q delivers m1 before m2 when q delivers both and its first delivery of  *)
(* m1 happened before its first delivery of m2; for two events of one peer *)
(* happened-before is program order, so that is "comes first in q's log". *)
(* Only first deliveries count: a repeated delivery is Integrity's         *)
(* business. A message only one of the two peers delivered constrains      *)
(* nothing (TotalPrefix and TotalGlobal, in OrderingProperties, say more). *)
Delivers(q, i, m) == logs[q][i] = [kind |-> "deliver", arg |-> m]
DeliversBefore(q, m1, m2) ==
    /\ \E j \in DOMAIN logs[q] : Delivers(q, j, m2)
    /\ \E i \in DOMAIN logs[q] : Delivers(q, i, m1) /\ ~\E k \in 1..i : Delivers(q, k, m2)
Total ==
    ~\E p, q \in Peers : \E m1, m2 \in Sent : DeliversBefore(p, m1, m2) /\ DeliversBefore(q, m2, m1)

(* The stored causal past is the happened-before past: the past the spec   *)
(* records with each message sent (sent[p][k].past) holds exactly the      *)
(* messages sent causally before it.                                       *)
StoredPastIsCausalPast ==
    LET vc == VectorClocks
    IN  \A m \in Sent : m[2] \in DOMAIN sent[m[1]] => sent[m[1]][m[2]].past = CausalPast(vc, m)
=============================================================================
