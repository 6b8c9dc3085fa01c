"""Texts and vocabularies on which every tokenizer must give FullTokenizer's ids.

Shared by the parity tests of FastFullTokenizer and CachedFullTokenizer.
"""

import random
import unicodedata
import zlib

from tokenization import bert_tokenization

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

CORPUS = [
    # Plain English, punctuation, numbers.
    "The quick brown fox jumps over the lazy dog.",
    "UNwant\u00E9d,running",
    " \tHeLLo!how  \n Are yoU?  ",
    "It's 3:45 p.m. -- isn't it? (Yes/no) $100, 50% off; a^b=c `code` "
    "~tilde~ #1 @user",
    "e-mail: john.doe@example.com, url: https://example.com/a_b?c=d&e=f",
    # Accents (precomposed and combining), ligatures, special casing.
    "Café naïve résumé Ångström ÀÉÎÕÜ",
    "Straße GROSSẞ İstanbul ıİi ﬁne ﬂow ﬀ",
    "e\u0301te\u0301 (combining) o\u0308 A\u030a ṩ \u0344",
    "\u01c5 \u01c4\u01c6 \u1f88 \u2126 \u212a \u212b",
    # Greek, final sigma in every position.
    "ΟΔΥΣΣΕΥΣ ΣΟΦΟΣ. ΑΣ'Β Σ ΝΣ\u00ad",
    "Ὁμηρος ΑΣ\u0301 ΑΣ中Β ΑΣ.Β ΑΣ\u2028Β",
    # CJK, compatibility ideographs, extensions; kana and Hangul.
    "我爱北京天安门。你好，世界！",
    "ah\u535A\u63A8zz \uf900\uf901\ufa0e \U0002f800\U0002f801 "
    "\U00020000\U0002a700\U0002b740\U0002b820 \u3400\u4dbf",
    "ひらがな カタカナー 한국어 \u1100\u1161\u11a8",
    "東京で、「日本語」を話す。",
    # Emoji, ZWJ sequences, skin tones, flags, variation selectors.
    "I \u2764\ufe0f NY 😀😂 👍🏽 👨\u200d👩\u200d👧",
    "🇯🇵 🏳\ufe0f\u200d🌈 a😀b \u263a\ufe0e",
    # Control and format characters.
    "a\x00b c\x07d e\u200bf g\u200dh \ufeffi j\ufffdk l\x7fm n\x1bo p\u00adq "
    "\u2060r \u202es",
    "\x00\x01\x02\ufffd\ufeff",
    # Punctuation, ASCII and Unicode.
    "«Bonjour» — dit-il… ¿Qué? ¡Sí! ‘q’ “dq” 、。 § ¶ † "
    "\u2010\u2011\u00b7",
    "1+1=2 <tag> [x] {y} |z| a\\b × ÷ €5 £5 ¥ °C ™ ©",
    "\u1fef\u1fed\u1fee \u00b4 \u02dc \u0387 \u037e \u055e",
    # Whitespace of every kind.
    "a\tb\nc\rd\u00a0e\u3000f\u2028g\u2029h\x0bi\x0cj\x1ck\x85l\u2003m"
    "\u202fn\u205fo\u1680p\u180eq",
    "   ",
    "",
    "\t\n\r \u00a0\u3000\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x1f\x85",
    # Words of exactly 200 characters and of 201 or more, ASCII and not.
    "a" * 200,
    "a" * 201,
    "x " + "ab" * 100 + " y " + "ab" * 101 + " z",
    "é" * 200 + " " + "é" * 201,
    "ж" * 200 + " " + "Ж" * 201,
    "😀" * 200 + " " + "😀" * 201,
    # 201 characters with combining accents: [UNK] when cased, but only 101
    # or 199 once lower-casing has stripped the accents.
    "e\u0301" * 100 + "e",
    "É" * 199 + "\u0301\u0301",
    "unbelievable" * 17,
    # Other scripts.
    "Привет, мир! Ёё Ж",
    "مرحبا بالعالم؟ ٠١",
    "शब्द किताब। สวัสดี",
    "שלום עולם ა ბ Ա Բ",
    # Unicode 14 letters that TensorFlow's ICU does not lower-case.
    "\U00010570\U00010571 \u2c2f\u2c5f \ua7c0\ua7c1 ΑΣ\U00010570 "
    "Α\U00010597Σ",
]


