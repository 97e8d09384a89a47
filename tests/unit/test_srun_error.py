"""Which line of srun's stderr a failed step reports (executors/slurm.py ``srun_error``): under the
campaign flood srun's step launches failed with "srun: error: Unable to get address: Temporary
failure in name resolution" as their first line, srun's failed reverse lookup while it formatted
the launch error that follows; the step's error names that one."""

from __future__ import annotations

import pytest

from qoslab.executors.slurm import srun_error

NOISE = "srun: error: Unable to get address: Temporary failure in name resolution\n"


@pytest.mark.parametrize("err,line", [
    (NOISE + "srun: error: slurm_receive_msgs: [(null)] failed: Connection reset by peer\n"
             "srun: error: Task launch for StepId=1.9 failed on node jp-2: Connection reset by peer\n",
     "srun: error: slurm_receive_msgs: [(null)] failed: Connection reset by peer"),
    ("srun: error: Unable to create step for job 1: More processors requested than permitted\n",
     "srun: error: Unable to create step for job 1: More processors requested than permitted"),
    (NOISE + NOISE + "srun: fatal: Invalid job id\n", "srun: fatal: Invalid job id"),
    (NOISE, NOISE.strip()),  # nothing else said: the line as it is
    ("\n\n  srun: error: Lost connection\n", "srun: error: Lost connection"),
    ("", ""),
    ("\x00\xff garbage\n", "\x00\xff garbage"),
])
def test_the_cause_is_the_first_srun_error_that_is_not_a_failed_reverse_lookup(err, line):
    assert srun_error(err) == line
