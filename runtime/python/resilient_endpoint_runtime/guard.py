"""The container's own protection: admission control against a memory budget, per request.

The remote loop (metrics → alarm → breaker → Parameter Store → the container's next read) takes tens of
seconds; a long-tail request takes a worker from comfortable to out of memory in one batch. So before a
request runs, the guard estimates its memory from a curve measured on the real model code (the
profiler's ``memory-profile.json``: bytes as a function of the request's size — sequence length, rows),
and admits it only if it fits what is left of the worker's budget. At a degrade level ≥ 1 a request that
does not fit is truncated to what does (when the model can take part of it); otherwise it is refused
with a 413 the client can tell from a 5XX. The local level is the higher of the breaker's published level
and the worker's own pressure (its memory against the budget: ≥ 80 % → 1, ≥ 95 % → 2), re-read on every
request (a /proc read and a cached level: microseconds).

Two lines for a data scientist::

    guard = MemoryGuard.from_environment()
    with guard.admit(len(events)) as a:       # RequestRejected(413) when nothing fits
        run(events[-a.size:], level=a.level)  # a.size ≤ len(events)

Behind the estimate, a hard backstop: ``guard.limit_process()`` caps the worker (GPU:
``torch.cuda.set_per_process_memory_fraction``; CPU: ``RLIMIT_DATA`` — measured with torch 1.13 and numpy
1.24: an allocation past it raises ``RuntimeError``/``MemoryError`` in the request and the worker lives;
``RLIMIT_AS`` would also cap the virtual reservations CUDA makes), and an allocation failure inside
``admit()`` becomes one rejected request (caches freed) instead of a dead worker.

Standard library only; torch is used when it is importable.
"""
import gc
import json
import logging
import math
import os
import resource
import threading

from .degrade import degrade_level
from .tiers import RequestRejected

log = logging.getLogger("resilient_endpoint_runtime")

ENV_BUDGET = "RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES"
ENV_GPU_BUDGET = "RESILIENT_ENDPOINT_WORKER_GPU_MEMORY_BYTES"
ENV_CURVE = "RESILIENT_ENDPOINT_MEMORY_CURVE"
PROFILE_FILE = "memory-profile.json"
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

# What an allocator says when it fails (torch's CPU allocator, CUDA, numpy, Python).
OOM_MESSAGES = ("out of memory", "can't allocate memory", "cannot allocate memory", "unable to allocate")


