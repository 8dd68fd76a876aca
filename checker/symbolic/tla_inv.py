"""A proved inductive invariant as a TLA+ module (``ordercheck prove MODEL --tla DIR``).

The module restates a symbolic encoding (:mod:`ordercheck.specs.symbolic`) in TLA+, so
that a reviewer can re-check with TLC, on a small box of values, what Z3 proved for
all of them. It is printed from the encoding's own Z3 formulas (no second
transcription of the protocol), and holds:

* one ``VARIABLE`` per schema variable (``clk.0`` becomes ``clk_0``);
* ``TypeOK``: every integer variable in ``Lo..Hi``, every boolean in ``BOOLEAN``
  (``Lo`` and ``Hi`` are ``CONSTANTS``, set in the configuration);
* ``Init`` and ``Next``: the encoding's initial condition and its actions, one
  operator per action (a subterm an action repeats, such as a queue's insertion
  point in every slot, named once in a ``LET``). A value an action chooses (a
  post-state variable its guard only constrains, such as the message a peer delivers)
  is drawn from ``Lo..Hi``, so that TLC can enumerate it;
* one operator per lemma (``L_NAME``), ``Inv`` their conjunction, and one operator per
  target (``T_NAME``), which ``Inv`` implies;
* ``IndInit``: ``TypeOK /\\ Inv`` with its conjuncts ordered so that TLC tests each
  clause of ``Inv`` as soon as the variables it reads have values (the same predicate,
  enumerated without building every state of the box first).

The configuration ``NAME.cfg`` checks inductiveness on the box: ``INIT IndInit``,
``NEXT Next``, ``CONSTRAINT TypeOK`` (only states in the box are explored further;
every one of them that satisfies ``Inv`` is an initial state anyway) and ``INVARIANT
Inv`` with the targets. A successor of a state satisfying ``Inv`` that breaks ``Inv``
is a counterexample to induction, and TLC checks the invariants of every state it
generates, the box's last values' successors included. TLC covers the box only;
Z3's proof covers every value.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import z3

from ordercheck.checker.api.errors import InputError

RESERVED = {
    "ASSUME", "ASSUMPTION", "AXIOM", "CASE", "CHOOSE", "CONSTANT", "CONSTANTS", "DOMAIN", "ELSE", "ENABLED",
    "EXCEPT", "EXTENDS", "IF", "IN", "INSTANCE", "LET", "LOCAL", "MODULE", "OTHER", "SF_", "SUBSET", "THEN",
    "THEOREM", "UNCHANGED", "UNION", "VARIABLE", "VARIABLES", "WF_", "WITH", "BOOLEAN", "TRUE", "FALSE",
    "Nat", "Int", "Seq", "Init", "Next", "Inv", "TypeOK", "IndInit", "Spec", "Lo", "Hi", "Val", "vars", "BoxLo", "BoxHi",
}
_SAFE = re.compile(r"[^A-Za-z0-9_]")


class NoTlaForm(InputError):
    """The encoding uses a formula the TLA+ printer has no form for."""


def tla_name(name: str) -> str:
    """A TLA+ identifier for a schema variable or a lemma: ``q.0.1.snd`` -> ``q_0_1_snd``."""
    out = _SAFE.sub("_", name)
    if not out[:1].isalpha() or out in RESERVED or out.startswith(("L_", "T_", "A_")):
        out = "v_" + out
    return out


@dataclass
class TlaInv:
    """A rendered module and its configuration."""

    module_name: str
    module: str
    config: str

    @property
    def files(self) -> dict[str, str]:
        """``{file name: text}``: ``NAME.tla`` and ``NAME.cfg``."""
        return {f"{self.module_name}.tla": self.module, f"{self.module_name}.cfg": self.config}


class Printer:
    """Z3 formulas over the states ``s`` (unprimed) and ``t`` (primed) as TLA+ text."""

    def __init__(self, schema: dict[str, str], names: dict[str, str], where: str) -> None:
        self.schema = schema
        self.names = names
        self.where = where
        # Keyed by a term's id, each holding the term itself: Z3 reuses the id of a term
        # that has been freed, so a key must keep its term alive.
        self.shared: dict[int, tuple[Any, str]] = {}  # id -> (term, the LET name it is printed as)
        self.cache: dict[int, tuple[Any, str]] = {}

    def share(self, roots: list[Any], prefix: str, least: int = 40) -> list[str]:
        """Name the compound subterms that ``roots`` use more than once and that print
        to at least ``least`` characters (the queue updates of an action repeat the
        same conditions in every slot): ``NAME == text`` definitions for a ``LET``,
        children before parents, each later print of the subterm reading ``NAME``.
        Until :meth:`unshare`, :meth:`text` prints them so."""
        self.cache = {}
        counts: dict[int, int] = {}
        order: list[Any] = []

        def visit(e: Any) -> None:
            i = e.get_id()
            counts[i] = counts.get(i, 0) + 1
            if counts[i] > 1:
                return
            for child in e.children():
                visit(child)
            order.append(e)

        for root in roots:
            visit(root)
        defs = []
        for e in order:
            if counts[e.get_id()] < 2 or not e.children():
                continue
            text = self.text(e)
            if len(text) < least:
                continue
            name = f"{prefix}{len(defs) + 1}"
            defs.append(f"{name} == {text}")
            self.shared[e.get_id()] = (e, name)
            self.cache = {}
        return defs

    def unshare(self) -> None:
        """Print every subterm in full again (the end of a ``LET``)."""
        self.shared = {}
        self.cache = {}

    def var(self, decl_name: str) -> tuple[str, bool]:
        """``(TLA+ name, primed)`` of a state constant ``name@tag``."""
        base, _, tag = decl_name.rpartition("@")
        if base not in self.names or tag not in ("s", "t"):
            raise NoTlaForm(self.where, "prove", f"the encoding's formula names {decl_name!r}, not a variable of "
                                                 "the two states (its schema)")
        return self.names[base], tag == "t"

    def primed_vars(self, e: Any) -> set[str]:
        """The schema variables ``e`` reads in the post-state."""
        out: set[str] = set()
        self._collect(e, out, "t")
        return out

    def unprimed_vars(self, e: Any) -> set[str]:
        out: set[str] = set()
        self._collect(e, out, "s")
        return out

    def _collect(self, e: Any, out: set[str], tag: str, seen: set[int] | None = None) -> None:
        seen = set() if seen is None else seen
        if e.get_id() in seen:
            return
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            base, _, t = e.decl().name().rpartition("@")
            if t == tag:
                out.add(base)
            return
        for child in e.children():
            self._collect(child, out, tag, seen)

    def text(self, e: Any) -> str:
        """``e`` in TLA+ (every compound term in parentheses; a shared one by its name)."""
        i = e.get_id()
        if i in self.shared:
            return self.shared[i][1]
        if i not in self.cache:
            self.cache[i] = (e, self._text(e))
        return self.cache[i][1]

    def _text(self, e: Any) -> str:
        if z3.is_true(e):
            return "TRUE"
        if z3.is_false(e):
            return "FALSE"
        if z3.is_int_value(e):
            v = e.as_long()
            return str(v) if v >= 0 else f"(-{-v})"
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            name, primed = self.var(e.decl().name())
            return name + ("'" if primed else "")
        kids = [self.text(c) for c in e.children()]
        k = e.decl().kind()
        infix = {z3.Z3_OP_AND: " /\\ ", z3.Z3_OP_OR: " \\/ ", z3.Z3_OP_ADD: " + ", z3.Z3_OP_MUL: " * ",
                 z3.Z3_OP_SUB: " - ", z3.Z3_OP_LE: " <= ", z3.Z3_OP_LT: " < ", z3.Z3_OP_GE: " >= ",
                 z3.Z3_OP_GT: " > ", z3.Z3_OP_IMPLIES: " => ", z3.Z3_OP_IDIV: " \\div ", z3.Z3_OP_MOD: " % "}
        if k in (z3.Z3_OP_AND, z3.Z3_OP_OR) and not kids:
            return "TRUE" if k == z3.Z3_OP_AND else "FALSE"
        if k in infix:
            return "(" + infix[k].join(kids) + ")" if len(kids) > 1 else kids[0]
        if k == z3.Z3_OP_EQ:
            return f"({kids[0]} = {kids[1]})"
        if k == z3.Z3_OP_DISTINCT:
            pairs = [f"({a} # {b})" for i, a in enumerate(kids) for b in kids[i + 1:]]
            return "(" + " /\\ ".join(pairs) + ")"
        if k == z3.Z3_OP_NOT:
            return f"(~{kids[0]})"
        if k == z3.Z3_OP_UMINUS:
            return f"(-{kids[0]})"
        if k == z3.Z3_OP_ITE:
            return f"(IF {kids[0]} THEN {kids[1]} ELSE {kids[2]})"
        if k == z3.Z3_OP_XOR:
            return f"({kids[0]} # {kids[1]})"
        if k == z3.Z3_OP_IFF:
            return f"({kids[0]} <=> {kids[1]})"
        raise NoTlaForm(self.where, "prove", f"no TLA+ form for the Z3 operator {e.decl().name()!r} in {e}")


def _as_expr(value: Any, kind: str) -> Any:
    """A Z3 term for an update or guard an encoding gives as a Python value (``0``, ``True``)."""
    if isinstance(value, z3.ExprRef):
        return value
    return z3.BoolVal(bool(value)) if kind == "bool" else z3.IntVal(int(value))


def _conj(lines: Iterable[str], indent: str) -> str:
    items = list(lines)
    if not items:
        return f"{indent}TRUE"
    return "\n".join(f"{indent}/\\ {line}" for line in items)


def _comment(text: str) -> str:
    return " ".join(str(text).split()).replace("(*", "( *").replace("*)", "* )")


def inv_module(sym: Any, module_name: str, lemmas: list[str], targets: list[str], where: str,
               lo: int = -1, hi: int = 2, title: str = "") -> TlaInv:
    """The TLA+ module and configuration of ``sym``'s invariant (the conjunction of
    ``lemmas``) with its ``targets``; see the module docstring. ``lo`` and ``hi``
    are the configuration's box of integer values. :class:`~ordercheck.checker.symbolic.tla_inv.NoTlaForm` (exit 2) when a
    formula has no TLA+ form here."""
    from ordercheck.specs.symbolic import SymState, key_name

    schema: dict[str, str] = sym.schema
    names: dict[str, str] = {}
    for name in schema:
        tla = tla_name(name)
        if tla in names.values():
            raise NoTlaForm(where, "prove", f"two variables of the encoding become {tla!r} in TLA+")
        names[name] = tla
    pr = Printer(schema, names, where)
    s, t = SymState(schema, "s"), SymState(schema, "t")
    out = [f"---- MODULE {module_name} ----"]
    out.append("(* " + "\n   ".join(textwrap.wrap(_comment(title or f"The inductive invariant of {module_name}") + ".", 88)))
    out.append("   Written by `ordercheck prove --tla` from the symbolic encoding's Z3 formulas. Check it")
    out.append(f"   with TLC and {module_name}.cfg: TypeOK /\\ Inv as the initial predicate (IndInit), Inv as")
    out.append("   the invariant, the box Lo..Hi of integer values as the constraint. *)")
    out.append("EXTENDS Integers")
    out.append("CONSTANTS Lo, Hi")
    out.append("VARIABLES " + ", ".join(names.values()))
    out.append("vars == <<" + ", ".join(names.values()) + ">>")
    out.append("Val == Lo..Hi")
    out.append(f"BoxLo == {lo if lo >= 0 else f'-{-lo}'}  \\* the configuration's Lo (a .cfg file has no negative numbers)")
    out.append(f"BoxHi == {hi}")
    out.append("")
    type_lines = [f"{names[n]} \\in {'BOOLEAN' if kind == 'bool' else 'Val'}" for n, kind in schema.items()]
    out.append("TypeOK ==\n" + _conj(type_lines, "  "))
    out.append("")
    out.append("Init ==\n" + _conj([pr.text(sym.init(s))], "  "))
    out.append("")

    action_names = []
    for i, action in enumerate(sym.actions()):
        op = f"A_{i}"
        action_names.append(op)
        guard, upd = action.step(s, t)
        upd = {key_name(k): _as_expr(v, schema[key_name(k)]) for k, v in upd.items()}
        guard = _as_expr(guard, "bool")
        free = [n for n in schema if upd.get(n) is t.vars[n]]
        eqs = {n: upd.get(n, s.vars[n]) for n in schema if n not in free}
        unchanged = [n for n, e in eqs.items() if e is s.vars[n]]
        eqs = {n: e for n, e in eqs.items() if n not in unchanged}
        chosen = action.choose(s, t) if action.choose is not None else None
        lets = pr.share([guard, *([chosen] if chosen is not None else []), *eqs.values()], f"{op}_")
        lines = []
        if not pr.primed_vars(guard) and not z3.is_true(guard):
            lines.append(pr.text(guard))
        lines += [f"{names[n]}' \\in {'BOOLEAN' if schema[n] == 'bool' else 'Val'}" for n in free]
        if pr.primed_vars(guard) and not z3.is_true(guard):
            lines.append(pr.text(guard))
        if chosen is not None:
            lines.append(pr.text(chosen))
        # equations in an order where each reads only post-state values already given
        given = set(free)
        pending = dict(eqs)
        while pending:
            ready = [n for n, e in pending.items() if pr.primed_vars(e) <= given]
            if not ready:
                raise NoTlaForm(where, "prove", f"action {action.name!r}: its updates read each other's new values "
                                                f"in a cycle ({', '.join(pending)})")
            for n in ready:
                lines.append(f"{names[n]}' = {pr.text(pending.pop(n))}")
                given.add(n)
        if unchanged:
            lines.append("UNCHANGED <<" + ", ".join(names[n] for n in unchanged) + ">>")
        out.append(f"\\* {_comment(action.name)}")
        if lets:
            body = "  LET " + "\n      ".join(lets) + "\n  IN\n" + _conj(lines, "  ")
        else:
            body = _conj(lines, "  ")
        pr.unshare()
        out.append(f"{op} ==\n" + body)
        out.append("")
    out.append("Next ==\n" + ("\n".join(f"  \\/ {a}" for a in action_names) if action_names else "  FALSE"))
    out.append("")
    out.append("Spec == Init /\\ [][Next]_vars")
    out.append("")

    clauses: list[tuple[str, Any]] = []
    for name in lemmas:
        doc, fn = sym.lemmas[name]
        parts = fn(s)
        clauses += parts
        out.append(f"\\* lemma {name}: {_comment(doc)}")
        out.append(f"L_{tla_name(name)} ==\n" + _conj([f"{pr.text(c)}  \\* {_comment(txt)}" for txt, c in parts], "  "))
        out.append("")
    out.append("Inv ==\n" + _conj([f"L_{tla_name(n)}" for n in lemmas], "  "))
    out.append("")
    for name in targets:
        doc, fn = sym.targets[name]
        out.append(f"\\* target {name}: {_comment(doc)}")
        out.append(f"T_{tla_name(name)} ==\n" + _conj([f"{pr.text(c)}  \\* {_comment(txt)}" for txt, c in fn(s)], "  "))
        out.append("")

    # IndInit: TypeOK /\ Inv, each clause right after the last variable it reads is given a value.
    order = list(schema)
    position = {n: i for i, n in enumerate(order)}
    placed: dict[int, list[str]] = {}
    for _txt, c in clauses:
        used = pr.unprimed_vars(c)
        at = max((position[n] for n in used), default=-1)
        placed.setdefault(at, []).append(pr.text(c))
    lines = list(placed.get(-1, []))
    for i in range(len(order)):
        lines.append(type_lines[i])
        lines += placed.get(i, [])
    out.append("(* TypeOK /\\ Inv, its conjuncts reordered so that TLC tests each clause of Inv as soon as the")
    out.append("   variables it reads have values. *)")
    out.append("IndInit ==\n" + _conj(lines, "  "))
    out.append("")
    for name in targets:
        out.append(f"THEOREM Inv => T_{tla_name(name)}")
    out.append("THEOREM Inv /\\ [Next]_vars => Inv'")
    out.append("====")
    module = "\n".join(out) + "\n"
    config = "\n".join([
        f"\\* {module_name}: is Inv inductive on the box Lo..Hi? (ordercheck prove --tla)",
        "CONSTANTS Lo <- BoxLo  Hi <- BoxHi",
        "INIT IndInit",
        "NEXT Next",
        "CONSTRAINT TypeOK",
        "INVARIANT Inv",
        *[f"INVARIANT T_{tla_name(n)}" for n in targets],
        "",
    ])
    return TlaInv(module_name, module, config)


def inv_module_name(model_path: str) -> str:
    """The module name of a model's exported invariant: ``models/fifo-2.toml`` ->
    ``fifo_2_inv``."""
    from pathlib import Path

    from ordercheck.tla.adapters.base import module_name

    return module_name(Path(model_path).stem) + "_inv"


def parse_box(text: str) -> tuple[int, int]:
    """``LO..HI`` (``--tla-box``) as two integers; :class:`InputError` naming
    ``--tla-box`` when it is not that, or ``LO > HI``."""
    lo, sep, hi = text.partition("..")
    try:
        box = (int(lo), int(hi))
    except ValueError:
        box = None
    if not sep or box is None or box[0] > box[1]:
        raise InputError("--tla-box", "", f"expected LO..HI with integers LO <= HI, got {text!r}")
    return box


def initial_range(sym: Any) -> tuple[int, int]:
    """The least and greatest integer value of one initial state of ``sym`` (0, 0
    when it has no integer variable or no initial state)."""
    from ordercheck.specs.symbolic import SymState

    s = SymState(sym.schema, "s")
    solver = z3.Solver()
    solver.add(sym.init(s))
    if solver.check() != z3.sat:
        return 0, 0
    values = [v for n, v in s.values(solver.model()).items() if sym.schema[n] == "int"]
    return min(values, default=0), max(values, default=0)


def invariant_module(model: Any, result: Any, invariant: Any = None, box: tuple[int, int] | None = None) -> TlaInv:
    """The TLA+ module of the invariant ``result`` (a ``ProveResult`` of ``ordercheck.checker.symbolic.prove``)
    proved on ``model``: the conjunction of its lemmas over the unbounded encoding, or
    ``invariant`` (an encoding whose lemmas are the inferred ones), with the targets it
    implied. ``box``: the configuration's integer values, by default ``0..1`` widened
    to the initial state's values."""
    from ordercheck.checker.symbolic.encodings import encoding_class

    sym = invariant
    if sym is None:
        sym = encoding_class(model)(model.spec, queue_bound=result.queue_bound, bounded=False)
    if box is None:
        low, high = initial_range(sym)
        box = (min(0, low), max(1, high))
    targets = [q.name.removeprefix("implies: ") for q in result.queries if q.kind == "implies" and q.status == "proved"]
    title = (f"The inductive invariant that `ordercheck prove` proved for {model.path} (spec {model.spec_name}), "
             f"over its symbolic encoding" + (f" with queues of at most {result.queue_bound} entries"
                                              if not result.queue_free else ""))
    return inv_module(sym, inv_module_name(model.path), list(result.lemmas), targets, model.path,
                      lo=box[0], hi=box[1], title=title)
