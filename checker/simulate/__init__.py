"""Random simulation for models too large to exhaust: walks
(:mod:`~ordercheck.checker.simulate.walk`), shrinking what they find
(:mod:`~ordercheck.checker.simulate.shrink`), and the run that ties them together
(:mod:`~ordercheck.checker.simulate.run`)."""
