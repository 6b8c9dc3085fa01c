"""run_lm.py's library: training, perplexity, presets, freezing, resume, data layouts and bad input."""

import dataclasses
import json
import math
import os
import random
import shutil

import numpy as np
import pytest
import tensorflow as tf

from checkpoints import tf1_checkpoint
from lm import dataset as lm_dataset
from lm import model as transformer_lm
from lm import task
from lm.config import LmConfig
from lm.family import FAMILY
from lm.parameter_groups import PARAMETER_GROUPS
from tokenization import sentencepiece_vocabulary as vocabulary_lib
from training import early_stopping
from training.testing import xla_comparison
from training.testing.summaries import read_scalars

WORDS = ("the cat dog sat ran on a mat log big small red blue quickly slowly and then it was "
         "seen by her him they we saw").split()
PRESETS = ["embeddings", "attention", "ffn", "embeddings,attention", "embeddings,ffn", "attention,ffn"]


def _sentences(count, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(count)]


# Session-scoped: the long test runs first (conftest.py), and a module-scoped fixture would be built again when
# the module's other tests come.
@pytest.fixture(scope="session")
def text(tmp_path_factory):
    """train.txt, eval.txt, a learned 48-piece vocabulary and a tiny model config."""
    root = tmp_path_factory.mktemp("lm_text")
    (root / "train.txt").write_text("\n".join(_sentences(400, 1)) + "\n")
    (root / "eval.txt").write_text("\n".join(_sentences(40, 2)) + "\n")
    vocabulary_lib.learn(_sentences(400, 1), 48, str(root))
    config = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, head_size=8,
                  intermediate_size=32, max_position_embeddings=32)
    (root / "lm.json").write_text(json.dumps(config))
    return root


def _options(text, output_dir, **overrides):
    values = dict(train_file=str(text / "train.txt"), eval_file=str(text / "eval.txt"),
                  vocab_file=str(text / vocabulary_lib.MODEL_FILE), lm_config_file=str(text / "lm.json"),
                  output_dir=str(output_dir), do_train=True, do_eval=True, max_seq_length=16,
                  train_batch_size=8, eval_batch_size=8, num_train_steps=4, num_warmup_steps=1,
                  learning_rate=1e-2, save_checkpoints_steps=2, iterations_per_loop=2, log_steps=2)
    values.update(overrides)
    return task.LmOptions(**values)


def _read_results(path):
    with open(path) as f:
        return dict(line.strip().split(" = ") for line in f)


@pytest.mark.long
def test_training_lowers_perplexity_and_writes_results(text, tmp_path):
    before = task.run(_options(text, tmp_path / "short", num_train_steps=1))["eval"]
    # Without early stopping the last weights are scored and nothing is kept aside.
    assert before["global_step"] == 1 and "stopped" not in before
    assert not os.path.exists(tmp_path / "short" / "best") and not os.path.exists(tmp_path / "short" / "dev")
    after = task.run(_options(text, tmp_path / "long", num_train_steps=40, save_checkpoints_steps=20,
                            iterations_per_loop=20, log_steps=20, do_predict=True,
                            test_file=str(text / "eval.txt")))
    assert after["eval"]["perplexity"] < 0.7 * before["perplexity"]
    assert after["eval"]["perplexity"] == pytest.approx(math.exp(after["eval"]["loss"]))
    written = _read_results(tmp_path / "long" / "eval_results.txt")
    assert sorted(written) == ["bits_per_character", "global_step", "loss", "num_characters", "num_tokens",
                               "perplexity"]
    assert int(written["global_step"]) == 40
    # Every line is scored: its tokens plus eos, its characters plus a newline.
    lines = (text / "eval.txt").read_text().splitlines()
    processor = vocabulary_lib.load(str(text / vocabulary_lib.MODEL_FILE)).processor()
    assert int(written["num_tokens"]) == sum(len(processor.EncodeAsIds(line)) + 1 for line in lines)
    assert int(written["num_characters"]) == sum(len(line) + 1 for line in lines)
    assert _read_results(tmp_path / "long" / "test_results.txt") == written
    assert read_scalars(str(tmp_path / "long" / "eval"))["perplexity"][0] == 40
    assert "tokens_per_second" in read_scalars(str(tmp_path / "long"))
    assert os.path.exists(tmp_path / "long" / "lm_config.json")


