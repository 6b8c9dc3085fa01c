"""Slurm's variables -> the cluster: CPU nodes, GPUs shared or bound by Slurm, Slurm's task order, bad variables.

TensorFlow's own SlurmClusterResolver is the reference where it works (GPU
nodes whose names sort in Slurm's order); the real Slurm runs are in tests/slurm/.
"""

import os
import subprocess

import pytest
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver

from training import slurm_cluster

STEP = dict(SLURM_JOB_ID="77", SLURM_PROCID="1", SLURM_STEP_NUM_TASKS="4", SLURM_STEP_NODELIST="node[9-10]",
            SLURM_STEP_TASKS_PER_NODE="2(x2)", SLURMD_NODENAME="node9")


@pytest.fixture
def environ(monkeypatch):
    """os.environ with no Slurm or CUDA variable; set(**variables) adds some."""
    for name in list(os.environ):
        if name.startswith("SLURM") or name == "CUDA_VISIBLE_DEVICES":
            monkeypatch.delenv(name)

    def set_variables(**variables):
        for name, value in variables.items():
            monkeypatch.setenv(name, value)

    return set_variables


def _no_nvidia_smi(_):
    return None


def test_a_task_of_a_step_is_read_from_slurms_variables():
    task = slurm_cluster.parse(STEP)
    assert (task.job_id, task.rank, task.num_tasks, task.node) == ("77", 1, 4, "node9")
    assert list(task.tasks_per_node.items()) == [("node9", 2), ("node10", 2)]  # Slurm's order kept
    assert slurm_cluster.in_step(STEP) and slurm_cluster.in_job(STEP)


def test_ports_differ_between_jobs_and_stay_in_range():
    bases = [slurm_cluster.parse(dict(STEP, SLURM_JOB_ID=str(job))).port_base for job in (1, 2, 77, 10 ** 9)]
    assert len(set(bases)) == 4
    assert all(15000 <= base and base + 16 <= 55000 for base in bases)
    assert bases[1] - bases[0] == 16  # room for 16 tasks of a node per job


@pytest.mark.parametrize("changes, message", [
    (dict(SLURM_STEP_NUM_TASKS=None, SLURM_STEP_NODELIST=None, SLURM_STEP_TASKS_PER_NODE=None),
     "this process runs in job 77 outside srun [(]SLURM_STEP_NUM_TASKS, SLURM_STEP_NODELIST, "
     "SLURM_STEP_TASKS_PER_NODE unset[)], as when a batch script runs the training itself. Start every worker of "
     "--distribution_strategy=multi_worker_mirrored with srun inside the allocation"),
    (dict(SLURM_JOB_ID=None, SLURM_PROCID=None), "SLURM_PROCID unset"),
    (dict(SLURM_PROCID="one"), "SLURM_PROCID='one' and SLURM_STEP_NUM_TASKS='4' must be integers"),
    (dict(SLURM_STEP_TASKS_PER_NODE="2(x3)"), r"SLURM_STEP_NODELIST='node\[9-10\]' \(2 nodes\) and SLURM_STEP_TASKS_PER_NODE='2\(x3\)' \(3 counts\)"),
    (dict(SLURM_STEP_NUM_TASKS="5"), r"SLURM_STEP_TASKS_PER_NODE='2\(x2\)' adds up to 4 tasks, SLURM_STEP_NUM_TASKS=5"),
    (dict(SLURM_PROCID="4"), "SLURM_PROCID=4 is not a task of a step of 4"),
    (dict(SLURM_STEP_NODELIST="node[9-"), "SLURM_STEP_NODELIST='node\\[9-' .* cannot be read"),
])
def test_bad_variables_are_named(changes, message):
    environ = {name: value for name, value in dict(STEP, **changes).items() if value is not None}
    with pytest.raises(ValueError, match="Slurm's variables do not describe a job step: " + message):
        slurm_cluster.parse(environ)


def test_on_cpu_nodes_the_workers_follow_slurms_task_order(environ):
    environ(**STEP)
    resolver, task = slurm_cluster.resolve(which=_no_nvidia_smi)
    base = task.port_base
    # Slurm numbers node9's tasks 0 and 1, node10's 2 and 3 (TensorFlow alone sorts node10 first).
    assert resolver.cluster_spec().as_dict() == {"worker": [
        "node9:%d" % base, "node9:%d" % (base + 1), "node10:%d" % base, "node10:%d" % (base + 1)]}
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.num_accelerators() == {}
    assert "CUDA_VISIBLE_DEVICES" not in os.environ  # nothing hidden from a CPU node's TensorFlow
    # An empty CUDA_VISIBLE_DEVICES is a CPU node too.
    environ(CUDA_VISIBLE_DEVICES="")
    assert slurm_cluster.resolve(which=lambda _: "/usr/bin/nvidia-smi")[0].num_accelerators() == {}


