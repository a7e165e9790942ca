"""Worker threads, kept alive by the application rather than by the window or dialog that started them.

A dialog can be destroyed while its worker is still busy (its window closed, a test torn down);
a QThread destroyed while running aborts the process. So the keeper, which lives as long as the
application, holds every such thread until it has finished, runs the worker's cleanup on the
worker's own thread as the thread ends, and stops them all when the application quits.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Slot


class _Keeper(QObject):
    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self.threads: dict[QThread, QObject] = {}
        app.aboutToQuit.connect(self.stop_all)

    def start(self, worker: QObject, name: str, cleanup: str) -> QThread:
        thread = QThread()
        thread.setObjectName(name)
        worker.moveToThread(thread)
        if cleanup:
            # Direct: runs on the ending thread itself, where the worker's resources (SQLite) belong.
            thread.finished.connect(getattr(worker, cleanup), Qt.ConnectionType.DirectConnection)
        thread.finished.connect(self._finished)  # queued to this object, on the UI thread
        self.threads[thread] = worker
        thread.start()
        return thread

    @Slot()
    def _finished(self) -> None:
        thread = self.sender()
        if isinstance(thread, QThread):
            thread.wait()
            self.threads.pop(thread, None)

    @Slot()
    def stop_all(self, timeout_ms: int = 30000) -> bool:
        for thread in list(self.threads):
            thread.quit()
        done = all(thread.wait(timeout_ms) for thread in list(self.threads))
        if done:
            self.threads.clear()
        return done


_keeper: _Keeper | None = None


def _the_keeper() -> _Keeper:
    global _keeper
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("worker threads need a running application")
    if _keeper is None or _keeper.parent() is not app:
        _keeper = _Keeper(app)
    return _keeper


def start_worker_thread(worker: QObject, name: str, cleanup: str = "shutdown") -> QThread:
    """Move worker to a new thread and start it; `cleanup` (a method name) runs there as it ends."""
    return _the_keeper().start(worker, name, cleanup)


def stop_worker_threads(timeout_ms: int = 30000) -> bool:
    """Ask every worker thread to end after its current job, and wait. True when all ended."""
    return _keeper.stop_all(timeout_ms) if _keeper is not None else True
