"""No TLA+ export for :mod:`ordercheck.specs.bus1_refinement`, and why.

The spec is a product search: its state pairs a ``bus1_impl`` state with the *set* of
``bus1``-with-destruction states that show the same events (the abstract side
determinised), and it decides trace inclusion. A TLA+ module a careful person would
write for this is ``Impl => Abstract!Spec`` through ``INSTANCE`` with a refinement
mapping, and no such mapping exists step by step: the code stages at ``clock + 1`` with
the running maximum while the wiki blocks at the clock, its timestamps are twice the
wiki's, and ties go by transaction, not sender (the spec's docstring). Hiding the
abstract variables instead (``\\EE``) is not checkable by TLC, and exporting the
determinised product would be our algorithm in TLA+ syntax, not the refinement.
"""

from __future__ import annotations

REFUSED = (
    "bus1_refinement has no TLA+ export: it decides trace inclusion by a product with the determinised wiki "
    "spec, and no refinement mapping from the code's states to bus1's exists for INSTANCE (TLC cannot check "
    "hidden-variable refinement); export the model as spec bus1_impl and bus1 models separately, and check "
    "the refinement with `ordercheck check`"
)
