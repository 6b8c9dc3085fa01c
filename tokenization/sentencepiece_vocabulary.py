"""The sub-word vocabulary: a SentencePiece model, given (`--vocab_file`) or learned from the training text.

A learned model (unigram, `--vocab_size` pieces, ids pad 0, unk 1, bos 2, eos 3)
is saved as `output_dir/spm.model` (and `spm.vocab`, one piece and score per
line); a re-run of the same output_dir uses it again, so a resumed run keeps
its vocabulary. Learning reads the first `max_sentences` non-empty lines of the
training files, in file order (LM1B's files are shuffled already).
"""

import dataclasses
import hashlib
import io
import os

import sentencepiece as spm
import tensorflow as tf
from absl import logging

import file_system
import outputs

MODEL_FILE = "spm.model"
VOCAB_LIST_FILE = "spm.vocab"
DEFAULT_MAX_SENTENCES = 1000000


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    """A SentencePiece model: its serialized proto, size and special ids (bos falls back to eos)."""

    model_proto: bytes
    size: int
    bos_id: int
    eos_id: int
    path: str

    @classmethod
    def from_proto(cls, proto, path, flag=None):
        """The vocabulary of a serialized model read from `path` (through `flag`, named in errors, if given)."""
        where = "%s=%s" % (flag, path) if flag else path
        processor = spm.SentencePieceProcessor()
        try:
            processor.LoadFromSerializedProto(proto)
        except (RuntimeError, OSError) as error:
            raise ValueError("%s is not a SentencePiece model (%s)." % (where, str(error).strip())) from None
        eos = processor.eos_id()
        if eos < 0:
            raise ValueError("%s has no end-of-sentence piece (eos_id); the model needs one to end "
                             "each sentence." % where)
        bos = processor.bos_id() if processor.bos_id() >= 0 else eos
        return cls(proto, processor.GetPieceSize(), bos, eos, path)

    @property
    def content_hash(self):
        """"sha256:<hex>" of the model's bytes: what a run records of its vocabulary."""
        return "sha256:" + hashlib.sha256(self.model_proto).hexdigest()

    def processor(self):
        processor = spm.SentencePieceProcessor()
        processor.LoadFromSerializedProto(self.model_proto)
        return processor


def load(path, flag="--vocab_file"):
    """Reads a SentencePiece model file, given by `flag` (None: one the run wrote).

    Raises:
      ValueError: naming the flag and file when it is missing or not a model.
    """
    if not tf.io.gfile.exists(path):
        raise ValueError("%s does not exist." % ("%s=%s" % (flag, path) if flag else path))
    with tf.io.gfile.GFile(path, "rb") as f:
        return Vocabulary.from_proto(f.read(), path, flag)


def learn(lines, vocab_size, output_dir):
    """Learns a unigram SentencePiece model of `vocab_size` pieces; saves and returns it.

    Raises:
      ValueError: naming --vocab_size when the text is too small for it.
    """
    model = io.BytesIO()
    logging.info("Learning a %d-piece SentencePiece vocabulary from %d sentences...", vocab_size, len(lines))
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=model, vocab_size=vocab_size, model_type="unigram",
            pad_id=0, unk_id=1, bos_id=2, eos_id=3, input_sentence_size=0, shuffle_input_sentence=False,
            num_threads=1, minloglevel=2)
    except RuntimeError as error:
        message = str(error).strip().splitlines()[-1]
        message = message.split("] ", 1)[-1]  # SentencePiece's source location, dropped
        raise ValueError("--vocab_size=%d cannot be learned from the training text: %s"
                         % (vocab_size, message)) from None
    tf.io.gfile.makedirs(output_dir)
    path = os.path.join(output_dir, MODEL_FILE)
    with outputs.writing(path) as temporary, tf.io.gfile.GFile(temporary, "wb") as f:
        f.write(model.getvalue())
    vocabulary = Vocabulary.from_proto(model.getvalue(), path)
    processor = vocabulary.processor()
    outputs.write_text(os.path.join(output_dir, VOCAB_LIST_FILE), "".join(
        "%s\t%g\n" % (processor.IdToPiece(i), processor.GetScore(i)) for i in range(vocabulary.size)))
    logging.info("Saved the vocabulary: %s", path)
    return vocabulary


def get(vocab_file, vocab_size, train_source, output_dir, max_sentences=DEFAULT_MAX_SENTENCES,
        flag="--vocab_file"):
    """The run's vocabulary: `vocab_file` (given by `flag`), else output_dir's learned one, else learned now.

    Args:
      train_source: the training lines (lm.dataset.TextFiles or
        lm.tfds_source.TfdsSplit), to learn from; None without training.

    Raises:
      ValueError: when there is no vocabulary and nothing to learn one from.
    """
    if vocab_file:
        return load(vocab_file, flag)
    saved = os.path.join(output_dir, MODEL_FILE)
    if tf.io.gfile.exists(saved):
        vocabulary = load(saved, None)
        if vocabulary.size != vocab_size:
            raise ValueError("%s holds %d pieces but --vocab_size=%d; use a new --output_dir to learn "
                             "another vocabulary." % (saved, vocabulary.size, vocab_size))
        logging.info("Using the vocabulary learned earlier: %s", saved)
        return vocabulary
    if train_source is None:
        raise ValueError("No vocabulary: give %s, or train in this --output_dir first "
                         "(training learns one, %s)." % (flag, MODEL_FILE))
    return learn(train_source.sample_lines(max_sentences), vocab_size, output_dir)


LEARNED = "none yet: learned from the training text"


def identity(vocab_file, output_dir):
    """The content hash of the vocabulary `get` would use, read before anything is learned or built:
    --vocab_file's, else output_dir's learned one; LEARNED when `get` would learn one now."""
    path = vocab_file or os.path.join(output_dir, MODEL_FILE)
    if not vocab_file and not tf.io.gfile.exists(path):
        return LEARNED
    return file_system.content_hash(path)


def fit_vocabulary(config, vocabulary):
    """The config with the vocabulary's size; ValueError when the config says another one."""
    if config.vocab_size is None:
        return config.replace(vocab_size=vocabulary.size)
    if config.vocab_size != vocabulary.size:
        raise ValueError("The config's vocab_size %d does not fit the vocabulary %s (%d pieces)."
                         % (config.vocab_size, vocabulary.path, vocabulary.size))
    return config
