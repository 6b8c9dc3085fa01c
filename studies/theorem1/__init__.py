"""Theorems 1 and 2 of Bhojanapalli et al. (2020) measured directly, as a study: one head fitted to
target context matrices."""
