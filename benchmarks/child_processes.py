"""The parent side of the turn-taking benchmarks: one child process per contender.

Each contender runs in its own process (so its peak memory is its own), all
started together, then driven in turns, one round each: a, b, c, a, b, ...
so that load drift on a shared machine affects all alike; a child waits on its
stdin, idle, while another runs (protocol: child_protocol.py).
"""

import statistics
import subprocess
import tempfile

from benchmarks import benchmark_utils, child_protocol


class Child:
    """One contender's process, started with `args` (its first line of output must be "ready")."""

    def __init__(self, name, args, cwd):
        self.name = name
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=cwd)

    def send(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def expect(self, kind):
        """The fields of the next protocol line, which must be of `kind`."""
        for line in self.process.stdout:
            if line.startswith(child_protocol.TAG):
                fields = line[len(child_protocol.TAG):].split()
                if fields[0] != kind:
                    break
                return fields[1:]
        self.process.kill()
        self.process.wait()
        self.log.seek(0)
        tail = self.log.read()[-3000:]
        raise RuntimeError("The %s child did not report %r; its stderr ends with:\n%s"
                           % (self.name, kind, tail))

    def finish(self):
        self.send("quit")
        self.process.stdin.close()
        fields = self.expect("memory")
        self.process.wait()
        self.log.close()
        return fields


def take_turns(commands, warmup_rounds, timed_rounds, cwd):
    """Runs the children {name: args} in turns.

    Returns:
      {name: dict(params, build_seconds, rss_built_kb, seconds [timed rounds],
                  values [the value each timed round reported], peak_kb, rss_kb)}.
    """
    children = {name: Child(name, args, cwd) for name, args in commands.items()}  # Built concurrently.
    try:
        results = {}
        for name, child in children.items():
            params, build_seconds, rss_built = child.expect("ready")
            results[name] = dict(params=int(params), build_seconds=float(build_seconds),
                                 rss_built_kb=int(rss_built), seconds=[], values=[])
        for round_index in range(warmup_rounds + timed_rounds):
            for name, child in children.items():
                child.send("run")
                seconds, value = child.expect("round")
                if round_index >= warmup_rounds:
                    results[name]["seconds"].append(float(seconds))
                    results[name]["values"].append(float(value))
        for name, child in children.items():
            peak, rss = child.finish()
            results[name].update(peak_kb=int(peak), rss_kb=int(rss))
        return results
    finally:
        for child in children.values():
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait()


def paired_ratios(results, names, reference):
    """{name: median over rounds of name's round time / reference's} (> 1: reference faster).

    Rounds of the same index ran back to back, under the same load.
    """
    return {name: statistics.median(other / ours for other, ours in
                                    zip(results[name]["seconds"], results[reference]["seconds"]))
            for name in names if name != reference}


def table_row(label, results, names, reference, sequences_per_round):
    """[label, seq/s and spread per name, ours/X per other name, peak MB per name] as strings."""
    row = [label]
    for name in names:
        median, spread = benchmark_utils.median_and_spread(results[name]["seconds"])
        row += ["%.2f" % (sequences_per_round / median), "%.0f%%" % (100 * spread)]
    paired = paired_ratios(results, names, reference)
    row += ["%.3f" % paired[name] for name in names if name != reference]
    row += ["%.0f" % (results[name]["peak_kb"] / 1024) for name in names]
    return row


def print_table(first_column, rows, names, reference, peak_note=""):
    """Prints the legend and the table of `table_row` rows."""
    print()
    print("sequences/s of the median round, spread = (max - min) / median of the round times;")
    print("%s/X = median over rounds of X's round time / %s's for the rounds of an index "
          "(> 1: %s faster);" % (reference, reference, reference))
    print("peak MB = VmHWM (RSS high-water mark) of each contender's own process" + peak_note)
    header = [first_column]
    for name in names:
        header += ["%s seq/s" % name, "spread"]
    header += ["%s/%s" % (reference, name) for name in names if name != reference]
    header += ["%s peak MB" % name for name in names]
    print(benchmark_utils.format_table(header, rows))
