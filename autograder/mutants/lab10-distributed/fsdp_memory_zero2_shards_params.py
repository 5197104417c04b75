# Mutant: ZeRO-2 shards the parameters too (that is ZeRO-3)
# replaces: fsdp_memory
# must fail: test_fsdp_memory, hidden_fsdp_memory


def fsdp_memory(params, world_size, dtype):
    if type(world_size) is not int or world_size < 1:
        raise ValueError("world_size")
    if dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise ValueError("dtype")
    full = sharded = 0
    for p in params:
        shape = tuple(p.shape) or (1,)
        rest = math.prod(shape[1:])
        full += shape[0] * rest
        sharded += -(-shape[0] // world_size) * rest
    size = dtype.itemsize
    optim = 8 if dtype == torch.float32 else 12

    def usage(p, g, o):
        return {"params": p * size, "grads": g * size, "optimizer": o * optim, "total": (p + g) * size + o * optim}

    return {"no_shard": usage(full, full, full), "zero2": usage(sharded, sharded, sharded),
            "zero3": usage(sharded, sharded, sharded)}
