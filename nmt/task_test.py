"""run_translation.py's library: training, BLEU, translations, best checkpoint, freezing, resume, bad input."""

import dataclasses
import json
import math
import os
import random
import shutil

import numpy as np
import pytest
import tensorflow as tf

from checkpoints import seeded_init
from freezing import seeded_values
from modeling import original_variables
from nmt import task as translation
from nmt.config import NmtConfig
from nmt.model import TransformerNmt, build_nmt
from nmt.parallel_text import ParallelText
from nmt.parameter_groups import PARAMETER_GROUPS
from tokenization import sentencepiece_vocabulary as vocabulary_lib
from training import early_stopping
from training.presets import apply_preset
from training.testing import xla_comparison
from training.testing.summaries import read_scalars

PRESETS = ["embeddings", "attention", "ffn", "embeddings,attention", "embeddings,ffn", "attention,ffn"]


WORDS = "cat dog sun moon tree river stone bird fish house road hill".split()


def _dictionary_pairs(count, seed):
    """A task a tiny model learns in a few hundred steps: each word to its upper-case form, in order."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 6))]
        lines.append("%s\t%s" % (" ".join(words), " ".join(word.upper() for word in words)))
    return "\n".join(lines) + "\n"


# Session-scoped, as `uninterrupted` below: `make test`'s two workers take this module's tests in turns, and a
# module-scoped fixture is built again whenever a worker comes back to the module after another one.
@pytest.fixture(scope="session")
def data(tmp_path_factory):
    """train/dev/test.tsv of the dictionary task, a learned 60-piece joint vocabulary, a tiny model config."""
    root = tmp_path_factory.mktemp("nmt_data")
    for split, count, seed in (("train", 400, 1), ("dev", 12, 2), ("test", 10, 3)):
        (root / ("%s.tsv" % split)).write_text(_dictionary_pairs(count, seed))
    vocabulary_lib.learn(ParallelText.from_tsv(str(root / "train.tsv")).sample_lines(1000), 60, str(root))
    config = dict(hidden_size=32, num_encoder_layers=2, num_decoder_layers=1, num_attention_heads=2, head_size=6,
                  intermediate_size=64)
    (root / "model.json").write_text(json.dumps(config))
    return root


def _options(data, output_dir, **overrides):
    values = dict(train_tsv=str(data / "train.tsv"), dev_tsv=str(data / "dev.tsv"),
                  spm_model=str(data / vocabulary_lib.MODEL_FILE), model_config_file=str(data / "model.json"),
                  output_dir=str(output_dir), do_train=True, do_eval=False, max_seq_length=48,
                  train_batch_size=8, eval_batch_size=8, num_train_steps=4, num_warmup_steps=1,
                  learning_rate=1e-2, save_checkpoints_steps=2, iterations_per_loop=2, log_steps=2,
                  beam_size=2, max_decode_length=12, optimizer="adam", learning_rate_schedule="inverse_sqrt")
    values.update(overrides)
    return translation.NmtOptions(**values)


def _read_results(path):
    with open(path) as f:
        return dict(line.rstrip("\n").split(" = ", 1) for line in f)


@pytest.mark.parametrize("at_real_positions", [False, True])
def test_label_smoothed_loss_on_a_hand_computed_batch(at_real_positions):
    """From logits at every position, or from an output layer (here the identity) at the real ones."""
    probabilities = [[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [1 / 3, 1 / 3, 1 / 3]]]
    logits = tf.math.log(tf.constant(probabilities))
    batch = dict(target_ids=tf.constant([[1, 2, 0]]))  # the last position is padding
    outputs_, output_logits = dict(logits=logits), None
    if at_real_positions:
        outputs_, output_logits = dict(sequence_output=logits), lambda x: x

    def losses(**kwargs):
        return translation.translation_losses(outputs_, batch, output_logits=output_logits, **kwargs)

    plain = losses()
    nll = (-math.log(0.25) - math.log(0.1)) / 2
    assert float(plain["loss"]) == pytest.approx(nll, rel=1e-6) and float(plain["nll"]) == pytest.approx(nll)
    assert float(plain["target_tokens"]) == 2
    smoothed = losses(label_smoothing=0.1)
    uniform = [-np.mean(np.log(p)) for p in probabilities[0][:2]]
    expected = ((0.9 * -math.log(0.25) + 0.1 * uniform[0]) + (0.9 * -math.log(0.1) + 0.1 * uniform[1])) / 2
    assert float(smoothed["loss"]) == pytest.approx(expected, rel=1e-6)
    assert float(smoothed["nll"]) == pytest.approx(nll, rel=1e-6)


def test_loss_at_real_positions_equals_the_loss_over_every_position_with_its_gradients():
    """Making the logits at the real target positions only moves the loss and every gradient by rounding alone."""
    config = NmtConfig(vocab_size=60, hidden_size=16, num_encoder_layers=1, num_decoder_layers=1,
                       num_attention_heads=2, intermediate_size=32, hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)
    model = build_nmt(TransformerNmt(config))
    rng = np.random.default_rng(5)
    lengths = np.array([6, 2, 4])
    mask = (np.arange(6)[None, :] < lengths[:, None]).astype(np.int32)
    target_ids = tf.constant(rng.integers(1, 60, (3, 6)) * mask, tf.int32)
    inputs = dict(source_ids=tf.constant(rng.integers(1, 60, (3, 5)), tf.int32),
                  target_input_ids=tf.constant(rng.integers(1, 60, (3, 6)) * mask, tf.int32))
    results = []
    for output_logits in (None, model.output_logits):
        with tf.GradientTape() as tape:
            losses = translation.translation_losses(model(inputs, training=True), dict(target_ids=target_ids), 0.1,
                                                    output_logits)
        results.append((losses, tape.gradient(losses["loss"], model.trainable_variables)))
    (every, every_gradients), (real, real_gradients) = results
    assert float(real["target_tokens"]) == float(every["target_tokens"]) == 12
    for key in ("loss", "nll"):
        np.testing.assert_allclose(float(real[key]), float(every[key]), rtol=1e-6)
    assert len(real_gradients) == len(model.trainable_variables) > 5
    for variable, a, b in zip(model.trainable_variables, every_gradients, real_gradients):
        a, b = tf.convert_to_tensor(a).numpy(), tf.convert_to_tensor(b).numpy()
        # Rounding moves an entry by a few float32 ulps of the largest terms summed into it, not of itself:
        # a fixed atol of 1e-8 failed for about one initialisation in three (3e-8 on an entry near zero of a
        # kernel whose gradients reach 5e-2). A real difference would be orders of magnitude larger.
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=max(1e-8, 1e-6 * np.abs(a).max()), err_msg=variable.name)


def test_training_raises_bleu_and_writes_results_and_translations(data, tmp_path):
    out = tmp_path / "run"
    results = translation.run(_options(data, out, num_train_steps=400, save_checkpoints_steps=200,
                                       iterations_per_loop=200, log_steps=200, learning_rate=5e-3,
                                       num_warmup_steps=30, do_eval=True, do_predict=True,
                                       test_tsv=str(data / "test.tsv")))
    dev, test = results["dev"], results["test"]
    written = _read_results(out / "eval_results.txt")
    for key in ("bleu", "chrf", "loss", "perplexity", "num_tokens", "sentences", "global_step", "epochs",
                "best_bleu", "best_step", "bleu_signature"):
        assert key in written, key
    assert float(written["perplexity"]) == pytest.approx(math.exp(float(written["loss"])), rel=1e-6)
    assert int(written["sentences"]) == 12 and dev["epochs"] == pytest.approx(dev["global_step"] * 8 / 400)
    # Translations: one line per source, in input order; the scores recomputed from them agree.
    lines = (out / "translations.test.txt").read_text(encoding="utf-8").split("\n")[:-1]
    pairs = list(ParallelText.from_tsv(str(data / "test.tsv")).python_pairs())
    assert len(lines) == len(pairs) == 10
    from nmt import metrics  # pylint: disable=import-outside-toplevel
    assert metrics.corpus_scores(lines, [t for _, t in pairs])["bleu"] == pytest.approx(test["bleu"])
    # The model has learned something (untrained: perplexity ~60, chrF ~0), and its output follows its
    # input: more translations share a word with their own reference than with the next sentence's.
    # (chrF after 400 steps depends on the seed: 5.7 to 21 over --random_seed 1, 2, 3 and the default.)
    assert dev["perplexity"] < 10 and dev["chrf"] > 4
    own = sum(bool(set(line.split()) & set(t.split())) for line, (_, t) in zip(lines, pairs))
    shifted = sum(bool(set(line.split()) & set(t.split())) for line, (_, t) in zip(lines, pairs[1:] + pairs[:1]))
    assert own > shifted
    # The best dev checkpoint is kept and scored.
    assert (out / "best" / "model.ckpt.index").exists()
    assert dev["global_step"] == dev["best_step"] in (200, 400)
    assert read_scalars(str(out / "dev"))["bleu"][0] in (200, 400)
    assert json.loads((out / "nmt_config.json").read_text())["head_size"] == 6


@pytest.mark.eager
def test_best_checkpoint_and_early_stopping(data, tmp_path, monkeypatch):
    bleus = iter([10.0, 12.0, 11.0, 11.5, 20.0])

    def fake_score(options, translator, text, num_pairs, split, step, epochs):
        return dict(bleu=next(bleus), epochs=epochs, global_step=step), "a translation\n"

    monkeypatch.setattr(translation, "score_split", fake_score)
    out = tmp_path / "early"
    options = _options(data, out, num_train_steps=10, save_checkpoints_steps=1, iterations_per_loop=1,
                       early_stopping_patience=2, do_eval=True)
    translation.run(options)
    state = early_stopping.read_state(str(out))
    # Evaluations at steps 1..4: best 12 at step 2, then two without a better BLEU: stop at step 4.
    assert state == dict(best_bleu=12.0, best_step=2, best_epochs=pytest.approx(2 * 8 / 400),
                         evaluations_since_best=2, stopped=True, last_evaluated_step=4, history=[
                             dict(global_step=step, epochs=pytest.approx(step * 8 / 400), bleu=bleu)
                             for step, bleu in ((1, 10.0), (2, 12.0), (3, 11.0), (4, 11.5))])
    assert os.path.basename(tf.train.latest_checkpoint(str(out))) == "model.ckpt-4"
    # A re-run does not train further.
    translation.run(dataclasses.replace(options, do_eval=False, early_stopping_patience=0))
    assert os.path.basename(tf.train.latest_checkpoint(str(out))) == "model.ckpt-4"


def _assert_only_the_selected_groups_stay(out, preset):
    """Between the run's checkpoints of steps 2 and 4, exactly the variables `preset` selects kept their values."""
    start = tf.train.load_checkpoint(str(out / "model.ckpt-2"))
    end = tf.train.load_checkpoint(str(out / "model.ckpt-4"))
    names = [n for n in end.get_variable_to_shape_map() if n != "global_step" and not n.endswith(("/adam_m", "/adam_v"))]
    chosen = set(PARAMETER_GROUPS.select(names, PARAMETER_GROUPS.parse_selectors(preset)))
    checked = 0
    for name in names:
        same = np.array_equal(start.get_tensor(name), end.get_tensor(name))
        assert same == (name in chosen), name
        checked += 1
    assert checked > 40
    report = json.loads((out / "parameters.json").read_text())
    assert report["flags"]["freeze"] == preset and 0 < report["trainable_share"] < 1


