"""Reproducing the papers' tables: experiments, scales, the plan, its runner, results and plots.

`reproduce_paper_tables.py` is the entry point; `driver.run(options)` the whole job.
"""
