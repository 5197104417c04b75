# Mutant: loads the checkpoint with torch.load and reads the storages off the tensors
# replaces: checkpoint_storages
# must fail: test_checkpoint_storages, hidden_checkpoint_storages


def checkpoint_storages(path):
    with zipfile.ZipFile(path) as archive:
        prefix = next(n for n in archive.namelist() if n.endswith("data.pkl"))[: -len("data.pkl")]
    obj = torch.load(path, weights_only=True)
    tensors = list(obj.values()) if isinstance(obj, dict) else list(obj) if isinstance(obj, list) else [obj]
    records, seen = {}, set()
    for t in tensors:
        if id(t) in seen:
            continue
        seen.add(id(t))
        s = t.untyped_storage()
        if s._cdata not in records:
            key = str(len(records))
            records[s._cdata] = {"key": key, "dtype": t.dtype, "nbytes": s.nbytes(), "location": str(s.device),
                                 "record": f"{prefix}data/{key}", "refs": 0}
        records[s._cdata]["refs"] += 1
    return list(records.values())
