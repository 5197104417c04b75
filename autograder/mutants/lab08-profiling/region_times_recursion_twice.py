# Mutant: adds every run, so a region nested in itself (recursion) is counted twice
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
    out = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            out[e["name"]] = out.get(e["name"], 0.0) + float(e["dur"]) / 1000.0
    return out
