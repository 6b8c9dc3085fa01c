"""NumPy references of the shared layers, for the families' model tests."""
