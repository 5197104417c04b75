# Mutant: compares with bucket_cap_mb * 2**20 as a float, where DDP truncates the cap to an int number of bytes
# replaces: bucket_assignment
# must fail: hidden_bucket_assignment


def bucket_assignment(param_sizes_bytes, bucket_cap_mb=None):
    if bucket_cap_mb is None:
        first_cap, cap = 1024 * 1024, 25 * 1024 * 1024
    else:
        first_cap = cap = bucket_cap_mb * 1024 * 1024
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
