"""Sample data for the demo, made on the machine: a text corpus and a vocabulary.

No dataset can be downloaded here, but every Python installation carries a few
hundred kilobytes of English prose: the standard library's docstrings (PSF
licence). We turn them into a corpus in the format create_pretraining_data.py
reads (one sentence per line, a blank line between documents; one document
per module, class or function docstring), and learn a WordPiece vocabulary
from it as create_vocab.py does (tokenization/vocab_builder.py: tensorflow-text's
`bert_vocab_from_dataset`, the tool behind Model Garden's vocabularies).
"""

import importlib
import json
import inspect
import os
import pkgutil
import re
import sys
import warnings

# Modules that open windows, print on import, or carry no prose.
_SKIPPED_MODULES = {
    "antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "lib2to3",
    "ensurepip", "venv", "pydoc_data", "test", "xxlimited", "xxsubtype",
}
_MIN_DOC_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")


def _stdlib_module_names():
    stdlib = os.path.dirname(os.__file__)
    names = []
    for info in pkgutil.iter_modules():
        path = getattr(info.module_finder, "path", "")
        if info.name.startswith("_") or info.name in _SKIPPED_MODULES:
            continue
        if path.startswith(stdlib) and "site-packages" not in path:
            names.append(info.name)
    return sorted(set(names) | set(n for n in sys.builtin_module_names if not n.startswith("_")))


def _own_doc(value):
    """value's own docstring, cleaned; never one inherited from a base class, which
    other imported packages may have rewritten (the corpus would depend on them)."""
    doc = getattr(value, "__doc__", None)
    return inspect.cleandoc(doc) if isinstance(doc, str) else None


def _docstrings(module):
    """The module's docstring, then its classes', functions' and methods'."""
    yield _own_doc(module)
    for _, value in sorted(vars(module).items()):
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(value) or inspect.isfunction(value):
            yield _own_doc(value)
        if inspect.isclass(value):
            for _, method in sorted(vars(value).items()):
                if inspect.isfunction(method):
                    yield _own_doc(method)


def _prose_sentences(docstring):
    """Sentences of a docstring's prose paragraphs; code and tables are dropped."""
    sentences = []
    for paragraph in re.split(r"\n\s*\n", docstring):
        lines = paragraph.splitlines()
        # Doctests, indented code and option tables are not sentences.
        if any(l.startswith((">>>", "...", " ", "\t", "-", "=", "*", "|")) for l in lines):
            continue
        text = " ".join(l.strip() for l in lines).strip()
        if len(text) < 20 or not text[0].isalpha():
            continue
        sentences.extend(s.strip() for s in _SENTENCE_END.split(text) if len(s.strip()) > 1)
    return sentences


def build_corpus(path, max_documents=None):
    """Writes the corpus to `path`.

    Returns:
      (documents, sentences) written.
    """
    documents = []
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _stdlib_module_names():
            try:
                module = importlib.import_module(name)
            except BaseException:  # Platform-specific modules fail to import.
                continue
            for doc in _docstrings(module):
                if not doc or len(doc) < _MIN_DOC_CHARS or doc in seen:
                    continue
                seen.add(doc)
                sentences = _prose_sentences(doc)
                if len(sentences) >= 2:
                    documents.append(sentences)
    if max_documents:
        documents = documents[:max_documents]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join("\n".join(sentences) for sentences in documents) + "\n")
    return len(documents), sum(len(s) for s in documents)


def build_vocab(corpus_path, vocab_path, vocab_size=8000, do_lower_case=True):
    """Learns a WordPiece vocabulary from the corpus; special tokens first.

    [PAD], [UNK], [CLS], [SEP], [MASK] and no [unused*] slots, as the demo's
    vocabulary has always had (create_vocab.py reserves 99 by default).

    Returns:
      The number of tokens written.
    """
    from tokenization import vocab_builder  # TensorFlow loads only when a vocabulary is made.

    vocab = vocab_builder.learn_vocab([corpus_path], vocab_size, do_lower_case,
                                      vocab_builder.reserved_tokens(num_unused=0))
    vocab_builder.write_vocab(vocab, vocab_path)
    return len(vocab)


_MNLI_HEADER = [
    "index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
    "sentence1_parse", "sentence2_parse", "sentence1", "sentence2",
]


def _read_documents(corpus_path):
    with open(corpus_path, encoding="utf-8") as f:
        return [doc.splitlines() for doc in f.read().strip().split("\n\n") if doc.strip()]


