"""Command-line options declared once: the flag and the typed field (see declaration.py)."""

from options.declaration import Options, default_of, define_flags, flags_parser, from_flags, option, run_or_exit

__all__ = ["Options", "default_of", "define_flags", "flags_parser", "from_flags", "option", "run_or_exit"]
