"""Tiny BERT checkpoints with frozen random groups saved as their seed, and their exports, for tests.

A two-layer BERT of hidden 32 (head_size 12) whose feed-forward layers (or
other groups) hold their seeded random values, as --freeze=ffn --reinit=ffn
leaves them, is checkpointed with --save_frozen=seed's manifest, once per model kind:
encoder, classifier (3 labels, MNLI's) and squad.
"""

import json

import tensorflow as tf

import modeling
from checkpoints import original_names, seeded_init
from freezing import seeded_values
from modeling import export_model
from modeling.export_model import ExportModelOptions
from modeling.parameter_groups import BERT_PARAMETER_GROUPS

WORDS = ["the", "cat", "dog", "sat", "on", "a", "mat", "where", "is", "gold", ",", "."]
SEED = 12345
KINDS = ("encoder", "classifier", "squad")


TINY_CONFIG = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, head_size=12, intermediate_size=64,
                   max_position_embeddings=64, type_vocab_size=2)


def write_checkpoints(root, kinds=KINDS, seed=SEED, groups=("ffn",), config=None, words=WORDS):
    """Writes root/vocab.txt, root/bert_config.json and root/<kind>/model.ckpt-3 (+ .frozen.json) of each kind,
    the parameter groups `groups` (of every layer) drawn from `seed`.

    config: the BERT config's sizes without vocab_size (default TINY_CONFIG); words: the vocabulary after the
    five special tokens.

    Returns:
      ({kind: checkpoint prefix}, [the frozen weights' original names]).
    """
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list(words)
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    config = dict(config or TINY_CONFIG, vocab_size=len(vocab))
    (root / "bert_config.json").write_text(json.dumps(config))
    prefixes = {}
    task_models = dict(encoder=modeling.BertModel, classifier=lambda c: modeling.BertClassifierModel(c, 3),
                       squad=modeling.BertSquadModel)
    for kind in kinds:
        tf.keras.utils.set_random_seed(7)
        model = modeling.build_model(task_models[kind](modeling.BertConfig.from_dict(config)))
        variables = original_names.original_variables(model)
        frozen = [name for name in variables if BERT_PARAMETER_GROUPS.group_of(name)[0] in groups]
        seeded_init.initialize(model, seed, frozen)  # the frozen groups' values: their seed draws them
        prefix = str(root / kind / "model.ckpt-3")
        modeling.save_checkpoint(model, prefix, omit=frozen)
        seeded_values.write_manifest(prefix, seeded_values.manifest(variables, frozen, seed, model.initializer_of,
                                                                      BERT_PARAMETER_GROUPS.label))
        prefixes[kind] = prefix
    return prefixes, frozen


def export(root, prefix, kind, save_frozen, **values):
    """export_model.py's run on a checkpoint of write_checkpoints(root); returns the version's path.

    The export goes to root/exports/<kind>-<save_frozen> unless `values` names an export_dir; `values`
    overrides any flag.
    """
    options = dict(bert_config_file=str(root / "bert_config.json"), vocab_file=str(root / "vocab.txt"),
                   export_dir=str(root / "exports" / ("%s-%s" % (kind, save_frozen))), max_seq_length=16,
                   export_type=kind, init_checkpoint=prefix, save_frozen=save_frozen, max_query_length=5,
                   doc_stride=4)
    if kind == "classifier":
        options["task_name"] = "mnli"
    options.update(values)
    return export_model.run(ExportModelOptions(**options))