# (One selector more, "ffn:decoder:0", is checked the same way on the plain run of the --jit_compile test.)
@pytest.mark.parametrize("preset", PRESETS + ["attention:encoder"])
@pytest.mark.eager
def test_freezing_presets_keep_frozen_groups_bitwise(data, tmp_path, preset):
    out = tmp_path / preset.replace(",", "_").replace(":", "_")
    translation.run(_options(data, out, freeze=preset))
    _assert_only_the_selected_groups_stay(out, preset)


@pytest.mark.eager
def test_frozen_groups_saved_as_their_seed_regenerate_bit_for_bit(data, tmp_path):
    """The toolkit scheme's uniform draws regenerate from the manifest as the truncated normals did."""
    out = tmp_path / "seeded"
    trained = translation.run(_options(data, out, freeze="embeddings,attention", save_frozen="seed", do_eval=True,
                                       random_seed=5))["dev"]
    prefix = str(out / "model.ckpt-4")
    stored = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    manifest = seeded_values.read_manifest(prefix)
    config = NmtConfig.from_json_file(str(out / "nmt_config.json"))
    assert config.initializer == "marian" and manifest["random_seed"] == 5
    fresh = build_nmt(TransformerNmt(config))
    seeded_init.initialize(fresh, seed=5)
    variables = original_variables(fresh)
    kinds = set()
    for name in manifest["variables"]:
        assert name not in stored and PARAMETER_GROUPS.group_of(name)[0] in ("embeddings", "attention")
        regenerated = seeded_values.regenerate(manifest, name, prefix)  # checks the sha256 of the saved values
        entry = variables[name]
        np.testing.assert_array_equal(regenerated, entry.to_original(entry.variable.numpy()))
        kinds.add(manifest["variables"][name]["initializer"])
    assert kinds == {"uniform", "zeros", "ones"}
    assert manifest["variables"]["nmt/embeddings/word_embeddings"]["limit"] == pytest.approx((3 / 32) ** 0.5)
    again = translation.run(_options(data, out, freeze="embeddings,attention", save_frozen="seed", do_eval=True,
                                     do_train=False, random_seed=5))["dev"]
    assert again["loss"] == pytest.approx(trained["loss"], rel=1e-6)


