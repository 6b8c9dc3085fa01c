"""One declaration per command-line option: its flag and its typed field.

An options class is a keyword-only dataclass whose fields are declared with
`option(default, help)`. `define_flags(cls)` defines one absl flag per field
(name, type from the annotation, default, help) and `from_flags(cls)` returns
the parsed flags as an instance; a library caller builds the same instance
directly. So `--head_size` is the field `head_size`, read as
`options.head_size` where it takes effect.

Fields declared with `new=True` are this codebase's additions. The original
flags are defined under the entry point's module and ours under a second
module, so `--helpfull` lists the original flags first, as the original
lists them, then ours (`--help` lists the original ones).
"""

import dataclasses
import re
import sys
import typing

from absl import flags

from options import paths

REQUIRED = dataclasses.MISSING
NEW_FLAGS_SECTION = "%s (flags new in this codebase)"

_DEFINE_BY_TYPE = {
    bool: flags.DEFINE_bool,
    int: flags.DEFINE_integer,
    float: flags.DEFINE_float,
    str: flags.DEFINE_string,
}


def option(default=REQUIRED, help="", *, choices=None, minimum=None, new=False,  # pylint: disable=redefined-builtin
           path=None):
    """A dataclass field that is also a command-line flag.

    Args:
      default: the flag's default; omitted for a required flag.
      help: the flag's help text.
      choices: the allowed values of a string option (an enum flag).
      minimum: the smallest allowed value of a number, checked by
        `Options.validate` (1: "must be positive").
      new: True for a flag the original BERT code does not have.
      path: a path's kind (options/paths.py: file, dir, output_file,
        output_dir), checked by `Options.validate` when the flag is set.
    """
    if path is not None and path not in paths.KINDS:
        raise ValueError("option(path=%r): expected one of %s." % (path, ", ".join(paths.KINDS)))
    metadata = dict(help=help, choices=tuple(choices) if choices else None, minimum=minimum, new=new,
                    path=path)
    if default is REQUIRED:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def default_of(options_class, name, default):
    """The option `name` as `options_class` declares it, with this entry point's own default.

    The flag keeps its one declaration (help, choices, checks): run_translation.py's
    warm-up (16000 steps) is the same --num_warmup_steps as run_pretraining.py's
    (10000). Usage, in a subclass: `num_warmup_steps: int = default_of(StepsOptions, "num_warmup_steps", 16000)`.

    Raises:
      TypeError: when `options_class` has no option of that name.
    """
    fields = getattr(options_class, "__dataclass_fields__", {})
    if name not in fields or "help" not in fields[name].metadata:
        raise TypeError("%s declares no option %r." % (options_class.__name__, name))
    metadata = dict(fields[name].metadata, declared_by="%s.%s" % (options_class.__module__, options_class.__qualname__))
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(kw_only=True)
class Options:
    """Base of the options classes: the checks every declared option gets."""

    def __init_subclass__(cls, **kwargs):
        """Refuses an option named as a method of the class or a base: the field would hide it."""
        super().__init_subclass__(**kwargs)
        methods = {name: klass for klass in reversed(cls.__mro__) for name, value in vars(klass).items()
                   if callable(value) or isinstance(value, (property, staticmethod, classmethod))}
        for klass in cls.__mro__:
            for name in vars(klass).get("__annotations__", {}):
                if name in methods:
                    raise TypeError("Option %s.%s has the name of the method %s.%s, which it would hide."
                                    % (klass.__name__, name, methods[name].__name__, name))

    def validate(self):
        """Checks `choices`, `minimum` and `path` of every field.

        Subclasses add their cross-field checks and call `super().validate()`.

        Raises:
          ValueError: naming the flag, its value and what was expected.
        """
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            choices, minimum = field.metadata.get("choices"), field.metadata.get("minimum")
            if choices and value is not None and value not in choices:
                raise ValueError("--%s=%s is not supported; expected one of %s."
                                 % (field.name, value, ", ".join(choices)))
            if minimum is not None and value is not None and value < minimum:
                expected = "positive" if minimum == 1 else ">= %s" % minimum
                raise ValueError("--%s=%s must be %s." % (field.name, value, expected))
            if field.metadata.get("path") and value:
                paths.check("--" + field.name, value, field.metadata["path"])


