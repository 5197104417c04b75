# Mutant: stores each run's time under its name, so a repeated region keeps only its last run
# replaces: region_times
# must fail: test_region_times, hidden_region_times
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
            out[e["name"]] = float(e["dur"]) / 1000.0
    return out
