# Mutant: subtracts the regions nested inside (a "self time"), so a region no longer covers its whole bar
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
    regions = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    out = {}
    for e in regions:
        start, end = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        inner = sum(float(c["dur"]) for c in regions if c is not e and c.get("tid") == e.get("tid")
                    and start <= float(c["ts"]) and float(c["ts"]) + float(c["dur"]) <= end
                    and not any(p is not e and p is not c and start <= float(p["ts"]) <= float(c["ts"])
                                and float(c["ts"]) + float(c["dur"]) <= float(p["ts"]) + float(p["dur"]) <= end
                                for p in regions))
        out[e["name"]] = out.get(e["name"], 0.0) + (float(e["dur"]) - inner) / 1000.0
    return out
