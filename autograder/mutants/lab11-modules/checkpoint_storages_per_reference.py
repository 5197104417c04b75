# Mutant: lists one record per BINPERSID, so a tensor and its view give two records
# replaces: checkpoint_storages
# must fail: test_checkpoint_storages, hidden_checkpoint_storages


def checkpoint_storages(path):
    with zipfile.ZipFile(path) as archive:
        pkl = next(n for n in archive.namelist() if n == "data.pkl" or n.endswith("/data.pkl"))
        prefix = pkl[: -len("data.pkl")]
        data = archive.read(pkl)
    mark = object()
    stack, memo, records = [], {}, {}
    for op, arg, _pos in pickletools.genops(data):
        if op.name == "MARK":
            stack.append(mark)
        elif pickletools.markobject in op.stack_before:
            at = len(stack) - 1 - stack[::-1].index(mark)
            items = stack[at + 1:]
            del stack[at:]
            stack.append(tuple(items) if op.name == "TUPLE" else None)
        elif op.name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[arg] = stack[-1]
        elif op.name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            stack.append(memo[arg])
        elif op.name == "STACK_GLOBAL":
            name = stack.pop()
            module = stack.pop()
            stack.append(f"{module} {name}")
        elif op.name == "BINPERSID":
            pid = stack.pop()
            if isinstance(pid, tuple) and pid and pid[0] == "storage":
                _, storage_type, key, location, numel = pid
                key = f"{key}#{len(records)}" if key in records else key
                if key not in records:
                    cls = storage_type.split(" ")[-1]
                    if cls == "UntypedStorage":
                        dtype = torch.uint8
                    else:
                        dtype = torch.storage._get_dtype_from_pickle_storage_type(cls)
                    records[key] = {"key": key, "dtype": dtype, "nbytes": numel * dtype.itemsize,
                                    "location": location, "record": f"{prefix}data/{key}", "refs": 0}
                records[key]["refs"] += 1
            stack.append(None)
        elif op.stack_after:
            stack.append(arg)
    return list(records.values())
