"""The original BERT optimizer, and LAMB, with the original learning-rate schedule.

`AdamWeightDecay` reproduces google-research/bert's `optimization.py`:
beta1 0.9, beta2 0.999, epsilon 1e-6, NO bias correction, decoupled weight
decay 0.01 skipped for LayerNorm and bias variables, gradients clipped to a
global norm of 1.0, learning rate linear warm-up then linear decay to 0 at
num_train_steps. Model Garden's AdamWeightDecay is Adam with bias
correction, a different optimizer in early training; hence our own.

Slots are named for the original checkpoint: `<variable>/adam_m` and
`<variable>/adam_v` (LAMB's `m` and `v` map to the same names).
"""

import tensorflow as tf
import tf_keras
from official.modeling.optimization import lamb
from official.nlp import optimization as model_garden_optimization

# The original's exclusions, matched against variable names.
WEIGHT_DECAY_EXCLUSIONS = ("LayerNorm", "layer_norm", "bias")
OPTIMIZERS = ("adamw", "lamb", "adam")
LEARNING_RATE_SCHEDULES = ("linear", "rsqrt", "inverse_sqrt")


class AdamWeightDecay(tf_keras.optimizers.Optimizer):
    """Adam without bias correction, with decoupled weight decay.

    update = m / (sqrt(v) + epsilon) + weight_decay_rate * w   (decay unless excluded)
    w <- w - learning_rate * update

    Keras applies the decay term as `w -= learning_rate * rate * w` before the
    Adam step; since the Adam step does not read w, the result is the same.
    """

    def __init__(
        self,
        learning_rate,
        weight_decay_rate=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        clip_norm=1.0,
        name="AdamWeightDecay",
        **kwargs,
    ):
        super().__init__(
            name=name,
            weight_decay=weight_decay_rate,
            global_clipnorm=clip_norm,
            **kwargs,
        )
        self._learning_rate = self._build_learning_rate(learning_rate)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.exclude_from_weight_decay(var_names=list(WEIGHT_DECAY_EXCLUSIONS))

    def build(self, var_list):
        super().build(var_list)
        if getattr(self, "_built", False):
            return
        self._built = True
        self._m = [self.add_variable_from_reference(v, "m") for v in var_list]
        self._v = [self.add_variable_from_reference(v, "v") for v in var_list]

    def update_step(self, gradient, variable):
        index = self._index_dict[self._var_key(variable)]
        m, v = self._m[index], self._v[index]
        dtype = variable.dtype

        def constant(value):
            return tf.cast(value, dtype)

        # One fused kernel instead of ~14 passes over each variable. ApplyAdam
        # scales the learning rate by sqrt(1 - beta2^t) / (1 - beta1^t); with
        # both powers given as 0 that factor is 1: the original's update,
        #   m <- m + (g - m)(1 - beta_1)   (= beta_1 m + (1 - beta_1) g)
        #   v <- v + (g^2 - v)(1 - beta_2)
        #   w <- w - lr m / (sqrt(v) + epsilon)
        # without bias correction.
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=m.handle, v=v.handle, beta1_power=constant(0.0),
            beta2_power=constant(0.0), lr=constant(self.learning_rate),
            beta1=constant(self.beta_1), beta2=constant(self.beta_2),
            epsilon=constant(self.epsilon), grad=tf.convert_to_tensor(gradient, dtype))

    def slots(self, variable):
        """{"adam_m": m, "adam_v": v} of a built optimizer."""
        index = self._index_dict[self._var_key(variable)]
        return {"adam_m": self._m[index], "adam_v": self._v[index]}

    def get_config(self):
        config = super().get_config()
        config.update(
            learning_rate=self._serialize_hyperparameter(self._learning_rate),
            weight_decay_rate=self.weight_decay,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            epsilon=self.epsilon,
            clip_norm=self.global_clipnorm,
        )
        for key in ("weight_decay", "global_clipnorm"):
            config.pop(key, None)
        return config


