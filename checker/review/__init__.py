"""Design-review tables built from checks: the ablation table
(:mod:`~checker.review.ablation`) and the protocol x property matrix
(:mod:`~checker.review.matrix`)."""
