"""Loading a spec's symbolic (Z3) encoding and stepping it on concrete states.

A spec ``NAME`` has a symbolic encoding when ``specs/NAME_symbolic.py`` exports
``SYMBOLIC`` (see :mod:`ordercheck.specs.symbolic` for the interface). :func:`successors` runs one
step of the encoding from a concrete state by enumerating every model of the transition
relation, which is how the encoding is checked against the explicit spec.
"""

from __future__ import annotations

import importlib
from typing import Any

import z3

from ordercheck.checker.api.spec import Spec


class NoEncoding(LookupError):
    """The spec has no symbolic encoding."""


def symbolic_class(spec: Spec) -> type:
    """The ``SYMBOLIC`` class of ``spec``'s encoding module; :class:`NoEncoding` if none.

    An encoding ``specs/NAME_symbolic.py`` encodes the built-in spec ``ordercheck.specs.NAME.SPEC``
    and nothing else: a spec of the user's own that takes the name ``NAME`` (a subclass
    overriding a step, or another protocol) has no encoding, or ``prove`` would prove
    the built-in spec in its place."""
    if not spec.name.isidentifier():
        raise NoEncoding(spec.name)
    try:
        builtin = importlib.import_module(f"ordercheck.specs.{spec.name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"ordercheck.specs.{spec.name}":
            raise
        raise NoEncoding(spec.name) from None
    if type(spec) is not getattr(builtin, "SPEC", None):
        raise NoEncoding(spec.name)
    try:
        module = importlib.import_module(f"ordercheck.specs.{spec.name}_symbolic")
    except ModuleNotFoundError as exc:
        if exc.name == f"ordercheck.specs.{spec.name}_symbolic":
            raise NoEncoding(spec.name) from None
        raise
    cls = getattr(module, "SYMBOLIC", None)
    if cls is None:
        raise NoEncoding(spec.name)
    return cls


def encoding_class(model: Any) -> type:
    """The ``SYMBOLIC`` class that encodes ``model``'s spec: the file its ``[prove]``
    table names (``encoding = "FILE.py"``, relative to the model file's directory,
    imported because the user chose to run that model, as its ``spec`` is:
    docs/explanation/security.md), else the built-in ``specs/NAME_symbolic.py``
    (:func:`symbolic_class`). :class:`NoEncoding` when there is none;
    :class:`~ordercheck.checker.InputError` naming ``prove.encoding`` when the file cannot be
    read or has no ``SYMBOLIC``."""
    from pathlib import Path

    from ordercheck.checker.api.errors import InputError
    from ordercheck.checker.loading.specref import BadSpecRef, load_file

    ref = model.prove.get("encoding")
    if ref is None:
        return symbolic_class(model.spec)
    path = Path(ref)
    if not path.is_absolute():
        path = Path(model.path).parent / path
    path = path.resolve()
    if path.suffix != ".py" or not path.is_file():
        raise InputError(model.path, "prove.encoding", f"{ref!r} is not a Python file ({path} does not exist or is no .py file)")
    try:
        module = load_file(path)
    except BadSpecRef as exc:
        raise InputError(model.path, "prove.encoding", str(exc)) from None
    cls = getattr(module, "SYMBOLIC", None)
    if not isinstance(cls, type):
        raise InputError(model.path, "prove.encoding", f"{ref!r} defines no SYMBOLIC class (see docs/reference/symbolic.md)")
    return cls


def exact_encoding(model: Any) -> Any | None:
    """The step-exact encoding of ``model``'s configuration (``EXACT`` in the built-in
    ``specs/NAME_symbolic.py``, see :mod:`ordercheck.specs.symbolic_exact`), built, for
    bounded model checking; ``None`` when the module has none, when the model names its
    own encoding file (``[prove] encoding``), or when the configuration is outside what
    it covers (signals, lossy or duplicating channels...)."""
    if model.prove.get("encoding") is not None:
        return None
    try:
        cls = symbolic_class(model.spec)
    except NoEncoding:
        return None
    exact = getattr(importlib.import_module(cls.__module__), "EXACT", None)
    if exact is None:
        return None
    from ordercheck.specs.symbolic_exact import NoExact

    try:
        return exact(model.spec)
    except NoExact:
        return None


def encoded_specs() -> list[str]:
    """Names of the specs that have a symbolic encoding."""
    from ordercheck.checker.loading.registry import spec_class, spec_names

    out = []
    for name in spec_names():
        try:
            symbolic_class(spec_class(name)())
        except NoEncoding:
            continue
        out.append(name)
    return out


class Stepper:
    """One step of an encoding from concrete states: ``Next`` with the pre-state fixed.

    Each action's relation is built once. For a concrete pre-state it is instantiated
    (the pre-state's values substituted and simplified by Z3), and the models of what
    remains are enumerated, each found model blocked, until none is left.
    """

    def __init__(self, sym: Any) -> None:
        from ordercheck.specs.symbolic import SymState

        self.sym = sym
        self.pre = SymState(sym.schema, "pre")
        self.post = SymState(sym.schema, "post")
        self.relations = [(a, a.relation(self.pre, self.post)) for a in sym.actions()]
        self.names = list(sym.schema)
        self.ctx = self.pre[self.names[0]].ctx
        count = len(self.names)
        self._from = (z3.Ast * count)()
        for i, name in enumerate(self.names):
            self._from[i] = self.pre[name].as_ast()
        self._post_vars = [self.post[name] for name in self.names]

    def _constant(self, name: str, value: Any) -> z3.ExprRef:
        return z3.BoolVal(value, self.ctx) if self.sym.schema[name] == "bool" else z3.IntVal(value, self.ctx)

    def _instantiate(self, formula: z3.ExprRef, to: Any) -> z3.ExprRef:
        """``formula`` with the pre-state's variables replaced (one native call)."""
        ast = z3.Z3_substitute(self.ctx.ref(), formula.as_ast(), len(self.names), self._from, to)
        return z3.simplify(z3.BoolRef(ast, self.ctx))

    def _differs(self, consts: list[z3.ExprRef]) -> z3.BoolRef:
        """The post-state differs from the given constants (built natively: it is hot)."""
        ctx = self.ctx.ref()
        eqs = (z3.Ast * len(consts))()
        keep = []
        for i, (var, const) in enumerate(zip(self._post_vars, consts)):
            eq = z3.BoolRef(z3.Z3_mk_eq(ctx, var.as_ast(), const.as_ast()), self.ctx)
            keep.append(eq)
            eqs[i] = eq.as_ast()
        both = z3.BoolRef(z3.Z3_mk_and(ctx, len(consts), eqs), self.ctx)
        return z3.Not(both)

    def successors(self, values: dict[str, Any]) -> set[tuple[tuple, tuple]]:
        """Every ``(label, post-state)`` the encoding allows from ``values``; post-states
        as sorted ``(name, value)`` tuples."""
        to = (z3.Ast * len(self.names))()
        keep = [self._constant(n, values[n]) for n in self.names]
        for i, c in enumerate(keep):
            to[i] = c.as_ast()
        out: set[tuple[tuple, tuple]] = set()
        for action, relation in self.relations:
            formula = self._instantiate(relation, to)
            if z3.is_false(formula):
                continue
            solver = z3.Solver(ctx=self.ctx)
            solver.add(formula)
            found = 0
            while solver.check() == z3.sat:
                model = solver.model()
                consts = [model.eval(v, model_completion=True) for v in self._post_vars]
                post = {
                    n: (z3.is_true(c) if self.sym.schema[n] == "bool" else c.as_long()) for n, c in zip(self.names, consts)
                }
                out.add((action.label(values, post), tuple(sorted(post.items()))))
                solver.add(self._differs(consts))
                found += 1
                if found > 10_000:
                    raise RuntimeError(f"{action.name}: the encoding leaves its post-state unconstrained")
        return out


def successors(sym: Any, values: dict[str, Any]) -> set[tuple[tuple, tuple]]:
    """Every ``(label, post-state)`` of ``sym`` from the concrete ``values`` (see
    :class:`Stepper`; build one Stepper to step many states)."""
    return Stepper(sym).successors(values)