class Lamb(lamb.LAMB):
    """Model Garden's LAMB, with the original's clipping and exclusions."""

    def __init__(self, learning_rate, weight_decay_rate=0.01, **kwargs):
        super().__init__(
            learning_rate=learning_rate,
            weight_decay_rate=weight_decay_rate,
            epsilon=1e-6,
            exclude_from_weight_decay=list(WEIGHT_DECAY_EXCLUSIONS),
            exclude_from_layer_adaptation=list(WEIGHT_DECAY_EXCLUSIONS),
            global_clipnorm=1.0,
            **kwargs,
        )

    def build(self, var_list):
        """Creates the slots now, as the new-API optimizers' `build` does.

        LAMB is a legacy-API optimizer that would create them lazily on the
        first step; a resume must restore them before it.
        """
        self._create_all_weights(var_list)

    def slots(self, variable):
        return {"adam_m": self.get_slot(variable, "m"), "adam_v": self.get_slot(variable, "v")}


class Adam(tf_keras.optimizers.Adam):
    """Keras Adam (with bias correction, no weight decay, no clipping) as the NMT toolkits use it.

    beta_1 0.9, beta_2 0.98 (transformer-big: 0.998), epsilon 1e-9; slots under
    the original's names. A dense gradient is applied by one fused kernel
    (ResourceApplyAdam) instead of Keras's nine element-wise ops per variable:
    the same update, m and v moved towards g and g^2, then
      w <- w - lr sqrt(1 - beta_2^t) / (1 - beta_1^t) m / (sqrt(v) + epsilon),
    at step t = iterations + 1. For the small models of the studies those ops
    were a fixed cost beside products that bfloat16 shrinks
    (docs/performance.md#precision-on-a-bfloat16-native-cpu). Sparse gradients
    (IndexedSlices) take Keras's own path.
    """

    def __init__(self, learning_rate, beta_2=0.98, **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=0.9, beta_2=beta_2, epsilon=1e-9, **kwargs)

    def update_step(self, gradient, variable):
        if isinstance(gradient, tf.IndexedSlices) or self.amsgrad:
            super().update_step(gradient, variable)
            return
        index = self._index_dict[self._var_key(variable)]
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=self._momentums[index].handle, v=self._velocities[index].handle,
            beta1_power=tf.pow(tf.cast(self.beta_1, dtype), step), beta2_power=tf.pow(tf.cast(self.beta_2, dtype), step),
            lr=tf.cast(self.learning_rate, dtype), beta1=tf.cast(self.beta_1, dtype), beta2=tf.cast(self.beta_2, dtype),
            epsilon=tf.cast(self.epsilon, dtype), grad=tf.convert_to_tensor(gradient, dtype))

    def slots(self, variable):
        index = self._index_dict[self._var_key(variable)]
        return {"adam_m": self._momentums[index], "adam_v": self._velocities[index]}


