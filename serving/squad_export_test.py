"""The SQuAD signature answers as run_squad.py's predictions.json does."""

import dataclasses
import json
import random

import pytest
import tensorflow as tf

import modeling
import squad_data
import tokenization
from modeling import squad
from modeling.squad import SquadOptions
from serving.squad_export import SquadServer
from serving.text_inputs import TextInputs

WORDS = "the cat sat on a mat in paris and london during 1850 while big red dogs ran far away from home".split()
# Case, accents, punctuation glued to words, an unknown word, a word with a control character.
ODD_WORDS = ["Paris", "Café", "(1850).", "cats,", "zebra", "Dogs.", "ma\x01t"]
SEPARATORS = [" ", "  ", "\n", " \t", "\u202f"]
SEQ, STRIDE, QUERY, N_BEST, ANSWER = 32, 7, 8, 5, 6


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """(vocab file, SQuAD 2.0 JSON file, questions, contexts) of random text, several windows each."""
    root = tmp_path_factory.mktemp("squad_export")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + ["##s", ",", ".", "(", ")", "what", "who"]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    rng = random.Random(1)

    def sentence():
        return " ".join(rng.choice(WORDS + ODD_WORDS) for _ in range(rng.randint(3, 12)))

    articles, questions, contexts = [], [], []
    for number in range(14):
        context = rng.choice(SEPARATORS).join(sentence() for _ in range(rng.randint(1, 6)))
        qas = []
        for q in range(3):
            question = rng.choice(["what", "who"]) + " " + sentence()
            qas.append({"id": "q%d_%d" % (number, q), "question": question, "answers": [], "is_impossible": True})
            questions.append(question)
            contexts.append(context)
        articles.append({"title": str(number), "paragraphs": [{"context": context, "qas": qas}]})
    (root / "dev.json").write_text(json.dumps({"version": "v2.0", "data": articles}))
    return root, questions, contexts


@pytest.fixture(scope="module")
def model(data):
    root, _, _ = data
    tf.keras.utils.set_random_seed(3)
    config = modeling.BertConfig(vocab_size=len((root / "vocab.txt").read_text().split()), hidden_size=16,
                                 num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                                 max_position_embeddings=64)
    return modeling.build_model(modeling.BertSquadModel(config))


def _run_squad_predictions(root, model, version_2, threshold):
    """squad_data's path, as run_squad.py's predict: features, logits in batches of 8, post-processing."""
    tokenizer = tokenization.FullTokenizer(str(root / "vocab.txt"), True)
    read = squad_data.read_squad_examples(str(root / "dev.json"), False, True)
    features = squad_data.convert_examples_to_features(read.examples, tokenizer, SEQ, STRIDE, QUERY, False)
    results = []
    for batch in squad_data.features_to_dataset(features, 8):
        out = model(dict(input_ids=batch["input_ids"], input_mask=batch["input_mask"],
                         token_type_ids=batch["segment_ids"]), training=False)
        results.extend(squad_data.results_from_batch(batch["unique_ids"], out["start_logits"], out["end_logits"]))
    return squad_data.postprocess_predictions(read.examples, features, results, N_BEST, ANSWER, True, version_2,
                                              threshold)


@pytest.mark.parametrize("version_2, threshold", [(False, 0.0), (True, 0.0), (True, 1.5), (True, -1.5)])
def test_answers_equal_run_squad_postprocessing(data, model, version_2, threshold):
    root, questions, contexts = data
    expected = _run_squad_predictions(root, model, version_2, threshold)
    server = SquadServer(model, TextInputs(str(root / "vocab.txt"), True, SEQ), STRIDE, QUERY, N_BEST, ANSWER,
                         version_2, threshold)
    got = server.serving_default(tf.constant(questions), tf.constant(contexts))
    answers = [a.decode("utf-8") for a in got["answer"].numpy()]
    assert answers == list(expected.predictions.values())
    if threshold == 0:  # the data reach multi-word answers
        assert any(" " in a for a in answers)
    if version_2:
        assert got["is_impossible"].numpy().tolist() == [a == "" for a in answers]
    # start_char/end_char locate the answer in the context (whitespace runs read as one space).
    for answer, context, begin, end in zip(answers, contexts, got["start_char"].numpy(), got["end_char"].numpy()):
        if answer in ("", "empty"):
            assert begin == end == -1
        else:
            assert " ".join(context[begin:end].split()) == answer


