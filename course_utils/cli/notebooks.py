"""Execute lesson notebooks headless, as `make course` and the tests do."""
from __future__ import annotations

import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute_notebook(path: Path, out_dir: Path | None = None, timeout: int = 1200) -> nbformat.NotebookNode:
    """Run every cell of `path` in a fresh kernel, from the notebook's own folder.

    Raises `nbclient.exceptions.CellExecutionError` naming the failing cell. When `out_dir` is
    given, the executed notebook (with its outputs) is written there under the same name.
    """
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    try:
        client.execute()
    finally:
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, out_dir / path.name)
    return notebook


def run_all(folder: Path, out_dir: Path) -> int:
    """Execute every numbered lesson in `folder`; print one line per lesson; return the failure count."""
    failures = 0
    for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
        start = time.perf_counter()
        try:
            execute_notebook(path, out_dir)
            status = "ok"
        except Exception as err:  # a failing lesson is reported and the others still run
            failures += 1
            status = f"FAILED: {str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__}"
        print(f"{path.name:45} {time.perf_counter() - start:6.1f} s  {status}", flush=True)
    print(f"Executed notebooks are in {out_dir}/")
    return failures
