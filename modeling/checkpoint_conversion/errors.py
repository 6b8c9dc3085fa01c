"""`ConversionError`: a checkpoint that cannot be converted as it is."""


class ConversionError(ValueError):
    """Raised for input that cannot be mapped to the original BERT layout, or back.

    The message names the input file, the variable or config key, and what was
    expected. A ValueError, so the entry point prints it as one line.
    """
