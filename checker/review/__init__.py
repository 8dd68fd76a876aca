"""Design-review tables built from checks: the ablation table
(:mod:`~ordercheck.checker.review.ablation`) and the protocol x property matrix
(:mod:`~ordercheck.checker.review.matrix`)."""
