"""Model families compared at matched parameter counts (Bhojanapalli et al., 2020).

The paper plots its BERT and language-model results against the number of
parameters: each family grows along one config key, and models of different
families are compared at equal totals. Three families are defined here, each
varying one key while the others stay fixed:

  fixed_head_size  the paper's proposal: hidden size d, head size d_p and
                   intermediate size I fixed; the number of heads h varies.
                   Attention grows by 4*d*d_p + 3*d_p parameters per head
                   and layer.
  baseline         the standard model: h fixed, d_p = d/h (`head_size`
                   unset); d varies over multiples of a step that is itself a
                   multiple of h, so that d/h is an integer. I is fixed or a
                   multiple of d (BERT's I = 4d).
  head_size        d, h and I fixed; d_p varies (the paper's Table 2B).

Counts are `count_parameters`, which is exact. By default they include the
pre-training heads (MLM transform, its LayerNorm and output bias; NSP), as
the paper's published counts do: with them every row of its Tables 1-3
rounds to the published figure; without them Table 3's rows come out 0.2M
to 1M low.

Defaults are the paper's BERT setup: 24 layers, the uncased 30522-token
vocabulary, 512 positions, 2 token types; fixed_head_size at d = 512,
d_p = 128, I = 4096 and baseline with 16 heads (Fig. 2), with I = 4d as in
BERT-large (the paper does not state the baseline's I); head_size at
d = 512, h = 8, I = 4096 (Table 2B).
"""

import collections
import math
import numbers

from modeling.bert_config import BertConfig
from modeling.parameter_groups import count_parameters

FIXED_HEAD_SIZE = "fixed_head_size"
BASELINE = "baseline"
HEAD_SIZE = "head_size"
FAMILIES = (FIXED_HEAD_SIZE, BASELINE, HEAD_SIZE)

# The config key each family varies.
VARIED_KEY = {
    FIXED_HEAD_SIZE: "num_attention_heads",
    BASELINE: "hidden_size",
    HEAD_SIZE: "head_size",
}

# Fixed keys of each family when not given. intermediate_ratio means
# intermediate_size = ratio * hidden_size.
_FAMILY_DEFAULTS = {
    FIXED_HEAD_SIZE: dict(hidden_size=512, head_size=128, intermediate_size=4096),
    BASELINE: dict(num_attention_heads=16, intermediate_ratio=4),
    HEAD_SIZE: dict(hidden_size=512, num_attention_heads=8, intermediate_size=4096),
}

# Inclusive search range of the varied key when neither `values` nor
# `search_range` is given: wide enough for every model of the paper and
# several times beyond, so a budget is not silently clamped at a small edge.
_DEFAULT_SEARCH_RANGE = {
    FIXED_HEAD_SIZE: (1, 128),
    BASELINE: (1, 4096),
    HEAD_SIZE: (1, 1024),
}

Member = collections.namedtuple("Member", ["config", "parameters"])
Member.__doc__ = "One model of a family: its `BertConfig` and exact parameter count."


def paper_base_config():
    """The BERT layout the paper trains; families set d, h, d_p and I on it."""
    return BertConfig(
        vocab_size=30522,
        num_hidden_layers=24,
        max_position_embeddings=512,
        type_vocab_size=2,
    )


def family_members(
    family,
    values=None,
    search_range=None,
    step=None,
    base_config=None,
    include_pretraining_heads=True,
    **fixed
):
    """Lists the members of a family with their parameter counts.

    Args:
      family: one of FAMILIES.
      values: optional iterable of ints, the candidate values of the varied
        key (VARIED_KEY[family]); instead of search_range and step.
      search_range: optional (low, high), inclusive bounds of the varied key.
        Candidates are the multiples of `step` within it. Default: a wide
        range (_DEFAULT_SEARCH_RANGE).
      step: optional int, spacing of the candidates in search_range. Default 1,
        and num_attention_heads for the baseline, where it must be a multiple
        of num_attention_heads.
      base_config: optional `BertConfig` for every key the family does not
        set. Default: paper_base_config().
      include_pretraining_heads: count the `cls/` heads (MLM and NSP), as the
        paper's counts do.
      **fixed: config keys the family holds fixed (e.g. hidden_size=768,
        num_hidden_layers=12), overriding base_config and the family's
        defaults; also intermediate_ratio, meaning intermediate_size =
        intermediate_ratio * hidden_size. The varied key cannot be fixed, nor
        head_size for the baseline.

    Returns:
      list of Member(config, parameters), in increasing order of the varied key.

    Raises:
      ValueError: naming the argument, for an unknown family or key, a
        conflicting or invalid setting, or an empty search space.
    """
    return _members(
        "family_members", family, values, search_range, step, base_config,
        include_pretraining_heads, fixed)


