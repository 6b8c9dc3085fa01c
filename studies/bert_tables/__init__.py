"""The BERT tables and figure of Bhojanapalli et al. (2020) as studies: rows, scales, plan, results, plots."""
