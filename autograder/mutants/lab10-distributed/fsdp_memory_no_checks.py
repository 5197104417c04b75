# Mutant: never raises: takes world_size 0 or 2.0 and any dtype (float64 parameters at 8 bytes)
# replaces: fsdp_memory
# must fail: hidden_fsdp_memory


def fsdp_memory(params, world_size, dtype):
    full = sharded = 0
    for p in params:
        shape = tuple(p.shape) or (1,)
        rest = math.prod(shape[1:])
        full += shape[0] * rest
        sharded += -(-shape[0] // max(int(world_size), 1)) * rest
    size = dtype.itemsize
    optim = 8 if dtype == torch.float32 else 12

    def usage(p, g, o):
        return {"params": p * size, "grads": g * size, "optimizer": o * optim, "total": (p + g) * size + o * optim}

    return {"no_shard": usage(full, full, full), "zero2": usage(full, sharded, sharded),
            "zero3": usage(sharded, sharded, sharded)}
