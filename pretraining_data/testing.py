"""Small deterministic corpora and vocabs for the tests of pretraining_data.

The vocab holds every lower-case letter alone and as a "##" piece, so any
ASCII word tokenizes without [UNK], a few hundred whole words, and common
suffix pieces: the made-up long words of the corpus split into several
pieces, which whole-word masking needs.
"""

import random

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_COMMON = ("the of and to a in is that for it as was with be by on not he this are or his "
           "from at which but have an they you were her she there one all we their has been "
           "if more when will would who so no can its also into out time only new some could "
           "these two may first then do any like other my than our up about what over such").split()
_ROOTS = "form struct port act nation develop govern measure compute record print connect".split()
_SUFFIXES = ["ing", "ed", "s", "er", "ation", "able", "ment", "ly"]


def vocab_tokens():
    """The test vocab, list of str in file order."""
    pieces = ["##" + suffix for suffix in _SUFFIXES]
    # Each token once ("a" is a letter and a word, "##s" a letter piece and a suffix): a vocab.txt
    # with a repeated token is named in a warning, and the tokenizer keeps its last id.
    return list(dict.fromkeys(SPECIAL_TOKENS + [".", ","] + list(_LETTERS) + ["##" + c for c in _LETTERS]
                              + _COMMON + _ROOTS + pieces))


def write_vocab(path):
    """Writes the test vocab to `path` (str); returns path."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(vocab_tokens()) + "\n")
    return path


def _word(rng):
    roll = rng.random()
    if roll < 0.7:
        return rng.choice(_COMMON)
    if roll < 0.9:
        return rng.choice(_ROOTS) + rng.choice(_SUFFIXES)
    # A made-up word: the letters become "##" pieces.
    return "".join(rng.choice(_LETTERS) for _ in range(rng.randint(3, 7)))


def make_documents(num_documents, seed, min_sentences=1, max_sentences=12):
    """Deterministic documents: lists of sentences (str), e.g. "The nation ... ."

    Args:
      num_documents: int.
      seed: int.
      min_sentences, max_sentences: int, the range of sentences per document.

    Returns:
      list of lists of str.
    """
    rng = random.Random(seed)
    documents = []
    for _ in range(num_documents):
        document = []
        for _ in range(rng.randint(min_sentences, max_sentences)):
            words = [_word(rng) for _ in range(rng.randint(3, 18))]
            document.append(" ".join(words).capitalize() + ".")
        documents.append(document)
    return documents


def write_corpus(path, documents):
    """Writes documents in the input format (a blank line after each); returns path."""
    with open(path, "w", encoding="utf-8") as f:
        for document in documents:
            f.write("\n".join(document) + "\n\n")
    return path
