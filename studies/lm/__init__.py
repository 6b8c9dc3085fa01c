"""The language-model experiments as studies: paper 1's Figs. 1, 3a, 3b, 4 and paper 2's freezing_lm."""