def test_unknown_and_changed_words_fall_back_to_whole_words(data, model):
    """get_final_text's fallbacks: [UNK] pieces, and words whose normalisation changes their length."""
    root, _, _ = data
    server = SquadServer(model, TextInputs(str(root / "vocab.txt"), True, SEQ), STRIDE, QUERY, N_BEST, ANSWER,
                         False, 0.0)
    doc = server._doc_pieces(tf.constant(["(1850). zebra,  ma\x01t"]))  # pylint: disable=protected-access
    vocab = (root / "vocab.txt").read_text().split()
    assert [vocab[i] for i in doc["ids"].to_list()[0]] == ["(", "1850", ")", ".", "[UNK]", ",", "mat"]
    first, last = tf.constant([1], tf.int64), tf.constant([1], tf.int64)  # "1850" inside "(1850)."
    text, begin, end = server._span_text(tf.constant(["(1850). zebra,  ma\x01t"]), doc, first, last)  # pylint: disable=protected-access
    assert (text.numpy()[0], int(begin[0]), int(end[0])) == (b"1850", 1, 5)
    unknown = 4  # "zebra" is [UNK]: the whole word, comma included
    text, _, _ = server._span_text(tf.constant(["(1850). zebra,  ma\x01t"]), doc, tf.constant([unknown], tf.int64),  # pylint: disable=protected-access
                                   tf.constant([unknown], tf.int64))
    assert text.numpy()[0] == b"zebra,"
    last_piece = 6  # "ma\x01t" loses its control character: whole word
    text, _, _ = server._span_text(tf.constant(["(1850). zebra,  ma\x01t"]), doc, tf.constant([last_piece], tf.int64),  # pylint: disable=protected-access
                                   tf.constant([last_piece], tf.int64))
    assert text.numpy()[0] == "ma\x01t".encode()


def test_run_squad_export_dir_answers_as_its_predictions_json(data, tmp_path):
    root, _, _ = data
    vocab = (root / "vocab.txt").read_text().split()
    config = dict(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, head_size=8,
                  intermediate_size=32, max_position_embeddings=64)
    (tmp_path / "bert_config.json").write_text(json.dumps(config))
    options = SquadOptions(
        bert_config_file=str(tmp_path / "bert_config.json"), vocab_file=str(root / "vocab.txt"),
        output_dir=str(tmp_path / "out"), train_file=str(root / "dev.json"), predict_file=str(root / "dev.json"),
        do_train=False, do_predict=True, export_dir=str(tmp_path / "export"), max_seq_length=SEQ,
        doc_stride=STRIDE, max_query_length=QUERY, n_best_size=N_BEST, max_answer_length=ANSWER,
        version_2_with_negative=True)
    # No training: predict and export the seeded initial model, saved as a checkpoint first.
    prefix = str(tmp_path / "init" / "bert_model.ckpt")
    tf.keras.utils.set_random_seed(5)
    modeling.save_checkpoint(modeling.build_model(modeling.BertSquadModel(modeling.BertConfig(**config))), prefix)
    outcome = squad.run(dataclasses.replace(options, init_checkpoint=prefix))
    assert outcome["export"] == str(tmp_path / "export" / "1")
    predictions = json.loads((tmp_path / "out" / "predictions.json").read_text())
    dev = json.loads((root / "dev.json").read_text())
    qas = [(qa["id"], qa["question"], p["context"]) for a in dev["data"] for p in a["paragraphs"] for qa in p["qas"]]
    serve = tf.saved_model.load(outcome["export"]).signatures["serving_default"]
    got = serve(question=tf.constant([q for _, q, _ in qas]), context=tf.constant([c for _, _, c in qas]))
    assert [a.decode("utf-8") for a in got["answer"].numpy()] == [predictions[qid] for qid, _, _ in qas]
