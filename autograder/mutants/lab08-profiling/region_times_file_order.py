# Mutant: finds nesting with a stack walked in file order, assuming each outer run comes before its inner runs
# replaces: region_times
# must fail: hidden_region_times
import gzip
import json
import os


def region_times(trace_json_path):
    path = os.fspath(trace_json_path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    totals, open_until = {}, {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "user_annotation":
            continue
        name, start, dur = e["name"], float(e["ts"]), float(e["dur"])
        thread = (name, e.get("pid"), e.get("tid"))
        totals.setdefault(name, 0.0)
        until = open_until.get(thread)
        if until is not None and start < until and start + dur <= until:
            continue
        open_until[thread] = start + dur
        totals[name] += dur
    return {name: us / 1000.0 for name, us in totals.items()}