class _Crash(Exception):
    pass


def test_presets_fill_what_the_command_line_leaves(data, tmp_path):
    options = translation.NmtOptions(output_dir=str(tmp_path), preset="transformer-big", do_train=True,
                                     train_tsv="x.tsv", learning_rate=1e-3)
    applied = apply_preset(options, translation.nmt_presets.PRESETS, {"learning_rate"})
    assert (applied.learning_rate, applied.num_warmup_steps, applied.adam_beta2, applied.optimizer) == \
        (1e-3, 8000, 0.998, "adam")
    config = translation.effective_config(applied)
    assert (config.hidden_size, config.num_attention_heads, config.intermediate_size) == (1024, 16, 4096)
    tiny = translation.effective_config(dataclasses.replace(applied, preset="transformer-tiny", head_size=64,
                                                            model_config_file=str(data / "model.json")))
    # The file's keys win over the preset's, --head_size over both; the rest is the preset's.
    assert (tiny.hidden_size, tiny.num_decoder_layers, tiny.head_size) == (32, 1, 64)
    assert tiny.hidden_dropout_prob == 0.1


@pytest.mark.parametrize("overrides, message", [
    (dict(preset="transformer-huge"), "--preset=transformer-huge is not known; expected one of transformer-base"),
    (dict(train_tsv=None), "--do_train needs --train_tsv or --train_src with --train_tgt"),
    (dict(train_src="a.txt"), "Give --train_tsv or --train_src/--train_tgt, not both"),
    (dict(train_tsv=None, train_src="a.txt"), "--train_src and --train_tgt go together"),
    (dict(do_eval=True, dev_tsv=None), "--do_eval needs --dev_tsv"),
    (dict(freeze="atention"), "did you mean attention"),
    (dict(freeze="ffn:decoder:3"), "'ffn:decoder:3' matches no variable of this model \\(the model has layers 0-0\\)"),
    (dict(label_smoothing=1.0), "--label_smoothing=1.0 must be in \\[0, 1\\)"),
    (dict(do_train=False), "At least one of `--do_train`"),
    (dict(early_stopping_patience=3), r"^--early_stopping_patience=3 needs --do_eval: early stopping watches the held-out "
                                      r"figure of each checkpoint\.$"),
])
def test_bad_input_errors(data, tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        translation.run(_options(data, tmp_path / "out", **overrides))


def test_bad_files_are_named_before_any_model(data, tmp_path):
    source, target = tmp_path / "a.src", tmp_path / "a.tgt"
    source.write_text("one\ntwo\nthree\n")
    target.write_text("eins\nzwei\n")
    with pytest.raises(ValueError, match="a.src has 3 lines but --train_tgt=.*a.tgt has 2"):
        translation.run(_options(data, tmp_path / "out", train_tsv=None, train_src=str(source),
                                 train_tgt=str(target)))
    bad = tmp_path / "bad.tsv"
    bad.write_text("hello\thallo\nno tab here\n")
    with pytest.raises(ValueError, match="--train_tsv=.*bad.tsv:2: no tab; expected source<TAB>target"):
        translation.run(_options(data, tmp_path / "out", train_tsv=str(bad)))
    config = tmp_path / "model.json"
    config.write_text('{"vocab_size": 999, "hidden_size": 16, "num_attention_heads": 2}')
    with pytest.raises(ValueError, match="vocab_size 999 does not fit the vocabulary .*spm.model \\(60 pieces\\)"):
        translation.run(_options(data, tmp_path / "out2", model_config_file=str(config)))
    assert not (tmp_path / "out").exists() or not any(p.name.endswith(".index") for p in (tmp_path / "out").iterdir())
    import sentencepiece as spm  # pylint: disable=import-outside-toplevel
    unk_first = tmp_path / "unk_first"
    spm.SentencePieceTrainer.train(input=str(data / "train.tsv"), model_prefix=str(unk_first), vocab_size=40,
                                   minloglevel=2)  # SentencePiece's defaults: <unk> 0, no pad
    with pytest.raises(ValueError, match="--spm_model=.*unk_first.model has no padding piece at id 0"):
        translation.run(_options(data, tmp_path / "out3", spm_model=str(unk_first) + ".model"))
    with pytest.raises(ValueError, match=r"^--spm_model=\S+/bad.tsv is not a SentencePiece model \("):
        translation.run(_options(data, tmp_path / "out4", spm_model=str(bad)))


@pytest.mark.eager
def test_a_resume_on_another_vocabulary_is_refused_before_one_is_learned(data, tmp_path, uninterrupted):
    out = tmp_path / "out"
    shutil.copytree(uninterrupted[0], out)
    with pytest.raises(ValueError, match=r'^--spm_model: \S+ holds checkpoints of a run trained with "sha256:[0-9a-f]+", '
                                         r'and this run has "none yet: learned from the training text"; resume with '
                                         r'the same value, or start afresh with a new --output_dir\.$'):
        translation.run(_options(data, out, spm_model=None, vocab_size=60))
    assert not (out / vocabulary_lib.MODEL_FILE).exists()
    assert tf.train.latest_checkpoint(str(out)).endswith("model.ckpt-6")


EVALUATED_RUN = dict(num_train_steps=6, save_checkpoints_steps=3, iterations_per_loop=3, do_eval=True,
                     do_predict=True)
OUTPUT_FILES = ("eval_results.txt", "test_results.txt", "translations.dev.txt", "translations.test.txt",
                "best/best_results.txt", "best/early_stopping.json")


@pytest.fixture(scope="session")
def uninterrupted(data, tmp_path_factory, eager_functions):
    """The evaluated run, straight through: its output_dir, the splits it scored (score_split's calls) in order,
    and its results. Tests copy the directory before they change anything in it. Eager, as the tests that use it
    (their subject is the bookkeeping around the steps; the trainer's compiled resume is lm/'s and the chaos
    test's)."""
    out = tmp_path_factory.mktemp("uninterrupted")
    scored, score = [], translation.score_split
    with pytest.MonkeyPatch.context() as patch, eager_functions():
        patch.setattr(translation, "score_split", lambda *args: scored.append(args[4]) or score(*args))
        results = translation.run(_options(data, out, test_tsv=str(data / "test.tsv"), **EVALUATED_RUN))
    return out, scored, results


def _crash_at(crash_step):
    def callback(step):
        if step == crash_step:
            raise _Crash()
    return callback


def _kill_once(monkeypatch, owner, name, when, after=False):
    """Makes owner.name raise _Crash (a kill: nothing after it runs) the first time `when(*args)` holds."""
    real, fired = getattr(owner, name), []

    def patched(*args, **kwargs):
        if not fired and when(*args, **kwargs):
            fired.append(True)
            if after:
                real(*args, **kwargs)
            raise _Crash()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, patched)


