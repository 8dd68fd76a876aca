"""Protocol specifications, one module per protocol, and the properties they share.

A module here defines one :class:`ordercheck.checker.Spec` subclass and names it ``SPEC``. The
spec's ``name`` is the module's name, which model files use (``spec = "bus1"``).
"""
