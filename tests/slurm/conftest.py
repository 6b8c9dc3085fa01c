"""The Slurm tests (`make test-slurm`): a real Slurm on this machine, started once for the session.

tools/local_slurm.sh starts munged, slurmctld and slurmd on localhost (one
node, this machine's CPUs), in a folder and on ports of its own, installing
Debian's packages when they are missing; where it cannot (not root, no
apt-get) every test here is skipped with its reason. Each test is marked
`slurm`, which `make test` leaves out (pytest.ini); `make test-slurm` runs them.
"""

import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tools", "local_slurm.sh")
# Not the folder and ports of a local Slurm started by hand (tools/local_slurm.sh's defaults).
SLURM_DIR, SLURM_PORT = "/tmp/bert-local-slurm-tests", "16917"


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if str(item.fspath).startswith(here + os.sep):
            item.add_marker(pytest.mark.slurm)


@pytest.fixture(scope="session")
def slurm_environment():
    """The environment of a process that submits to the local Slurm (SLURM_CONF set); stopped after the session."""
    environment = dict(os.environ, LOCAL_SLURM_DIR=SLURM_DIR, LOCAL_SLURM_PORT=SLURM_PORT, PYTHONPATH=ROOT,
                       CUDA_VISIBLE_DEVICES="")
    # gRPC would send the workers' traffic to a proxy set for the outside.
    environment.update(no_proxy="127.0.0.1,localhost,%s" % os.uname().nodename, no_grpc_proxy="127.0.0.1,localhost,%s"
                       % os.uname().nodename)
    started = subprocess.run([SCRIPT, "start"], env=environment, capture_output=True, text=True, check=False)
    if started.returncode == 3:
        pytest.skip(started.stderr.strip())
    if started.returncode != 0:
        # Half started (munged up, slurmctld not): stop what did start before failing.
        subprocess.run([SCRIPT, "stop"], env=environment, capture_output=True, check=False)
        pytest.fail("tools/local_slurm.sh start failed (exit %d):\n%s%s"
                    % (started.returncode, started.stdout, started.stderr))
    environment["SLURM_CONF"] = os.path.join(SLURM_DIR, "slurm.conf")
    yield environment
    subprocess.run([SCRIPT, "stop"], env=environment, capture_output=True, check=False)
