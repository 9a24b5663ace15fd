#!/usr/bin/env python3
"""hdr-decode.py RUN.json: every histogram summary of a run.json, decoded
from its "hdr" text apart from lib/hdrenc.c, with its percentiles
recomputed the way lib/hist.c reads them.

For each object that has an "hdr" string it prints one JSON line:
  {"path": "points[0].lat_ns.all", "n": N from the object, "total": counts
   decoded, "counters": non-empty counters, "p50", "p99", "p999": recomputed,
   "printed": [p50, p99, p999] as the object says}
A point's summary without "hdr" (oqbench.run/3 and later) is its kept
trials' histograms added counter by counter (its lat_ns, and in /3 its
server.service_ns and host_tags.host_len_ns), a trial's "all" its
"nilext" and "non_nilext" added; its line says "from": "trials".  From
oqbench.run/4 on a point keeps its service times' classes and its stall
lengths as "hdr", and its service times' "all" is its classes added
("from": "classes").  A trial's untagged requests (host_tags.sys_lat_ns)
are their own "hdr", or its lat_ns of the class less the tagged ones'
"tagged_hdr" (/4), or (/5) a "lat_part" of that lat_ns: per non-empty
counter of it one varint as below, k >= 0 the part's count, k < 0 all
but -k - 1, zlib-compressed behind a 0x6f716231 cookie and its length;
the point's are their sum.
The encoding (HdrHistogram's V2 compressed form) is read from its
published layout: base64, a 0x1c84931x cookie, a zlib stream holding a
40-byte header and ZigZag LEB128 counts, a negative one a run of zeros.
Counter i holds values from low(i) to low(i) + width(i) - 1 for 2048
sub-buckets with lowest value 1; a percentile is the midpoint of the
counter holding rank ceil(p/100 n), clamped to the exact min and max,
and ranks 1 and n are min and max themselves.
"""
import base64
import json
import math
import struct
import sys
import zlib


def counts_of(text):
    raw = base64.b64decode(text.strip())
    cookie, zlen = struct.unpack(">Ii", raw[:8])
    if cookie & ~0xF0 != 0x1C849304:
        raise ValueError("cookie 0x%08x is not V2 compressed" % cookie)
    body = zlib.decompress(raw[8:8 + zlen])
    cookie, plen, _off, digits, lowest, _highest = struct.unpack(">IiiiqQ", body[:32])
    if digits != 3 or lowest != 1:
        raise ValueError("layout digits %d lowest %d" % (digits, lowest))
    counts, idx = {}, 0
    for val in varints(body[40:40 + plen]):
        if val < 0:
            idx += -val
        else:
            if val:
                counts[idx] = val
            idx += 1
    return counts


def varints(payload):
    """The ZigZag LEB128 varints of payload (the 9th byte carries 8 bits)."""
    pos = 0
    while pos < len(payload):
        val, shift = 0, 0
        for k in range(9):
            b = payload[pos]
            pos += 1
            if k == 8:
                val |= b << shift
                break
            val |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        yield (val >> 1) ^ -(val & 1)   # ZigZag


def part_of(text, whole):
    """A "lat_part" text read against the whole's counts: per non-empty
    counter of the whole in index order one varint, k >= 0 the part's
    count, k < 0 all but -k - 1."""
    raw = base64.b64decode(text.strip())
    cookie, zlen = struct.unpack(">Ii", raw[:8])
    if cookie != 0x6F716231:
        raise ValueError("cookie 0x%08x is not a part's" % cookie)
    vals = list(varints(zlib.decompress(raw[8:8 + zlen])))
    idx = sorted(whole)
    if len(vals) != len(idx):
        raise ValueError("%d counts for %d counters" % (len(vals), len(idx)))
    counts = {}
    for i, k in zip(idx, vals):
        c = k if k >= 0 else whole[i] - (-k - 1)
        if not 0 <= c <= whole[i]:
            raise ValueError("counter %d: %d of %d" % (i, c, whole[i]))
        if c:
            counts[i] = c
    return counts


def untagged(t, cls):
    """A trial's untagged requests of class cls: their own text, their
    part of lat_ns ("lat_part"), or lat_ns less the tagged ones'
    ("tagged_hdr", oqbench.run/4); for "all" the other two."""
    s = ((t.get("host_tags") or {}).get("sys_lat_ns") or {}).get(cls)
    if not isinstance(s, dict) or not s.get("n"):
        return {}, None
    if isinstance(s.get("hdr"), str):
        return counts_of(s["hdr"]), "hdr"
    if cls == "all":
        c = untagged(t, "nilext")[0]
        add(c, untagged(t, "non_nilext")[0])
        return c, "sys_classes"
    whole = trial_counts(t.get("lat_ns") or {}, cls)
    if isinstance(s.get("lat_part"), str):
        return part_of(s["lat_part"], whole), "lat_part"
    tagged = counts_of(s["tagged_hdr"])
    return {i: k - tagged.get(i, 0) for i, k in whole.items() if k - tagged.get(i, 0)}, "tagged_hdr"


