"""A synthetic translation task: a made-up language pair, the same files for the same seed.

For end-to-end runs in minutes on a CPU: the task is a deterministic function
of the source sentence, small enough for a tiny Transformer to learn in a few
thousand steps, and needs attention (reordering, agreement over a distance),
so a model that copies or translates word by word in place scores low.

The lexicon (drawn from the seed): 120 nouns, 40 adjectives, 40 transitive
and 20 intransitive verbs, 12 adverbs, 6 postpositions and 4 determiners.
Source words are 2-3 syllables of the letters p t k m n s l / a i u; target
stems are 1-2 syllables of b d g v r z f / e o y ending in b, d, f or v, so
no word (or letter) is shared and no suffixed form equals another word.

Source grammar (verb last, modifiers before their head):

  sentence  := [ADV] NP [NP POSTP] [NP] VERB [PAST]    object NP iff VERB is transitive
  NP        := [DET] ADJ{0,2} NOUN [PL]

where PL ("plural") and PAST are particles. Source sentences have 4 to 15 words.

Target grammar (subject, verb, object, place, adverb; adjectives after the noun):

  sentence  := NP' VERB' [NP'] [PREP NP'] [ADV']
  NP'       := [DET'] NOUN' ADJ'{0,2}               adjectives in reverse order

Rules:
  - Dictionary: every source word has one fixed translation; about a sixth of the
    nouns and of the verbs translate to two words (noun + fixed second word,
    verb + fixed particle). PL and PAST have no word of their own: they
    become suffixes (many-to-one).
  - Agreement: each target noun has a gender, I or II (drawn with the
    lexicon, not visible in the source). Plural nouns end in -yr. Determiners
    and adjectives take I -o / -or, II -e / -er (singular / plural) from their
    noun. Verbs take present -ez / -ezy, past -og / -ogy (singular / plural
    subject), so the verb right after the subject in the target needs PAST
    from the end of the source sentence and PL from the subject.
  - Order: the place phrase (source NP POSTP, between subject and object)
    becomes PREP NP' after the object; the adverb moves from the start to the end.

Files: `train.tsv`, `dev.tsv`, `test.tsv`, `source<TAB>target` per line.
Test and dev sentences are distinct and never occur (as sources) in train;
train may repeat a sentence. Each split has its own random stream, so
changing one split's size leaves the others as they were.
"""

import collections
import os
import random

import tensorflow as tf

import outputs

Task = collections.namedtuple("Task", ["train", "dev", "test"])
Word = collections.namedtuple("Word", ["source", "target", "gender"])  # target: tuple of stems

SOURCE_CONSONANTS, SOURCE_VOWELS = "ptkmnsl", "aiu"
TARGET_CONSONANTS, TARGET_VOWELS, TARGET_FINALS = "bdgvrzf", "eoy", "bdfv"

# Suffixes hold none of TARGET_FINALS, so a stem is what precedes a word's last final:
# no two (stem, suffix) pairs spell the same word.
NOUN_PLURAL = "yr"
AGREEMENT = {(0, False): "o", (0, True): "or", (1, False): "e", (1, True): "er"}  # (gender, plural)
VERB_ENDINGS = {(False, False): "ez", (False, True): "ezy", (True, False): "og", (True, True): "ogy"}  # (past, plural)

SIZES = dict(nouns=120, adjectives=40, transitive=40, intransitive=20, adverbs=12, postpositions=6, determiners=4)
TWO_WORD_SHARE = 1 / 6  # of nouns and verbs
MIN_WORDS, MAX_WORDS = 4, 15


class _Lexicon:
    """The seed's words: source spellings, target stems, noun genders."""

    def __init__(self, rng, scale=1.0):
        self._rng = rng
        sizes = {kind: max(2, round(count * scale)) for kind, count in SIZES.items()}
        self._source, self._target = set(), set()  # spellings in use (membership only: sets never iterated)
        self.plural = self._source_word(1)
        self.past = self._source_word(1)
        self.nouns = self._words(sizes["nouns"], TWO_WORD_SHARE, gendered=True)
        self.adjectives = self._words(sizes["adjectives"])
        self.transitive = self._words(sizes["transitive"], TWO_WORD_SHARE)
        self.intransitive = self._words(sizes["intransitive"], TWO_WORD_SHARE)
        self.adverbs = self._words(sizes["adverbs"])
        self.postpositions = self._words(sizes["postpositions"])
        self.determiners = self._words(sizes["determiners"])

    def _source_word(self, syllables):
        while True:
            word = "".join(self._rng.choice(SOURCE_CONSONANTS) + self._rng.choice(SOURCE_VOWELS)
                           for _ in range(syllables))
            if word not in self._source:
                self._source.add(word)
                return word

    def _target_stem(self):
        while True:
            stem = "".join(self._rng.choice(TARGET_CONSONANTS) + self._rng.choice(TARGET_VOWELS)
                           for _ in range(self._rng.randint(1, 2))) + self._rng.choice(TARGET_FINALS)
            if stem not in self._target:
                self._target.add(stem)
                return stem

    def _words(self, count, two_word_share=0.0, gendered=False):
        words = []
        for _ in range(count):
            source = self._source_word(self._rng.randint(2, 3))
            target = (self._target_stem(),)
            if self._rng.random() < two_word_share:
                target += (self._target_stem(),)
            words.append(Word(source, target, self._rng.randint(0, 1) if gendered else None))
        return words