@pytest.mark.eager
@pytest.mark.parametrize("window", ["training", "after_the_save", "dev_evaluation", "best_checkpoint_copy"])
def test_a_kill_in_any_window_then_a_rerun_gives_the_uninterrupted_outputs(data, tmp_path, monkeypatch,
                                                                          uninterrupted, window):
    uninterrupted, out = uninterrupted[0], tmp_path / window
    options = _options(data, out, test_tsv=str(data / "test.tsv"), **EVALUATED_RUN)
    callbacks = ()
    if window == "training":  # Step 4: after the checkpoint and evaluation of step 3.
        callbacks = [_crash_at(4)]
    elif window == "after_the_save":  # model.ckpt-3 written, its dev evaluation not started.
        _kill_once(monkeypatch, early_stopping.BestCheckpoint, "__call__", lambda self, step: step == 3)
    elif window == "dev_evaluation":
        _kill_once(monkeypatch, translation, "score_split", lambda *a: a[4] == "dev" and a[5] == 3)
    else:  # The best weights copied, early_stopping.json not yet written: the two disagree.
        _kill_once(monkeypatch, translation.tf1_checkpoint, "write_tensors",
                   lambda prefix, tensors: os.sep + "best" + os.sep in prefix, after=True)
    with pytest.raises(_Crash):
        translation.run(options, callbacks=callbacks)
    assert tf.train.latest_checkpoint(str(out)).endswith("model.ckpt-3")
    monkeypatch.undo()
    translation.run(options)
    for name in OUTPUT_FILES:
        assert (out / name).read_bytes() == (uninterrupted / name).read_bytes(), name
    # The best weights, and the last checkpoint whole (weights, Adam's slots, the step), bit for bit.
    for checkpoint in ("best/model.ckpt", "model.ckpt-6"):
        a = tf.train.load_checkpoint(str(uninterrupted / checkpoint))
        b = tf.train.load_checkpoint(str(out / checkpoint))
        names = sorted(a.get_variable_to_shape_map())
        assert names == sorted(b.get_variable_to_shape_map()) and len(names) > 40
        for name in names:
            np.testing.assert_array_equal(a.get_tensor(name), b.get_tensor(name), err_msg=checkpoint + ": " + name)


