"""The original pre-training losses and evaluation metrics.

masked LM: per-prediction cross entropy, averaged with masked_lm_weights
  (padding predictions weigh 0): sum(w * ce) / (sum(w) + 1e-5).
next sentence: mean cross entropy over the batch.
total loss = masked LM + next sentence.
"""

import numpy as np
import tensorflow as tf

from layers import cross_entropy


def pretraining_losses(outputs, batch):
    """Computes the losses in float32.

    Args:
      outputs: dict with masked_lm_logits [batch, predictions, vocab] and
        next_sentence_logits [batch, 2].
      batch: dict with masked_lm_ids, masked_lm_weights [batch, predictions]
        and next_sentence_labels [batch, 1].

    Returns:
      dict of scalars: loss, masked_lm_loss, next_sentence_loss; and of
      per-example values for metrics: masked_lm_example_loss [batch*pred],
      next_sentence_example_loss [batch].
    """
    mlm_logits = tf.cast(outputs["masked_lm_logits"], tf.float32)
    nsp_logits = tf.cast(outputs["next_sentence_logits"], tf.float32)
    mlm_ids = tf.reshape(batch["masked_lm_ids"], [-1])
    mlm_weights = tf.reshape(tf.cast(batch["masked_lm_weights"], tf.float32), [-1])
    vocab = tf.shape(mlm_logits)[-1]
    # One log-softmax and one gradient pass over [predictions, vocab] (layers/cross_entropy.py).
    mlm_example_loss, _ = cross_entropy.cross_entropy_terms(tf.reshape(mlm_logits, [-1, vocab]), mlm_ids)
    masked_lm_loss = tf.reduce_sum(mlm_weights * mlm_example_loss) / (
        tf.reduce_sum(mlm_weights) + 1e-5
    )
    nsp_labels = tf.reshape(batch["next_sentence_labels"], [-1])
    nsp_example_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=nsp_labels, logits=nsp_logits
    )
    next_sentence_loss = tf.reduce_mean(nsp_example_loss)
    return dict(
        loss=masked_lm_loss + next_sentence_loss,
        masked_lm_loss=masked_lm_loss,
        next_sentence_loss=next_sentence_loss,
        masked_lm_example_loss=mlm_example_loss,
        next_sentence_example_loss=nsp_example_loss,
    )


class PretrainingMetrics:
    """The original eval metrics, accumulated over batches.

    masked_lm_accuracy and masked_lm_loss are weighted by masked_lm_weights;
    next_sentence_* are plain means; loss is the mean total loss per batch.
    """

    def __init__(self):
        self.masked_lm_accuracy = _WeightedMean()
        self.masked_lm_loss = _WeightedMean()
        self.next_sentence_accuracy = _WeightedMean()
        self.next_sentence_loss = _WeightedMean()
        self.loss = _WeightedMean()

    def update(self, outputs, batch, losses):
        mlm_logits = tf.cast(outputs["masked_lm_logits"], tf.float32)
        predictions = tf.reshape(tf.argmax(mlm_logits, axis=-1, output_type=tf.int32), [-1])
        ids = tf.reshape(batch["masked_lm_ids"], [-1])
        weights = tf.reshape(tf.cast(batch["masked_lm_weights"], tf.float32), [-1])
        correct = tf.cast(tf.equal(predictions, ids), tf.float32)
        self.masked_lm_accuracy.update(correct, weights)
        self.masked_lm_loss.update(losses["masked_lm_example_loss"], weights)
        nsp = tf.argmax(tf.cast(outputs["next_sentence_logits"], tf.float32), -1, output_type=tf.int32)
        labels = tf.reshape(batch["next_sentence_labels"], [-1])
        self.next_sentence_accuracy.update(tf.cast(tf.equal(nsp, labels), tf.float32))
        self.next_sentence_loss.update(losses["next_sentence_example_loss"])
        self.loss.update(losses["loss"])

    def result(self):
        return {
            name: getattr(self, name).result()
            for name in ("loss", "masked_lm_accuracy", "masked_lm_loss",
                         "next_sentence_accuracy", "next_sentence_loss")
        }


class _WeightedMean:
    """sum(w * x) / sum(w), accumulated in float64 on the host."""

    def __init__(self):
        self.total = 0.0
        self.weight = 0.0

    def update(self, values, weights=None):
        values = np.asarray(values, np.float64).reshape(-1)
        weights = np.ones_like(values) if weights is None else np.asarray(weights, np.float64).reshape(-1)
        self.total += float((values * weights).sum())
        self.weight += float(weights.sum())

    def result(self):
        return self.total / self.weight if self.weight else 0.0
