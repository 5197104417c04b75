"""Runs INSIDE the sandbox: execute one notebook, print the executed notebook as JSON.

    python sandbox_runner.py <notebook> <cell_timeout_s>

Standalone on purpose (imports nothing from the course): the sandbox sees this
one file, not the autograder package.
"""

import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError


def main() -> int:
    path, timeout = sys.argv[1], int(sys.argv[2])
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=timeout, allow_errors=True,
                            extra_arguments=["--IPKernelApp.log_level=ERROR"],
                            resources={"metadata": {"path": "."}})
    status = "ok"
    try:
        client.execute()
    except CellTimeoutError:
        status = "cell timeout"
    except DeadKernelError:
        status = "kernel died"
    nb.metadata["sandbox_status"] = status
    sys.stdout.write(nbformat.writes(nb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
