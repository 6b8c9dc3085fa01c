"""The sequence-length study: the standard head size against a fixed one as n grows (see README.md)."""
