"""The container's own protection: admission control against one memory budget per container.

The remote loop (metrics → alarm → breaker → Parameter Store → the container's next read) takes tens of
seconds; a long-tail request takes a worker from comfortable to out of memory in one batch. So before a
request runs, the guard estimates its memory from a curve measured on the real model code (the
profiler's ``memory-profile.json``: bytes as a function of the request's size — sequence length, rows —
times the batch), and admits it only if it fits what is left of the **container's** budget
(``RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES``: every worker's resident memory and admitted estimates,
shared through the instance's ledger, :mod:`.ledger`, plus the container's other memory). At a degrade level
≥ 1 a request that does not fit is truncated to what does (when the model can take part of it); otherwise
it is refused with a 413 the client can tell from a 5XX. The local level is the higher of the breaker's
published level (read in the background, never in a request's path) and the container's own pressure
(≥ 80 % of the budget → 1, ≥ 95 % → 2).

Two lines for a data scientist::

    guard = MemoryGuard.from_environment(model_dir=model_dir, context=context)
    with guard.admit(len(events), batch=len(sequences)) as a:   # RequestRejected(413) when nothing fits
        run(events[-a.size:], level=a.level)                     # a.size ≤ len(events)

The last resort behind the estimate (``guard.limit_process()``): on CPU, ``RLIMIT_DATA`` re-armed at each
admission at the process's data size now plus what it has admitted plus what the container has left (and
64 MiB of slack for the allocator's arenas), lifted again when the process has no request in flight, and
armed only while one request runs in the process, on an OS thread that has run a request before — a limit
set before a thread's first inference can hang the worker (OpenBLAS retries its per-thread buffer
allocation in a loop; libgomp exits when it cannot create a thread: real-account.md items 41, 49). "Thread"
means the OS thread, not a greenlet: under gunicorn's gevent worker (AWS's scikit-learn and XGBoost images)
every request is a new greenlet on the worker's one OS thread, whose BLAS buffers exist after its first
request, so the backstop arms there too. And it can never hang a worker for good: the process's background
thread (a real OS thread, :mod:`._native`) watches an armed request's thread four times a second, and one
that spins in the kernel on failed allocations (0.1 s of its CPU since the last look, twice as much in the
kernel as in user code, its data size and resident memory not growing: Debian's OpenBLAS 0.3.21 retry loop,
measured) gets the limit lifted at once (logged); the request then goes on unguarded. (Newer OpenBLAS builds
give up after 10 retries and end the process instead: nothing can undo that, which is why the limit is never
armed on a thread that has not run a request.) An allocation past the limit raises
``RuntimeError``/``MemoryError`` in the request (torch 1.13, numpy 1.24, measured), which ``admit()`` turns
into one 413 with the worker alive; so does a ``MemoryError`` in the guard's own path. On GPU:
``torch.cuda.set_per_process_memory_fraction`` on the worker's own device.

Standard library only; torch is used when it is importable.
"""
import ctypes
import gc
import json
import logging
import math
import os
import resource
import threading
import time

from . import _native
from .degrade import degrade_level
from .ledger import ContainerMemory, GpuMemory, InstanceLedger, ProcessMemory, private_memory, statm
from .tiers import RequestRejected

log = logging.getLogger("resilient_endpoint_runtime")

ENV_BUDGET = "RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES"
ENV_GPU_BUDGET = "RESILIENT_ENDPOINT_WORKER_GPU_MEMORY_BYTES"
ENV_CONTAINER_BUDGET = "RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES"
ENV_CONTAINER_GPU_BUDGET = "RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES"
ENV_BUDGET_PERCENT = "RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT"
ENV_CURVE = "RESILIENT_ENDPOINT_MEMORY_CURVE"
PROFILE_FILE = "memory-profile.json"
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
BACKSTOP_SLACK = 64 * 2**20  # glibc arenas and thread stacks RLIMIT_DATA counts beyond the resident growth

# What an allocator says when it fails (torch's CPU allocator, CUDA, numpy, Python).
OOM_MESSAGES = ("out of memory", "can't allocate memory", "cannot allocate memory", "unable to allocate")


