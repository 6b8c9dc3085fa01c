"""One head's fit to a target context matrix: the knee of Theorem 1 at head size d_p = n."""

import numpy as np
import pytest

import tokenization
from analysis import head_capacity, testing
from modeling.testing import original_bert_numpy

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


def test_the_sweep_and_its_errors():
    assert head_capacity.head_sizes(8) == [1, 2, 4, 6, 7, 8, 16]
    assert head_capacity.head_sizes(2) == [1, 2, 4]
    assert head_capacity.parse_ints("--lengths", "4, 8") == [4, 8]
    for text in ("", "4,x", "0,4"):
        with pytest.raises(ValueError, match=r"^--lengths=%s: expected comma-separated integers of at least 1" % text):
            head_capacity.parse_ints("--lengths", text)
    with pytest.raises(ValueError, match=r"^--targets=uniform: expected a comma-separated subset of near_permutation, "
                                         r"dirichlet\.$"):
        head_capacity.HeadCapacityOptions(output_file="x.json", targets="uniform").validate()
    with pytest.raises(ValueError, match=r"^Real inputs need --bert_config_file, --vocab_file, --input_file too"):
        head_capacity.HeadCapacityOptions(output_file="x.json", init_checkpoint="ckpt").validate()


def test_measure_finds_the_knee_and_theorem_2():
    results = head_capacity.measure(lengths=[4], targets=["near_permutation"], num_targets=1, steps=600,
                                    restarts=1, learning_rate=0.05, seed=1, theorem2_length=4,
                                    theorem2_hidden_size=8, theorem2_num_heads=[1, 4])
    kl = {fit["head_size"]: fit["kl"] for fit in results["theorem1"]}
    assert sorted(kl) == [1, 2, 3, 4, 8]
    assert max(kl[3], kl[4], kl[8]) < 1e-3 < 0.01 < min(kl[1], kl[2])  # d_p >= n - 1 reaches the target.
    standard = [f for f in results["theorem2"] if f["family"] == "standard"]
    fixed = [f for f in results["theorem2"] if f["family"] == "fixed"]
    assert [f["head_size"] for f in standard] == [8, 2, 2, 2, 2] and {f["head_size"] for f in fixed} == {4}
    # Four heads of d/h = 2 < n cannot reach their targets; four heads of d_p = n = 4 can.
    assert min(f["kl"] for f in standard[1:]) > 0.01 and max(f["kl"] for f in fixed) < 1e-3
    assert results["inputs"] == {"4": "Gaussian [4, 64]"}


def test_real_inputs_are_the_checkpoints_embedding_output(tmp_path):
    model = testing.write_random_model(str(tmp_path), head_size=4)
    tokenizer = tokenization.FullTokenizer(vocab_file=model["vocab_file"], do_lower_case=True)
    lines = ["the cat", "the big red dog ran under a mat and sat ."]
    inputs = head_capacity.CheckpointInputs(model["config"], model["init_checkpoint"], tokenizer, lines, "s.txt")
    vectors, description = inputs(6)
    assert description == "[CLS] the big red dog [SEP]"
    ids = np.array([tokenizer.convert_tokens_to_ids(description.split())])
    expected = original_bert_numpy.bert_forward(model["config"], model["tensors"], ids, np.ones_like(ids),
                                                np.zeros_like(ids))["embedding_output"][0]
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    with pytest.raises(ValueError, match=r"^--input_file s\.txt has no line of 20 WordPiece tokens or more "
                                         r"\(\[CLS\] and \[SEP\] included\); the longest has 13\."):
        inputs(20)
