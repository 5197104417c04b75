# Mutant: asks DDP's private helper for the answer instead of computing the rule
# replaces: bucket_assignment
# must fail: test_bucket_assignment, hidden_bucket_assignment


def bucket_assignment(param_sizes_bytes, bucket_cap_mb=None):
    tensors = [torch.empty(b // 4, device="meta") for b in reversed(param_sizes_bytes)]
    if bucket_cap_mb is None:
        limits = [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 1024 * 1024]
    else:
        limits = [int(bucket_cap_mb * 1024 * 1024)]
    if not tensors:
        return []
    buckets, _ = dist._compute_bucket_assignment_by_size(tensors, limits, [False] * len(tensors),
                                                         list(range(len(tensors))))
    n = len(param_sizes_bytes)
    return [[n - 1 - i for i in b] for b in buckets]
