"""Throughput benchmarks: tokenization paths and BERT encoders (see README)."""
