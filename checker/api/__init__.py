"""The API layer: what specs, reports and the TLA+ export are written against.

The spec API (:mod:`~checker.api.spec`, the optional protocols
:mod:`~checker.api.reductions` and :mod:`~checker.api.rendering`, and
:mod:`~checker.api.errors`, re-exported by :mod:`checker`), the loaded model
(:mod:`~checker.api.model`), the result record (:mod:`~checker.api.result`) and trace
replay (:mod:`~checker.api.trace`). Modules here import nothing else of the project.
"""
