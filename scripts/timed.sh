#!/usr/bin/env bash
# timed.sh LABEL CMD...: run CMD, then print its wall time as "[time] LABEL: 3m07s (passed)" (or
# "(FAILED, exit N)") and append the line to .setup/test-times.txt, the stage table `make test`
# prints at its end. Exits with CMD's status.
set -uo pipefail
label=$1
shift
start=$(date +%s)
"$@"
rc=$?
s=$(( $(date +%s) - start ))
if [ "$rc" = 0 ]; then how=passed; else how="FAILED, exit $rc"; fi
line=$(printf '[time] %-25s %3dm%02ds (%s)' "$label:" $((s / 60)) $((s % 60)) "$how")
mkdir -p .setup
echo "$line" >> .setup/test-times.txt
echo "$line" >&2
exit "$rc"
