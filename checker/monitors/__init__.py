"""The ordering properties as monitors: each property defined once, decided event by event.

See :mod:`checker.monitors.base` for the contract. ``validate``, the model checker and
the implementation harness all decide properties through these monitors.
"""
