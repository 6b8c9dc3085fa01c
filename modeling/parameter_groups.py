"""Parameter groups of BERT, and selectors over them (Bogoychev, 2021).

Every variable belongs to one group, decided by its original checkpoint name:

  embeddings  bert/embeddings/*: word, position and token-type tables and their LayerNorm
  attention   bert/encoder/layer_<i>/attention/*: query, key, value, the output
              projection and its LayerNorm (per layer)
  ffn         bert/encoder/layer_<i>/{intermediate,output}/*: the two dense layers and
              the output LayerNorm (per layer)
  pooler      bert/pooler/*
  heads       cls/* and the classifier's output_weights / output_bias (task heads)

Each group includes its own LayerNorm and biases (the paper leaves this open;
see papers.md). A selector string is a comma-separated list of items:

  attention          the whole group
  attention:3        layer 3 only
  attention:0-5      layers 0 to 5 inclusive
  re:<regex>         every variable whose original name matches (re.search);
                     it takes the rest of the string, commas included, so put it last
"""

import collections
import re

GROUPS = ("embeddings", "attention", "ffn", "pooler", "heads")
LAYERED_GROUPS = ("attention", "ffn")
_LAYER = re.compile(r"^bert/encoder/layer_(\d+)/(attention|intermediate|output)/")


def variable_group(name):
    """(group, layer index or None) of an original variable name.

    Raises:
      ValueError: for a name outside the BERT layout.
    """
    match = _LAYER.match(name)
    if match:
        group = "attention" if match.group(2) == "attention" else "ffn"
        return group, int(match.group(1))
    if name.startswith("bert/embeddings/"):
        return "embeddings", None
    if name.startswith("bert/pooler/"):
        return "pooler", None
    if name.startswith("cls/") or name in ("output_weights", "output_bias"):
        return "heads", None
    raise ValueError("Variable %s belongs to no parameter group." % name)


Selector = collections.namedtuple("Selector", ["text", "group", "first_layer", "last_layer", "pattern"])


def parse_selectors(text, flag="--freeze"):
    """Parses a selector string (see the module docstring).

    Args:
      text: e.g. "embeddings,attention:0-5" or "ffn,re:^cls/".
      flag: the flag named in errors.

    Returns:
      list of Selector; empty for an empty or None text.

    Raises:
      ValueError: naming the flag and the bad item.
    """
    selectors = []
    rest = (text or "").strip()
    while rest:
        if rest.startswith("re:"):
            try:
                pattern = re.compile(rest[3:])
            except re.error as error:
                raise ValueError("%s: bad regular expression %r: %s" % (flag, rest[3:], error)) from None
            selectors.append(Selector(rest, None, None, None, pattern))
            break
        item, _, rest = rest.partition(",")
        item, rest = item.strip(), rest.strip()
        if not item:
            continue
        group, _, layers = item.partition(":")
        if group not in GROUPS:
            raise ValueError(
                "%s: unknown parameter group %r in %r; expected one of %s, or re:<regex>."
                % (flag, group, text, ", ".join(GROUPS))
            )
        first = last = None
        if layers:
            if group not in LAYERED_GROUPS:
                raise ValueError("%s: %r: only %s have layers." % (flag, item, " and ".join(LAYERED_GROUPS)))
            match = re.fullmatch(r"(\d+)(?:-(\d+))?", layers)
            if not match:
                raise ValueError("%s: %r: layers must be N or N-M, e.g. %s:0-5." % (flag, item, group))
            first = int(match.group(1))
            last = int(match.group(2)) if match.group(2) else first
            if last < first:
                raise ValueError("%s: %r: the range is empty." % (flag, item))
        selectors.append(Selector(item, group, first, last, None))
    return selectors


def _matches(selector, name):
    if selector.pattern is not None:
        return selector.pattern.search(name) is not None
    group, layer = variable_group(name)
    if group != selector.group:
        return False
    return selector.first_layer is None or selector.first_layer <= layer <= selector.last_layer


def select(names, selectors, flag="--freeze", num_layers=None):
    """The names (in order) that any selector matches.

    Raises:
      ValueError: when a selector matches nothing (a typo or a layer beyond
        the model), naming it and the model's layer range.
    """
    chosen = []
    for selector in selectors:
        matched = [n for n in names if _matches(selector, n)]
        if not matched:
            where = " (the model has layers 0-%d)" % (num_layers - 1) if num_layers else ""
            raise ValueError("%s: %r matches no variable of this model%s." % (flag, selector.text, where))
        chosen.extend(matched)
    chosen = set(chosen)
    return [n for n in names if n in chosen]


def parameter_report(sizes, frozen):
    """Counts by group and layer, frozen or trainable.

    Args:
      sizes: {original name: number of parameters}, in model order.
      frozen: set of frozen names.

    Returns:
      dict: total, trainable, frozen, trainable_share; groups: {group:
      {parameters, trainable, frozen}}; layers: {"attention:<i>"/"ffn:<i>":
      {...}}; frozen_variables: the frozen names.
    """
    def bucket():
        return {"parameters": 0, "trainable": 0, "frozen": 0}

    groups = collections.OrderedDict((g, bucket()) for g in GROUPS)
    layers = collections.OrderedDict()
    for name, size in sizes.items():
        group, layer = variable_group(name)
        state = "frozen" if name in frozen else "trainable"
        targets = [groups[group]]
        if layer is not None:
            targets.append(layers.setdefault("%s:%d" % (group, layer), bucket()))
        for target in targets:
            target["parameters"] += size
            target[state] += size
    total = sum(sizes.values())
    frozen_count = sum(size for name, size in sizes.items() if name in frozen)
    return {
        "total": total,
        "trainable": total - frozen_count,
        "frozen": frozen_count,
        "trainable_share": (total - frozen_count) / total if total else 0.0,
        "groups": {g: v for g, v in groups.items() if v["parameters"]},
        "layers": dict(layers),
        "frozen_variables": [n for n in sizes if n in frozen],
    }


def format_report(report):
    """The report as log lines: a table by group, then by layer."""
    lines = ["%-14s %14s %14s %14s" % ("group", "parameters", "trainable", "frozen")]
    for name, row in list(report["groups"].items()) + list(report["layers"].items()):
        lines.append("%-14s %14d %14d %14d" % (name, row["parameters"], row["trainable"], row["frozen"]))
    lines.append(
        "%-14s %14d %14d %14d   trainable share %.1f%%"
        % ("total", report["total"], report["trainable"], report["frozen"], 100 * report["trainable_share"])
    )
    return "\n".join(lines)