def match_params(
    family,
    budget,
    values=None,
    search_range=None,
    step=None,
    base_config=None,
    include_pretraining_heads=True,
    max_relative_error=None,
    **fixed
):
    """Finds the member of a family whose parameter count is closest to `budget`.

    Ties (one member as far below the budget as another is above) go to the
    smaller model, so a matched model never wins by extra parameters.

    Args:
      family: one of FAMILIES.
      budget: positive number, the parameter count to match (e.g. another
        family's member count, or a published figure such as 218e6).
      values, search_range, step, base_config, include_pretraining_heads,
        **fixed: the family's search space and fixed keys, as in
        `family_members`.
      max_relative_error: optional float; when set, a best match farther than
        this fraction of the budget is refused (a budget beyond the search
        space would otherwise get the nearest edge).

    Returns:
      Member(config, parameters) of the closest member.

    Raises:
      ValueError: naming the argument, for a bad budget, an unknown family or
        key, an empty search space, or no member within max_relative_error.
    """
    _check_positive_number("match_params", "budget", budget)
    members = _members(
        "match_params", family, values, search_range, step, base_config,
        include_pretraining_heads, fixed)
    # min() keeps the first of equal keys; members are in increasing order.
    best = min(members, key=lambda m: (abs(m.parameters - budget), m.parameters))
    if max_relative_error is not None:
        _check_positive_number("match_params", "max_relative_error", max_relative_error)
        error = abs(best.parameters - budget) / budget
        if error > max_relative_error:
            raise ValueError(
                "match_params: no %s member within max_relative_error = %g of budget = %d; "
                "the closest, %s = %d, has %d parameters (%.1f%% off). Widen the search space."
                % (family, max_relative_error, budget, VARIED_KEY[family],
                   getattr(best.config, VARIED_KEY[family]), best.parameters, 100 * error))
    return best


def members_between(
    family,
    min_parameters,
    max_parameters,
    values=None,
    search_range=None,
    step=None,
    base_config=None,
    include_pretraining_heads=True,
    **fixed
):
    """Lists the members of a family whose counts lie in [min_parameters, max_parameters].

    E.g. the paper's Fig. 2 spans 92M (baseline, d = 512) to 336M (baseline,
    d = 1024); its fixed-head-size models (h = 8 to 32) have 168M to 319M.

    Args:
      family: one of FAMILIES.
      min_parameters: positive number, inclusive lower bound of the count.
      max_parameters: number >= min_parameters, inclusive upper bound.
      values, search_range, step, base_config, include_pretraining_heads,
        **fixed: the family's search space and fixed keys, as in
        `family_members`.

    Returns:
      list of Member(config, parameters) in increasing order of the varied
      key; empty when no member falls in the range.

    Raises:
      ValueError: naming the argument, for bad bounds or as `family_members`.
    """
    _check_positive_number("members_between", "min_parameters", min_parameters)
    _check_positive_number("members_between", "max_parameters", max_parameters)
    if max_parameters < min_parameters:
        raise ValueError(
            "members_between: `max_parameters` = %r must be >= `min_parameters` = %r."
            % (max_parameters, min_parameters))
    members = _members(
        "members_between", family, values, search_range, step, base_config,
        include_pretraining_heads, fixed)
    return [m for m in members if min_parameters <= m.parameters <= max_parameters]


def _members(caller, family, values, search_range, step, base_config,
             include_pretraining_heads, fixed):
    if family not in FAMILIES:
        raise ValueError(
            "%s: unknown `family` %r; expected one of %s." % (caller, family, ", ".join(FAMILIES)))
    if base_config is None:
        base_config = paper_base_config()
    elif not isinstance(base_config, BertConfig):
        raise ValueError(
            "%s: `base_config` must be a BertConfig, got %s." % (caller, type(base_config).__name__))
    settings = _fixed_settings(caller, family, base_config, fixed)
    varied = VARIED_KEY[family]
    candidates = _candidates(caller, family, values, search_range, step,
                             settings.get("num_attention_heads"))
    members = []
    for value in candidates:
        keys = dict(settings, **{varied: value})
        ratio = keys.pop("intermediate_ratio", None)
        if ratio is not None:
            keys["intermediate_size"] = _intermediate_size(caller, ratio, keys["hidden_size"])
        if family == BASELINE:
            keys["head_size"] = None  # d_p = d/h: the original model.
        config = base_config.replace(**keys)
        counts = count_parameters(config, include_pretraining_heads=include_pretraining_heads)
        total = counts["total_with_pretraining_heads" if include_pretraining_heads else "total"]
        members.append(Member(config, total))
    return members


