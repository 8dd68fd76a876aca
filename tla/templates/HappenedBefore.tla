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
(*               (only dests is read here)                                 *)
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
SendsOf(m) == {i \in DOMAIN logs[m[1]] : logs[m[1]][i] = [kind |-> "send", arg |-> m]}
Sent == {m \in {Ev(e).arg : e \in {x \in Events : Ev(x).kind = "send"}} : m[1] \in Peers}
SendOf(m) == <<m[1], CHOOSE i \in SendsOf(m) : TRUE>>
Dests(m) == IF m[2] \in DOMAIN sent[m[1]] THEN sent[m[1]][m[2]].dests ELSE {}

(* How many events of a kind and argument p's log holds among its first i. *)
Count(p, i, kind, arg) == Cardinality({k \in 1..i : logs[p][k] = [kind |-> kind, arg |-> arg]})

(* The events on other peers that event e immediately follows: the send of *)
(* the message e delivers; the signal e receives.                          *)
Sources(e) ==
    IF Ev(e).kind = "deliver" /\ Ev(e).arg \in Sent THEN {SendOf(Ev(e).arg)}
    ELSE IF Ev(e).kind = "signal_in" /\ Ev(e).arg \in Peers
    THEN LET p == Ev(e).arg
             k == Count(e[1], e[2], "signal_in", p)
         IN  {<<p, i>> : i \in {j \in DOMAIN logs[p] :
                                   /\ logs[p][j] = [kind |-> "signal_out", arg |-> e[1]]
                                   /\ Count(p, j, "signal_out", e[1]) = k}}
    ELSE {}

(* A cut: how many events of each peer's log it holds (a prefix of each).  *)
(* Close(c) is the smallest cut holding c and, with each event, its        *)
(* sources: the events of a causal history.                                *)
Max(S) == CHOOSE x \in S : \A y \in S : y <= x
SourcesIn(c) == UNION {UNION {Sources(<<q, i>>) : i \in 1..c[q]} : q \in Peers}
Widen(c) ==
    LET sources == SourcesIn(c)
    IN  [r \in Peers |-> Max({c[r]} \cup {s[2] : s \in {t \in sources : t[1] = r}})]
RECURSIVE Close(_)
Close(c) == IF Widen(c) = c THEN c ELSE Close(Widen(c))

(* History(e): e and every event that happened before it, as a cut.        *)
History(e) == Close([r \in Peers |-> IF r = e[1] THEN e[2] ELSE 0])
(* e1 happened before e2. *)
HappenedBefore(e1, e2) == e1 /= e2 /\ e1[2] <= History(e2)[e1[1]]

(* m1 -> m2: the send of m1 happened before the send of m2. *)
CausallyBefore(m1, m2) == HappenedBefore(SendOf(m1), SendOf(m2))
(* The messages whose send happened before m's: m's causal past.           *)
CausalPast(m) ==
    LET h == History(SendOf(m))
    IN  {m1 \in Sent : m1 /= m /\ SendOf(m1)[2] <= h[m1[1]]}

(* q consumed (delivered, or dropped with a reason) m before its j-th event. *)
ConsumedBefore(q, m, j) == \E i \in 1..(j - 1) : logs[q][i].kind \in {"deliver", "drop"} /\ logs[q][i].arg = m
Deliveries(q) == {j \in DOMAIN logs[q] : logs[q][j].kind = "deliver" /\ logs[q][j].arg \in Sent}

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
(* causally before m2 (CausallyBefore(m1, m2), that is m1 in               *)
(* CausalPast(m2)) was delivered or dropped at q already.                  *)
Causal ==
    \A q \in Peers : \A j \in Deliveries(q) :
        \A m1 \in CausalPast(logs[q][j].arg) : q \in Dests(m1) => ConsumedBefore(q, m1, j)

(* total (pairwise): two peers deliver any two messages both delivered in  *)
(* the same order (by each one's first delivery of each).                  *)
First(q, m) == CHOOSE j \in Deliveries(q) : logs[q][j].arg = m /\ \A i \in Deliveries(q) : logs[q][i].arg = m => j <= i
DeliveredAt(q) == {logs[q][j].arg : j \in Deliveries(q)}
Total ==
    \A p, q \in Peers : p /= q =>
        \A m1, m2 \in DeliveredAt(p) \cap DeliveredAt(q) :
            (First(p, m1) < First(p, m2)) = (First(q, m1) < First(q, m2))

(* The stored causal past is the happened-before past: the past the spec   *)
(* records with each message sent (sent[p][k].past) holds exactly the      *)
(* messages sent causally before it.                                       *)
StoredPastIsCausalPast ==
    \A m \in Sent : m[2] \in DOMAIN sent[m[1]] => sent[m[1]][m[2]].past = CausalPast(m)
=============================================================================
