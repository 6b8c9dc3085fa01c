"""Translation quality: corpus BLEU and chrF from sacrebleu, on detokenized text.

The scores are sacrebleu's own (its default 13a tokenization, or "zh" for a
Chinese target, "ja-mecab" is left to sacrebleu users), so they compare with
published sacreBLEU figures; the signature strings say exactly which.
"""

import sacrebleu


def bleu_tokenizer(target_language):
    """sacrebleu's tokenizer for a target language code: "zh" for Chinese, else 13a."""
    return "zh" if (target_language or "").lower().startswith("zh") else "13a"


def corpus_scores(hypotheses, references, target_language=None):
    """{"bleu", "chrf", "bleu_signature", "chrf_signature"} of hypotheses against one reference each.

    Raises:
      ValueError: when the two lists differ in length (naming both).
    """
    if len(hypotheses) != len(references):
        raise ValueError("%d translations but %d references." % (len(hypotheses), len(references)))
    bleu = sacrebleu.metrics.BLEU(tokenize=bleu_tokenizer(target_language))
    chrf = sacrebleu.metrics.CHRF()
    bleu_score = bleu.corpus_score(list(hypotheses), [list(references)])
    chrf_score = chrf.corpus_score(list(hypotheses), [list(references)])
    return dict(bleu=bleu_score.score, chrf=chrf_score.score, bleu_signature=str(bleu.get_signature()),
                chrf_signature=str(chrf.get_signature()))
