# Mutant: forgets DDP's small first bucket: 25 MiB for every bucket by default
# replaces: bucket_assignment
# must fail: test_bucket_assignment, hidden_bucket_assignment


def bucket_assignment(param_sizes_bytes, bucket_cap_mb=None):
    cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
    buckets, current, size = [], [], 0
    for i in reversed(range(len(param_sizes_bytes))):
        current.append(i)
        size += param_sizes_bytes[i]
        if size >= cap:
            buckets.append(current)
            current, size = [], 0
    if current:
        buckets.append(current)
    return buckets
