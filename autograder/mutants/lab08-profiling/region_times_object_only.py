# Mutant: always reads data["traceEvents"], so a trace in Chrome's JSON Array Format (a bare list) fails
# replaces: region_times
# must fail: hidden_region_times
import gzip
import json
import math
import os


def region_times(trace_json_path):
    path = os.fspath(trace_json_path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    regions = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
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
