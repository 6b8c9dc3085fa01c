"""convert_checkpoint.py: read one format, check it through our model, write another.

  --input_format=huggingface   a HF BERT directory (config.json, model.safetensors
                               or pytorch_model.bin, vocab.txt)
  --input_format=model_garden  a Model Garden TF2 encoder checkpoint (+ bert_config.json, vocab.txt)
  --input_format=original      our layout: bert_model.ckpt, bert_config.json, vocab.txt
  --output_format=original     (default) our layout in --output_dir
  --output_format=huggingface  config.json, model.safetensors, vocab.txt, tokenizer_config.json

Every input becomes `ConvertedCheckpoint` (original names), fills a
`BertPretrainingModel`, which checks every shape against the config, and the
writer saves what the model holds: the optional groups (pooler, cls heads)
the input lacks are left out and logged.
"""

import collections
import dataclasses
from typing import Optional

import tensorflow as tf
from absl import logging

from modeling.checkpoint_conversion import hf_format, model_garden, original_format
from modeling.checkpoint_conversion.converted_checkpoint import load_into_model
from modeling.checkpoint_conversion.errors import ConversionError
from options import Options, option

READERS = {
    "huggingface": lambda o: hf_format.read_huggingface(o.input),
    "model_garden": lambda o: model_garden.read_model_garden(o.input, o.bert_config_file, o.vocab_file),
    "original": lambda o: original_format.read_original(o.input, o.bert_config_file, o.vocab_file),
}
OUTPUT_FILES = {"original": original_format.OUTPUT_FILES, "huggingface": hf_format.OUTPUT_FILES}


@dataclasses.dataclass(kw_only=True)
class ConvertCheckpointOptions(Options):
    """The convert_checkpoint.py flags.

    None is marked `new`: the program has no original counterpart, so --help
    lists them all.
    """

    input_format: str = option(help="Format of --input: huggingface (a HF BERT directory), model_garden (a Model "
                               "Garden TF2 encoder checkpoint) or original (our layout).",
                               choices=tuple(READERS))
    input: str = option(help="The checkpoint to convert: a HF directory (or its weights file); a checkpoint "
                        "prefix or directory for model_garden and original.")
    output_dir: str = option(help="Directory to write the converted files to; they must not exist yet.",
                             path="output_dir")
    output_format: str = option("original", "original: bert_model.ckpt, bert_config.json, vocab.txt. "
                                "huggingface: config.json, model.safetensors, vocab.txt, tokenizer_config.json.",
                                choices=tuple(OUTPUT_FILES))
    bert_config_file: Optional[str] = option(None, "model_garden and original input: the BERT config. "
                                             "Default: bert_config.json beside --input.", path="file")
    vocab_file: Optional[str] = option(None, "model_garden and original input: the vocabulary. "
                                       "Default: vocab.txt beside --input.", path="file")
    do_lower_case: bool = option(True, "huggingface output: the casing written to tokenizer_config.json "
                                 "(True for uncased models, False for cased).")

    def validate(self):
        if self.input_format == self.output_format:
            raise ValueError("--input_format=%s and --output_format=%s: nothing to convert."
                             % (self.input_format, self.output_format))
        if self.input_format == "huggingface":
            for flag in ("bert_config_file", "vocab_file"):
                if getattr(self, flag):
                    raise ValueError("--%s is for model_garden and original input; a Hugging Face directory has "
                                     "its own config.json and vocab.txt." % flag)
        super().validate()  # After the flags' combinations: a path that does not matter is not checked first.


class Conversion(collections.namedtuple("Conversion", ["config", "absent", "paths"])):
    """What `run` did.

    Fields:
      config: the `BertConfig` converted.
      absent: original names of the optional groups the input lacked (not written).
      paths: the files written.
    """


def run(options):
    """Converts --input to --output_format in --output_dir.

    Returns:
      A `Conversion`.

    Raises:
      ValueError (`ConversionError` for the input): naming the flag, file,
        variable or config key, and what was expected.
    """
    options.validate()
    existing = [f for f in OUTPUT_FILES[options.output_format] if tf.io.gfile.exists(_join(options.output_dir, f))]
    if existing:
        raise ValueError("--output_dir=%s already holds %s; give a directory without them."
                         % (options.output_dir, ", ".join(existing)))
    checkpoint = READERS[options.input_format](options)
    check_vocabulary(checkpoint)
    model, absent = load_into_model(checkpoint)
    if options.output_format == "huggingface":
        paths = hf_format.write_huggingface(model, absent, checkpoint.config, checkpoint.vocab_file,
                                            options.output_dir, options.do_lower_case)
    else:
        paths = original_format.write_original(model, absent, checkpoint.config, checkpoint.vocab_file,
                                               options.output_dir)
    logging.info("Converted %s (%s) to %s in %s.", options.input, options.input_format, options.output_format,
                  options.output_dir)
    return Conversion(checkpoint.config, absent, paths)


REQUIRED_TOKENS = ("[CLS]", "[SEP]", "[UNK]")


def check_vocabulary(checkpoint):
    """A BERT WordPiece vocabulary whose ids index the embedding table: [CLS], [SEP] and [UNK] in it, and no
    more tokens than vocab_size.

    Raises:
      ConversionError: naming the vocabulary and the config.
    """
    with tf.io.gfile.GFile(checkpoint.vocab_file) as f:
        entries = [line.strip() for line in f if line.strip()]
    tokens = len(entries)
    lacking = [token for token in REQUIRED_TOKENS if token not in set(entries)]
    if lacking:
        raise ConversionError("%s lacks %s: not a BERT WordPiece vocabulary (every input starts with [CLS] and "
                              "ends with [SEP]); give the model's vocab.txt." % (checkpoint.vocab_file,
                                                                                 ", ".join(lacking)))
    if tokens > checkpoint.config.vocab_size:
        raise ConversionError("%s has %d tokens, more than `vocab_size` = %d in %s: expected at most that many."
                              % (checkpoint.vocab_file, tokens, checkpoint.config.vocab_size,
                                 checkpoint.config_source))
    if tokens < checkpoint.config.vocab_size:
        logging.info("%s has %d tokens for %d embedding rows (the rest are never looked up).",
                     checkpoint.vocab_file, tokens, checkpoint.config.vocab_size)


def _join(directory, name):
    return directory.rstrip("/") + "/" + name
