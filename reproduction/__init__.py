"""The engine behind reproduce_paper_tables.py: a study's plan of entry-point steps, run with resume, reported.

`study.Study` is what an experiment implements; `driver.run(options, registry)`
the whole job; `registry.Registry` finds a study by name. The list of studies
is the `studies` package; BERT's tables are `studies.bert_tables`.
"""