def learning_rate_schedule(learning_rate, num_train_steps, num_warmup_steps):
    """The original schedule.

    lr(step) = learning_rate * step / num_warmup_steps      while step < warm-up,
               learning_rate * (1 - step / num_train_steps) after (0 at the end).
    """
    decay = tf_keras.optimizers.schedules.PolynomialDecay(
        initial_learning_rate=learning_rate,
        decay_steps=num_train_steps,
        end_learning_rate=0.0,
        power=1.0,
    )
    if not num_warmup_steps:
        return decay
    return model_garden_optimization.WarmUp(
        initial_learning_rate=learning_rate,
        decay_schedule_fn=decay,
        warmup_steps=num_warmup_steps,
    )


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class RsqrtSchedule(tf_keras.optimizers.schedules.LearningRateSchedule):
    """tensor2tensor's `constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size`.

    lr(step) = learning_rate * min(1, step / num_warmup_steps)
               / sqrt(max(step, num_warmup_steps)) / sqrt(hidden_size)

    Linear warm-up to learning_rate / sqrt(num_warmup_steps * hidden_size),
    then decay with 1/sqrt(step); it does not reach 0 at the last step.
    """

    def __init__(self, learning_rate, num_warmup_steps, hidden_size):
        super().__init__()
        self.learning_rate = learning_rate
        self.num_warmup_steps = num_warmup_steps
        self.hidden_size = hidden_size

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warmup = tf.cast(max(self.num_warmup_steps, 1), tf.float32)
        return (self.learning_rate * tf.minimum(1.0, step / warmup) * tf.math.rsqrt(tf.maximum(step, warmup))
                * tf.math.rsqrt(tf.cast(self.hidden_size, tf.float32)))

    def get_config(self):
        return dict(learning_rate=self.learning_rate, num_warmup_steps=self.num_warmup_steps,
                    hidden_size=self.hidden_size)


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class InverseSqrtSchedule(tf_keras.optimizers.schedules.LearningRateSchedule):
    """The NMT toolkits' warm-up then inverse square root decay.

    lr(step) = learning_rate * min(step / num_warmup_steps, sqrt(num_warmup_steps / step))

    It peaks at learning_rate after num_warmup_steps (unlike RsqrtSchedule, no
    hidden-size scaling) and does not reach 0.
    """

    def __init__(self, learning_rate, num_warmup_steps):
        super().__init__()
        self.learning_rate = learning_rate
        self.num_warmup_steps = num_warmup_steps

    def __call__(self, step):
        step = tf.maximum(tf.cast(step, tf.float32), 1.0)
        warmup = tf.cast(max(self.num_warmup_steps, 1), tf.float32)
        return self.learning_rate * tf.minimum(step / warmup, tf.sqrt(warmup / step))

    def get_config(self):
        return dict(learning_rate=self.learning_rate, num_warmup_steps=self.num_warmup_steps)


def create_optimizer(name, learning_rate, num_train_steps, num_warmup_steps, learning_rate_schedule_name="linear",
                     hidden_size=None, adam_beta_2=0.98):
    """Builds the optimizer named by `--optimizer` (its slots not yet created).

    Args:
      learning_rate_schedule_name: "linear" (the original's), "rsqrt"
        (RsqrtSchedule, which needs the model's hidden_size) or "inverse_sqrt"
        (InverseSqrtSchedule).
      adam_beta_2: beta_2 of optimizer "adam".

    Raises:
      ValueError: for an unknown name, listing the known ones.
    """
    if learning_rate_schedule_name == "rsqrt":
        if not hidden_size:
            raise ValueError("--learning_rate_schedule=rsqrt needs the model's hidden size.")
        schedule = RsqrtSchedule(learning_rate, num_warmup_steps, hidden_size)
    elif learning_rate_schedule_name == "inverse_sqrt":
        schedule = InverseSqrtSchedule(learning_rate, num_warmup_steps)
    elif learning_rate_schedule_name == "linear":
        schedule = learning_rate_schedule(learning_rate, num_train_steps, num_warmup_steps)
    else:
        raise ValueError("--learning_rate_schedule=%s is not supported; expected one of %s."
                         % (learning_rate_schedule_name, ", ".join(LEARNING_RATE_SCHEDULES)))
    if name == "adamw":
        return AdamWeightDecay(schedule)
    if name == "lamb":
        return Lamb(schedule)
    if name == "adam":
        return Adam(schedule, beta_2=adam_beta_2)
    raise ValueError("--optimizer=%s is not supported; expected one of %s." % (name, ", ".join(OPTIMIZERS)))


def build_optimizer(optimizer, variables):
    """Creates the slots of `variables` now (a resume restores them before the first step).

    Through a LossScaleOptimizer too: the legacy one, which wraps LAMB under
    float16, has no `build` of its own.
    """
    getattr(optimizer, "inner_optimizer", optimizer).build(variables)
    return optimizer


def current_learning_rate(optimizer):
    """The learning rate of the next step, as a Python float.

    The new-API optimizers evaluate their schedule when asked; the legacy
    LAMB returns the schedule itself.
    """
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    rate = inner.learning_rate
    if isinstance(rate, tf_keras.optimizers.schedules.LearningRateSchedule):
        rate = rate(inner.iterations)
    return float(tf.convert_to_tensor(rate))
