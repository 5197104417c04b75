# Mutant: closes a bucket before a parameter would push it over the cap (DDP lets the crossing parameter in)
# replaces: bucket_assignment
# must fail: test_bucket_assignment, hidden_bucket_assignment


def bucket_assignment(param_sizes_bytes, bucket_cap_mb=None):
    if bucket_cap_mb is None:
        first_cap, cap = 1024 * 1024, 25 * 1024 * 1024
    else:
        first_cap = cap = int(bucket_cap_mb * 1024 * 1024)
    buckets, current, size = [], [], 0
    for i in reversed(range(len(param_sizes_bytes))):
        limit = cap if buckets else first_cap
        if current and size + param_sizes_bytes[i] > limit:
            buckets.append(current)
            current, size = [], 0
        current.append(i)
        size += param_sizes_bytes[i]
    if current:
        buckets.append(current)
    return buckets
