# Mutant: gives the first bucket 1 MiB even when bucket_cap_mb is passed (torch 2.13 does that only for the default)
# replaces: bucket_assignment
# must fail: hidden_bucket_assignment


def bucket_assignment(param_sizes_bytes, bucket_cap_mb=None):
    cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
    first_cap = min(1024 * 1024, cap)
    buckets, current, size = [], [], 0
    for i in reversed(range(len(param_sizes_bytes))):
        current.append(i)
        size += param_sizes_bytes[i]
        if size >= (cap if buckets else first_cap):
            buckets.append(current)
            current, size = [], 0
    if current:
        buckets.append(current)
    return buckets