class _UniformModel:
    """Zero logits: every token has probability 1/V, so perplexity is exactly V."""

    def __init__(self, vocab_size):
        self.vocab_size = vocab_size

    def __call__(self, inputs, training=False):
        shape = tf.shape(inputs["input_ids"])
        return dict(logits=tf.zeros([shape[0], shape[1], self.vocab_size]),
                    sequence_output=tf.zeros([shape[0], shape[1], 1]))

    def output_logits(self, x):
        return tf.zeros([tf.shape(x)[0], self.vocab_size])


def test_scoring_a_uniform_model_gives_vocab_size_perplexity(text):
    vocabulary = vocabulary_lib.load(str(text / vocabulary_lib.MODEL_FILE))
    source = lm_dataset.TextFiles([str(text / "eval.txt")])
    nll, tokens, chars = task.score(_UniformModel(48), lm_dataset.evaluation_dataset(source, vocabulary, 16, 8))
    assert nll / tokens == pytest.approx(math.log(48), rel=1e-6)
    assert math.exp(nll / tokens) == pytest.approx(48, rel=1e-5)
    # log2(48) bits per token, spread over the characters.
    assert nll / math.log(2) / chars == pytest.approx(tokens * math.log2(48) / chars, rel=1e-6)


@pytest.mark.parametrize("at_real_positions", [False, True])
def test_losses_on_a_hand_computed_batch(at_real_positions):
    """From logits at every position, or from an output layer (here the identity) at the real ones."""
    logits = tf.math.log(tf.constant([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [1 / 3, 1 / 3, 1 / 3]]]))
    batch = dict(target_ids=tf.constant([[0, 1, 2]]), input_mask=tf.constant([[1, 1, 0]]))
    if at_real_positions:
        losses = task.lm_losses(dict(sequence_output=logits), batch, output_logits=lambda x: x)
    else:
        losses = task.lm_losses(dict(logits=logits), batch)
    assert float(losses["loss"]) == pytest.approx((-math.log(0.5) - math.log(0.8)) / 2, rel=1e-6)
    assert float(losses["target_tokens"]) == 2


def test_loss_at_real_positions_equals_the_loss_over_every_position_with_its_gradients():
    """Making the logits at the real positions only moves the loss and every gradient by rounding alone."""
    config = LmConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, head_size=8,
                      intermediate_size=32, max_position_embeddings=8, hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0)
    model = transformer_lm.build_lm(transformer_lm.TransformerLm(config))
    rng = np.random.default_rng(3)
    lengths = np.array([8, 5, 1, 3])
    mask = (np.arange(8)[None, :] < lengths[:, None]).astype(np.int32)
    batch = dict(input_ids=tf.constant(rng.integers(1, 50, (4, 8)) * mask, tf.int32),
                 target_ids=tf.constant(rng.integers(1, 50, (4, 8)) * mask, tf.int32), input_mask=tf.constant(mask))
    results = []
    for output_logits in (None, model.output_logits):
        with tf.GradientTape() as tape:
            losses = task.lm_losses(model(dict(input_ids=batch["input_ids"], input_mask=batch["input_mask"]),
                                          training=True), batch, output_logits)
        results.append((losses, tape.gradient(losses["loss"], model.trainable_variables)))
    (every, every_gradients), (real, real_gradients) = results
    assert float(real["target_tokens"]) == float(every["target_tokens"]) == 17
    np.testing.assert_allclose(float(real["loss"]), float(every["loss"]), rtol=1e-6)
    assert len(real_gradients) == len(model.trainable_variables) > 5
    for variable, a, b in zip(model.trainable_variables, every_gradients, real_gradients):
        np.testing.assert_allclose(tf.convert_to_tensor(b).numpy(), tf.convert_to_tensor(a).numpy(), rtol=1e-5,
                                   atol=1e-8, err_msg=variable.name)


