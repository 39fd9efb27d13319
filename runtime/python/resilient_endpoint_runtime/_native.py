"""Real OS threads for the helper's background work, whatever the server did to ``threading``.

AWS's scikit-learn and XGBoost images serve with ``gunicorn -k gevent`` (aws/sagemaker-containers
``_server.py``), whose worker calls ``gevent.monkey.patch_all()`` before it loads the model: ``threading.Thread``
then starts a greenlet, ``threading.Lock`` is gevent's, ``time.sleep`` yields to the hub and
``threading.get_ident()`` names the greenlet. A greenlet runs only when the request in front of it yields, and
a CPU-bound predict does not: the ledger's sampler, the metric publishers and the level refresher would stop
for as long as a request computes. gevent keeps the originals (``gevent.monkey.get_original``): everything here
uses them when gevent has patched ``threading``, and the standard ones otherwise.

- :class:`Thread`, :class:`Event`, :func:`allocate_lock`, :func:`sleep`, :func:`get_ident` (the OS thread,
  never a greenlet), :func:`native_id`.
- :class:`Courier`: one real thread that makes every call of one client. Under gevent a socket belongs to the
  thread (the hub) that made it, so a client's pooled connections must stay on one thread; callers hand the
  courier a call and wait for it at most their deadline. One call at a time: a caller finding it busy is told
  so at once (it keeps its data for the next try), never queued behind a hung call.
- :data:`background`: one real thread per process running the helper's periodic tasks (the ledger's sampling,
  the backstop's watch, the stage metrics' flush). Restarted in a forked child.

Standard library only; gevent is never imported here (only looked up when something else imported it).
"""
import atexit
import logging
import os
import sys
import time

log = logging.getLogger("resilient_endpoint_runtime")


def gevent_patched():
    """True when gevent has monkey-patched ``threading`` in this process (gunicorn's gevent worker)."""
    monkey = sys.modules.get("gevent.monkey")
    try:
        return bool(monkey is not None and monkey.is_module_patched("threading"))
    except Exception:  # noqa: BLE001 - a gevent we do not know: treat as not patched
        return False


_originals = {}


def original(module, name):
    """The unpatched ``module.name`` (gevent's saved original when it patched it). Kept once found: before gevent
    patches, the module's own attribute is the original; after, gevent saved it."""
    key = (module, name)
    found = _originals.get(key)
    if found is None:
        monkey = sys.modules.get("gevent.monkey")
        if monkey is not None:
            try:
                found = monkey.get_original(module, name)
            except Exception:  # noqa: BLE001 - fall back to the module's own attribute
                found = None
        if found is None:
            found = getattr(__import__(module), name)
        _originals[key] = found
    return found


def allocate_lock():
    """A real (OS-level) lock: blocking on it blocks the thread, never switches greenlets."""
    return original("_thread", "allocate_lock")()


def get_ident():
    """The OS thread's identity (under gevent, not the greenlet's): what per-thread native state is keyed on."""
    return original("_thread", "get_ident")()


def native_id():
    """The kernel's id of the calling OS thread (``/proc/self/task/<id>``)."""
    return original("_thread", "get_native_id")()


def sleep(seconds):
    """Sleeps the OS thread (gevent's ``time.sleep`` would switch greenlets instead)."""
    original("time", "sleep")(seconds)


class Event:
    """A real event: ``wait`` blocks the OS thread (used by the helper's own threads only)."""

    def __init__(self):
        self._flag = False
        self._lock = allocate_lock()
        self._lock.acquire()

    def is_set(self):
        return self._flag

    def set(self):
        if not self._flag:
            self._flag = True
            try:
                self._lock.release()
            except RuntimeError:  # two setters raced: it is released already
                pass

    def wait(self, timeout=None):
        if self._flag:
            return True
        if self._lock.acquire(True, -1 if timeout is None else max(0.0, timeout)):
            self._lock.release()
        return self._flag


class Thread:
    """A real OS thread, daemon-like (it never holds the interpreter's exit), started with gevent's original
    ``start_new_thread`` when gevent patched ``threading``."""

    def __init__(self, target, name):
        self._target = target
        self.name = name
        self._done = None
        self.ident = None
        self.native_id = None

    def start(self):
        """Starts the thread and returns once it runs, as ``threading.Thread.start`` does: ``start_new_thread`` returns
        before the new thread has bound its thread state, and an interpreter that exits in that window crashed it
        (SIGSEGV in ``_PyThreadState_SetCurrent``: CPython gh-108987, fixed in 3.11.6; Debian 12's python3 is 3.11.2).
        Nothing starts once the interpreter exits (after :mod:`atexit` ran): then ``is_alive()`` stays False."""
        with _state.starting:
            if _state.exiting:
                return self
            done, begun = allocate_lock(), allocate_lock()
            done.acquire()
            begun.acquire()
            self._done, self._begun = done, begun
            original("_thread", "start_new_thread")(self._run, ())
            begun.acquire(True, START_WAIT)  # releases the GIL: the new thread takes it and says it runs
        return self

    def _run(self):
        self.ident, self.native_id = get_ident(), native_id()
        self._begun.release()  # after the ids: start() returns with them set
        try:
            self._target()
        except BaseException as e:  # noqa: BLE001 - a background thread never takes the process down
            log.warning("resilient endpoint: the background thread %s ended: %s: %s", self.name, type(e).__name__, e)
        finally:
            self._done.release()

    def is_alive(self):
        return self._done is not None and self._done.locked()

    def join(self, timeout=None):
        if self._done is None:
            return
        if self._done.acquire(True, -1 if timeout is None else max(0.0, timeout)):
            self._done.release()


