"""`--preset`: a family's named set of flag values, applied under the flags the command line gives.

Each family declares its presets (lm/presets.py, nmt/presets.py); this is how
any of them is applied, so that a flag given on the command line always wins.
"""

import dataclasses


def given_flags(options):
    """The fields of `options` that differ from their declared defaults (a library caller's 'given')."""
    return {field.name for field in dataclasses.fields(options)
            if field.default is dataclasses.MISSING or getattr(options, field.name) != field.default}


def apply_preset(options, presets, given=None):
    """`options` with --preset's values for every flag not given.

    Args:
      options: options with a `preset` field (LmOptions, NmtOptions).
      presets: {preset: {flag: value}}, the family's (lm/presets.py, nmt/presets.py).
      given: names of the flags given on the command line; default: those
        whose value differs from the declared default.

    Raises:
      ValueError: for an unknown preset, naming the known ones.
    """
    if not options.preset:
        return options
    if options.preset not in presets:
        raise ValueError("--preset=%s is not known; expected one of %s." % (options.preset, ", ".join(presets)))
    given = given_flags(options) if given is None else set(given)
    return dataclasses.replace(options, **{name: value for name, value in presets[options.preset].items()
                                           if name not in given})