def _flag_type(annotation):
    """bool, int, float or str from a field's annotation (Optional[X] -> X)."""
    if typing.get_origin(annotation) is typing.Union:
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if annotation not in _DEFINE_BY_TYPE:
        raise TypeError("An option must be bool, int, float or str (or Optional), not %r." % annotation)
    return annotation


def _calling_module(depth=2):
    """The module name absl would give the caller's flags (the script path for __main__)."""
    name = sys._getframe(depth).f_globals.get("__name__")  # pylint: disable=protected-access
    return sys.argv[0] if name == "__main__" else name


def define_flags(options_class, flag_values=flags.FLAGS):
    """Defines one absl flag per field of `options_class`; required fields are marked so."""
    module = _calling_module()
    hints = typing.get_type_hints(options_class)
    for field in dataclasses.fields(options_class):
        if "help" not in field.metadata:
            raise TypeError("%s.%s is not declared with option()." % (options_class.__name__, field.name))
        meta = field.metadata
        required = field.default is dataclasses.MISSING
        default = None if required else field.default
        kwargs = dict(flag_values=flag_values,
                      module_name=NEW_FLAGS_SECTION % module if meta["new"] else module)
        if meta["choices"]:
            flags.DEFINE_enum(field.name, default, list(meta["choices"]), meta["help"], **kwargs)
        else:
            _DEFINE_BY_TYPE[_flag_type(hints[field.name])](field.name, default, meta["help"], **kwargs)
        if required:
            flags.mark_flag_as_required(field.name, flag_values=flag_values)


def from_flags(options_class, flag_values=flags.FLAGS):
    """An instance of `options_class` holding the parsed flags of the same names."""
    return options_class(**{field.name: flag_values[field.name].value
                            for field in dataclasses.fields(options_class)})


def run_or_exit(program, run, options):
    """Runs; bad input, a diverged run or a failed child process ends with a one-line message, no traceback.

    A ChildProcessError's message names the child's log, which holds its traceback.
    """
    try:
        return run(options)
    except (ValueError, FileNotFoundError, FloatingPointError, ChildProcessError) as error:
        sys.exit("%s: error: %s" % (program, error))


# absl's message for a value its parser refuses: "flag --name=value: reason".
_BAD_VALUE = re.compile(r"^flag --([^=]+)=(.*?): ")


def _usage_message(error, options_class, flag_values):
    """One line saying what is wrong with the command line, naming the flag."""
    if isinstance(error, flags.IllegalFlagValueError) and flag_values.is_parsed():
        # Parsed, then a validator failed: mark_flag_as_required's, for a missing flag.
        missing = ["--" + field.name for field in dataclasses.fields(options_class)
                   if field.default is dataclasses.MISSING and flag_values[field.name].value is None]
        if missing:
            return "missing required flag%s %s." % ("s" if len(missing) > 1 else "", ", ".join(missing))
    match = _BAD_VALUE.match(str(error))
    if match and match.group(1) in flag_values:
        name, value = match.groups()
        parser = flag_values[name].parser
        if isinstance(parser, flags.EnumParser):
            expected = "one of " + ", ".join(parser.enum_values)
        else:
            expected = {flags.BooleanParser: "true or false", flags.IntegerParser: "an integer",
                        flags.FloatParser: "a number"}.get(type(parser))
        if expected:
            return "--%s=%s is not valid; expected %s." % (name, value, expected)
    message = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return message if message.endswith((".", "?")) else message + "."


def flags_parser(program, options_class, flag_values=flags.FLAGS):
    """An `app.run` flags_parser: a bad command line ends with one line, no help text.

    `program: error: <what is wrong>. Try --help.` replaces absl's "FATAL Flags
    parsing error" block (a line per missing flag), and `--nobool=1`, which
    absl lets escape as a traceback.

    Usage: `app.run(main, flags_parser=flags_parser("x.py", XOptions))`.
    """
    def parse(argv):
        try:
            return flag_values(argv)
        except (flags.Error, ValueError) as error:
            sys.exit("%s: error: %s Try --help." % (program, _usage_message(error, options_class, flag_values)))
    return parse
