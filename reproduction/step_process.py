"""One step of a plan in a process of its own, on its share of the cores: `python -m reproduction.step_process`.

The runner starts one such process per step when --parallel_runs runs
several at once (reproduction/processes.py). The child runs the step exactly
as the runner does in process: the same library function with the options
built from the step's flags (`runner.call_step`), so a step's outputs do not
depend on whether it ran alone or beside others, only on its thread count.

The child turns oneDNN on before TensorFlow loads, as every entry point
does (training/onednn.py). Then, before TensorFlow creates its thread pools
(at its first operation), it
- asks the kernel to kill it when its parent dies (a killed study leaves no
  step running on unseen, writing into the folder its re-run resumes from),
- pins itself to its cores (os.sched_setaffinity): the threads TensorFlow,
  oneDNN and tf.data start later inherit them,
- sets TensorFlow's intra- and inter-op threads (and OMP_NUM_THREADS, for a
  oneDNN built with OpenMP) to its number of cores.

Its one argument is a JSON file written by the parent:
  {"module", "function": the step's run function; "options_module", "options_class": its options class;
   "flags": the step's flags; "given": whether the function takes `given`; "cores": [CPU numbers];
   "parent": the parent's pid}
"""

import ctypes
import importlib
import json
import os
import signal
import sys

from training import onednn

onednn.enable()  # before TensorFlow loads

import tensorflow as tf  # pylint: disable=wrong-import-position
from absl import logging  # pylint: disable=wrong-import-position

from reproduction import runner  # pylint: disable=wrong-import-position

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent):
    """SIGKILL when the parent exits (Linux); exits now if the parent is already gone."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):
        pass  # not Linux: the parent's own clean-up stops its children
    if os.getppid() != parent:
        sys.exit(1)


def main(spec_path):
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    _die_with_parent(spec["parent"])
    cores = spec["cores"]
    os.sched_setaffinity(0, cores)
    os.environ["OMP_NUM_THREADS"] = str(len(cores))
    tf.config.threading.set_intra_op_parallelism_threads(len(cores))
    tf.config.threading.set_inter_op_parallelism_threads(len(cores))
    logging.set_verbosity(logging.INFO)
    logging.use_absl_handler()
    options_class = getattr(importlib.import_module(spec["options_module"]), spec["options_class"])
    run_function = getattr(importlib.import_module(spec["module"]), spec["function"])
    runner.call_step(options_class, run_function, spec["flags"])


if __name__ == "__main__":
    main(sys.argv[1])