def _noun_phrase(rng, lexicon):
    """(source words, target words, plural) of one noun phrase."""
    determiner = rng.choice(lexicon.determiners) if rng.random() < 0.4 else None
    adjectives = rng.sample(lexicon.adjectives, rng.choices((0, 1, 2), weights=(5, 3, 2))[0])
    noun = rng.choice(lexicon.nouns)
    plural = rng.random() < 0.35
    agreement = AGREEMENT[noun.gender, plural]
    source = ([determiner.source] if determiner else []) + [a.source for a in adjectives] + [noun.source]
    source += [lexicon.plural] if plural else []
    target = [determiner.target[0] + agreement] if determiner else []
    target += [noun.target[0] + (NOUN_PLURAL if plural else "")] + list(noun.target[1:])
    target += [a.target[0] + agreement for a in reversed(adjectives)]
    return source, target, plural


def _sentence_pair(rng, lexicon):
    """One (source, target) pair of sentences, words joined by spaces."""
    while True:
        adverb = rng.choice(lexicon.adverbs) if rng.random() < 0.3 else None
        subject, subject_target, plural = _noun_phrase(rng, lexicon)
        place = _noun_phrase(rng, lexicon) if rng.random() < 0.35 else None
        postposition = rng.choice(lexicon.postpositions)
        thing = _noun_phrase(rng, lexicon) if rng.random() < 0.7 else None
        verb = rng.choice(lexicon.transitive if thing else lexicon.intransitive)
        past = rng.random() < 0.5

        source = ([adverb.source] if adverb else []) + subject
        source += place[0] + [postposition.source] if place else []
        source += (thing[0] if thing else []) + [verb.source] + ([lexicon.past] if past else [])
        if not MIN_WORDS <= len(source) <= MAX_WORDS:
            continue
        target = subject_target + [verb.target[0] + VERB_ENDINGS[past, plural]] + list(verb.target[1:])
        target += thing[1] if thing else []
        target += [postposition.target[0]] + place[1] if place else []
        target += [adverb.target[0]] if adverb else []
        return " ".join(source), " ".join(target)


def _split(rng, lexicon, count, excluded, distinct):
    """`count` pairs whose sources are not in `excluded` (extended with them when `distinct`)."""
    pairs = []
    while len(pairs) < count:
        source, target = _sentence_pair(rng, lexicon)
        if source in excluded:
            continue
        if distinct:
            excluded.add(source)
        pairs.append("%s\t%s\n" % (source, target))
    return "".join(pairs)


def write_task(output_dir, num_train=20000, num_dev=500, num_test=500, seed=0, lexicon_scale=1.0):
    """Writes train.tsv, dev.tsv and test.tsv into output_dir; returns their paths as a Task.

    lexicon_scale multiplies every word class's size (at least 2 words each): a
    smaller lexicon is learned in fewer steps (reproduce_paper_tables' tiny scale).

    Same arguments, byte-identical files (the generator is Python's seeded
    `random`, string seeds hashed with SHA-512, so independent of PYTHONHASHSEED).
    """
    lexicon = _Lexicon(random.Random("%d:lexicon" % seed), lexicon_scale)
    held_out = set()
    texts = {}
    # Held-out splits first, so train can avoid their sentences whatever its size.
    for split, count in (("test", num_test), ("dev", num_dev), ("train", num_train)):
        rng = random.Random("%d:%s" % (seed, split))
        texts[split] = _split(rng, lexicon, count, held_out, distinct=split != "train")
    tf.io.gfile.makedirs(output_dir)
    paths = {split: outputs.write_text(os.path.join(output_dir, split + ".tsv"), text)
             for split, text in texts.items()}
    return Task(**paths)
