"""A subset of a plan: --rows and --seeds, and the earlier steps the chosen ones read from.

--rows takes row names as plan.md lists them ("transformer-tiny/ffn"), or
their last part where it names one row ("ffn" when the study has one
preset); --seeds takes seeds of the plan's runs. A chosen step also brings
every earlier step it reads from (plan.Step.reads_from: the first row, whose
folder holds the vocabulary the others read; the pre-training records; a
row's own pre-training before its probe), which the runner skips when they
are finished; the steps rows share (pre-training records) come with the rows
that read them.
"""


def parse_seeds(text):
    """The seeds of --seeds ("1,2"), as ints; ValueError naming the flag."""
    seeds = []
    for part in text.split(","):
        part = part.strip()
        try:
            seeds.append(int(part))
        except ValueError:
            raise ValueError("--seeds=%s: %r is not a seed; expected integers separated by commas, e.g. "
                             "--seeds=1,2." % (text, part)) from None
    return seeds


def resolve_rows(text, names):
    """The row names --rows gives, from the plan's `names` (a row's last part is enough when unambiguous).

    Raises:
      ValueError: naming the unknown or ambiguous name and the plan's rows.
    """
    chosen = []
    for given in (part.strip() for part in text.split(",")):
        if given in names:
            matches = [given]
        else:
            matches = [name for name in names if name.rsplit("/", 1)[-1] == given]
        if not matches:
            raise ValueError("--rows=%s: the plan has no row %r; its rows: %s." % (text, given, ", ".join(names)))
        if len(matches) > 1:
            raise ValueError("--rows=%s: %r names several rows (%s); give the whole name." % (
                text, given, ", ".join(matches)))
        chosen.append(matches[0])
    return chosen


def select(steps, rows=None, seeds=None):
    """The steps of --rows and --seeds (each a comma-separated string, or None for all), in plan order.

    Returns:
      (chosen steps, the names of the steps added because a chosen one reads from them).

    Raises:
      ValueError: naming the flag, for an unknown row or seed.
    """
    if not rows and not seeds:
        return list(steps), []
    names = []
    for step in steps:
        if step.row and step.row not in names:
            names.append(step.row)
    wanted_rows = set(resolve_rows(rows, names)) if rows else set(names)
    wanted_seeds = None
    if seeds:
        wanted_seeds = set(parse_seeds(seeds))
        known = sorted({step.seed for step in steps if step.seed is not None})
        if not known:
            raise ValueError("--seeds=%s: this plan runs each row once, with no seed of its own to choose; leave "
                             "--seeds out." % seeds)
        unknown = sorted(wanted_seeds - set(known))
        if unknown:
            raise ValueError("--seeds=%s: the plan's runs have seeds %s, not %s." % (
                seeds, ", ".join(map(str, known)), ", ".join(map(str, unknown))))
    return with_dependencies(steps, {step.name for step in steps if step.row in wanted_rows and (
        wanted_seeds is None or step.seed is None or step.seed in wanted_seeds)})


def with_dependencies(steps, names):
    """(the steps named and every earlier step they read from, transitively, in plan order; the added names)."""
    chosen, added = set(names), []
    # Backwards, so that a step brought in brings the steps it reads from in turn.
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        if step.name in chosen:
            continue
        if any(later.name in chosen and later.reads_from(step) for later in steps[index + 1:]):
            chosen.add(step.name)
            added.append(step.name)
    return [step for step in steps if step.name in chosen], added[::-1]
