# Settings for nbgrader's Validate button and `make validate`.
c = get_config()  # noqa: F821
c.ExecutePreprocessor.kernel_name = "python3"
c.Execute.timeout = 120
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"{ignore}"  # filled in by `make student-dist` from the course settings