def test_a_task_placed_on_another_node_is_refused(environ):
    environ(**dict(STEP, SLURM_PROCID="2"))  # the third task runs on node10 under block distribution
    with pytest.raises(ValueError, match="Task 2 of job 77 runs on node9, but numbering the tasks node by node "
                                         "puts it on node10: start the step with srun --distribution=block"):
        slurm_cluster.resolve(which=_no_nvidia_smi)


def test_a_nodes_gpus_are_shared_out_as_tensorflows_resolver_does(environ):
    # Nodes whose names sort in Slurm's order: TensorFlow's resolver, unchanged, is the reference.
    step = dict(STEP, SLURM_STEP_NODELIST="gpu[1-2]", SLURMD_NODENAME="gpu1")
    for rank in range(2):
        environ(**dict(step, SLURM_PROCID=str(rank)), CUDA_VISIBLE_DEVICES="0,1,2,3")
        resolver, task = slurm_cluster.resolve(which=_no_nvidia_smi)
        ours = os.environ["CUDA_VISIBLE_DEVICES"]
        environ(CUDA_VISIBLE_DEVICES="0,1,2,3")
        reference = slurm_cluster_resolver.SlurmClusterResolver(port_base=task.port_base)
        assert resolver.cluster_spec().as_dict() == reference.cluster_spec().as_dict()
        assert (resolver.task_type, resolver.task_id) == reference.get_task_info() == ("worker", rank)
        assert resolver.num_accelerators() == reference.num_accelerators() == {"GPU": 2}
        assert ours == os.environ["CUDA_VISIBLE_DEVICES"] == ("0,1", "2,3")[rank]


def test_gpus_slurm_bound_to_each_task_are_kept(environ):
    environ(**STEP, SLURM_GPUS_PER_TASK="1", CUDA_VISIBLE_DEVICES="1")
    resolver, _ = slurm_cluster.resolve(which=_no_nvidia_smi)
    assert resolver.num_accelerators() == {"GPU": 1}
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    assert len(resolver.cluster_spec().as_dict()["worker"]) == 4


def test_fewer_gpus_than_tasks_on_a_node_is_refused(environ):
    environ(**STEP, CUDA_VISIBLE_DEVICES="0")
    with pytest.raises(ValueError, match="1 GPU[(]s[)] on a node that runs 2 tasks of this step: ask Slurm for at "
                                         "least one GPU per task [(]--gpus-per-task[)]"):
        slurm_cluster.resolve(which=_no_nvidia_smi)


def test_unequal_tasks_per_node_get_gpus_by_slurms_task_order(environ):
    # node9 runs tasks 0 and 1, node10 task 2; TensorFlow's resolver, counting node10 first, would give
    # tasks 0 and 1 both the node's first GPU. Each node lets the job see GPUs 4 to 7.
    step = dict(STEP, SLURM_STEP_NUM_TASKS="3", SLURM_STEP_TASKS_PER_NODE="2,1")
    seen = {}
    for rank, node in ((0, "node9"), (1, "node9"), (2, "node10")):
        environ(**dict(step, SLURM_PROCID=str(rank), SLURMD_NODENAME=node), CUDA_VISIBLE_DEVICES="4,5,6,7")
        resolver, _ = slurm_cluster.resolve(which=_no_nvidia_smi)
        assert resolver.num_accelerators() == {"GPU": 2}  # 4 GPUs for the 2 tasks of the busiest node
        seen[rank] = os.environ["CUDA_VISIBLE_DEVICES"]
    assert seen == {0: "4,5", 1: "6,7", 2: "4,5"}


def test_without_cuda_visible_devices_the_gpus_nvidia_smi_lists_are_shared_out(environ, monkeypatch):
    listing = "GPU 0: A100 (UUID: GPU-a)\nGPU 1: A100 (UUID: GPU-b)\n"
    monkeypatch.setattr(slurm_cluster.subprocess, "run",
                        lambda *args, **kwargs: subprocess.CompletedProcess(args, 0, stdout=listing, stderr=""))
    environ(**STEP)  # task 1: the second of node9's two
    resolver, _ = slurm_cluster.resolve(which=lambda _: "/usr/bin/nvidia-smi")
    assert resolver.num_accelerators() == {"GPU": 1}
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
