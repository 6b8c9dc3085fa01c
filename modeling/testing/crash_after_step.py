"""run_pretraining.py's command line that SIGKILLs itself, or hangs, after a given step: the resume tests' failure.

  python -m modeling.testing.crash_after_step --crash_after_step=6 <run_pretraining.py flags>
  python -m modeling.testing.crash_after_step --hang_after_step=6 <run_pretraining.py flags>

The failure comes from a training-loop callback, after the loop that reaches
the step (and its checkpoint, if one is due): a crash at that moment, or a
process that stops making progress (a job to cancel, as a scheduler would
preempt it), saying so on stderr first.
"""

import os
import signal
import sys
import time

from absl import app, flags

import options
from modeling import pretraining

options.define_flags(pretraining.PretrainingOptions)  # run_pretraining.py's flags.
flags.DEFINE_integer("crash_after_step", None, "SIGKILL the process once training reaches this step.")
flags.DEFINE_integer("hang_after_step", None, "Sleep forever once training reaches this step.")
flags.register_multi_flags_validator(
    ["crash_after_step", "hang_after_step"], lambda given: sum(v is not None for v in given.values()) == 1,
    "Give exactly one of --crash_after_step and --hang_after_step.")
HANGING = "crash_after_step: hanging after step %d"


def kill_at(step_to_kill):
    """A training callback that SIGKILLs the process at `step_to_kill`."""

    def callback(step):
        if step == step_to_kill:
            os.kill(os.getpid(), signal.SIGKILL)

    return callback


def hang_at(step_to_hang):
    """A training callback that sleeps forever at `step_to_hang`, once it said so on stderr."""

    def callback(step):
        if step == step_to_hang:
            print(HANGING % step, file=sys.stderr, flush=True)
            while True:
                time.sleep(60)

    return callback


def main(_):
    run_options = options.from_flags(pretraining.PretrainingOptions)
    if flags.FLAGS.crash_after_step is not None:
        callback = kill_at(flags.FLAGS.crash_after_step)
    else:
        callback = hang_at(flags.FLAGS.hang_after_step)
    pretraining.run(run_options, callbacks=[callback])


if __name__ == "__main__":
    app.run(main)
