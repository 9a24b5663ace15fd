#!/usr/bin/env python3
"""tagger-judge.py TRACE_DIR [BURSTS]: the tagger against the truth.

Reads the client threads' tag traces (bench/tagtrace.h: OQB_TAG_TRACE)
in TRACE_DIR and, with BURSTS, a hog's burst log (tests/hog-burst.py:
start and end in CLOCK_MONOTONIC ns, a line each).  Prints one JSON
object:
  requests         traced requests (intended send in the window)
  host_tagged      of them tagged the host's (tag bit 1)
  unatt_tagged     tagged unattributed only (tag bit 2, not 1)
  burst_delayed    requests whose window [intended send, end] overlaps a
                   burst: the hog held a CPU on their path while they
                   were pending (the truth the tagger must find)
  burst_tagged     of those, host-tagged; burst_tagged_frac their share
  fault_marked     requests the worker's test-only fault delayed (reply
                   mark WIRE_MARK_FAULT, bench/wire.h)
  fault_tagged     of those, host-tagged; fault_tagged_frac their share
  base_tagged_frac host-tagged share of the requests neither delayed by
                   a burst nor marked by the fault: the base rate a
                   fault-marked or burst-delayed share is read against
  per_class        the same counts per class (nilext, non_nilext)
Exits 2 with a message when a file is missing or malformed."""
import bisect
import glob
import json
import os
import sys

MARK_FAULT = 4


def die(msg):
    sys.stderr.write("tagger-judge: %s\n" % msg)
    sys.exit(2)


def load_trace(d):
    files = sorted(glob.glob(os.path.join(d, "tagtrace-*.tsv")))
    if not files:
        die("%s has no tagtrace-*.tsv: was the run made with OQB_TAG_TRACE=%s?" % (d, d))
    rows = []
    for f in files:
        with open(f) as fh:
            for ln, line in enumerate(fh, 1):
                if line.startswith("#"):
                    if "INCOMPLETE" in line:
                        die("%s: the client lost records for memory" % f)
                    continue
                if line.startswith("t_int"):
                    continue
                p = line.split()
                if len(p) != 5:
                    die("%s:%d: expected 5 columns, got %d" % (f, ln, len(p)))
                rows.append(tuple(int(x) for x in p))
    return rows


def load_bursts(path):
    b = []
    with open(path) as fh:
        for ln, line in enumerate(fh, 1):
            p = line.split()
            if len(p) != 2:
                die("%s:%d: expected start and end" % (path, ln))
            b.append((int(p[0]), int(p[1])))
    b.sort()
    return b


def overlaps(bursts, starts, a, z):
    """Whether [a, z] overlaps any burst (bursts sorted, not overlapping)."""
    i = bisect.bisect_right(starts, z) - 1
    return i >= 0 and bursts[i][1] >= a


def main():
    if len(sys.argv) not in (2, 3):
        die("usage: tagger-judge.py TRACE_DIR [BURSTS]")
    rows = load_trace(sys.argv[1])
    bursts = load_bursts(sys.argv[2]) if len(sys.argv) == 3 else []
    starts = [s for s, _ in bursts]
    tot = {"requests": 0, "host_tagged": 0, "unatt_tagged": 0, "burst_delayed": 0, "burst_tagged": 0,
           "fault_marked": 0, "fault_tagged": 0, "other": 0, "other_tagged": 0}
    per = {"nilext": dict(tot), "non_nilext": dict(tot)}
    for t_int, end, tag, mark, cls in rows:
        for c in (tot, per["nilext" if cls == 0 else "non_nilext"]):
            c["requests"] += 1
            host = tag & 1
            c["host_tagged"] += host
            c["unatt_tagged"] += 1 if (tag & 2 and not host) else 0
            hit = bool(bursts) and overlaps(bursts, starts, t_int, end)
            if hit:
                c["burst_delayed"] += 1
                c["burst_tagged"] += host
            if mark & MARK_FAULT:
                c["fault_marked"] += 1
                c["fault_tagged"] += host
            elif not hit:
                c["other"] += 1
                c["other_tagged"] += host
    for c in [tot] + list(per.values()):
        c["burst_tagged_frac"] = c["burst_tagged"] / c["burst_delayed"] if c["burst_delayed"] else None
        c["fault_tagged_frac"] = c["fault_tagged"] / c["fault_marked"] if c["fault_marked"] else None
        c["base_tagged_frac"] = c["other_tagged"] / c["other"] if c["other"] else None
    tot["bursts"] = len(bursts)
    tot["per_class"] = per
    print(json.dumps(tot))


main()
