#!/bin/bash
cd /tmp/wt-user-snap
export PYTHONPATH=/tmp/wt-user-snap/src
date -u
up=0
ip netns list | grep -q "qsl-ecenet-jp-1" || { .venv/bin/qoslab testbed up 2>&1 | tail -2; up=1; }
uptime
python3 /tmp/wt-user-runs/wake.py 5
[ $up = 1 ] && .venv/bin/qoslab testbed down 2>&1 | tail -1
date -u
