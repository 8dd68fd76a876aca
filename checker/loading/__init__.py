"""Loading models: model files (:mod:`~ordercheck.checker.loading.modelfile`) and finding specs by
name in the ``specs`` package (:mod:`~ordercheck.checker.loading.registry`).

The only layer of :mod:`ordercheck.checker` that imports spec modules (by name, at run time).
"""
