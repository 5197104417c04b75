"""The course's grading and lab-quality pipeline.

Stages, one module each: lint (notebooks well-formed) -> release (student
notebooks from solutions/) -> execute (papermill / one kernel) -> grade
(nbgrader in a scratch course) -> mutants (wrong answers must lose points) ->
quality (the per-lab table) -> student_dist (the learners' tree).

`venv` builds the environment and must import nothing outside the standard
library, because it runs before the environment exists.
"""