def test_xla_compiled_steps_train_as_the_plain_steps(data, tmp_path):
    """--jit_compile: the weights of the plain steps up to rounding, frozen groups bit for bit.

    One pair of runs covers both: the decoder's FFN frozen, the encoders' FFNs trained beside it; the plain
    run is also the freezing check of that selector. (The trainer's compiled step without any freezing is
    compared in lm/ and modeling/'s tests.)"""
    config_file = xla_comparison.config_without_dropout(data / "model.json", tmp_path)
    freeze = "ffn:decoder:0"
    for jit_compile in (False, True):
        translation.run(_options(data, tmp_path / str(jit_compile), freeze=freeze, jit_compile=jit_compile,
                                 model_config_file=config_file))
    names = xla_comparison.variable_names(tmp_path / "True", 4)
    frozen = set(PARAMETER_GROUPS.select(names, PARAMETER_GROUPS.parse_selectors(freeze)))
    trained_ffn = set(PARAMETER_GROUPS.select(names, PARAMETER_GROUPS.parse_selectors("ffn"))) - frozen
    assert len(frozen) >= 4 and len(trained_ffn) >= 8
    assert xla_comparison.assert_trains_alike(tmp_path / "False", tmp_path / "True", 2, 4, frozen) > 20
    _assert_only_the_selected_groups_stay(tmp_path / "False", freeze)
    # The encoders' FFNs moved under XLA, as in the plain run (compared above to rounding).
    before, after = (tf.train.load_checkpoint(str(tmp_path / "True" / ("model.ckpt-%d" % step))) for step in (2, 4))
    assert all(not np.array_equal(before.get_tensor(name), after.get_tensor(name)) for name in trained_ffn)


