"""Critical sections that a Python signal handler must not split.

The runner turns SIGINT/SIGTERM into an exception raised in the main thread, at any bytecode.
Raised between fork() and remembering the child's pid, or while a worker thread is still creating
namespaces, it would leave a process or a namespace nobody knows about. Inside `deferred()`, the
Python-level handlers only note the signal; it is delivered, to the original handler, when the
section ends. Handlers run only in the main thread, so elsewhere there is nothing to defer.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A section no SIGINT/SIGTERM handler interrupts: signals wait until it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved: dict[int, Callable[..., Any]] = {}
    pending: list[int] = []
    active = [True]

    def defer(signum: int, frame: Any) -> Any:
        if active[0]:
            pending.append(signum)
            return None
        return saved[signum](signum, frame)  # a late arrival while handlers are being restored

    try:
        # Inside the try: a signal landing while handlers are swapped restores them all the same.
        for sig in signal.valid_signals():
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                handler = signal.getsignal(sig)
                if callable(handler):
                    saved[sig] = handler
                    signal.signal(sig, defer)
        yield
    finally:
        active[0] = False
        for sig, handler in saved.items():
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                signal.signal(sig, handler)
        for signum in pending:
            saved[signum](signum, None)  # may raise (KeyboardInterrupt, Interrupted): intended


def run_thread(target: Callable[[], None], name: str) -> None:
    """Start target in a thread and wait for it, without a signal splitting the two."""
    with deferred():
        thread = threading.Thread(target=target, name=name)
        thread.start()
        thread.join()