def process_rss():
    """This process's resident memory, bytes (from /proc/self/statm: one small read)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


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
    """What the guard granted: the size to run (≤ the size asked), the local level, the estimate reserved."""

    def __init__(self, size, requested, level, estimate):
        self.size = size
        self.requested = requested
        self.level = level
        self.estimate = estimate

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
        self._guard._release(self.admission.estimate)
        if exc is not None and is_oom(exc):
            self._guard._recover()
            raise RequestRejected(
                "the request ran out of memory (%s): refused, the worker is unharmed; retry later or send less" % type(exc).__name__,
                status=413, reason="memory",
            ) from exc
        return False


class MemoryGuard:
    """Admission control of one worker against its memory budget (see the module's docstring)."""

    def __init__(self, budget_bytes, curve, device="cpu", published=degrade_level, usage=None, degrade_at=0.80, critical_at=0.95):
        if budget_bytes is not None and budget_bytes <= 0:
            raise ValueError("budget_bytes must be > 0")
        if not 0 < degrade_at < critical_at <= 1:
            raise ValueError("need 0 < degrade_at < critical_at <= 1")
        self.budget = budget_bytes
        self.curve = curve
        self.device = device
        self._published = published
        self._usage = usage or (self._gpu_usage if device == "cuda" else process_rss)
        self.degrade_at = degrade_at
        self.critical_at = critical_at
        self._reserved = 0.0
        self._lock = threading.Lock()  # guards _reserved only; never held during I/O
        self.rejected = 0
        self.truncated = 0

    @property
    def active(self):
        return self.budget is not None and self.curve is not None

    @classmethod
    def from_environment(cls, env=None, model_dir=None, published=degrade_level):
        """The guard as the construct configures it: the worker's budget (GPU when torch sees one) and the
        profiled curve (``RESILIENT_ENDPOINT_MEMORY_CURVE``, else ``memory-profile.json`` in the model or code
        directory). Without them the guard admits everything and says so once."""
        env = os.environ if env is None else env
        device = "cuda" if env.get(ENV_GPU_BUDGET) and _cuda_available() else "cpu"
        raw = env.get(ENV_GPU_BUDGET) if device == "cuda" else env.get(ENV_BUDGET)
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
        guard = cls(budget, curve, device=device, published=published)
        if not guard.active:
            log.warning("memory guard off: %s and a memory curve (%s or %s) are needed", ENV_BUDGET, ENV_CURVE, PROFILE_FILE)
        return guard

    # -- levels ----------------------------------------------------------------------------------

    def usage(self):
        """Memory in use by this worker now, bytes (RSS on CPU, allocated CUDA memory on GPU)."""
        return self._usage()

    def pressure_level(self, used=None):
        """0, 1 (≥ 80 % of the budget, counting admitted requests' estimates) or 2 (≥ 95 %)."""
        if self.budget is None:
            return 0
        used = self.usage() if used is None else used
        share = (used + self._reserved) / self.budget
        return 2 if share >= self.critical_at else 1 if share >= self.degrade_at else 0

    def level(self):
        """The local level: the higher of the breaker's published level and this worker's pressure."""
        published = 0
        try:
            published = self._published() if self._published else 0
        except Exception:  # noqa: BLE001 - never fails a request
            published = 0
        return max(published, self.pressure_level())

    # -- admission -----------------------------------------------------------------------------

    def admit(self, size, truncatable=True):
        """A context manager granting the request ``size`` (or less, truncated, at a level ≥ 1) within the
        budget, or RequestRejected(413, reason 'memory'). Inside it an allocation failure becomes a 413 too."""
        size = int(size)
        if not self.active:
            return _Admitted(self, Admission(size, size, self.level(), 0.0))
        used = self.usage()
        with self._lock:
            published = 0
            try:
                published = self._published() if self._published else 0
            except Exception:  # noqa: BLE001
                published = 0
            share = (used + self._reserved) / self.budget
            level = max(published, 2 if share >= self.critical_at else 1 if share >= self.degrade_at else 0)
            available = self.budget - used - self._reserved
            estimate = self.curve(size)
            granted = size
            if estimate > available:
                fits = min(size, self.curve.largest_within(available)) if truncatable and level >= 1 else 0
                if fits < 1:
                    self.rejected += 1
                    raise RequestRejected(
                        "a request of size %d needs ~%d MiB; this worker has %d MiB of its %d MiB budget left: refused at level %d; retry later or send less"
                        % (size, estimate // 2**20, max(0, available) // 2**20, self.budget // 2**20, level),
                        status=413, reason="memory",
                    )
                granted = fits
                estimate = self.curve(granted)
                self.truncated += 1
            self._reserved += estimate
        return _Admitted(self, Admission(granted, size, level, estimate))

    def _release(self, estimate):
        with self._lock:
            self._reserved = max(0.0, self._reserved - estimate)

    def _recover(self):
        gc.collect()
        if self.device == "cuda":
            try:
                import torch
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass

    # -- the hard backstop ----------------------------------------------------------------------

    def limit_process(self):
        """Caps this worker at its budget so an estimate that was wrong fails one request, not the worker.
        GPU: the CUDA caching allocator's per-process fraction. CPU: RLIMIT_DATA at the current data size plus
        what is left of the budget. Returns what was set (bytes or fraction), or None."""
        if self.budget is None:
            return None
        if self.device == "cuda":
            import torch
            total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
            fraction = min(1.0, self.budget / total)
            torch.cuda.set_per_process_memory_fraction(fraction)
            return fraction
        headroom = max(0, self.budget - process_rss())
        limit = process_data_size() + headroom
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
        return limit

    @staticmethod
    def _gpu_usage():
        import torch
        return torch.cuda.memory_allocated()


def _cuda_available():
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False
