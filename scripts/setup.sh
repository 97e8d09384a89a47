#!/usr/bin/env bash
# Idempotent set-up for qoslab on Debian 12 (run as root): Debian packages, the Python
# environment (.venv) and the Java modules. Each step checks first and does nothing when
# already done, so `make run` and `make test` can call it every time.
set -euo pipefail
cd "$(dirname "$0")/.."

# What `make run` needs (the embedded testbed, D-ITG, the capture, the JVMs, the report) and what
# only `make test` adds (reference tools and the seeds' workloads: issue 48 measured 3 min 50 s of
# a fresh machine's 6 min 45 s `make run` in set-up). `scripts/setup.sh run` installs the first.
RUN_PACKAGES=(
  openjdk-17-jdk-headless maven            # Java workload, capture, analysis
  libpcap0.8 libpcap0.8-dev                # pcap4j loads libpcap.so through JNA
  d-itg iperf3                             # traffic generation (iperf3: the testbed's probes)
  iproute2 ethtool iputils-ping procps     # the embedded testbed
  nftables                                 # the virtual Catalyst: DSCP rewrite, policers, counters
  python3 python3-venv                     # the orchestrator
)
TEST_PACKAGES=(
  tshark                                   # reference dissector the classifier is checked against
  libmpj-java                              # the mpj workload (reference 003): MPJ Express 0.44
  openssh-server netcat-openbsd            # ssh executor / real-cluster parity (nc: Ansible's way into the testbed)
  rsync                                    # Ansible provisioning copies the jars with ansible.posix.synchronize
  slurm-wlm munge                          # slurm executor: the embedded testbed as a Slurm cluster (22.05)
  slurmdbd mariadb-server                  # its accounting (sacct): qoslab runs its own mariadbd + slurmdbd
  chromium                                 # report check: the HTML must render in a real browser
  openmpi-bin libopenmpi-dev               # the mpi workload (examples/mpi-osu, compiled below)
  sockperf                                 # examples/sockperf: a workload nobody here wrote (command kind)
)
WHAT=${1:-all}
case "$WHAT" in
  run) PACKAGES=("${RUN_PACKAGES[@]}") ;;
  all|test) PACKAGES=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *) echo "error: scripts/setup.sh [run|all]: unknown set-up '$WHAT'" >&2; exit 2 ;;
esac
SECONDS=0

