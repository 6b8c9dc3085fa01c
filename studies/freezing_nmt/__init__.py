"""Paper 2's translation experiment as a study: rows of frozen groups, trained to convergence, reported."""
