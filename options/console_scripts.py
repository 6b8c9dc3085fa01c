"""The console scripts of `pip install .`: `run_classifier.py --flags` as `python run_classifier.py --flags`.

pyproject.toml's [project.scripts] names one function here per top-level
entry point. Each runs the entry point's file as `__main__`, so its
`if __name__ == "__main__": app.run(main, flags_parser=...)` parses the
command line exactly as running the file does (`main(argv)` alone would skip
the flag parsing, and the entry points stay unchanged).

The file is the one beside the `options` package (the repository, or the
site-packages directory where pip puts the top-level modules), never one
found through sys.path: Python puts the console script's own directory (the
environment's bin/) first on sys.path, and there `run_classifier.py` is the
console script itself.
"""

import os
import runpy
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_entry_point(name, root=ROOT):
    """Runs `<root>/<name>.py` as `python <root>/<name>.py` would, with this process's argv.

    Raises:
      FileNotFoundError: the entry point is not installed beside the packages.
    """
    path = os.path.join(root, name + ".py")
    if not os.path.isfile(path):
        raise FileNotFoundError("%s.py is not installed beside the packages: no %s." % (name, path))
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0] else None
    if sys.path and script_dir and os.path.abspath(sys.path[0] or os.curdir) == script_dir:
        # As `python <root>/<name>.py`: the entry point's directory first, not bin/.
        sys.path[0] = root
    # Sets sys.argv[0] to the file while it runs, as the interpreter would.
    runpy.run_path(path, run_name="__main__")


def convert_checkpoint():
    run_entry_point("convert_checkpoint")


def create_pretraining_data():
    run_entry_point("create_pretraining_data")


def create_vocab():
    run_entry_point("create_vocab")


def export_model():
    run_entry_point("export_model")


def extract_features():
    run_entry_point("extract_features")


def measure_head_capacity():
    run_entry_point("measure_head_capacity")


def probe_attention_rank():
    run_entry_point("probe_attention_rank")


def reproduce_paper_tables():
    run_entry_point("reproduce_paper_tables")


def run_classifier():
    run_entry_point("run_classifier")


def run_lm():
    run_entry_point("run_lm")


def run_pretraining():
    run_entry_point("run_pretraining")


def run_squad():
    run_entry_point("run_squad")


def run_translation():
    run_entry_point("run_translation")


def unigram_baseline():
    run_entry_point("unigram_baseline")
