"""What a study is: one experiment of reproduce_paper_tables.py, as the engine runs it.

A study names its experiment (`--experiment=<name>`), lists the entry points
its steps run (`programs`), declares the flags it reads (`options`), and plans
a run from the options (`plan`): the steps, the lines plan.sh and plan.md
hold, and how to report once every step is done. The engine (driver, runner)
does the rest the same way for every study, so a new experiment is a new
study and one line in the registry, its flags included.
"""

import dataclasses
from typing import Callable


@dataclasses.dataclass
class Plan:
    """A study's plan of one run.

    steps: list of plan.Step, in the order they run.
    script_notes: comment lines plan.sh carries (where unset paths come from).
    markdown: plan.md.
    report: () -> (results dict, results.md text, plot path), called once every step is done.
    expected_time: one sentence on how long the steps take on this project's reference machine
      (2 CPU cores), printed before they start; "" when unknown.
    """

    steps: list
    script_notes: tuple
    markdown: str
    report: Callable
    expected_time: str = ""


def expected_time(minutes_per_run, num_runs, scale_name, measured_on, side_by_side=1):
    """Plan.expected_time of `num_runs` runs from a scale's measured minutes per run ("" when unmeasured).

    side_by_side: how many runs were going at once, each on its own core, when `minutes_per_run` was measured
    (the scale's parallel_runs for a campaign's figure); the plan then takes about minutes x runs / that.
    """
    if minutes_per_run is None:
        return ""
    together = " one at a time" if side_by_side == 1 else ", %d at a time" % side_by_side
    return ("Expected time: about %d minutes for %d runs%s on 2 CPU cores (%.1f min per run%s, measured at %s scale on "
            "%s; finished runs are skipped)." % (round(minutes_per_run * num_runs / side_by_side), num_runs, together,
                                                 minutes_per_run, "" if side_by_side == 1 else " beside another",
                                                 scale_name, measured_on))


def scale_of(scales, options):
    """scales[--scale]; ValueError naming the scales the experiment has.

    Args:
      scales: {name: scale} of the study's family.
      options: with `experiment` and `scale`.
    """
    if options.scale not in scales:
        raise ValueError("--scale=%s: --experiment=%s runs at %s scale." % (
            options.scale, options.experiment, " or ".join(sorted(scales))))
    return scales[options.scale]


class Study:
    """The interface every study implements (see the module docstring).

    name: the --experiment value. title: one line, for plans and logs.
    scales: {--scale: scale} of the study's family, or None; a scale's `parallel_runs` is the default of
      --parallel_runs (see `parallel_runs`).
    options: the Options class of the flags the study reads beyond the engine's
      (reproduction.driver.ReproduceOptions), declared by the study or reused from
      its family (run_lm.py's text flags); None when it reads none. Studies may
      share a flag: see reproduction.driver.options_class.
    """

    name = None
    title = None
    options = None
    scales = None

    def programs(self):
        """{program: (options class, run function)} of the entry points its steps run."""
        raise NotImplementedError

    def parallel_runs(self, scale, cores):
        """How many runs go at once by default at `scale` on `cores` cores (--parallel_runs): the scale's
        `parallel_runs` (measured per family, docs/performance.md#runs-side-by-side), at most one per core;
        1 for a study without `scales`."""
        if not self.scales or scale not in self.scales:
            return 1
        return max(1, min(cores, getattr(self.scales[scale], "parallel_runs", 1)))

    def plan(self, options):
        """The Plan of a run from reproduce_paper_tables.py's options; writes the row configs.

        Raises:
          ValueError: naming the flag, when the run lacks data or a path is wrong.
        """
        raise NotImplementedError
