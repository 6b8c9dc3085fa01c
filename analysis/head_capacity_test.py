"""One head's fit to a target context matrix: the knee of Theorem 1 at head size d_p = n."""

import numpy as np
import pytest

from analysis import head_capacity

N, D = 8, 16


def test_targets_are_positive_row_stochastic_and_the_permutation_one_has_a_full_rank_log():
    for target in (head_capacity.dirichlet_target(N, 1), head_capacity.near_permutation_target(N, 1)):
        assert (target > 0).all()
        np.testing.assert_allclose(target.sum(1), 1.0, rtol=1e-6)
    assert np.linalg.matrix_rank(np.log(head_capacity.near_permutation_target(N, 1))) == N


@pytest.mark.parametrize("head_size", [N, 2 * N])
def test_a_head_of_size_n_or_more_reaches_any_positive_target(head_size):
    inputs = head_capacity.random_inputs(N, D, seed=0)
    fit = head_capacity.fit_head(inputs, head_capacity.near_permutation_target(N, 1), head_size)
    assert fit.kl < 1e-3 and fit.total_variation < 0.02


def test_a_head_smaller_than_n_cannot_reach_a_full_rank_target():
    inputs = head_capacity.random_inputs(N, D, seed=0)
    target = head_capacity.near_permutation_target(N, 1)
    small = head_capacity.fit_head(inputs, target, head_size=2)
    # The same optimisation that reaches 1e-3 at d_p = n stops far above it: the logits have rank <= 2.
    assert small.kl > 0.05 and small.total_variation > 0.05