@pytest.mark.eager
def test_final_dev_scores_reuse_the_best_evaluation_and_equal_a_fresh_decode(data, tmp_path, monkeypatch,
                                                                            uninterrupted):
    """The best checkpoint's dev translations made during training are the final ones, bit for bit."""
    run, scored, results = uninterrupted
    assert scored == ["dev", "dev", "test"]  # dev at steps 3 and 6, none after training; then the test text
    out = tmp_path / "run"
    shutil.copytree(run, out)
    reused = (out / "translations.dev.txt").read_text(encoding="utf-8")
    written = _read_results(out / "eval_results.txt")
    # Scoring the best checkpoint afresh, in a new run without training, gives the same file and figures.
    (out / "translations.dev.txt").unlink()
    calls, score = [], translation.score_split
    monkeypatch.setattr(translation, "score_split", lambda *args: calls.append(args[4]) or score(*args))
    options = _options(data, out, test_tsv=str(data / "test.tsv"), **EVALUATED_RUN)
    fresh = translation.run(dataclasses.replace(options, do_train=False, do_predict=False))["dev"]
    assert calls == ["dev"]
    assert (out / "translations.dev.txt").read_text(encoding="utf-8") == reused
    # (Without training data the fresh run counts no epochs.)
    rescored = _read_results(out / "eval_results.txt")
    assert rescored.pop("epochs") == "0.0" and written.pop("epochs") != "0.0"
    assert rescored == written
    trained = results["dev"]
    assert dict(fresh, epochs=None) == dict(trained, epochs=None) and trained["global_step"] == trained["best_step"]