def _random_text(rng, alphabet_ranges, max_len):
    """A string of assigned (Unicode 14) code points drawn from ranges."""
    chars = []
    for _ in range(rng.randint(0, max_len)):
        if rng.random() < 0.15:
            chars.append(rng.choice(" \t\n\u00a0\u3000"))
            continue
        while True:
            first, last = rng.choice(alphabet_ranges)
            char = chr(rng.randint(first, last))
            if unicodedata.category(char) not in ("Cn", "Cs"):
                break
        chars.append(char)
    return "".join(chars)


_FUZZ_RANGES = [
    (0x00, 0x7F), (0x20, 0x7E), (0x20, 0x7E), (0x80, 0x24F),
    (0x250, 0x2FF), (0x300, 0x36F), (0x370, 0x3FF), (0x3A3, 0x3A3),
    (0x400, 0x52F), (0x590, 0x6FF), (0x890, 0x8FF), (0x900, 0x97F),
    (0xE00, 0xE7F), (0x1100, 0x11FF), (0x1AB0, 0x1AFF), (0x1E00, 0x1FFF),
    (0x2000, 0x206F), (0x2070, 0x2BFF), (0x2C00, 0x2C7F), (0x2E00, 0x2E7F),
    (0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA640, 0xA7FF),
    (0xAC00, 0xD7A3), (0xE000, 0xE0FF), (0xF900, 0xFAFF), (0xFB00, 0xFB4F),
    (0xFE00, 0xFE6F), (0xFF00, 0xFFFF), (0x10000, 0x1007F),
    (0x10570, 0x105BF), (0x1D400, 0x1D7FF), (0x1F000, 0x1FAFF),
    (0x20000, 0x2A6DF), (0x2A700, 0x2CEAF), (0x2F800, 0x2FA1F),
    (0xE0000, 0xE01EF),
]


def fuzz_corpus():
    rng = random.Random(20240607)
    texts = [_random_text(rng, _FUZZ_RANGES, 60) for _ in range(400)]
    # Long single words around the 200-character limit.
    for length in (199, 200, 201, 250):
        texts.append(_random_text(rng, [(0x61, 0x7A), (0xE0, 0xFF),
                                        (0x430, 0x44F)], 0)
                     + "".join(rng.choice("abc\u00e9\u0436\U0001F600")
                               for _ in range(length)))
    return texts


def sigma_fuzz_corpus():
    """Strings that stress the final-sigma rule: capital sigma next to
    cased, case-ignorable (incl. Unicode 14 ones), and neutral chars."""
    alphabet = [
        "\u03a3", "\u03a3", "\u03a3", "\u0391", "\u03c2", "a", "\u01c5",
        "'", ".", ":", "\u00b7", "\u0301", "\u02b0", "\u00ad", "\u200b",
        "\u0898", "\u08c9", "\u2c2f", "\U00010597", "\ua7d3", " ", "-",
        "1", "\u4e2d", "\u2028", "\u3042", "\x00",
    ]
    rng = random.Random(7)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
            for _ in range(600)]


def vocab_tokens(texts):
    """A vocab in which real words, real splits and real [UNK]s all occur.

    Built from the basic tokens of `texts` (both casings): whole words for
    every other word, 1-3 char prefixes and "##" 1-2 char pieces of all
    words, except that characters with code point % 11 == 0 get no piece at
    all, so words containing them become [UNK] (unless whole in the vocab).
    """
    words = set()
    for do_lower_case in (True, False):
        basic = bert_tokenization.BasicTokenizer(do_lower_case=do_lower_case)
        for text in texts:
            words.update(basic.tokenize(text))
    tokens = set()
    for word in sorted(words):
        # Whole words stay short so that FastWordpiece can take the vocab.
        if len(word) <= 40 and zlib.crc32(word.encode("utf-8")) % 2:
            tokens.add(word)
    for word in sorted(words):
        for n in (1, 2, 3):
            prefix = word[:n]
            if not any(ord(c) % 11 == 0 for c in prefix):
                tokens.add(prefix)
        for start in range(1, len(word)):
            for n in (1, 2):
                piece = word[start:start + n]
                if not any(ord(c) % 11 == 0 for c in piece):
                    tokens.add("##" + piece)
    tokens -= set(SPECIAL_TOKENS)
    # "#" pieces and odd lines exercise the vocab loading of both paths: a
    # duplicated token keeps its last id and the empty line gets an id.
    return (SPECIAL_TOKENS + sorted(tokens)
            + ["#", "##", "###", "", "the", "[UNK]", "##e"])
