/*
 * Birman-Schiper-Stephenson causal broadcast: 2 peers, SENDS broadcasts each,
 * unordered (reordering, lossless) channels. Written for the SPIN comparison of
 * benchmarks/vs_spin.py from the protocol's definition:
 *
 *   peer i keeps a vector V_i (zeros at first). To broadcast, i increments V_i[i]
 *   and stamps the message with V_m = V_i. Peer p, receiving m from j, delivers it
 *   when (a) V_m[j] = V_p[j] + 1 and (b) V_m[k] <= V_p[k] for every k != j, then
 *   sets V_p := max(V_p, V_m); otherwise it holds m back. A peer with a held-back
 *   message that has become deliverable delivers such a message before it does
 *   anything else (in any order among those deliverable).
 *
 * The variables hold exactly what one state of ordercheck's unreduced search holds
 * for the same configuration (model file benchmarks/models/bss-2x5.toml), each in a
 * canonical form, so that SPIN's "states, stored" with -DNOREDUCE equals the
 * distinct states of `ordercheck check --no-symmetry --no-por`:
 *
 *   - the vectors V;
 *   - what is in transit to each peer, and what each peer holds back: messages are
 *     distinct (no duplication), so a multiset of messages is a set, kept as a
 *     bitmask of the sender's message numbers; the stamp V_m of a message is kept
 *     while the message is in transit or held back and zeroed when it is delivered
 *     (as the message, and with it its stamp, leaves the state);
 *   - the observer's history: per message its causal past (the sender's knowledge
 *     when it sends, as a bitmask of message ids), per peer its knowledge and its
 *     log of sends and deliveries in order;
 *   - derived counters (messages sent, log length, the set delivered), functions of
 *     the log, which therefore add no state.
 *
 * Message ids: message i (from 0) of peer q is id q*SENDS + i, bit (q*SENDS + i) of
 * a past or knowledge mask. A log entry is i+1 for "sends its message i" and
 * SENDS+1+i for "delivers the other peer's message i".
 *
 * The property, asserted at each delivery to p (causal delivery): every message in
 * the delivered message's causal past that is addressed to p (with two peers and
 * broadcast: every message of the other peer in it) is already delivered at p.
 *
 * Compile-time switches (spin -D...): SENDS (default 5, at most 5: the choices below
 * are written out for message numbers 0..4); COND_A=0 gives the mutant without
 * condition (a), the test of the next message from the sender, whose assertion
 * SPIN violates (with two peers condition (b) alone never holds anything back);
 * COND_B=0 drops condition (b), which with two peers changes nothing: k != j leaves
 * only k = p, and no message stamps more of p's broadcasts than p has sent.
 */

#ifndef SENDS
#define SENDS 5
#endif
#ifndef COND_A
#define COND_A 1
#endif
#ifndef COND_B
#define COND_B 1
#endif

#define OTHER(p)    (1 - (p))
#define VEC(p, k)   V[2 * (p) + (k)]
#define STAMP(q, i, k) stamp[4 * (i) + 2 * (q) + (k)]
#define PAST(q, i)  past[SENDS * (q) + (i)]
#define MID(q, i)   (SENDS * (q) + (i))
#define ALL         ((1 << SENDS) - 1)

byte  V[4];            /* V[2p+k]: peer p's vector */
byte  stamp[20];       /* stamp of message i of peer q, while in transit or held back */
short past[2 * SENDS]; /* causal past of each message sent, as message ids */
short know[2];         /* each peer's knowledge, as message ids */
byte  intransit[2];    /* to peer p: the other peer's messages on the channel */
byte  held[2];         /* held back at p */
byte  dlv[2];          /* delivered at p (the other peer's message numbers) */
byte  sent[2];         /* messages p has sent */
byte  lg[4 * SENDS];   /* peer p's log: lg[2*SENDS*p + n] */
byte  nlg[2];

