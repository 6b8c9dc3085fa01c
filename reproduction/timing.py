"""How long a study's steps take: wall time counted over a step's attempts, and the time the steps left need.

A step stopped part-way (a session's end, a kill, a crash) resumes from its checkpoints when run again, so its
time is that of all its attempts. While a step runs, its `Clock` writes the time so far, every minute, to
<output>.elapsed.json beside its first output; the next attempt counts on from there, and once the step finishes
its machine record (<output>.machine.json, `machine_record`) gives the total and the number of attempts, in
place of that file. A kill loses at most the last minute.

From the machine records of the steps finished under --output_dir or kept in --runs_dir, `measured_lines` says,
row by row, how long a run took and how long the steps left should take at that pace, less what the steps under
way (`under_way`: an <output>.elapsed.json and no record) have run: --dry_run prints it, and the runner logs the
total before it starts and counts it in its ETA.
"""

import collections
import json
import os
import platform
import statistics
import threading
import time
from importlib import metadata

import outputs
from reproduction import plan as plan_lib
from training import compute_dtype

ELAPSED_SUFFIX = ".elapsed.json"
UPDATE_SECONDS = 60.0  # how often a running step's time so far is written


def duration(seconds):
    """'1h02m' from an hour on, else '3m05s'."""
    seconds = int(round(seconds))
    return "%dh%02dm" % (seconds // 3600, seconds % 3600 // 60) if seconds >= 3600 else \
        "%dm%02ds" % (seconds // 60, seconds % 60)


def _read_json(path):
    """The JSON object in `path`, or {} if there is none (or only a file cut short)."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def machine_record(name, dtype, seconds, cores, parallel_runs, attempts=1):
    """What <output>.machine.json says of the finished step `name`: where and how its last attempt ran (the CPU,
    `cores` it could use, as many threads, runs at once), its dtype, and the wall time of all its attempts."""
    return dict(step=name, cpu=compute_dtype.describe_cpu(), dtype=dtype, cores=cores, threads=cores,
                parallel_runs=parallel_runs, seconds=round(seconds, 1), attempts=attempts,
                finished=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), tensorflow=metadata.version("tensorflow"),
                python=platform.python_version())


def write_machine_record(first_output, *args, **kwargs):
    """Writes a finished step's <first output>.machine.json (machine_record(*args, **kwargs)) and forgets its
    time so far, which the record now holds."""
    record = machine_record(*args, **kwargs)
    outputs.write_text(first_output + plan_lib.MACHINE_SUFFIX, json.dumps(record, indent=1, sort_keys=True) + "\n")
    forget(first_output)


class Clock:
    """The wall time of one step over all its attempts; a daemon thread writes it every UPDATE_SECONDS.

    Started when an attempt starts, with the step's first output (its folder exists by then); `stop()` writes
    the total and returns (seconds, attempts).
    """

    def __init__(self, first_output):
        self.path = first_output + ELAPSED_SUFFIX
        earlier = _read_json(self.path)
        self.earlier, self.attempts = float(earlier.get("seconds", 0.0)), int(earlier.get("attempts", 0)) + 1
        self.started = time.time()
        self._stopped = threading.Event()
        self._write()
        self._thread = threading.Thread(target=self._tick, name="clock of " + first_output, daemon=True)
        self._thread.start()

    def seconds(self):
        return self.earlier + time.time() - self.started

    def _write(self, seconds=None):
        seconds = self.seconds() if seconds is None else seconds
        outputs.write_text(self.path, json.dumps(dict(seconds=round(seconds, 1), attempts=self.attempts)))

    def _tick(self):
        while not self._stopped.wait(UPDATE_SECONDS):
            self._write()

    def stop(self):
        self._stopped.set()
        self._thread.join()
        seconds = self.seconds()
        self._write(seconds)
        return seconds, self.attempts


def forget(first_output):
    """Removes a finished step's time so far: its machine record holds the total now."""
    path = first_output + ELAPSED_SUFFIX
    if os.path.exists(path):
        os.remove(path)


def records(steps, archive=None):
    """{step name: machine record} of the steps with one under --output_dir, else kept in `archive` (or None)."""
    found = {}
    for step in steps:
        record = _read_json(step.machine_file()) or (_read_json(archive.machine_file(step)) if archive else {})
        if record.get("seconds") is not None:
            found[step.name] = record
    return found


def finished(steps, archive=None):
    """The names of the steps finished under --output_dir or kept in `archive` (or None), measured or not."""
    return {step.name for step in steps if step.is_done() or (archive is not None and archive.holds(step))}


def under_way(steps, done=()):
    """{step name: dict(seconds, attempts)} of the unfinished steps (not in `done`) that have run for a while:
    stopped part-way, or running now, with their time so far under --output_dir."""
    found = {}
    for step in steps:
        if step.name not in done:
            so_far = _read_json(step.outputs[0] + ELAPSED_SUFFIX)
            if so_far.get("seconds") is not None:
                found[step.name] = dict(seconds=float(so_far["seconds"]), attempts=int(so_far.get("attempts", 1)))
    return found


def _group(step):
    return step.row or step.name


def estimates(steps, measured):
    """{step name: seconds} of the steps without a record in `measured`: the median run of the step's row and
    stage, else of its stage, in the records; steps of a stage never measured are left out."""
    by_row, by_stage = collections.defaultdict(list), collections.defaultdict(list)
    for step in steps:
        if step.name in measured:
            by_row[_group(step), step.stage].append(measured[step.name]["seconds"])
            by_stage[step.stage].append(measured[step.name]["seconds"])
    found = {}
    for step in steps:
        if step.name not in measured:
            same = by_row.get((_group(step), step.stage)) or by_stage.get(step.stage)
            if same:
                found[step.name] = statistics.median(same)
    return found


def _setting(record):
    """How a record's run ran: its CPU, cores and runs side by side."""
    return "%s, %s core(s) a run, %s at a time" % (record.get("cpu", "unknown CPU"), record.get("cores", "?"),
                                                     record.get("parallel_runs", 1))


def measured_lines(steps, measured, done=(), parallel_runs=None, started=None):
    """The markdown lines on the times measured so far (`measured`: records()) and those the rest should take.

    done: the names of the finished steps (finished(); those with a record count as finished too), whether
    or not a record tells their time (runs kept from before the records were written have none).
    parallel_runs: how many steps the rest would run at once (None: as the records ran, the most common).
    started: under_way() of the unfinished steps, or None; each is expected to need its estimate less the
    time it has run so far (nothing once that is spent).
    Returns [] when no step has a record and none is under way.
    """
    started = started or {}
    done = set(done) | set(measured)
    started_lines = _started_lines(started, done)
    if not measured:
        return ["## Times measured so far", ""] + started_lines if started_lines else []
    expected = {name: max(0.0, seconds - started.get(name, {}).get("seconds", 0.0))
                for name, seconds in estimates(steps, measured).items() if name not in done}
    groups = collections.OrderedDict()
    for step in steps:
        groups.setdefault(_group(step), []).append(step)
    lines = ["## Times measured so far",
             "",
             "From the machine records of %d finished step(s) (here and in --runs_dir): the wall time of a run, "
             "over all its attempts where it was stopped and resumed; \"timed\" counts the finished runs with a "
             "record." % len(measured),
             "",
             "| row | finished | timed | time a run (median) | range | left | expected for those left |",
             "|---|---|---|---|---|---|---|"]
    for name, group in groups.items():
        seconds = [measured[step.name]["seconds"] for step in group if step.name in measured]
        left = [step for step in group if step.name not in done]
        lines.append("| %s | %d of %d | %d | %s | %s | %d | %s |" % (
            name, len(group) - len(left), len(group), len(seconds),
            duration(statistics.median(seconds)) if seconds else "—",
            "%s – %s" % (duration(min(seconds)), duration(max(seconds))) if len(seconds) > 1 else "—", len(left),
            duration(sum(expected[step.name] for step in left if step.name in expected)) if left else "—"))
    settings = collections.Counter(_setting(record) for record in measured.values())
    if parallel_runs is None:
        parallel_runs = collections.Counter(record.get("parallel_runs", 1) for record in measured.values()
                                            ).most_common(1)[0][0]
    lines += ["", "Measured on: %s." % "; ".join("%s (%d run(s))" % item for item in settings.most_common())]
    last_only = sorted(name for name, record in measured.items() if "attempts" not in record)
    if last_only:
        lines.append("Records written before attempts were counted give the last attempt only, a lower bound for a "
                     "run stopped and resumed: %s." % ("all of them (%d)" % len(last_only) if len(last_only) == len(
                         measured) else ", ".join(last_only)))
    lines += started_lines
    left = [step for step in steps if step.name not in done]
    unknown = [step.name for step in left if step.name not in expected]
    if left:
        total = sum(expected.values())
        lines.append("The %d step(s) left: about %s of runs (each row's median so far%s), so about %s with %d at a "
                     "time on machines like these%s." % (
                         len(left), duration(total), ", less what those under way have run" if any(
                             step.name in started for step in left) else "",
                         duration(total / max(1, min(parallel_runs, len(left)))),
                         parallel_runs, "; not counted, no run of their stage measured yet: " + ", ".join(unknown)
                         if unknown else ""))
    else:
        lines.append("Every step is finished.")
    return lines


def _started_lines(started, done):
    """The line naming the unfinished steps that have run for a while, and for how long; [] if none."""
    names = [name for name in started if name not in done]
    if not names:
        return []
    return ["Under way (running now, or stopped part-way and resumed from their checkpoints when run again): %s." %
            ", ".join("%s (%s so far, %d attempt(s))" % (name, duration(started[name]["seconds"]),
                                                         started[name]["attempts"]) for name in names)]