def low_width(i):
    bucket = (i >> 10) - 1
    sub = (i & 1023) + 1024
    if bucket < 0:
        sub -= 1024
        bucket = 0
    return sub << bucket, 1 << bucket


def percentile(counts, n, vmin, vmax, p):
    if n == 0:
        return 0
    x = p / 100.0 * n
    k = min(max(math.ceil(x - x * 1e-14), 1), n)
    if k == 1:
        return vmin
    if k == n:
        return vmax
    cum = 0
    for i in sorted(counts):
        cum += counts[i]
        if cum >= k:
            lo, w = low_width(i)
            return min(max(lo + w // 2, vmin), vmax)
    return vmax


def walk(v, path):
    if isinstance(v, dict):
        if isinstance(v.get("hdr"), str):
            yield path, v
        for k, x in v.items():
            yield from walk(x, path + "." + k if path else k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk(x, "%s[%d]" % (path, i))


def add(into, c):
    for i, k in c.items():
        into[i] = into.get(i, 0) + k


def trial_counts(classes, cls):
    """A trial's class cls: its own text, or for "all" its other two."""
    h = classes.get(cls)
    if not isinstance(h, dict) or not h.get("n"):
        return {}
    if isinstance(h.get("hdr"), str):
        return counts_of(h["hdr"])
    if cls != "all":
        raise ValueError("a trial's %s has no hdr" % cls)
    c = trial_counts(classes, "nilext")
    add(c, trial_counts(classes, "non_nilext"))
    return c


def derived(run):
    """(path, summary, counts) of each point summary kept without its text."""
    for i, pt in enumerate(run.get("points", [])):
        trials = pt.get("trials") or []
        for side, path in (("lat_ns", "lat_ns"), ("service_ns", "server.service_ns")):
            classes = pt.get("lat_ns") if side == "lat_ns" else (pt.get("server") or {}).get("service_ns")
            if not isinstance(classes, dict) or not trials:
                continue
            for cls in ("all", "nilext", "non_nilext"):
                h = classes.get(cls)
                if not isinstance(h, dict) or "hdr" in h or "n" not in h:
                    continue
                if cls == "all" and any(isinstance((classes.get(k) or {}).get("hdr"), str)
                                        for k in ("nilext", "non_nilext")):
                    # oqbench.run/4: the point keeps its service times' classes
                    yield "points[%d].%s.%s" % (i, path, cls), h, trial_counts(classes, cls), "classes"
                    continue
                c = {}
                for t in trials:
                    add(c, trial_counts(t.get(side) or {}, cls))
                yield "points[%d].%s.%s" % (i, path, cls), h, c, "trials"
        # the untagged requests: each trial's, and the point's their sum
        for cls in ("all", "nilext", "non_nilext"):
            c = {}
            for k, t in enumerate(trials):
                tc, frm = untagged(t, cls)
                add(c, tc)
                s = ((t.get("host_tags") or {}).get("sys_lat_ns") or {}).get(cls)
                if frm and frm != "hdr":
                    yield "points[%d].trials[%d].host_tags.sys_lat_ns.%s" % (i, k, cls), s, tc, frm
            h = ((pt.get("host_tags") or {}).get("sys_lat_ns") or {}).get(cls)
            if trials and isinstance(h, dict) and "hdr" not in h and "n" in h:
                yield "points[%d].host_tags.sys_lat_ns.%s" % (i, cls), h, c, "trials"
        # the host stalls' lengths: one summary, the trials' added
        h = (pt.get("host_tags") or {}).get("host_len_ns")
        if trials and isinstance(h, dict) and "hdr" not in h and "n" in h:
            c = {}
            for t in trials:
                th = (t.get("host_tags") or {}).get("host_len_ns")
                if isinstance(th, dict) and th.get("n"):
                    add(c, counts_of(th["hdr"]))
            yield "points[%d].host_tags.host_len_ns" % i, h, c, "trials"


def line(path, h, c, frm):
    n = h["n"]
    out = {"path": path, "n": n, "total": sum(c.values()), "counters": len(c), "from": frm,
           "printed": [h.get("p50"), h.get("p99"), h.get("p999")]}
    for name, p in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        out[name] = percentile(c, n, h["min"], h["max"], p)
    print(json.dumps(out))


def main():
    run = json.load(open(sys.argv[1]))
    for path, h in walk(run, ""):
        line(path, h, counts_of(h["hdr"]), "hdr")
    for path, h, c, frm in derived(run):
        line(path, h, c, frm)


if __name__ == "__main__":
    main()