def _fixed_settings(caller, family, base_config, fixed):
    """The family's fixed keys: its defaults, overridden by `fixed`."""
    varied = VARIED_KEY[family]
    known = set(base_config.to_dict()) | {"intermediate_ratio"}
    for key in sorted(fixed):
        if key == varied:
            raise ValueError(
                "%s: `%s` is what the %s family varies; give its candidates with `values` "
                "or `search_range`, not as a fixed key." % (caller, key, family))
        if family == BASELINE and key == "head_size":
            raise ValueError(
                "%s: the baseline family has head size hidden_size / num_attention_heads; "
                "`head_size` cannot be fixed (use the head_size family)." % caller)
        if key not in known:
            raise ValueError(
                "%s: unknown key `%s` for the %s family; expected a BertConfig key or "
                "intermediate_ratio." % (caller, key, family))
    if fixed.get("intermediate_size") is not None and fixed.get("intermediate_ratio") is not None:
        raise ValueError(
            "%s: give `intermediate_size` (fixed I) or `intermediate_ratio` (I = ratio * "
            "hidden_size), not both." % caller)
    settings = dict(_FAMILY_DEFAULTS[family])
    if "intermediate_size" in fixed:
        settings.pop("intermediate_ratio", None)
    if "intermediate_ratio" in fixed:
        settings.pop("intermediate_size", None)
    settings.update(fixed)
    if settings.get("intermediate_ratio") is not None:
        _check_positive_number(caller, "intermediate_ratio", settings["intermediate_ratio"])
    else:
        settings.pop("intermediate_ratio", None)
    return settings


def _candidates(caller, family, values, search_range, step, num_heads):
    """The varied key's candidate values, sorted, as the search space defines them."""
    varied = VARIED_KEY[family]
    if values is not None:
        if search_range is not None or step is not None:
            raise ValueError(
                "%s: give the candidates either as `values` or as `search_range` and `step`, "
                "not both." % caller)
        values = list(values)
        for value in values:
            if not _is_positive_int(value):
                raise ValueError(
                    "%s: `values` must be positive integers (candidate %s), got %r."
                    % (caller, varied, value))
            if family == BASELINE and value % num_heads:
                raise ValueError(
                    "%s: `values` must be multiples of num_attention_heads = %d so that the "
                    "head size hidden_size / num_attention_heads is an integer; got %d."
                    % (caller, num_heads, value))
        if not values:
            raise ValueError("%s: `values` is empty: the search space has no %s." % (caller, varied))
        return sorted(set(int(value) for value in values))

    if step is None:
        step = num_heads if family == BASELINE else 1
    if not _is_positive_int(step):
        raise ValueError("%s: `step` must be a positive integer, got %r." % (caller, step))
    if family == BASELINE and step % num_heads:
        raise ValueError(
            "%s: `step` = %d must be a multiple of num_attention_heads = %d so that every "
            "hidden_size / num_attention_heads is an integer." % (caller, step, num_heads))
    if search_range is None:
        search_range = _DEFAULT_SEARCH_RANGE[family]
    if (not isinstance(search_range, (tuple, list)) or len(search_range) != 2
            or not all(_is_positive_int(bound) for bound in search_range)):
        raise ValueError(
            "%s: `search_range` must be (low, high), two positive integers bounding %s; got %r."
            % (caller, varied, search_range))
    low, high = (int(bound) for bound in search_range)
    first = -(-low // step) * step  # The smallest multiple of step >= low.
    candidates = list(range(first, high + 1, step))
    if not candidates:
        raise ValueError(
            "%s: the search space is empty: no multiple of `step` = %d in `search_range` = "
            "(%d, %d) for %s." % (caller, step, low, high, varied))
    return candidates


def _intermediate_size(caller, ratio, hidden_size):
    size = ratio * hidden_size
    if not float(size).is_integer():
        raise ValueError(
            "%s: `intermediate_ratio` = %r times hidden_size = %d is %r, not an integer "
            "intermediate_size." % (caller, ratio, hidden_size, size))
    return int(size)


def _is_positive_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0


def _check_positive_number(caller, name, value):
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or value <= 0):
        raise ValueError("%s: `%s` must be a positive number, got %r." % (caller, name, value))
