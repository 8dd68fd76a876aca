"""The Spark engine (:mod:`~ordercheck.checker.spark.bfs`, its tasks and session) and sweeps: every
model and every ablation mutant, one check per task, gathered into one table."""
