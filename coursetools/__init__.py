"""The course's tooling that is not grading: lint (notebooks follow the lab contract),
release (student notebooks from solutions/), execute (papermill, one kernel), mutants
(wrong answers must lose points), quality (the per-lab table), demo (the demo class and the
exploit corpus as hand-ins), student_dist (the learners' tree), bench (make bench-grade),
venv (the environment), update (`make update` in the learners' tree), gpu_run (`make gpu-check`).

`venv` and `update` must import nothing outside the standard library: they run before the environment exists.
"""
