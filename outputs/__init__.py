"""Output files that appear only when complete (write, then rename)."""

from outputs.atomic import INCOMPLETE_SUFFIX, incomplete_path, write_text, writing

__all__ = ["INCOMPLETE_SUFFIX", "incomplete_path", "write_text", "writing"]
