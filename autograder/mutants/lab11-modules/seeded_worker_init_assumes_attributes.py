# Mutant: assumes every dataset has both np_rng and py_rng
# replaces: seeded_worker_init
# must fail: hidden_seeded_worker_init


def seeded_worker_init(worker_id):
    info = get_worker_info()
    if info is None:
        raise RuntimeError("seeded_worker_init must run inside a DataLoader worker process")
    seed = info.seed
    random.seed(seed)
    np.random.seed(seed % 2**32)
    dataset = info.dataset
    dataset.np_rng = np.random.default_rng(seed)
    dataset.py_rng.seed(seed)
