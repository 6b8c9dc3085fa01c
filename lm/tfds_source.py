"""LM1B from an already prepared TensorFlow Datasets directory (`--tfds_data_dir`); never a download.

TFDS's `lm1b` has the splits `train` and `test` (the held-out set), each
example a `text` feature holding one sentence.
"""


DATASET = "lm1b"


class TfdsSplit:
    """The lines of one split of a prepared TFDS dataset."""

    def __init__(self, data_dir, split, name=DATASET):
        import tensorflow_datasets as tfds  # pylint: disable=import-outside-toplevel

        self.data_dir, self.split, self.name = data_dir, split, name
        try:
            self.builder = tfds.builder(name, data_dir=data_dir)
            prepared = self.builder.is_prepared()
        except Exception as error:  # pylint: disable=broad-except
            raise ValueError("--tfds_data_dir=%s: cannot read %s (%s)." % (data_dir, name, error)) from None
        if not prepared:
            raise ValueError("--tfds_data_dir=%s holds no prepared %s dataset (nothing is downloaded; "
                             "prepare it with `tfds build %s --data_dir=%s` where there is internet)."
                             % (data_dir, name, name, data_dir))
        if split not in self.builder.info.splits:
            raise ValueError("--tfds_data_dir=%s: %s has no split %r (it has %s)."
                             % (data_dir, name, split, ", ".join(self.builder.info.splits)))

    def describe(self):
        return "TFDS %s/%s in %s" % (self.name, self.split, self.data_dir)

    def lines(self, seed=None, input_context=None):
        read_config = None
        if seed is not None:
            import tensorflow_datasets as tfds  # pylint: disable=import-outside-toplevel
            read_config = tfds.ReadConfig(shuffle_seed=seed, input_context=input_context)
        dataset = self.builder.as_dataset(split=self.split, shuffle_files=seed is not None,
                                          read_config=read_config)
        dataset = dataset.map(lambda example: example["text"])
        return dataset.repeat() if seed is not None else dataset

    def sample_lines(self, max_lines):
        """Up to `max_lines` sentences, in order (for learning a vocabulary)."""
        return [line.decode("utf-8") for line in self.lines().take(max_lines).as_numpy_iterator()
                if line.strip()]
