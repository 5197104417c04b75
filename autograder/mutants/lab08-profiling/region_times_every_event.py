# Mutant: counts every complete ("X") event by name, so ops and kernels show up as regions
# replaces: region_times
# must fail: test_region_times, hidden_region_times
import gzip
import json
import math
import os


def region_times(trace_json_path):
    path = os.fspath(trace_json_path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    regions = [e for e in events if e.get("ph") == "X"]
    regions.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
    totals, open_until = {}, {}
    for e in regions:
        name, start, dur = e["name"], float(e["ts"]), float(e["dur"])
        thread = (name, e.get("pid"), e.get("tid"))
        totals.setdefault(name, 0.0)
        until = open_until.get(thread, -math.inf)
        if start < until and start + dur <= until:
            continue
        open_until[thread] = start + dur
        totals[name] += dur
    return {name: us / 1000.0 for name, us in totals.items()}
