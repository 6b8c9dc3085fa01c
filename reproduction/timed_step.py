"""A step's command as a Slurm job runs it: timed over the job's attempts, where it ran recorded once it succeeds.

    python -m reproduction.timed_step NAME FIRST_OUTPUT DTYPE -- COMMAND...

The job script of --launcher=slurm (reproduction/slurm.py) runs the step's
plan.sh line (srun and all) through this, so that a run on a cluster leaves the
record a run of the local launcher leaves: while COMMAND runs, a timing.Clock
on the step's first output counts its time over every attempt (a requeued job
counts on from the last); once COMMAND exits 0, <FIRST_OUTPUT>.machine.json
records the step NAME, its DTYPE ("" for none), the CPU of the job's first node
and the cores this process may use there, and the wall time. The exit code is
COMMAND's.
"""

import os
import subprocess
import sys

from reproduction import timing


def main(argv):
    if len(argv) < 5 or argv[3] != "--":
        raise SystemExit("usage: python -m reproduction.timed_step NAME FIRST_OUTPUT DTYPE -- COMMAND...")
    name, first_output, dtype, command = argv[0], argv[1], argv[2] or None, argv[4:]
    clock = timing.Clock(first_output)
    try:
        code = subprocess.call(command)
    finally:
        seconds, attempts = clock.stop()
    if code == 0:
        timing.write_machine_record(first_output, name, dtype, seconds, len(os.sched_getaffinity(0)), 1, attempts)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