/* Deliverable: p may deliver message i of the other peer q now. */
#define DELIVERABLE(p, i) \
	((!COND_A || STAMP(OTHER(p), i, OTHER(p)) == VEC(p, OTHER(p)) + 1) && \
	 (!COND_B || STAMP(OTHER(p), i, p) <= VEC(p, p)))

#define READY_AT(p, i) (((held[p] >> (i)) & 1) && DELIVERABLE(p, i))
#define READY(p) (READY_AT(p, 0) || READY_AT(p, 1) || READY_AT(p, 2) || READY_AT(p, 3) || READY_AT(p, 4))

/* p delivers message i of q = OTHER(p) (it has left the channel or the buffer). */
#define DELIVER(p, i) \
	assert((((PAST(OTHER(p), i) >> (SENDS * OTHER(p))) & ALL) & ~dlv[p]) == 0); \
	VEC(p, 0) = (STAMP(OTHER(p), i, 0) > VEC(p, 0) -> STAMP(OTHER(p), i, 0) : VEC(p, 0)); \
	VEC(p, 1) = (STAMP(OTHER(p), i, 1) > VEC(p, 1) -> STAMP(OTHER(p), i, 1) : VEC(p, 1)); \
	STAMP(OTHER(p), i, 0) = 0; \
	STAMP(OTHER(p), i, 1) = 0; \
	know[p] = know[p] | (1 << MID(OTHER(p), i)) | PAST(OTHER(p), i); \
	dlv[p] = dlv[p] | (1 << (i)); \
	lg[2 * SENDS * (p) + nlg[p]] = SENDS + 1 + (i); \
	nlg[p]++

/* p broadcasts its next message (number sent[p]) to the other peer. */
#define SEND(p) \
	d_step { !READY(p) && sent[p] < SENDS -> \
		VEC(p, p)++; \
		STAMP(p, sent[p], 0) = VEC(p, 0); \
		STAMP(p, sent[p], 1) = VEC(p, 1); \
		PAST(p, sent[p]) = know[p]; \
		know[p] = know[p] | (1 << MID(p, sent[p])); \
		intransit[OTHER(p)] = intransit[OTHER(p)] | (1 << sent[p]); \
		lg[2 * SENDS * (p) + nlg[p]] = 1 + sent[p]; \
		nlg[p]++; \
		sent[p]++ }

/* p takes message i off its channel: delivers it at once, or holds it back. */
#define RECEIVE(p, i) \
	d_step { !READY(p) && ((intransit[p] >> (i)) & 1) -> \
		intransit[p] = intransit[p] & ~(1 << (i)); \
		if \
		:: DELIVERABLE(p, i) -> DELIVER(p, i) \
		:: else -> held[p] = held[p] | (1 << (i)) \
		fi }

/* p delivers the held-back message i, its condition now holding. */
#define DELIVER_HELD(p, i) \
	d_step { READY_AT(p, i) -> \
		held[p] = held[p] & ~(1 << (i)); \
		DELIVER(p, i) }

active proctype bss()
{
end:	do
	:: SEND(0)
	:: SEND(1)
	:: RECEIVE(0, 0)
	:: RECEIVE(0, 1)
	:: RECEIVE(0, 2)
	:: RECEIVE(0, 3)
	:: RECEIVE(0, 4)
	:: RECEIVE(1, 0)
	:: RECEIVE(1, 1)
	:: RECEIVE(1, 2)
	:: RECEIVE(1, 3)
	:: RECEIVE(1, 4)
	:: DELIVER_HELD(0, 0)
	:: DELIVER_HELD(0, 1)
	:: DELIVER_HELD(0, 2)
	:: DELIVER_HELD(0, 3)
	:: DELIVER_HELD(0, 4)
	:: DELIVER_HELD(1, 0)
	:: DELIVER_HELD(1, 1)
	:: DELIVER_HELD(1, 2)
	:: DELIVER_HELD(1, 3)
	:: DELIVER_HELD(1, 4)
	od
}
