"""Z3 queries: bounded model checking and inductive-invariant checks on a spec's
symbolic encoding (:mod:`~ordercheck.checker.symbolic.encodings`, :mod:`~ordercheck.checker.symbolic.prove`)."""
