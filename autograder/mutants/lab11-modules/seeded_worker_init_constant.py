# Mutant: re-seeds the dataset's generators with a fixed seed, the same in every worker
# replaces: seeded_worker_init
# must fail: test_seeded_worker_init, hidden_seeded_worker_init


def seeded_worker_init(worker_id):
    info = get_worker_info()
    if info is None:
        raise RuntimeError("seeded_worker_init must run inside a DataLoader worker process")
    seed = info.seed
    random.seed(seed)
    np.random.seed(seed % 2**32)
    dataset = info.dataset
    if hasattr(dataset, "np_rng"):
        dataset.np_rng = np.random.default_rng(SEED)
    if hasattr(dataset, "py_rng"):
        dataset.py_rng.seed(SEED)
