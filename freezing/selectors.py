"""Named parameter groups of a model family, and the selectors over them.

A model family declares its groups once, as a `ParameterGroups` table of
(group, regular expression over original variable names); a pattern with a
`(?P<layer>\\d+)` group makes its group selectable per layer. BERT's table is
`modeling.parameter_groups.BERT_PARAMETER_GROUPS`.

A selector string is a comma-separated list of items:

  attention          the whole group
  attention:3        layer 3 only
  attention:0-5      layers 0 to 5 inclusive
  re:<regex>         every variable whose original name matches (re.search);
                     it takes the rest of the string, commas included, so put it last

A family with several stacks of layers (the translation model's encoder and
decoder) names them with a `(?P<stack>...)` group in its patterns and lists
them as `stacks`; a stack may then follow the group:

  attention:encoder    the encoder's attention
  ffn:decoder:0-1      the decoder's first two feed-forward layers
  ffn:0-1              layers 0 and 1 of every stack
"""

import collections
import difflib
import re

Selector = collections.namedtuple("Selector", ["text", "group", "first_layer", "last_layer", "pattern", "stack"],
                                  defaults=(None,))


class ParameterGroups:
    """A table of named parameter groups: every variable belongs to exactly one."""

    def __init__(self, rules, stacks=()):
        """
        Args:
          rules: sequence of (group name, regex over original names); the
            first matching rule decides. A group may have several rules.
          stacks: the names a `(?P<stack>...)` pattern group can take, in order.
        """
        self._rules = [(group, re.compile(pattern)) for group, pattern in rules]
        self.groups = tuple(dict.fromkeys(group for group, _ in self._rules))
        self.layered = tuple(dict.fromkeys(g for g, p in self._rules if "layer" in p.groupindex))
        self.stacks = tuple(stacks)

    def locate(self, name):
        """(group, stack or None, layer index or None) of an original variable name.

        Raises:
          ValueError: for a name that no rule matches.
        """
        for group, pattern in self._rules:
            match = pattern.search(name)
            if match:
                found = match.groupdict()
                layer = found.get("layer")
                return group, found.get("stack"), int(layer) if layer is not None else None
        raise ValueError("Variable %s belongs to no parameter group." % name)

    def group_of(self, name):
        """(group, layer index or None) of an original variable name (see `locate`)."""
        group, _, layer = self.locate(name)
        return group, layer

    def label(self, name):
        """A variable's group as --freeze selects it: "embeddings", "ffn:3", "attention:decoder:1"."""
        group, stack, layer = self.locate(name)
        if layer is None:
            return group
        return "%s:%s:%d" % (group, stack, layer) if stack else "%s:%d" % (group, layer)

    def parse_selectors(self, text, flag="--freeze", num_layers=None):
        """Parses and checks a selector string before any model exists.

        Args:
          text: e.g. "embeddings,attention:0-5" or "ffn,re:^cls/".
          flag: the flag named in errors.
          num_layers: the model's layer count, to refuse layers beyond it; with
            stacks, {stack: layer count}.

        Returns:
          list of Selector; empty for an empty or None text.

        Raises:
          ValueError: naming the flag, the bad item and what is allowed.
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
            if item:
                selectors.append(self._parse_item(item, text, flag, num_layers))
        return selectors

    def _parse_item(self, item, text, flag, num_layers):
        group, _, layers = item.partition(":")
        if group not in self.groups:
            close = difflib.get_close_matches(group, self.groups, n=1)
            raise ValueError(
                "%s: unknown parameter group %r in %r; expected one of %s, or re:<regex>%s."
                % (flag, group, text, ", ".join(self.groups),
                   " (did you mean %s?)" % close[0] if close else "")
            )
        stack = None
        if self.stacks:
            first, _, rest = layers.partition(":")
            if first in self.stacks:
                stack, layers = first, rest
            elif first and not first[0].isdigit():
                raise ValueError("%s: %r: unknown stack %r; expected one of %s." % (
                    flag, item, first, ", ".join(self.stacks)))
        if isinstance(num_layers, dict):
            num_layers = num_layers[stack] if stack else max(num_layers.values())
        if not layers:
            return Selector(item, group, None, None, None, stack)
        if group not in self.layered:
            raise ValueError("%s: %r: only %s have layers." % (flag, item, " and ".join(self.layered)))
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", layers)
        if not match:
            raise ValueError("%s: %r: layers must be N or N-M, e.g. %s:0-5." % (flag, item, group))
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first:
            raise ValueError("%s: %r: the range is empty." % (flag, item))
        if num_layers is not None and last >= num_layers:
            raise ValueError(_no_match_message(flag, item, num_layers))
        return Selector(item, group, first, last, None, stack)

    def _matches(self, selector, name):
        if selector.pattern is not None:
            return selector.pattern.search(name) is not None
        group, stack, layer = self.locate(name)
        if group != selector.group or (selector.stack and stack != selector.stack):
            return False
        return selector.first_layer is None or selector.first_layer <= layer <= selector.last_layer

    def select(self, names, selectors, flag="--freeze", num_layers=None):
        """The names (in order) that any selector matches.

        Raises:
          ValueError: when a selector matches nothing (a regex that fits no
            name, a layer beyond the model), naming it.
        """
        chosen = set()
        for selector in selectors:
            matched = [n for n in names if self._matches(selector, n)]
            if not matched:
                raise ValueError(_no_match_message(
                flag, selector.text, num_layers.get(selector.stack) if isinstance(num_layers, dict) else num_layers))
            chosen.update(matched)
        return [n for n in names if n in chosen]

    def report(self, sizes, frozen):
        """Counts by group and layer, frozen or trainable.

        Args:
          sizes: {original name: number of parameters}, in model order.
          frozen: set of frozen names.

        Returns:
          dict: total, trainable, frozen, trainable_share; groups: {group:
          {parameters, trainable, frozen}}; layers: {"<group>:<i>": {...}}
          ("<group>:<stack>:<i>" with stacks);
          frozen_variables: the frozen names.
        """
        def bucket():
            return {"parameters": 0, "trainable": 0, "frozen": 0}

        groups = collections.OrderedDict((g, bucket()) for g in self.groups)
        layers = collections.OrderedDict()
        for name, size in sizes.items():
            group, _, layer = self.locate(name)
            state = "frozen" if name in frozen else "trainable"
            targets = [groups[group]]
            if layer is not None:
                targets.append(layers.setdefault(self.label(name), bucket()))
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


def _no_match_message(flag, text, num_layers):
    where = " (the model has layers 0-%d)" % (num_layers - 1) if num_layers else ""
    return "%s: %r matches no variable of this model%s." % (flag, text, where)


def format_report(report):
    """The report as log lines: a table by group, then by layer."""
    lines = ["%-20s %14s %14s %14s" % ("group", "parameters", "trainable", "frozen")]
    for name, row in list(report["groups"].items()) + list(report["layers"].items()):
        lines.append("%-20s %14d %14d %14d" % (name, row["parameters"], row["trainable"], row["frozen"]))
    lines.append(
        "%-20s %14d %14d %14d   trainable share %.1f%%"
        % ("total", report["total"], report["trainable"], report["frozen"], 100 * report["trainable_share"])
    )
    return "\n".join(lines)
