# Mutant: forgets the float32 master copy of the parameters in mixed precision (8 bytes of optimizer state, not 12)
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

    def usage(p, g, o):
        return {"params": p * size, "grads": g * size, "optimizer": o * 8, "total": (p + g) * size + o * 8}

    return {"no_shard": usage(full, full, full), "zero2": usage(full, sharded, sharded),
            "zero3": usage(sharded, sharded, sharded)}
