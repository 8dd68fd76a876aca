"""Z3 queries: bounded model checking and inductive-invariant checks on a spec's
symbolic encoding (:mod:`~checker.symbolic.encodings`, :mod:`~checker.symbolic.prove`)."""
