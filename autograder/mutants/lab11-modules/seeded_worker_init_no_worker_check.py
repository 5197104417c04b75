# Mutant: uses torch.initial_seed(), which also works in the main process, and re-seeds it silently
# replaces: seeded_worker_init
# must fail: hidden_seeded_worker_init


def seeded_worker_init(worker_id):
    info = get_worker_info()
    seed = torch.initial_seed()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    dataset = info.dataset if info is not None else None
    if hasattr(dataset, "np_rng"):
        dataset.np_rng = np.random.default_rng(seed)
    if hasattr(dataset, "py_rng"):
        dataset.py_rng.seed(seed)
