# Mutant: seeds np.random and random (the classic recipe) but leaves the dataset's own generators duplicated
# replaces: seeded_worker_init
# must fail: test_seeded_worker_init, hidden_seeded_worker_init


def seeded_worker_init(worker_id):
    info = get_worker_info()
    if info is None:
        raise RuntimeError("seeded_worker_init must run inside a DataLoader worker process")
    seed = info.seed
    random.seed(seed)
    np.random.seed(seed % 2**32)
