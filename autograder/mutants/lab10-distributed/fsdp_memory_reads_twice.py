# Mutant: walks params twice (once for the full size, once for the shards): a generator is empty the second time
# replaces: fsdp_memory
# must fail: hidden_fsdp_memory


def fsdp_memory(params, world_size, dtype):
    if type(world_size) is not int or world_size < 1:
        raise ValueError("world_size")
    if dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise ValueError("dtype")
    full = sum(math.prod(tuple(p.shape)) for p in params)
    sharded = sum(-(-(p.shape[0] if p.dim() else 1) // world_size) * math.prod(tuple(p.shape)[1:]) for p in params)
    size = dtype.itemsize
    optim = 8 if dtype == torch.float32 else 12

    def usage(p, g, o):
        return {"params": p * size, "grads": g * size, "optimizer": o * optim, "total": (p + g) * size + o * optim}

    return {"no_shard": usage(full, full, full), "zero2": usage(full, sharded, sharded),
            "zero3": usage(sharded, sharded, sharded)}
