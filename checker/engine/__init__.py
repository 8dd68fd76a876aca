"""The local search engine: fingerprints, the state store, frontiers, the level loop,
workers that own shards of the visited set, reductions, liveness, and
:func:`ordercheck.checker.engine.run.check_model`, which turns a search into a
:class:`~ordercheck.checker.api.result.Result`.

It imports the API layer only: no spec module, no model-file loading, no reports.
"""
