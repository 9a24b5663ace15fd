#!/usr/bin/env python3
"""hog-burst.py CPU SECONDS BURST_MS PERIOD_MS [LOG]: a host stall on demand.

Pins itself to CPU at SCHED_FIFO priority 50 (above any ordinary task, so
it preempts a spinning thread there; below the probes, lib/probe.h) and
spins BURST_MS in every PERIOD_MS for SECONDS.  Prints how many bursts it
made.  With LOG, writes each burst's start and end there as it ends, a
line each, in CLOCK_MONOTONIC nanoseconds (the clock of oqbench's tag
trace, bench/tagtrace.h), so a hog stopped by SIGTERM leaves a whole log.
Prints "ready" once it is pinned and real-time, before its first burst: a
caller waits for that line rather than for a guessed time (under QEMU's
TCG the interpreter alone took seconds to start).  Needs root or
CAP_SYS_NICE."""
import os
import signal
import sys
import time

if len(sys.argv) not in (5, 6):
    sys.exit("usage: hog-burst.py CPU SECONDS BURST_MS PERIOD_MS [LOG]")
cpu, secs, burst, period = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]) / 1e3, float(sys.argv[4]) / 1e3
log = open(sys.argv[5], "w") if len(sys.argv) == 6 else None
signal.signal(signal.SIGTERM, lambda *_: (log and log.close(), print("bursts", n), sys.exit(0)))
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
print("ready", flush=True)
end = time.monotonic() + secs
due = time.monotonic()
n = 0
while True:
    due += period
    if due + burst > end:
        break
    time.sleep(max(0.0, due - time.monotonic()))
    t0 = time.monotonic_ns()
    stop = time.monotonic() + burst
    while time.monotonic() < stop:
        pass
    if log:
        log.write("%d %d\n" % (t0, time.monotonic_ns()))
        log.flush()
    n += 1
if log:
    log.close()
print("bursts", n)