def _assert_only_the_frozen_groups_stay(out, preset):
    """Between the run's checkpoints of steps 2 and 4, exactly the variables of `preset`'s groups kept their values."""
    start = tf.train.load_checkpoint(str(out / "model.ckpt-2"))
    end = tf.train.load_checkpoint(str(out / "model.ckpt-4"))
    frozen = set(preset.split(","))
    checked = 0
    for name in end.get_variable_to_shape_map():
        if name == "global_step" or name.endswith(("/adam_m", "/adam_v")):
            continue
        group = PARAMETER_GROUPS.group_of(name)[0]
        same = np.array_equal(start.get_tensor(name), end.get_tensor(name))
        assert same == (group in frozen), name
        checked += 1
    assert checked > 20
    report = json.loads((out / "parameters.json").read_text())
    assert report["flags"]["freeze"] == preset and 0 < report["trainable_share"] < 1


# ("attention" is checked the same way on the plain run of the --jit_compile test.)
@pytest.mark.parametrize("preset", [preset for preset in PRESETS if preset != "attention"])
@pytest.mark.eager
def test_freezing_presets_keep_frozen_groups_bitwise(text, tmp_path, preset):
    out = tmp_path / preset.replace(",", "_")
    task.run(_options(text, out, freeze=preset, do_eval=False))
    _assert_only_the_frozen_groups_stay(out, preset)


@pytest.mark.eager
def test_seed_only_frozen_checkpoints_load_for_evaluation(text, tmp_path):
    out = tmp_path / "seeded"
    trained = task.run(_options(text, out, freeze="ffn", save_frozen="seed"))["eval"]
    names = tf.train.load_checkpoint(str(out / "model.ckpt-4")).get_variable_to_shape_map()
    assert not any("/intermediate/" in name for name in names)
    assert os.path.exists(str(out / "model.ckpt-4.frozen.json"))
    again = task.run(_options(text, out, freeze="ffn", save_frozen="seed", do_train=False))["eval"]
    assert again["loss"] == pytest.approx(trained["loss"], rel=1e-6)


class _Crash(Exception):
    pass


STRAIGHT = dict(num_train_steps=6, save_checkpoints_steps=3, iterations_per_loop=2, do_eval=False)


@pytest.fixture(scope="session")
def straight(text, tmp_path_factory):
    """The output_dir of a run of 6 steps, checkpoints at 3 and 6, not evaluated; tests copy it to change it."""
    out = tmp_path_factory.mktemp("straight")
    task.run(_options(text, out, **STRAIGHT))
    return out


def test_resume_after_a_crash_is_exact(text, tmp_path, straight):
    runs = STRAIGHT

    def crash_after_step_4(step):
        if step == 4:
            raise _Crash()

    with pytest.raises(_Crash):
        task.run(_options(text, tmp_path / "resumed", **runs), callbacks=[crash_after_step_4])
    task.run(_options(text, tmp_path / "resumed", **runs))
    a = tf.train.load_checkpoint(str(straight / "model.ckpt-6"))
    b = tf.train.load_checkpoint(str(tmp_path / "resumed" / "model.ckpt-6"))
    names = sorted(a.get_variable_to_shape_map())
    assert names == sorted(b.get_variable_to_shape_map())
    for name in names:
        np.testing.assert_array_equal(a.get_tensor(name), b.get_tensor(name), err_msg=name)