def process_rss():
    """This process's resident memory, bytes (from /proc/self/statm: one small read)."""
    return statm()[0]


def process_data_size():
    """This process's data segment (VmData: what RLIMIT_DATA counts), bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0


def is_oom(e):
    """True for an allocation failure: MemoryError, or a RuntimeError that says so (torch CPU and CUDA)."""
    if isinstance(e, MemoryError):
        return True
    name = type(e).__name__
    return name == "OutOfMemoryError" or (isinstance(e, RuntimeError) and any(m in str(e).lower() for m in OOM_MESSAGES))


def memory_refusal(why):
    return RequestRejected("%s: refused, the worker is unharmed; retry later or send less" % why, status=413, reason="memory")


class MemoryCurve:
    """Bytes a request needs beyond the worker's baseline, as a function of its size: a + b·size + c·size²."""

    def __init__(self, a=0.0, b=0.0, c=0.0):
        if min(a, b, c) < 0 or not all(math.isfinite(x) for x in (a, b, c)):
            raise ValueError("curve coefficients must be finite and >= 0")
        self.a, self.b, self.c = float(a), float(b), float(c)

    def __call__(self, size):
        return self.a + self.b * size + self.c * size * size

    def largest_within(self, available):
        """The largest whole size whose estimate fits in ``available`` bytes (0 when none does)."""
        if available < self.a:
            return 0
        room = available - self.a
        if self.c > 0:
            size = (-self.b + math.sqrt(self.b * self.b + 4 * self.c * room)) / (2 * self.c)
        elif self.b > 0:
            size = room / self.b
        else:
            return 1 << 62
        return max(0, int(math.floor(size + 1e-9)))

    def to_json(self):
        return {"a": self.a, "b": self.b, "c": self.c}

    @classmethod
    def from_json(cls, o):
        return cls(o.get("a", 0.0), o.get("b", 0.0), o.get("c", 0.0))


class Admission:
    """What the guard granted: the size to run (≤ the size asked), the local level, the estimate reserved (what the
    request takes from the container) and the part of its estimate the worker's own free heap covers (``reused``)."""

    def __init__(self, size, requested, level, estimate, batch=1, reused=0):
        self.size = size
        self.requested = requested
        self.level = level
        self.estimate = estimate
        self.batch = batch
        self.reused = reused

    @property
    def truncated(self):
        return self.requested - self.size


class _Admitted:
    def __init__(self, guard, admission):
        self._guard = guard
        self.admission = admission

    def __enter__(self):
        return self.admission

    def __exit__(self, exc_type, exc, tb):
        self._guard._release(self.admission.estimate, self.admission.reused)
        if exc is not None and is_oom(exc):
            self._guard._recover()
            raise memory_refusal("the request ran out of memory (%s)" % type(exc).__name__) from exc
        return False


