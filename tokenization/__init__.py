"""BERT tokenization: the original algorithm and a fast TensorFlow Text path.

`import tokenization` gives the API of the original `tokenization.py`
(`FullTokenizer`, `BasicTokenizer`, `WordpieceTokenizer`, `load_vocab`, ...).
`tokenization.FastFullTokenizer` is the batched, graph-compatible equivalent;
it is imported on first use so that the pure-Python tokenizer does not pull
in TensorFlow Text.
"""

from tokenization.bert_tokenization import BasicTokenizer
from tokenization.bert_tokenization import FullTokenizer
from tokenization.bert_tokenization import WordpieceTokenizer
from tokenization.bert_tokenization import _is_control
from tokenization.bert_tokenization import _is_punctuation
from tokenization.bert_tokenization import _is_whitespace
from tokenization.bert_tokenization import convert_by_vocab
from tokenization.bert_tokenization import convert_ids_to_tokens
from tokenization.bert_tokenization import convert_to_unicode
from tokenization.bert_tokenization import convert_tokens_to_ids
from tokenization.bert_tokenization import load_vocab
from tokenization.bert_tokenization import printable_text
from tokenization.bert_tokenization import validate_case_matches_checkpoint
from tokenization.bert_tokenization import whitespace_tokenize
from tokenization.cached_tokenization import CachedFullTokenizer

__all__ = [
    "BasicTokenizer",
    "CachedFullTokenizer",
    "FastFullTokenizer",
    "FullTokenizer",
    "WordpieceTokenizer",
    "convert_by_vocab",
    "convert_ids_to_tokens",
    "convert_to_unicode",
    "convert_tokens_to_ids",
    "load_vocab",
    "printable_text",
    "validate_case_matches_checkpoint",
    "whitespace_tokenize",
]


def __getattr__(name):
    # Lazy so that `import tokenization` stays cheap (PEP 562).
    if name == "FastFullTokenizer":
        from tokenization.fast_tokenization import FastFullTokenizer
        return FastFullTokenizer
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