def _nli_pairs(documents, rng):
    """(premise, hypothesis, label) made from the corpus.

    entailment: the hypothesis is a span of the premise; contradiction: the
    same with "not" inserted; neutral: a span of another sentence of the
    same document. Synthetic, but in MNLI's format and learnable.
    """
    pairs = []
    for sentences in documents:
        usable = [s.split() for s in sentences if len(s.split()) >= 6]
        if len(usable) < 2:
            continue
        for index, words in enumerate(usable):
            label = ("entailment", "contradiction", "neutral")[rng.randrange(3)]
            source = words if label != "neutral" else usable[(index + 1) % len(usable)]
            start = rng.randrange(0, len(source) - 3)
            span = source[start:start + rng.randint(4, 8)]
            if label == "contradiction":
                span.insert(1, "not")
            pairs.append((" ".join(words), " ".join(span), label))
    return pairs


def build_mnli_sample(corpus_path, data_dir, seed=12345, held_out_fraction=0.1):
    """Writes an MNLI-format task (train, dev and test, matched and mismatched).

    Returns:
      {file name: rows written}.
    """
    import random

    rng = random.Random(seed)
    documents = _read_documents(corpus_path)
    held_out = max(2, int(len(documents) * held_out_fraction))
    splits = {
        "train": _nli_pairs(documents[:-held_out], rng),
        "dev_matched": None, "dev_mismatched": None, "test_matched": None, "test_mismatched": None,
    }
    evaluation = _nli_pairs(documents[-held_out:], rng)
    quarter = len(evaluation) // 4
    for i, name in enumerate(("dev_matched", "dev_mismatched", "test_matched", "test_mismatched")):
        splits[name] = evaluation[i * quarter:(i + 1) * quarter]
    os.makedirs(data_dir, exist_ok=True)
    counts = {}
    for name, pairs in splits.items():
        labelled = not name.startswith("test")
        header = _MNLI_HEADER + (["label1", "gold_label"] if labelled else [])
        lines = ["\t".join(header)]
        for index, (premise, hypothesis, label) in enumerate(pairs):
            # Tabs would break the TSV; the corpus has none, but be sure.
            premise, hypothesis = premise.replace("\t", " "), hypothesis.replace("\t", " ")
            row = [str(index), str(index), "%de" % index, "docstrings", "", "", "", "", premise, hypothesis]
            lines.append("\t".join(row + ([label, label] if labelled else [])))
        with open(os.path.join(data_dir, name + ".tsv"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        counts[name + ".tsv"] = len(pairs)
    return counts


def _squad_articles(documents, rng, prefix, other_documents):
    """SQuAD 2.0 articles: cloze questions, half of them unanswerable.

    Answerable: a sentence of the context with one word (seen once in the
    context) replaced by "what"; the answer is that word. Unanswerable: the
    same made from a sentence of another document.
    """
    articles = []
    for number, sentences in enumerate(documents):
        context = " ".join(sentences[:6])
        if len(context.split()) < 12:
            continue
        words = context.split()
        counts = {w: words.count(w) for w in words}
        qas = []
        for q, sentence in enumerate(sentences[:6]):
            candidates = [w for w in sentence.split() if counts.get(w) == 1 and w.isalpha() and len(w) > 3]
            if not candidates:
                continue
            answer = rng.choice(candidates)
            question = " ".join("what" if w == answer else w for w in sentence.split())
            qas.append({"id": "%s-%d-%d" % (prefix, number, q), "question": question,
                        "answers": [{"text": answer, "answer_start": context.index(" %s " % answer) + 1
                                     if (" %s " % answer) in context else context.index(answer)}],
                        "is_impossible": False})
            other = rng.choice(other_documents)
            other_words = rng.choice(other).split()
            if len(other_words) >= 4:
                other_words[rng.randrange(len(other_words))] = "what"
                qas.append({"id": "%s-%d-%d-none" % (prefix, number, q), "question": " ".join(other_words),
                            "answers": [], "is_impossible": True})
        if qas:
            articles.append({"title": "%s-%d" % (prefix, number),
                             "paragraphs": [{"context": context, "qas": qas}]})
    return articles


def build_squad_sample(corpus_path, data_dir, seed=12345, held_out_fraction=0.1):
    """Writes train-v2.0.json and dev-v2.0.json in the SQuAD 2.0 format.

    Returns:
      {file name: questions written}.
    """
    import random

    rng = random.Random(seed)
    documents = _read_documents(corpus_path)
    held_out = max(2, int(len(documents) * held_out_fraction))
    os.makedirs(data_dir, exist_ok=True)
    counts = {}
    for name, part in (("train-v2.0.json", documents[:-held_out]), ("dev-v2.0.json", documents[-held_out:])):
        articles = _squad_articles(part, rng, name.split("-")[0], documents)
        # Keep only answers whose offset really points at the answer text.
        for article in articles:
            for paragraph in article["paragraphs"]:
                context = paragraph["context"]
                paragraph["qas"] = [
                    qa for qa in paragraph["qas"]
                    if qa["is_impossible"] or context[qa["answers"][0]["answer_start"]:].startswith(qa["answers"][0]["text"])
                ]
        with open(os.path.join(data_dir, name), "w", encoding="utf-8") as f:
            json.dump({"version": "v2.0", "data": articles}, f)
        counts[name] = sum(len(p["qas"]) for a in articles for p in a["paragraphs"])
    return counts


def _squad_v1(source, target):
    """The SQuAD 2.0 file `source` without its unanswerable questions, as v1.1 at `target`."""
    with open(source, encoding="utf-8") as f:
        data = json.load(f)["data"]
    for article in data:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [qa for qa in paragraph["qas"] if not qa.get("is_impossible")]
            for qa in paragraph["qas"]:
                qa.pop("is_impossible", None)
    with open(target + ".incomplete", "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": data}, f)
    os.replace(target + ".incomplete", target)


def write_squad_v1(squad_dir):
    """train-v1.1.json and dev-v1.1.json beside the sample's 2.0 files (once)."""
    for split in ("train", "dev"):
        target = os.path.join(squad_dir, "%s-v1.1.json" % split)
        if not os.path.exists(target):
            _squad_v1(os.path.join(squad_dir, "%s-v2.0.json" % split), target)


# Words per probe passage: from a few tokens to about 128 WordPieces.
PROBE_WORD_COUNTS = (3, 5, 8, 11, 14, 17, 20, 24, 28, 34, 40, 50, 60, 75, 90)


def probe_passages(corpus_path, word_counts=PROBE_WORD_COUNTS, per_length=2):
    """Passages of running corpus text, `per_length` of each length in words, for the head-rank probe.

    Each starts at a sentence, at evenly spread places of the corpus, and takes
    the words that follow (across sentence and document ends) up to its length.

    Returns:
      A list of str, shortest first.
    """
    sentences = [sentence for document in _read_documents(corpus_path) for sentence in document]
    words = " ".join(sentences).split()
    starts, position = [], 0
    for sentence in sentences:
        starts.append(position)
        position += len(sentence.split())
    usable = [start for start in starts if start + max(word_counts) <= len(words)]
    if not usable:
        raise ValueError("%s has fewer than %d words: too short for the probe passages."
                         % (corpus_path, max(word_counts)))
    needed = len(word_counts) * per_length
    step = max(1, len(usable) // needed)
    passages = []
    for index, count in enumerate(count for count in word_counts for _ in range(per_length)):
        start = usable[(index * step) % len(usable)]
        passages.append(" ".join(words[start:start + count]))
    return passages


def build_demo_data(data_dir):
    """The corpus, the MNLI-format task and the SQuAD 2.0 and 1.1-format sets in data_dir (made once).

    Returns:
      {"corpus": corpus file, "mnli": MNLI data_dir, "squad": directory of the SQuAD files}.
    """
    paths = {"corpus": os.path.join(data_dir, "corpus.txt"), "mnli": os.path.join(data_dir, "MNLI"),
             "squad": os.path.join(data_dir, "squad")}
    if not os.path.exists(os.path.join(paths["squad"], "dev-v2.0.json")):
        os.makedirs(data_dir, exist_ok=True)
        print("Making sample data from the standard library's docstrings ...", flush=True)
        documents, sentences = build_corpus(paths["corpus"])
        print("  %d documents, %d sentences: %s" % (documents, sentences, paths["corpus"]))
        print("  MNLI format: %s" % build_mnli_sample(paths["corpus"], paths["mnli"]))
        print("  SQuAD 2.0 format: %s" % build_squad_sample(paths["corpus"], paths["squad"]))
    write_squad_v1(paths["squad"])
    return paths
