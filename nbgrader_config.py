"""nbgrader's configuration for this course (the only place its settings live).

`nbgrader ...` run from the repository root, `make release`, `make grade` and
the formgrader all read this file. The grading harness loads it as a sub-config
of its scratch courses and overrides only the directories.
"""

import os

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file

ROOT = os.path.dirname(os.path.abspath(__file__))
COURSE = os.path.join(ROOT, "build", "course")  # git-ignored: gradebook, hand-ins, feedback

c.CourseDirectory.root = ROOT
c.CourseDirectory.source_directory = "solutions"  # instructor notebooks (answers + hidden tests)
c.CourseDirectory.release_directory = "labs"  # generated student notebooks, committed
c.CourseDirectory.submitted_directory = os.path.join(COURSE, "submitted")
c.CourseDirectory.autograded_directory = os.path.join(COURSE, "autograded")
c.CourseDirectory.feedback_directory = os.path.join(COURSE, "feedback")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(COURSE, "gradebook.db")

# Every notebook runs on the course's own kernel (the venv's, registered as python3).
c.ExecutePreprocessor.kernel_name = "python3"
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# Seconds one cell may run while grading; a solution cell runs well under this.
c.ExecutePreprocessor.timeout = 120
c.Execute.timeout = 120

# nbgrader gives 0 to a test cell with any stderr output. These harmless
# messages (library deprecation/user warnings, tqdm bars, torch's own glog-style
# "W1122 02:29:05.159000 13690 ..." log lines, bracketed or not, as c10d writes them) must not cost points.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?m)(?:\w*Warning:|\d+%\||^\[?[WI]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ )"