class MemoryGuard:
    """Admission control of one worker against its container's memory budget (see the module's docstring).

    ``ledger``: the instance's shared accounting (:class:`~.ledger.InstanceLedger`); without it the guard
    accounts for its own process only (``budget_bytes`` is then this worker's budget). ``device_index``: the
    worker's GPU (``context.system_properties["gpu_id"]``), for its usage and its backstop.
    """

    def __init__(self, budget_bytes, curve, device="cpu", published=degrade_level, usage=None, degrade_at=0.80, critical_at=0.95,
                 ledger=None, device_index=None, hard_limit=None):
        if budget_bytes is not None and budget_bytes <= 0:
            raise ValueError("budget_bytes must be > 0")
        if not 0 < degrade_at < critical_at <= 1:
            raise ValueError("need 0 < degrade_at < critical_at <= 1")
        self.budget = budget_bytes
        self.hard_limit = hard_limit  # the memory itself (the container's limit, else the instance's): ordinary requests may go past the budget toward it
        self.curve = curve
        self.device = device
        self.device_index = device_index
        self._published = published
        self._usage = usage or (self._gpu_usage if device == "cuda" else process_rss)
        self.degrade_at = degrade_at
        self.critical_at = critical_at
        self.ledger = ledger
        if ledger is not None:
            ledger.budget = budget_bytes
        self._reserved = 0.0  # this process's admitted estimates
        self._promised = 0  # of its allocator's free heap, what this process's requests in flight count on
        self._floor = None  # this worker's private memory with the model loaded and nothing in flight (its lowest seen)
        self._inflight = 0
        self._lock = threading.Lock()  # guards this process's counts only; never held during I/O
        self.rejected = 0
        self.truncated = 0
        self.backstop = False  # the CPU backstop, enabled by limit_process()
        self._warm = set()  # OS threads that have run a request here (their BLAS buffers and pools exist)
        self._soft = None  # RLIMIT_DATA as the process had it
        self.armed_limit = None
        self._armed = None  # (native thread id, monotonic time, its /proc sample) while armed
        self._rl = _native.allocate_lock()  # arming and lifting: request threads and the background watch
        self.lifts = 0  # limits lifted from a thread spinning on failed allocations
        self._errors = set()
        if ledger is not None and budget_bytes is not None:
            self.register()
            if device == "cpu" and ledger.trim is None:
                ledger.trim = ALLOCATOR.trim

    def _own_usage(self):
        """What this worker holds for the instance's ledger: its private resident memory (CPU), else its usage."""
        return private_memory()[0] if self._usage is process_rss else self.usage()

    def register(self):
        """Writes this worker's memory in the instance's ledger (done when the guard is made: a worker that
        has not run a request yet still holds its model)."""
        try:
            with self.ledger.locked(self._own_usage()):
                pass
        except Exception as e:  # noqa: BLE001 - the first admission registers it anyway
            self._error("register", e)

    @property
    def active(self):
        return self.budget is not None and self.curve is not None

    def _sustained_level(self):
        """The container's pressure level as the ledger's leader holds it (a line held, not crossed for an instant);
        without a ledger, this process's own pressure now."""
        if self.ledger is not None:
            return self.ledger.level()
        return self.pressure_level()

    @classmethod
    def from_environment(cls, env=None, model_dir=None, published=degrade_level, context=None, ledger_dir=None, container=None):
        """The guard as the construct configures it: the container's budget (``RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES``,
        or per GPU ``..._CONTAINER_GPU_MEMORY_BYTES`` when torch sees one; else the per-worker variables of
        an older construct) shared through the instance's ledger, and the profiled curve
        (``RESILIENT_ENDPOINT_MEMORY_CURVE``, else ``memory-profile.json`` in the model or code directory).
        ``context``: the toolkit's (``model_fn(model_dir, context)``), whose ``gpu_id`` places the worker on
        its GPU. Without a budget and a curve the guard admits everything and says so once."""
        env = os.environ if env is None else env
        gpu = env.get(ENV_CONTAINER_GPU_BUDGET) or env.get(ENV_GPU_BUDGET)
        device = "cuda" if gpu and _cuda_available() else "cpu"
        index = gpu_index(context) if device == "cuda" else None
        shared = env.get(ENV_CONTAINER_GPU_BUDGET if device == "cuda" else ENV_CONTAINER_BUDGET)
        raw = shared or env.get(ENV_GPU_BUDGET if device == "cuda" else ENV_BUDGET)
        budget = int(raw) if raw and raw.isdigit() and int(raw) > 0 else None
        curve = None
        try:
            if env.get(ENV_CURVE):
                curve = MemoryCurve.from_json(json.loads(env[ENV_CURVE]))
            else:
                for d in [model_dir, env.get("SM_MODEL_DIR"), "/opt/ml/model", os.path.dirname(os.path.abspath(__file__))]:
                    if d and os.path.isfile(os.path.join(d, PROFILE_FILE)):
                        with open(os.path.join(d, PROFILE_FILE)) as f:
                            curve = MemoryCurve.from_json(json.load(f)["curve"])
                        break
        except (ValueError, KeyError, TypeError, OSError) as e:
            log.warning("memory guard: unreadable curve (%s): requests are not estimated", e)
            curve = None
        ledger = None
        if budget is not None and shared:
            if device == "cuda":
                ledger = InstanceLedger.open("gpu%d" % index, ledger_dir, container=GpuMemory(index), usage_of=None)
            else:
                container = container if container is not None else ContainerMemory()
                budget = capped_budget(budget, container, env)
                ledger = InstanceLedger.open("host", ledger_dir, container=container)
            if ledger is None:  # no shared file (logged): this worker's share of the container, in a ledger of its own
                own = env.get(ENV_GPU_BUDGET if device == "cuda" else ENV_BUDGET)
                budget = int(own) if own and own.isdigit() and int(own) > 0 else budget
                ledger = InstanceLedger.private(GpuMemory(index) if device == "cuda" else ProcessMemory())
                if device == "cuda":
                    ledger.usage_of = None
        if ledger is not None:
            # Published whether or not requests are estimated: the pressure and the deliberate 4XX are the breaker's to see.
            from .metrics import GuardMetricsPublisher
            ledger.publisher = GuardMetricsPublisher()
            set_instance_ledger(ledger)
        hard = None
        if budget is not None and device == "cpu":
            raw_percent = env.get(ENV_BUDGET_PERCENT, "90")
            percent = int(raw_percent) if raw_percent.isdigit() and 0 < int(raw_percent) <= 100 else 90
            hard = budget * 100 // percent  # the memory the budget is a share of (the instance's, or the container's limit)
            limit = getattr(ledger.container if ledger is not None else None, "limit", None)
            if limit and ledger.shared:
                hard = min(hard, limit)
            elif ledger is not None and not ledger.shared:
                hard = budget  # a worker on its own share: no headroom of its own to go into
        guard = cls(budget, curve, device=device, published=published, ledger=ledger, device_index=index, hard_limit=hard)
        if published is degrade_level:
            from .degrade import prepare
            prepare()  # the first read now, not at the first request
        if not guard.active:
            log.warning("memory guard off: %s and a memory curve (%s or %s) are needed", ENV_CONTAINER_BUDGET, ENV_CURVE, PROFILE_FILE)
        if ledger is not None:
            ledger.start()
        return guard

    # -- levels ----------------------------------------------------------------------------------

    def usage(self):
        """Memory in use by this worker now, bytes (RSS on CPU, the CUDA caching allocator's reserved memory on GPU)."""
        return self._usage()

    def _share_level(self, share):
        return 2 if share >= self.critical_at else 1 if share >= self.degrade_at else 0

    def container_usage(self):
        """The memory the budget is held against: the container's (the ledger's sum) or this process's."""
        if self.ledger is None:
            return self.usage() + self._reserved
        with self.ledger.locked(self._own_usage()) as v:
            return v.total

    def pressure_level(self, used=None):
        """0, 1 (≥ 80 % of the budget, counting admitted requests' estimates) or 2 (≥ 95 %)."""
        if self.budget is None:
            return 0
        used = self.container_usage() if used is None else used + self._reserved
        return self._share_level(used / self.budget)

    def _published_level(self):
        try:
            return self._published() if self._published else 0
        except Exception:  # noqa: BLE001 - never fails a request
            return 0

    def level(self):
        """The local level: the higher of the breaker's published level and the container's sustained pressure
        (with the container's ledger: a line held for a second, not a request's reservation crossing it)."""
        try:
            return max(self._published_level(), self._sustained_level())
        except Exception as e:  # noqa: BLE001 - a level is advice: never fails a request
            self._error("level", e)
            return self._published_level()

    # -- admission -----------------------------------------------------------------------------

    def admit(self, size, truncatable=True, batch=1):
        """A context manager granting the request ``size`` (or less, truncated, at a level ≥ 1) for ``batch``
        sequences of that (padded) size within the container's budget, or RequestRejected(413, reason
        'memory'). Inside it an allocation failure becomes a 413 too; so does a MemoryError in the guard."""
        size, batch = int(size), max(1, int(batch))
        if not self.active:
            return _Admitted(self, Admission(size, size, self._published_level(), 0.0, batch))
        try:
            return _Admitted(self, self._admit(size, truncatable, batch))
        except RequestRejected:
            raise
        except MemoryError as e:
            self.rejected += 1
            self._recover()
            raise memory_refusal("no memory left to admit the request (MemoryError in the guard)") from e

    def _admit(self, size, truncatable, batch):
        if self.ledger is not None and self.ledger.started:
            self.ledger.start()  # again after a fork (a server that loads the model before forking its workers)
        if self._usage is process_rss:
            # one read: resident (private with the instance's ledger, which has the shared pages once) and data (the backstop)
            used_own, data = private_memory() if self.ledger is not None else statm()
        else:
            used_own, data = self.usage(), None
        published = self._published_level()
        estimate = batch * self.curve(size)
        if self.ledger is not None:
            with self.ledger.locked(used_own) as v:
                return self._decide(size, truncatable, batch, published, estimate, v.total, data, v, used_own)
        with self._lock:
            return self._decide(size, truncatable, batch, published, estimate, used_own + self._reserved, data, None, used_own)

    def _small(self):
        """An ordinary request's memory: 1 % of the budget (at least 1 MiB). Large requests leave one such share per
        worker of the budget's last part to them."""
        return max(2**20, self.budget // 100)

    def _reusable(self, used_own):
        """What of this worker's memory a request can use without taking any from the container: its allocator's free
        heap (``mallinfo2``), at most what it holds above its lowest idle size (free chunks a trim gave back are no
        longer resident), less what its requests in flight already count on. Read only for a request that would not
        fit otherwise (a ``mallinfo2`` walks the heap's free lists)."""
        if self._usage is not process_rss or self._floor is None:
            return 0
        try:
            free = ALLOCATOR.free_bytes()
        except Exception:  # noqa: BLE001 - unknown: nothing is reusable
            return 0
        return max(0, min(free, used_own - self._floor) - self._promised)

    def _decide(self, size, truncatable, batch, published, estimate, used, data, view, used_own=0):
        # What the answer is degraded by (secondary heads, precision): the published level and the sustained pressure.
        level = max(published, view.level if view is not None else self._share_level(used / self.budget))
        # Whether a request that does not fit is truncated rather than refused: also the pressure of this instant.
        pressed = max(level, self._share_level(used / self.budget))
        available = self.budget - used
        if self._inflight == 0 and self._usage is process_rss and (self._floor is None or used_own < self._floor):
            self._floor = used_own
        reusable = self._reusable(used_own) if estimate > available else 0
        room = available + reusable
        # An ordinary request may use the last of the budget; a large one leaves it to them (big batches holding their
        # reservations refused 140 small requests for 5 large ones at the smallest budget).
        small = self._small()
        if estimate > small:
            room -= small * (view.workers if view is not None else 1)
        elif self.hard_limit:
            # An ordinary request is refused only when the memory itself is nearly gone, not the budget: where the
            # workers' own memory fills the budget (a container far below the smallest budget), refusing every request
            # for ever is worse than the kill an unguarded server risks (measured: 599 of 600 refused, and the probe after
            # the load, where the unguarded server lost 1 worker and answered the other 599).
            room = max(room, self.hard_limit - small - used)
        granted = size
        if estimate > room:
            fits = min(size, self.curve.largest_within(room / batch)) if truncatable and pressed >= 1 else 0
            if fits < 1:
                self.rejected += 1
                if view is not None:
                    view.reserve(0, pressure=100.0 * used / self.budget)
                raise RequestRejected(
                    "a request of size %d%s needs ~%d MiB; the container has %d MiB of its %d MiB budget left: refused at level %d; retry later or send less"
                    % (size, " × %d" % batch if batch > 1 else "", estimate // 2**20, max(0, available) // 2**20, self.budget // 2**20, pressed),
                    status=413, reason="memory",
                )
            granted = fits
            estimate = batch * self.curve(granted)
            self.truncated += 1
        reused = int(min(reusable, estimate))
        estimate = estimate - reused  # what the request takes from the container
        if view is not None:
            view.reserve(int(estimate), pressure=100.0 * (used + estimate) / self.budget)
            estimate = int(estimate)
        self._reserved += estimate
        self._promised += reused
        self._inflight += 1
        if self.backstop and data is not None:
            if self._inflight == 1 and _native.get_ident() in self._warm:
                self._arm(data + self._reserved + max(0, available - estimate) + BACKSTOP_SLACK)
            elif self.armed_limit is not None:
                self._disarm()  # another request runs in this process: its thread may be new (no BLAS buffer yet)
        return Admission(granted, size, level, estimate, batch, reused)

    def _release(self, estimate, reused=0):
        # Never raises: the request's own outcome is what the caller sees.
        if len(self._warm) > 256:
            self._warm.clear()  # a server with a thread per request: those threads are gone
        self._warm.add(_native.get_ident())
        try:
            with self._lock:
                self._reserved = max(0.0, self._reserved - estimate)
                self._promised = max(0, self._promised - reused)
                self._inflight = max(0, self._inflight - 1)
                idle = self._inflight == 0
            if idle and self.armed_limit is not None:
                self._disarm()
            if self.ledger is not None and estimate:
                used = self._own_usage()
                with self.ledger.locked(used) as v:
                    v.reserve(-int(estimate))
        except Exception as e:  # noqa: BLE001 - MemoryError included: the release is best effort
            self._error("release", e)

    def _recover(self):
        gc.collect()
        if self.device == "cuda":
            try:
                import torch
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass

    def _error(self, where, e):
        key = (where, type(e).__name__)
        if key not in self._errors:
            self._errors.add(key)
            log.warning("memory guard: %s failed (%s: %s); requests go on", where, type(e).__name__, e)

    # -- the last resort ------------------------------------------------------------------------

    def limit_process(self):
        """Enables the backstop. GPU: the CUDA caching allocator's per-process fraction on the worker's own
        device, at the container's GPU budget. CPU: ``RLIMIT_DATA`` re-armed at each admission (see the
        module's docstring), only once the worker has run a request. Returns the GPU fraction set, True (CPU
        backstop enabled) or None (no budget)."""
        if self.budget is None:
            return None
        if self.device == "cuda":
            import torch
            index = self.device_index if self.device_index is not None else torch.cuda.current_device()
            total = torch.cuda.get_device_properties(index).total_memory
            fraction = min(1.0, self.budget / total)
            torch.cuda.set_per_process_memory_fraction(fraction, index)
            return fraction
        self.backstop = True
        _native.background.every("backstop-watch:%d" % id(self), WATCH_INTERVAL, self.watch)
        return True

    def _arm(self, limit):
        with self._rl:
            soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
            if self._soft is None:
                self._soft = soft
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            if self._soft != resource.RLIM_INFINITY:
                limit = min(limit, self._soft)
            resource.setrlimit(resource.RLIMIT_DATA, (int(limit), hard))
            self.armed_limit = int(limit)
            self._armed = (_native.native_id(), time.monotonic(), None)  # the watch takes its first look itself: no /proc read here

    def _disarm(self):
        with self._rl:
            if self.armed_limit is None:
                return
            hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
            resource.setrlimit(resource.RLIMIT_DATA, (self._soft, hard))
            self.armed_limit = None
            self._armed = None

    def watch(self):
        """The background's look at an armed request (4 times a second, on a real OS thread): a thread spinning
        in the kernel on failed allocations gets the limit lifted (see the module's docstring). Never raises."""
        armed = self._armed
        if armed is None:
            return
        tid, at, before = armed
        now = time.monotonic()
        after = _thread_times(tid)
        if after is None:
            return
        if before is None:
            with self._rl:
                if self._armed is armed:
                    self._armed = (tid, now, after)
            return
        user, system = after[0] - before[0], after[1] - before[1]
        if system + user < SPIN_TICKS:
            return  # too little CPU since the last look to judge (a loaded host, or a request waiting): look again
        with self._rl:
            if self._armed is not armed:
                return  # lifted or re-armed meanwhile
            spinning = system >= SPIN_TICKS and system >= 2 * user and after[2] <= before[2] and after[3] <= before[3]
            if not spinning:
                self._armed = (tid, now, after)
                return
        self.lifts += 1
        self._disarm()
        log.warning("memory guard: the backstop's limit was lifted: thread %d spun %.1f s in failed allocations (a library that retries "
                    "them, e.g. OpenBLAS); the request goes on unguarded", tid, (now - at))

    def _gpu_usage(self):
        import torch
        return torch.cuda.memory_reserved(self.device_index if self.device_index is not None else torch.cuda.current_device())


class Allocator:
    """glibc's malloc, where it is the allocator (through ctypes): the bytes it holds free, and giving them back to
    the kernel (``malloc_trim``). Elsewhere (musl, not Linux) it does nothing."""

    TRIM_FROM = 4 * 2**20  # free bytes below which a trim is not worth its page faults later

    def __init__(self):
        self._libc = None
        try:
            libc = ctypes.CDLL(None)
            libc.malloc_trim.argtypes = [ctypes.c_size_t]
            if hasattr(libc, "mallinfo2"):
                libc.mallinfo2.restype = _MallInfo2
                self._libc = libc
        except (OSError, AttributeError):
            self._libc = None

    def free_bytes(self):
        """Free bytes in the allocator's arenas (``mallinfo2().fordblks``), 0 where unknown."""
        return self._libc.mallinfo2().fordblks if self._libc is not None else 0

    def trim(self):
        """Gives the free memory back when there is enough of it; True when it did."""
        if self._libc is None or self.free_bytes() < self.TRIM_FROM:
            return False
        self._libc.malloc_trim(0)
        return True


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


ALLOCATOR = Allocator()

WATCH_INTERVAL = 0.25
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SPIN_TICKS = max(1, CLOCK_TICKS // 10)  # 0.1 s of the thread's CPU, twice as much in the kernel as in user code


def _thread_times(tid):
    """(user ticks, system ticks, data bytes, resident bytes) of one of this process's threads, or None."""
    try:
        with open("/proc/self/task/%d/stat" % tid, "rb") as f:
            raw = f.read()
        fields = raw[raw.rindex(b")") + 2:].split()
        resident, data = statm()
        return int(fields[11]), int(fields[12]), data, resident
    except (OSError, ValueError, IndexError):
        return None


def gpu_index(context):
    """The worker's GPU: ``context.system_properties["gpu_id"]`` (the toolkits' ``model_fn(model_dir, context)``,
    real-account.md item 40), else the current device (GPU 0 for every worker of a multi-GPU instance)."""
    try:
        props = getattr(context, "system_properties", None) or {}
        gid = props.get("gpu_id")
        if gid is not None and str(gid).lstrip("-").isdigit() and int(gid) >= 0:
            return int(gid)
    except Exception:  # noqa: BLE001
        pass
    try:
        import torch
        return torch.cuda.current_device()
    except Exception:  # noqa: BLE001
        return 0


def capped_budget(budget, container, env=None):
    """The container's budget, capped at the same percent of its own memory limit when its cgroup has one
    smaller than the instance (``RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT``, default 90)."""
    env = os.environ if env is None else env
    limit = getattr(container, "limit", None)
    if not limit:
        return budget
    raw = env.get(ENV_BUDGET_PERCENT, "90")
    percent = int(raw) if raw.isdigit() and 0 < int(raw) <= 100 else 90
    return min(budget, limit * percent // 100)


_instance_ledger = [None]


def set_instance_ledger(ledger):
    _instance_ledger[0] = ledger


def count_answer(status, reason):
    """Counts a deliberate 4XX the container answered in the instance's ledger, for the guard's metrics, and
    a memory refusal only for the guard's own reason 'memory': a by-design tier refusal ('degraded' at level 2,
    'too_long') is the breaker's own level at work, not memory the guard absorbed. Never raises."""
    ledger = _instance_ledger[0]
    if ledger is None or not 400 <= status < 500:
        return
    try:
        ledger.count(refusal=reason == "memory")
    except Exception as e:  # noqa: BLE001
        log.warning("memory guard: counting a %d failed: %s", status, e)


def _cuda_available():
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False