log() { printf '[setup] %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
  echo "error: make setup must run as root (it installs Debian packages and builds network namespaces)" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark and iperf3 ask questions at install time; answer them up front.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
  apt-get update -qq
  # The testbed starts its own munged, sshd, mariadbd and slurmdbd: keep the packages' system
  # services from starting at install (Debian's policy-rc.d; only when the machine has none).
  norc=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && norc=1
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || { [ -z "$norc" ] || rm -f /usr/sbin/policy-rc.d; exit 1; }
  [ -z "$norc" ] || rm -f /usr/sbin/policy-rc.d
else
  log "Debian packages: all present"
fi

# Build the Java reactor (without its tests: `make test` runs them in a stage of their own, beside
# lint and the docs) when any pom or Java source is newer than the last build: in the background,
# beside the Python environment (independent; 8 s and 7 s on a clean clone here).
stamp=.setup/java.stamp
mkdir -p .setup
mvn_pid=
if [ ! -f "$stamp" ] || [ -n "$(find pom.xml java-common java-workload capture analysis -newer "$stamp" \( -name pom.xml -o -name '*.java' -o -name '*.properties' \) -print -quit 2>/dev/null)" ]; then
  log "Java modules: mvn package -DskipTests, beside the Python environment"
  mvn -q -B -DskipTests package >.setup/mvn-package.log 2>&1 &
  mvn_pid=$!
  # a failing step below (set -e) ends the build too instead of leaving it running
  trap '[ -z "$mvn_pid" ] || kill "$mvn_pid" 2>/dev/null || true' EXIT
else
  log "Java modules: up to date"
fi

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
# The Python environment: the versions of requirements/lock.txt (`make lock`; every machine gets the
# same libraries), installed by uv (Astral's pip-compatible installer, pinned below, itself installed
# by pip into .venv): on a clean clone here 53 s where pip took 127 s for the same 215 packages, both
# compiling their bytecode (issue 53). uv reads the index settings pip's environment gives
# (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS, PIP_CERT); when it cannot install, pip does,
# with the same lock.
# `make run` (set-up run) installs qoslab's own dependencies only; `make test` adds the test and
# cluster extras (the vendors' clients and parsers, Ansible, the linters, the docs site).
# Bytecode: `run` compiles every package it installs (its CLI starts often, and a Python that may
# not write bytecode, PYTHONDONTWRITEBYTECODE, would parse them at every start). The full
# environment does not: 52,000 .py files, 37,400 of them in genie and ansible_collections, of which
# the tests import a few hundred; its compile took 45 of uv's 52 s here (7 s without, issue 53).
# The Makefile lets Python write the bytecode of what is imported, once (it unexports
# PYTHONDONTWRITEBYTECODE).
UV_VERSION=0.13.9
LOCK=requirements/lock.txt
if [ "$WHAT" = run ]; then spec=.; py_stamp=.venv/.installed-run; compile=--compile-bytecode
else spec='.[test,cluster]'; py_stamp=.venv/.installed; compile=; fi
fresh() { [ -f "$1" ] && [ ! pyproject.toml -nt "$1" ] && [ ! "$LOCK" -nt "$1" ]; }
if [ ! -x .venv/bin/python ] || ! { fresh .venv/.installed || { [ "$WHAT" = run ] && fresh .venv/.installed-run; }; }; then
  log "creating Python environment .venv ($($PY --version)): $spec"
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  uv_env=()
  [ -z "${PIP_INDEX_URL:-}" ] || uv_env+=("UV_INDEX_URL=$PIP_INDEX_URL")
  [ -z "${PIP_EXTRA_INDEX_URL:-}" ] || uv_env+=("UV_EXTRA_INDEX_URL=$PIP_EXTRA_INDEX_URL")
  [ -z "${PIP_FIND_LINKS:-}" ] || uv_env+=("UV_FIND_LINKS=$PIP_FIND_LINKS")
  [ -z "${PIP_CERT:-}" ] || uv_env+=("SSL_CERT_FILE=$PIP_CERT")
  if .venv/bin/pip install -q "uv==$UV_VERSION" >/dev/null 2>&1 \
      && env "${uv_env[@]}" .venv/bin/uv pip install -q --python .venv/bin/python $compile \
           -c "$LOCK" -e "$spec"; then
    :
  else
    log "uv could not install the environment: pip installs it (slower)"
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q "$([ -n "$compile" ] && echo --compile || echo --no-compile)" -c "$LOCK" -e "$spec"
  fi
  touch "$py_stamp"
else
  log "Python environment: up to date"
fi

# qoslab's own modules as bytecode: pip compiles every package it installs, but not the sources of
# an editable install, and a Python that may not write bytecode (PYTHONDONTWRITEBYTECODE, set on
# this CI machine, when not run by make) compiles them again at every start: `import qoslab.cli` 0.44 s -> 0.34 s
# (issue 53; every CLI call, switch and report kernel of make test starts one). Up-to-date files
# are skipped; a source edited later is compiled at import as before.
.venv/bin/python -m compileall -q -j 0 src/qoslab >/dev/null

if [ -n "$mvn_pid" ]; then
  if wait "$mvn_pid"; then
    mvn_pid=
    touch "$stamp"
    log "Java modules: built"
  else
    mvn_pid=
    tail -n 40 .setup/mvn-package.log >&2
    echo "error: mvn package failed (whole log: .setup/mvn-package.log)" >&2
    exit 1
  fi
fi

# The mpi workload's example program (examples/mpi-osu): rebuilt when its source is newer.
osu=examples/mpi-osu/build/osu-qoslab
if [ "$WHAT" = run ]; then
  log "MPI example: not needed by make run"
elif [ ! -x "$osu" ] || [ examples/mpi-osu/osu_qoslab.c -nt "$osu" ]; then
  log "building the MPI example (mpicc)"
  mkdir -p examples/mpi-osu/build
  mpicc -O2 -Wall -o "$osu" examples/mpi-osu/osu_qoslab.c
else
  log "MPI example: up to date"
fi

log "set-up ($WHAT) done in ${SECONDS} s"