class Busy(Exception):
    """The courier is still making an earlier call (past its caller's deadline)."""


class Job:
    """One call handed to a :class:`Courier`: ``started`` once the client exists and the call begins."""

    __slots__ = ("fn", "started", "done", "value", "error", "began")

    def __init__(self, fn):
        self.fn = fn
        self.started = Event()
        self.done = Event()
        self.value = None
        self.error = None
        self.began = None

    def result(self, deadline=None, start_within=None):
        """The call's value (its exception raised), waiting at most ``start_within`` seconds for it to begin (the
        client being made) and then ``deadline`` seconds for it to end; :class:`TimeoutError` past either."""
        if not self.started.wait(start_within):
            raise TimeoutError("the call did not start within %.1f s" % start_within)
        if not self.done.wait(deadline):
            raise TimeoutError("no answer within %.1f s" % deadline)
        if self.error is not None:
            raise self.error
        return self.value


class Courier:
    """One real thread making every call of one client (see the module's docstring). ``make_client()`` runs on
    that thread, before its first call (its cost is never charged to a call's deadline); ``submit(fn)`` hands it
    ``fn(client)`` and returns the :class:`Job`, or raises :class:`Busy` while an earlier call is still running.
    A forked child gets a thread and a client of its own."""

    def __init__(self, name, make_client):
        self.name = name
        self._make_client = make_client
        self._pid = None
        self.client = None
        self.calls = 0

    def _ready(self):
        if self._pid != os.getpid():  # first use, or a forked child: nothing of the parent's thread is here
            self._pid = os.getpid()
            self._mutex = allocate_lock()
            self._wake = allocate_lock()
            self._wake.acquire()
            self._job = None
            self.client = None  # a parent's pooled connections are not this process's to use
            self._thread = Thread(self._run, self.name).start()

    def submit(self, fn):
        with _state.lock:
            self._ready()
        with self._mutex:
            if self._job is not None:
                raise Busy("%s: the previous call is still running" % self.name)
            job = self._job = Job(fn)
        self._wake.release()
        return job

    @property
    def busy(self):
        return self._pid == os.getpid() and self._job is not None

    def _run(self):
        while True:
            self._wake.acquire()
            job = self._job
            try:
                if self.client is None:
                    self.client = self._make_client()
                job.began = time.monotonic()
                job.started.set()
                self.calls += 1
                job.value = job.fn(self.client)
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                job.error = e
            finally:
                job.started.set()
                with self._mutex:
                    self._job = None
                job.done.set()


START_WAIT = 5.0  # seconds Thread.start waits for its thread to run (microseconds on an idle host; a bound, not a cost)


class _State:
    lock = allocate_lock()  # guards starting couriers; a forked child gets a fresh one (a parent's thread may hold it)
    starting = allocate_lock()  # one Thread.start at a time, until its thread runs; the exit gate takes it too
    exiting = False


def _exiting():
    """At interpreter exit (:mod:`atexit` runs before CPython tears thread states down): no thread starts after this,
    and one still starting has run by the time it returns."""
    with _state.starting:
        _state.exiting = True


class Background:
    """One real thread per process running periodic tasks: ``every(name, seconds, fn)`` (re)registers one,
    ``cancel(name)`` drops it. A task that raises is logged once per kind and runs again at its next time; a
    task never waits on the network (they hand calls to a :class:`Courier`)."""

    def __init__(self, tick=0.05):
        self.tick = tick
        self._tasks = {}
        self._pid = None
        self._thread = None
        self._warned = set()
        self._lock = allocate_lock()

    def every(self, name, seconds, fn, first=0.0):
        with self._lock:
            self._tasks[name] = [seconds, fn, time.monotonic() + first]
            self._ensure()

    def cancel(self, name):
        with self._lock:
            self._tasks.pop(name, None)

    def has(self, name):
        return name in self._tasks

    def running(self):
        return self._pid == os.getpid() and self._thread is not None and self._thread.is_alive()

    def _forked(self):
        self._lock = allocate_lock()
        self._thread = None
        self._pid = None

    def _ensure(self):
        if self._pid != os.getpid() or self._thread is None or not self._thread.is_alive():
            self._pid = os.getpid()
            self._thread = Thread(self._run, "resilient-endpoint-background").start()

    def _run(self):
        me = os.getpid()
        while self._pid == me:
            now = time.monotonic()
            with self._lock:
                due = [(name, t) for name, t in self._tasks.items() if t[2] <= now]
                for _, t in due:
                    t[2] = now + t[0]
            for name, t in due:
                try:
                    t[1]()
                except Exception as e:  # noqa: BLE001 - the background never dies
                    key = (name, type(e).__name__)
                    if key not in self._warned:
                        self._warned.add(key)
                        log.warning("resilient endpoint: background task %s failed: %s: %s", name, type(e).__name__, e)
            with self._lock:
                if not self._tasks:
                    self._thread = None
                    return
                wait = min(t[2] for t in self._tasks.values()) - time.monotonic()
            sleep(min(max(wait, 0.001), self.tick))


_state = _State()
background = Background(tick=0.25)


def _after_fork_in_child():
    _state.lock = allocate_lock()
    _state.starting = allocate_lock()
    background._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_exiting)
