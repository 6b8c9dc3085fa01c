"""run_pretraining.py's command line that SIGKILLs itself after a given step: the resume tests' crash.

  python -m modeling.testing.crash_after_step --crash_after_step=6 <run_pretraining.py flags>

The kill comes from a training-loop callback, after the loop that reaches the
step (and its checkpoint, if one is due), like a crash at that moment.
"""

import os
import signal

from absl import app, flags

import options
from modeling import pretraining

options.define_flags(pretraining.PretrainingOptions)  # run_pretraining.py's flags.
flags.DEFINE_integer("crash_after_step", None, "SIGKILL the process once training reaches this step.")
flags.mark_flag_as_required("crash_after_step")


def kill_at(step_to_kill):
    """A training callback that SIGKILLs the process at `step_to_kill`."""

    def callback(step):
        if step == step_to_kill:
            os.kill(os.getpid(), signal.SIGKILL)

    return callback


def main(_):
    run_options = options.from_flags(pretraining.PretrainingOptions)
    pretraining.run(run_options, callbacks=[kill_at(flags.FLAGS.crash_after_step)])


if __name__ == "__main__":
    app.run(main)
