#!/usr/bin/env python3
"""hog-burst.py CPU SECONDS BURST_MS PERIOD_MS: a host stall on demand.

Pins itself to CPU at SCHED_FIFO priority 50 (above any ordinary task, so
it preempts a spinning thread there; below the probes, lib/probe.h) and
spins BURST_MS in every PERIOD_MS for SECONDS.  Prints how many bursts it
made.  Needs root or CAP_SYS_NICE."""
import os
import sys
import time

cpu, secs, burst, period = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]) / 1e3, float(sys.argv[4]) / 1e3
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
end = time.monotonic() + secs
due = time.monotonic()
n = 0
while True:
    due += period
    if due + burst > end:
        break
    time.sleep(max(0.0, due - time.monotonic()))
    stop = time.monotonic() + burst
    while time.monotonic() < stop:
        pass
    n += 1
print("bursts", n)
