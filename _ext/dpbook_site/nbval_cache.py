"""The test command's notebook runs, kept in the build's execution cache (a pytest plugin).

The README's test command runs every chapter with nbval, cell by cell in one kernel; the build then
needs the same chapters executed once more, with their outputs and their widgets' state, in its
execution cache (``tools/execute_book.py`` executes them there).  This plugin keeps the first run:
it reads every message nbval's kernel sends while a cell runs (nbval itself keeps only the outputs it
compares), replays them through nbclient's own message handling (``NotebookClient.process_message``:
outputs, display updates, clear_output, execution counts, the widgets' comm state), and, once every
code cell of a chapter of ``_toc.yml`` has passed in this session, stores the executed chapter in the
cache the build reads (``<root>/_build/.jupyter_cache/<library hash>``, as ``tools/execute_book.py``
does), with its execution seconds, kernel start included.  A chapter with a failed, skipped or
deselected cell is not stored; ``execute_book.py`` then executes it, and the build matches nothing
it did not execute itself or see executed whole.

nbval and nbclient then differ only in who reads the messages, not in what the kernel is asked: the
notebook's own kernel, in the notebook's folder, each cell's source sent as one ``execute_request``
as nbclient sends it (``store_history=True``: nbval's own ``False`` has IPython number every cell alike
and show the value of a last line ended by ``;``, which it decides by reading the history).

The test workers share the cache's SQLite database, one writer at a time under a POSIX file lock
(``fcntl``); where there is none (Windows) the plugin is not registered and the build executes the
chapters itself.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest

from .cache import chapters, library_hash

ROOT = Path(__file__).resolve().parents[2]


class _Recording:
    """One notebook's run under nbval: an nbclient client replaying its kernel's messages."""

    def __init__(self, nb):
        from nbclient import NotebookClient

        self.nb = copy.deepcopy(nb)
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        self.client = NotebookClient(self.nb, record_timing=False)
        self.client.reset_execution_trackers()
        self.code_cells = sum(c.cell_type == "code" for c in nb.cells)
        self.passed: set[int] = set()
        self.failed = False
        self.started = time.perf_counter()
        self.messages: list[dict] = []
        self.language_info = None

    def replay(self, index: int, msg_id: str) -> None:
        """Feed cell ``index``'s messages (those whose parent is its request) to nbclient."""
        from nbclient.exceptions import CellExecutionComplete

        cell = self.nb.cells[index]
        self.messages, messages = [], self.messages
        if not cell.source.strip():
            return  # nbclient does not execute a blank cell (nor does IPython count it)
        # as nbclient's execute_cell does before it reads a cell's messages
        cell.outputs = []
        self.client.clear_before_next_output = False
        for msg in messages:
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            try:
                self.client.process_message(msg, cell, index)
            except CellExecutionComplete:
                break


def _tee(kernel, recording: _Recording) -> None:
    """Have nbval's kernel hand every iopub message it reads to ``recording`` too."""
    if getattr(kernel, "_dpbook_tee", None) is recording:
        return
    read = kernel.get_message.__func__.__get__(kernel)

    def get_message(stream, timeout=None):
        msg = read(stream, timeout=timeout)
        if stream == "iopub":
            recording.messages.append(msg)
        return msg

    kernel.get_message = get_message
    kernel._dpbook_tee = recording


def _language_info(kernel, timeout=60):
    """The kernel's ``language_info`` (nbclient writes it into the notebook's metadata)."""
    msg_id = kernel.kc.kernel_info()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        reply = kernel.kc.get_shell_msg(timeout=max(end - time.monotonic(), 0.1))
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"].get("language_info")
    return None


def store(path: Path, nb, seconds: float, root: Path = ROOT) -> None:
    """Store executed ``nb`` (of ``path``) in the build's execution cache, as ``execute_book.py`` does."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    folder = root / "_build" / ".jupyter_cache"
    folder.mkdir(parents=True, exist_ok=True)
    import fcntl  # (available(): the plugin is registered only where it is)

    # one writer at a time (the test workers share the cache's SQLite database)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cache = get_cache(str(folder / library_hash(root)))
        stage = cache.add_nb_to_project(str(path))
        cache.cache_notebook_bundle(
            CacheBundleIn(nb, stage.uri, data={"execution_seconds": seconds}),
            check_validity=False,
            overwrite=True,
        )


def available() -> bool:
    """Whether the plugin can run here: POSIX file locks for the shared cache (not on Windows)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


class NbvalCache:
    """The plugin (registered by the root ``conftest.py``)."""

    def __init__(self, root: Path = ROOT):
        self.root = root
        self.chapters = {p.resolve() for p in chapters(root)}
        self.recordings: dict[Path, _Recording] = {}

    def _recording(self, item):
        from nbval.plugin import IPyNbCell

        if not isinstance(item, IPyNbCell):
            return None
        path = Path(item.parent.path).resolve()
        if path not in self.chapters:
            return None
        if path not in self.recordings:
            self.recordings[path] = _Recording(item.parent.nb)
        return self.recordings[path]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        # before nbval's set-up of the notebook (its kernel's start), which the execution seconds include
        self._recording(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        recording = self._recording(item)
        if recording is None:
            yield
            return
        kernel = item.parent.kernel
        if recording.language_info is None:
            recording.language_info = _language_info(kernel)
        _tee(kernel, recording)
        recording.messages = []
        sent = {}

        # as nbclient sends a cell: stored in the kernel's history (nbval sends store_history=False, under
        # which IPython numbers every cell alike and, reading the history for the cell's last line, shows
        # the value of a line ended by ";")
        def execute_cell_input(source, allow_stdin=None):
            sent["id"] = kernel.kc.execute(
                source, store_history=True, allow_stdin=allow_stdin, stop_on_error=False
            )
            return sent["id"]

        kernel.execute_cell_input = execute_cell_input
        try:
            outcome = yield
        finally:
            del kernel.execute_cell_input
        index = next(i for i, c in enumerate(item.parent.nb.cells) if c is item.cell)
        if outcome.excinfo is not None or "id" not in sent:
            recording.failed = True
            return
        recording.replay(index, sent["id"])
        recording.passed.add(index)

    def pytest_runtest_logreport(self, report):
        # a skipped cell (nbval's NBVAL_SKIP) leaves the chapter unfinished; a failed one is caught above
        if report.skipped:
            for path, recording in self.recordings.items():
                if report.nodeid.startswith(str(path.relative_to(self.root))):
                    recording.failed = True

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item, nextitem):
        from nbval.plugin import IPyNbCell

        if not isinstance(item, IPyNbCell):
            return
        path = Path(item.parent.path).resolve()
        recording = self.recordings.get(path)
        if recording is None:
            return
        if nextitem is not None and getattr(nextitem, "parent", None) is item.parent:
            return
        # the notebook's last cell: stored if every code cell passed, in order, in this session
        del self.recordings[path]
        if recording.failed or len(recording.passed) != recording.code_cells:
            return
        recording.client.set_widgets_metadata()
        if recording.language_info is not None:
            recording.nb.metadata["language_info"] = recording.language_info
        store(path, recording.nb, time.perf_counter() - recording.started, self.root)
