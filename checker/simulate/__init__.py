"""Random simulation for models too large to exhaust: walks
(:mod:`~checker.simulate.walk`), shrinking what they find
(:mod:`~checker.simulate.shrink`), and the run that ties them together
(:mod:`~checker.simulate.run`)."""
