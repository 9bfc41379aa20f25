"""llama.cpp's own OpenAI-compatible server on the course's model, in a process of its own (so a test can kill it).

xllamacpp, the local backend's runtime, is llama.cpp's server: ``xllamacpp.Server(params)`` opens its HTTP listener
on a loopback port (``listening_address``), with ``/v1/chat/completions``. ``n_parallel`` gives it that many slots,
which decode their requests together; the context is split between them, so each slot gets the local backend's
4,096 tokens. ``python tests/helpers/llama_server.py [SLOTS]`` starts one and prints its ``/v1`` address.
"""
from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SLOT_CONTEXT = 4096
REPO = Path(__file__).resolve().parents[2]


def serve(slots: int) -> None:
    """Start the server, print its ``/v1`` address, and keep it up until the process is stopped."""
    import xllamacpp

    from course_utils.backend.local.llm import llama_params
    from course_utils.backend.local.model_file import load_model

    params = llama_params(xllamacpp, load_model().path, SLOT_CONTEXT * slots, None)
    params.use_jinja = True  # the chat template renders the messages (and tools, when asked for)
    params.n_parallel = slots
    server = xllamacpp.Server(params)
    print(f"{server.listening_address}/v1", flush=True)
    while True:
        time.sleep(3600)


@contextmanager
def llama_server_process(slots: int = 2) -> Iterator[tuple[str, subprocess.Popen]]:
    """(the ``/v1`` address, the process) of a server started by `serve`; killed after."""
    process = subprocess.Popen([sys.executable, __file__, str(slots)], stdout=subprocess.PIPE, text=True,
                               stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        address = process.stdout.readline().strip()
        if not address.startswith("http"):
            raise RuntimeError(f"llama.cpp's server did not start (exit code {process.poll()})")
        yield address, process
    finally:
        process.kill()
        process.wait()


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
