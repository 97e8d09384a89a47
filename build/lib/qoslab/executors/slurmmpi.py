"""How the ``mpi`` workload starts its ranks on a Slurm allocation (issue 51; pure: parsing and the
choice, no process started here).

- **srun --mpi=X** (a Slurm "direct launch"): every rank is a task of one job step and gets its
  rank and contact data from Slurm's PMI server. It works when the cluster offers the plugin
  (``srun --mpi=list``) *and* the MPI library has a client for it: Open MPI 4.x talks PMIx
  through an external-PMIx component (``ompi_info``: ``MCA pmix: ext3x``; ``ext2x``/``ext4x`` or the
  internal ``pmix3x``/``pmix4x`` elsewhere) and PMI-2 only through ``s2`` (``--with-pmi`` builds).
  Debian 12's Open MPI 4.1.4 has ``ext3x``, ``isolated`` and ``flux``: no ``s1``/``s2``, so
  ``srun --mpi=pmi2`` aborts in MPI_Init ("OPAL ERROR: Unreachable in file ext3x_client.c",
  "OMPI was not built with SLURM's PMI support") and ``--mpi=pmix`` is the one that works.
- **mpirun inside the allocation** otherwise: ``mpirun`` runs as a step on the first workload
  node and starts Open MPI's ``orted`` on the others through its Slurm launcher (``plm slurm``:
  a nested ``srun``, which ``SLURM_OVERLAP=1`` lets share the allocation's CPUs with the
  campaign's other steps), with the step's ``SLURM_NODELIST``/``SLURM_TASKS_PER_NODE``/...
  set to the workload nodes and slots (a step's own name only its node: Open MPI then asked
  ``srun`` for the other nodes' ``orted`` without ``--nodelist``, refused with "More processors
  requested than permitted"); :func:`qoslab.workloads.mpi.allocation_env`.

:func:`choose` picks one (``launcher: auto``: pmix, then pmi2, then mpirun) and says why; the
choice is recorded in the trial's ``mpi-launch.json`` and, for ``auto``, in the run's
``provenance.json`` (the ``slurm`` executor's facts).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import QoslabError

#: Open MPI ``pmix`` framework components that are a PMIx client (external or internal PMIx).
PMIX_CLIENTS = re.compile(r"^(ext\d+x|pmix\d+x)$")
#: Open MPI's PMI-2 client component (``--with-pmi`` builds).
PMI2_CLIENT = "s2"
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


@dataclass(frozen=True)
class Launch:
    """The launcher chosen: ``launcher`` (``srun`` or ``mpirun``), ``mpi`` (srun's ``--mpi``
    plugin, None for mpirun), ``why`` (one line), and what it was chosen from: ``srun_types``
    (``srun --mpi=list``) and ``open_mpi_pmix`` (Open MPI's ``pmix`` components)."""

    launcher: str
    mpi: str | None
    why: str
    srun_types: tuple[str, ...] = ()
    open_mpi_pmix: tuple[str, ...] = ()

    def describe(self) -> str:
        """``srun --mpi=pmix`` or ``mpirun``."""
        return f"srun --mpi={self.mpi}" if self.mpi else self.launcher

    def to_json(self) -> dict[str, Any]:
        """For ``mpi-launch.json`` and provenance: every field plus ``launch`` (:meth:`describe`)."""
        d = asdict(self)
        d["srun_types"], d["open_mpi_pmix"] = list(self.srun_types), list(self.open_mpi_pmix)
        return {"launch": self.describe(), **d}


def parse_srun_mpi_list(text: str) -> list[str]:
    """The plugin types of ``srun --mpi=list`` (Slurm 22.05: a heading, one tab-indented type a
    line, then ``specific pmix plugin versions available: pmix_v4``), in order, without repeats.
    Anything that is not a plain lower-case name is ignored (no error: an unknown answer offers nothing)."""
    found: list[str] = []
    for line in text.splitlines():
        words: list[str] = []
        if line.startswith(("\t", " ")):
            words = [line.strip()]
        elif "plugin versions available:" in line:
            words = [w.strip() for w in line.split(":", 1)[1].split(",")]
        found += [w for w in words if _NAME.match(w) and w not in found]
    return found


def parse_ompi_pmix(text: str) -> list[str]:
    """Open MPI's ``pmix`` framework components from ``ompi_info`` (``MCA pmix: ext3x (MCA v2.1.0,
    ...)``) or ``ompi_info --parsable`` (``mca:pmix:ext3x:version:...``), in order, without repeats."""
    found: list[str] = []
    for line in text.splitlines():
        m = re.match(r"^\s*MCA pmix:\s*([A-Za-z0-9_]+)\b", line) or re.match(r"^mca:pmix:([A-Za-z0-9_]+):", line)
        if m and _NAME.match(m.group(1)) and m.group(1) not in found:
            found.append(m.group(1))
    return found


def choose(srun_types: list[str], open_mpi_pmix: list[str], want: str = "auto") -> Launch:
    """The launcher for ``want`` (``auto``, ``srun`` or ``mpirun``) given what the cluster offers
    and what the MPI library speaks (see the module doc). Raises QoslabError when ``want`` is
    ``srun`` and no plugin works both sides, or ``want`` is unknown."""
    offered, comps = tuple(srun_types), tuple(open_mpi_pmix)
    pmix_client = [c for c in comps if PMIX_CLIENTS.match(c)]
    pmix = next((t for t in ("pmix", "pmix_v5", "pmix_v4", "pmix_v3") if t in offered), None)
    if want not in ("auto", "srun", "mpirun"):
        raise QoslabError(f"launcher {want!r}: expected auto, srun or mpirun")
    if want == "mpirun":
        return Launch("mpirun", None, "launcher: mpirun (the playbook's)", offered, comps)
    if pmix and pmix_client:
        return Launch("srun", pmix, f"the cluster offers {pmix}; Open MPI has the PMIx client {pmix_client[0]}",
                      offered, comps)
    if "pmi2" in offered and PMI2_CLIENT in comps:
        return Launch("srun", "pmi2", "the cluster offers pmi2; Open MPI has the PMI-2 client s2", offered, comps)
    lacks = []
    if pmix and not pmix_client:
        lacks.append(f"the cluster offers {pmix} but Open MPI has no PMIx client ({', '.join(comps) or 'none'})")
    if "pmi2" in offered and PMI2_CLIENT not in comps:
        lacks.append("the cluster offers pmi2 but Open MPI has no PMI-2 client (s2)")
    if not pmix and "pmi2" not in offered:
        lacks.append(f"the cluster offers no PMI plugin ({', '.join(offered) or 'srun --mpi=list said nothing'})")
    why = "; ".join(lacks)
    if want == "srun":
        raise QoslabError(f"launcher: srun: no srun --mpi plugin works here: {why}")
    return Launch("mpirun", None, f"mpirun inside the allocation: {why}", offered, comps)