@pytest.mark.eager
def test_early_stopping_keeps_the_best_held_out_checkpoint_and_scores_it(text, tmp_path, monkeypatch):
    # Held-out perplexity at steps 2, 4, 6, 8 (scripted): best 40 at step 4, then two worse ones whose
    # trend is no fall beyond noise: patience 2 stops at step 8. The final scores are real ones.
    scripted = iter([50.0, 40.0, 45.0, 44.0])
    real = task.perplexity_results
    held_out_scorers = []

    def fake(model, options, vocabulary, source, step, scorer=None):
        value = next(scripted, None)
        if value is None:
            return real(model, options, vocabulary, source, step, scorer)
        held_out_scorers.append(scorer)
        return dict(perplexity=value, loss=math.log(value), global_step=step)

    monkeypatch.setattr(task, "perplexity_results", fake)
    out = tmp_path / "early"
    options = _options(text, out, num_train_steps=20, save_checkpoints_steps=2, iterations_per_loop=2,
                       early_stopping_patience=2, do_predict=True, test_file=str(text / "eval.txt"))
    results = task.run(options)
    # The four held-out evaluations share one traced scoring function.
    assert len(held_out_scorers) == 4 and held_out_scorers[0] is not None
    assert all(scorer is held_out_scorers[0] for scorer in held_out_scorers)
    # An epoch: the training lines as sequences of up to 16 tokens (bos + pieces + eos, split with one overlap).
    processor = vocabulary_lib.load(str(text / vocabulary_lib.MODEL_FILE)).processor()
    lines = [line for line in (text / "train.txt").read_text().splitlines() if line.strip()]
    sequences = sum(-(-(len(processor.EncodeAsIds(line)) + 1) // 16) for line in lines)
    state = early_stopping.read_state(str(out))
    assert state == dict(best_perplexity=40.0, best_step=4, best_epochs=pytest.approx(4 * 8 / sequences),
                         evaluations_since_best=2, stopped=True, last_evaluated_step=8, history=[
                             dict(global_step=step, epochs=pytest.approx(step * 8 / sequences), perplexity=value,
                                  loss=pytest.approx(math.log(value)))
                             for step, value in ((2, 50.0), (4, 40.0), (6, 45.0), (8, 44.0))])
    assert os.path.basename(tf.train.latest_checkpoint(str(out))) == "model.ckpt-8"
    assert read_scalars(str(out / "dev"))["perplexity"] == (8, 44.0)  # the curve's last point
    # The best weights are step 4's: scored again (for real) they give the final eval and test results.
    best = tf.train.load_checkpoint(str(out / "best" / "model.ckpt"))
    step_4 = tf.train.load_checkpoint(str(out / "model.ckpt-4"))
    for name in best.get_variable_to_shape_map():
        np.testing.assert_array_equal(best.get_tensor(name), step_4.get_tensor(name), err_msg=name)
    monkeypatch.undo()
    vocabulary = vocabulary_lib.load(options.vocab_file)
    model = FAMILY.build_model(vocabulary_lib.fit_vocabulary(task.effective_config(options), vocabulary))
    assert not tf1_checkpoint.load_checkpoint(model, str(out / "model.ckpt-4")).missing
    scorer = task.scoring_function(model)
    expected = task.perplexity_results(model, options, vocabulary, task.sources(options)["eval"], 4, scorer)
    # Scored again by the same function: the same figures, no third trace (the last batch is smaller).
    assert task.perplexity_results(model, options, vocabulary, task.sources(options)["eval"], 4, scorer) == expected
    assert scorer.experimental_get_tracing_count() <= 2
    written = _read_results(out / "eval_results.txt")
    assert int(written["global_step"]) == 4 and written["stopped"] == "True"
    assert float(written["perplexity"]) == pytest.approx(expected["perplexity"], rel=1e-6)
    assert results["test"]["perplexity"] == pytest.approx(expected["perplexity"], rel=1e-6)
    # A re-run does not train further.
    task.run(dataclasses.replace(options, early_stopping_patience=0))
    assert os.path.basename(tf.train.latest_checkpoint(str(out))) == "model.ckpt-8"


@pytest.mark.eager
def test_learns_and_reuses_a_vocabulary(text, tmp_path):
    out = tmp_path / "learned"
    task.run(_options(text, out, vocab_file=None, vocab_size=40, num_train_steps=2))
    vocabulary = vocabulary_lib.load(str(out / vocabulary_lib.MODEL_FILE))
    assert vocabulary.size == 40 and (out / vocabulary_lib.VOCAB_LIST_FILE).read_text().count("\n") == 40
    assert '"vocab_size": 40' in (out / "lm_config.json").read_text()
    first = (out / vocabulary_lib.MODEL_FILE).read_bytes()
    task.run(_options(text, out, vocab_file=None, vocab_size=40, num_train_steps=4))  # resumes
    assert (out / vocabulary_lib.MODEL_FILE).read_bytes() == first


@pytest.mark.eager
def test_reads_the_lm1b_layout(text, tmp_path):
    train_dir = tmp_path / "1-billion-word-language-modeling-benchmark-r13output" / \
        "training-monolingual.tokenized.shuffled"
    heldout_dir = train_dir.parent / "heldout-monolingual.tokenized.shuffled"
    train_dir.mkdir(parents=True)
    heldout_dir.mkdir()
    sentences = _sentences(200, 3)
    for shard in range(2):
        (train_dir / ("news.en-%05d-of-00100" % (shard + 1))).write_text("\n".join(sentences[shard::2]) + "\n")
    (heldout_dir / "news.en.heldout-00000-of-00050").write_text("\n".join(_sentences(20, 4)) + "\n")
    results = task.run(_options(text, tmp_path / "out", train_file=str(train_dir / "news.en-*"),
                              eval_file=str(heldout_dir / "news.en.heldout-00000-of-00050"), num_train_steps=2))
    assert results["eval"]["num_tokens"] > 20


def test_reads_prepared_tfds_lm1b_when_there_is_one():
    data_dir = os.environ.get("LM1B_TFDS_DATA_DIR")
    if not data_dir:
        pytest.skip("No prepared TFDS lm1b here (set LM1B_TFDS_DATA_DIR to a directory holding one); "
                    "this machine cannot download it.")
    from lm import tfds_source  # pylint: disable=import-outside-toplevel
    assert tfds_source.TfdsSplit(data_dir, "test").sample_lines(5)


def test_tfds_directory_without_lm1b_is_a_clear_error(tmp_path):
    from lm import tfds_source  # pylint: disable=import-outside-toplevel
    with pytest.raises(ValueError, match="--tfds_data_dir=.* holds no prepared lm1b dataset .*nothing is downloaded"):
        tfds_source.TfdsSplit(str(tmp_path), "train")


@pytest.mark.parametrize("overrides, message", [
    (dict(preset="lm1b_large"), "--preset=lm1b_large is not known; expected one of lm1b_paper"),
    (dict(train_file=None), "--do_train needs --train_file"),
    (dict(train_file="/nonexistent/news.en-*"), "--train_file: /nonexistent/news.en-\\* matches no file"),
    (dict(max_seq_length=64), "--max_seq_length=64 exceeds the model's max_position_embeddings 32"),
    (dict(freeze="atention"), "did you mean attention"),
    (dict(vocab_file="/nonexistent.model"), "--vocab_file=/nonexistent.model does not exist"),
    (dict(learning_rate=-0.01), r"^--learning_rate=-0.01 must be >= 0.0\.$"),
    (dict(do_train=False, do_eval=False), "At least one of `--do_train`"),
    (dict(do_eval=False, early_stopping_patience=3), "^--early_stopping_patience=3 needs --do_eval"),
])
def test_bad_input_errors(text, tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        task.run(_options(text, tmp_path / "out", **overrides))


def test_empty_file_and_vocabulary_mismatch_are_named(text, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ValueError, match="--eval_file: .*empty.txt is empty"):
        task.run(_options(text, tmp_path / "a", eval_file=str(empty)))
    # Scored text that is not UTF-8 is refused, as training text is, before anything is built.
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"the cat\ncaf\xe9 au lait\n")
    with pytest.raises(ValueError, match=r"^--eval_file: \S+/latin1.txt line 2 is not UTF-8 \(byte 4\)\.$"):
        task.run(_options(text, tmp_path / "a2", eval_file=str(latin1)))
    assert not (tmp_path / "a2").exists()
    # Training text too, with its vocabulary given (so none is learned from it).
    with pytest.raises(ValueError, match=r"^--train_file: \S+/latin1.txt line 2 is not UTF-8 \(byte 4\)\.$"):
        task.run(_options(text, tmp_path / "a3", train_file=str(latin1)))
    assert not (tmp_path / "a3").exists()
    config = tmp_path / "lm.json"
    config.write_text('{"vocab_size": 100, "hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 1}')
    with pytest.raises(ValueError, match="vocab_size 100 does not fit the vocabulary .*spm.model \\(48 pieces\\)"):
        task.run(_options(text, tmp_path / "b", lm_config_file=str(config)))
    not_a_model = tmp_path / "vocab.txt"
    not_a_model.write_text("[PAD]\nthe\n")
    with pytest.raises(ValueError, match="vocab.txt is not a SentencePiece model"):
        task.run(_options(text, tmp_path / "c", vocab_file=str(not_a_model)))
    with pytest.raises(ValueError, match="--vocab_size=5000 cannot be learned from the training text: "
                                         "Vocabulary size too high"):
        task.run(_options(text, tmp_path / "d", vocab_file=None, vocab_size=5000))


def test_a_resume_that_changes_the_run_is_refused_before_anything_is_built(text, tmp_path, straight):
    """Each change is one line naming the flag and both values; nothing is learned, built or written."""
    out = tmp_path / "out"
    shutil.copytree(straight, out)
    recorded = json.loads((out / "run.json").read_text())
    assert recorded["train_batch_size"] == 8 and recorded["vocab_file"].startswith("sha256:")
    other = tmp_path / "other.txt"
    other.write_text("\n".join(_sentences(300, 5)) + "\n")
    for overrides, message in [
        (dict(train_batch_size=4), r"^--train_batch_size: \S+ holds checkpoints of a run trained with 8, and this "
                                   r"run has 4; resume with the same value, or start afresh with a new --output_dir\.$"),
        (dict(max_seq_length=12), r"^--max_seq_length: .* trained with 16, and this run has 12;"),
        # --vocab_file left out: the run would learn another vocabulary and train the old embeddings on its ids.
        (dict(vocab_file=None), r'^--vocab_file: .* trained with "sha256:[0-9a-f]+", and this run has "none yet: '
                                r'learned from the training text";'),
        (dict(train_file=str(other)), r'^--train_file: .* trained with "1 files, \d+ bytes, sha256:\w+", and this '
                                      r'run has "1 files, \d+ bytes, sha256:\w+";'),
    ]:
        with pytest.raises(ValueError, match=message):
            task.run(_options(text, out, **dict(STRAIGHT, num_train_steps=8, **overrides)))
        assert not (out / vocabulary_lib.MODEL_FILE).exists()
        assert tf.train.latest_checkpoint(str(out)).endswith("model.ckpt-6")
    # The schedule may change, as in the original: training goes on to the new step count.
    task.run(_options(text, out, **dict(STRAIGHT, num_train_steps=8, learning_rate=5e-3)))
    assert tf.train.latest_checkpoint(str(out)).endswith("model.ckpt-8")


@pytest.mark.parametrize("freeze", ["", "attention"])
def test_xla_compiled_steps_train_as_the_plain_steps(text, tmp_path, freeze):
    """--jit_compile: the weights of the plain steps up to rounding (no dropout: XLA draws its float
    uniforms differently), frozen groups bit for bit; the plain run with a preset is also its freezing check."""
    config_file = xla_comparison.config_without_dropout(text / "lm.json", tmp_path)
    for jit_compile in (False, True):
        task.run(_options(text, tmp_path / str(jit_compile), freeze=freeze, jit_compile=jit_compile, do_eval=False,
                          lm_config_file=config_file))
    names = xla_comparison.variable_names(tmp_path / "True", 4)
    frozen = {n for n in names if freeze and PARAMETER_GROUPS.group_of(n)[0] == freeze}
    assert len(frozen) > 5 or not freeze
    assert xla_comparison.assert_trains_alike(tmp_path / "False", tmp_path / "True", 2, 4, frozen) > 10
    if freeze:
        _assert_only_the_frozen_groups_stay(tmp_path / "False", freeze)
