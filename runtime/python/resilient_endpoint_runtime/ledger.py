"""One memory budget per container: the workers of an instance account for each other through a file.

The kernel's OOM killer acts on the container (or the instance), and it kills the largest process, which
need not be the one whose request caused the pressure (real-account.md item 49): budgets per worker do not
bound the container. So every worker of an instance writes, in a small shared file in the image's temp
directory (``tempfile.gettempdir()``: AWS's images set ``TEMP=/home/model-server/tmp``, the same directory
for every worker, real-account.md item 47), its resident memory and the estimates of the requests it has
admitted and not yet finished; admission sums them under the file's lock (``fcntl.flock``, held for
microseconds, never during I/O) and admits a request only if it fits what the whole container has left.

The file (``resilient-endpoint-<key>.ledger``, memory-mapped) holds a header and one 64-byte slot per
worker: pid, private resident bytes (as of its last admission or release; the libraries all workers map
are counted once, in the container's other memory), bytes reserved by admitted requests,
its counters (memory refusals, deliberate 4XX answers) and its highest pressure since the last publish.
What the workers' slots do not show — the model server's front end, nginx, the OS of a container whose
memory is limited — is the container's "other" memory, sampled four times a second in the background by one
worker per instance (the one holding ``<file>.leader``: the kernel releases it when that worker dies and
another takes over): the container's working set (its cgroup's usage less inactive file cache, or the
host's ``MemTotal − MemAvailable``) minus the workers' live resident memory. The same worker removes the
slots of dead workers and publishes the guard's metrics every 10 s (:class:`GuardMetricsPublisher`).

Standard library only. Where the file cannot be used (not Linux, an unwritable temp directory) the guard
falls back to accounting for its own process against the per-worker budget, and says so once.
"""
import errno
import hashlib
import logging
import mmap
import os
import struct
import tempfile
import threading
import time

log = logging.getLogger("resilient_endpoint_runtime")

MAGIC = b"RELEDG01"
HEADER = struct.Struct("<8sqdqqq24x")  # magic, other bytes, other sampled at, slots in use, orphan refusals, orphan 4XX
SLOT = struct.Struct("<qqqqqdd8x")  # pid, resident, reserved, memory refusals, deliberate 4XX, pressure max %, updated at
SLOTS = 256
SIZE = HEADER.size + SLOTS * SLOT.size
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def ledger_path(key, directory=None):
    """The instance's ledger for ``key`` ('host', 'gpu0', …), in the image's temp directory."""
    digest = hashlib.sha1(("%s|%s" % (os.environ.get("RESILIENT_ENDPOINT_NAME", ""), os.environ.get("RESILIENT_ENDPOINT_VARIANT", ""))).encode()).hexdigest()[:10]
    return os.path.join(directory or tempfile.gettempdir(), "resilient-endpoint-%s-%s.ledger" % (digest, key))


def statm(pid="self"):
    """(resident bytes, data bytes) of a process from /proc/<pid>/statm (one small read)."""
    with open("/proc/%s/statm" % pid, "rb") as f:
        fields = f.read().split()
    return int(fields[1]) * PAGE, int(fields[5]) * PAGE


def private_memory(pid="self"):
    """(private resident bytes, data bytes): resident less file-backed and shared pages (statm's ``shared``).
    What a worker adds to its container: the libraries every worker maps (libtorch: ~150 MiB) are in
    memory once, not once per worker — summing RSS over workers counts them N times (measured under a
    cgroup: three recommender workers of 245 MiB RSS each used 470 MiB together). The shared pages are
    in the container's other memory, measured once."""
    with open("/proc/%s/statm" % pid, "rb") as f:
        fields = f.read().split()
    return (int(fields[1]) - int(fields[2])) * PAGE, int(fields[5]) * PAGE


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


class ContainerMemory:
    """The container's memory in use and its limit: its cgroup (v1 or v2) when that has a limit below the
    host's memory, else the host's (``/proc/meminfo``). ``root`` and ``proc`` are injectable for tests."""

    def __init__(self, root="/sys/fs/cgroup", proc="/proc"):
        self.proc = proc
        self.host_total = self._meminfo().get("MemTotal", 0)
        self.cgroup, self.version = self._find(root)
        self.limit = self._limit() if self.cgroup else None
        if self.limit is None or self.limit >= self.host_total:
            self.cgroup, self.limit = None, None  # no limit of its own: the instance's memory is what runs out

    def _meminfo(self):
        values = {}
        try:
            with open(os.path.join(self.proc, "meminfo")) as f:
                for line in f:
                    key, _, rest = line.partition(":")
                    values[key] = int(rest.split()[0]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return values

    def _find(self, root):
        try:
            with open(os.path.join(self.proc, "self", "cgroup")) as f:
                lines = f.read().splitlines()
        except OSError:
            return None, None
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                for d in (os.path.join(root, "memory", path.lstrip("/")), os.path.join(root, "memory")):
                    if os.path.isfile(os.path.join(d, "memory.usage_in_bytes")):
                        return d, 1
        for line in lines:
            if line.startswith("0::"):
                path = line[3:]
                for d in (os.path.join(root, path.lstrip("/")), root):
                    if os.path.isfile(os.path.join(d, "memory.current")):
                        return d, 2
        return None, None

    def _read(self, name):
        with open(os.path.join(self.cgroup, name)) as f:
            return f.read()

    def _limit(self):
        try:
            raw = self._read("memory.limit_in_bytes" if self.version == 1 else "memory.max").strip()
            return None if raw == "max" else int(raw)
        except (OSError, ValueError):
            return None

    def working_set(self):
        """Bytes in use that the kernel cannot simply drop: usage less inactive file cache."""
        if self.cgroup is None:
            m = self._meminfo()
            return max(0, m.get("MemTotal", 0) - m.get("MemAvailable", 0))
        usage = int(self._read("memory.usage_in_bytes" if self.version == 1 else "memory.current"))
        inactive = 0
        key = "total_inactive_file" if self.version == 1 else "inactive_file"
        for line in self._read("memory.stat").splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                inactive = int(value)
        return max(0, usage - inactive)


class GpuMemory:
    """One GPU's memory in use by every process on it (``torch.cuda.mem_get_info``: the driver's count,
    which includes each process's CUDA context that ``memory_reserved`` does not)."""

    def __init__(self, index):
        self.index = index
        self.limit = None

    def working_set(self):
        import torch
        free, total = torch.cuda.mem_get_info(self.index)
        return total - free


class View:
    """The ledger as the lock holder sees it (see :meth:`InstanceLedger.locked`)."""

    __slots__ = ("_ledger", "_index", "other", "total", "own")

    def __init__(self, ledger, index, own_rss):
        self._ledger = ledger
        self._index = index
        mm = ledger._mm
        _, self.other, _, used, _, _ = HEADER.unpack_from(mm, 0)
        total = self.other
        own = None
        for i, slot in enumerate(SLOT.iter_unpack(mm[HEADER.size:HEADER.size + max(used, index + 1) * SLOT.size])):
            if i == index:
                own = list(slot)
                own[1] = own_rss if own_rss is not None else own[1]
                total += own[1] + own[2]
            elif slot[0]:
                total += slot[1] + slot[2]
        self.total = total  # the container's memory: every worker's resident and reserved bytes, and the rest
        self.own = own
        if own_rss is not None:
            SLOT.pack_into(mm, HEADER.size + index * SLOT.size, *own)

    def reserve(self, delta, pressure=None, refusal=False):
        """Adds ``delta`` to this worker's reservations (negative: releases) and records its pressure."""
        own = self.own
        own[2] = max(0, own[2] + delta)
        self.total += delta
        if refusal:
            own[3] += 1
        if pressure is not None and pressure > own[5]:
            own[5] = pressure
        own[6] = time.time()
        SLOT.pack_into(self._ledger._mm, HEADER.size + self._index * SLOT.size, *own)


class InstanceLedger:
    """The shared accounting of one instance's workers for one memory (the host's, or one GPU's)."""

    def __init__(self, path, container=None, sample_interval=0.25, clock=time.monotonic, usage_of=lambda pid: private_memory(pid)[0]):
        self.path = path
        self.container = container
        self.usage_of = usage_of  # a worker's memory read from outside (host: /proc/<pid>/statm), or None
        self.sample_interval = sample_interval
        self._clock = clock
        self.budget = None  # the container's budget (bytes), set by the guard: the pressure the leader samples
        self._pid = None
        self._index = None
        self._thread = None
        self._stop = threading.Event()
        self._leader = None
        self.publisher = None
        self.publish_every = 10.0
        self._last_publish = None
        self._local = threading.Lock()  # the flock is per open file, shared by this process's threads
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            self._fd = fd
            self._flock()
            try:
                if os.fstat(fd).st_size < SIZE:
                    os.ftruncate(fd, SIZE)
                self._mm = mmap.mmap(fd, SIZE)
                if self._mm[:8] != MAGIC:
                    self._mm[:SIZE] = b"\0" * SIZE
                    HEADER.pack_into(self._mm, 0, MAGIC, 0, 0.0, 0, 0, 0)
            finally:
                self._funlock()
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def open(cls, key, directory=None, container=None, usage_of=lambda pid: private_memory(pid)[0]):
        """The instance's ledger, or None (logged) where a shared file cannot be used."""
        try:
            import fcntl  # noqa: F401 - Linux only
        except ImportError:
            return None
        path = ledger_path(key, directory)
        try:
            return cls(path, container=container, usage_of=usage_of)
        except (OSError, ValueError) as e:
            log.warning("memory guard: the instance's ledger %s cannot be used (%s): each worker accounts for itself only", path, e)
            return None

    def _flock(self):
        import fcntl
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def _funlock(self):
        import fcntl
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    # -- what the guard calls (under the lock) ---------------------------------------------------------

    def locked(self, own_rss=None):
        """A context manager: the file's lock held, a :class:`View` of it with this worker's slot (its
        resident memory updated to ``own_rss``)."""
        return _Locked(self, own_rss)

    def _slot(self):
        pid = os.getpid()
        if self._pid == pid:
            return self._index
        mm = self._mm
        _, other, at, used, o_ref, o_4xx = HEADER.unpack_from(mm, 0)
        free = None
        for i in range(SLOTS):
            spid = SLOT.unpack_from(mm, HEADER.size + i * SLOT.size)[0]
            if spid == pid:
                free = i
                break
            if free is None and (spid == 0 or (i >= used) or not alive(spid)):
                free = i
        if free is None:
            raise OSError(errno.ENOSPC, "no free slot in the ledger (%d workers)" % SLOTS)
        old = SLOT.unpack_from(mm, HEADER.size + free * SLOT.size)
        if old[0] and old[0] != pid:  # a dead worker's slot: keep its unpublished counts
            o_ref, o_4xx = o_ref + old[3], o_4xx + old[4]
        SLOT.pack_into(mm, HEADER.size + free * SLOT.size, pid, 0, 0, 0, 0, 0.0, time.time())
        HEADER.pack_into(mm, 0, MAGIC, other, at, max(used, free + 1), o_ref, o_4xx)
        self._pid, self._index = pid, free
        return free

    def count(self, refusal):
        """Counts one deliberate 4XX answer (and a memory refusal when ``refusal``) in this worker's slot."""
        with self.locked() as v:
            v.own[4] += 1
            v.reserve(0, refusal=refusal)

    # -- the background work of one worker per instance ----------------------------------------------

    def start(self):
        """Starts this process's background thread (again after a fork). Cheap when it runs."""
        if self._thread is not None and self._thread_pid == os.getpid():
            return
        self._thread_pid = os.getpid()
        self._leader = None
        self._thread = threading.Thread(target=self._run, name="resilient-endpoint-ledger", daemon=True)
        self._thread.start()

    @property
    def started(self):
        """True once :meth:`start` was called (in this process or the one it was forked from)."""
        return self._thread is not None

    def stop(self):
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self):
        first = True
        while first or not self._stop.wait(self.sample_interval):
            first = False
            try:
                self.tick()
            except Exception as e:  # noqa: BLE001 - the background never dies, never reaches a request
                log.warning("memory guard: the instance's background sample failed: %s", e)

    def lead(self):
        """True when this process is the instance's leader (takes ``<file>.leader`` if nobody holds it)."""
        if self._leader is not None and self._leader[0] == os.getpid():
            return True
        import fcntl
        f = open(self.path + ".leader", "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            return False
        self._leader = (os.getpid(), f)
        return True

    def tick(self):
        """One background step: as the leader, sample the container's other memory, drop dead workers'
        slots, and publish the guard's metrics when they are due."""
        if not self.lead():
            return
        live = {}
        with self._local:
            self._flock()
            try:
                _, _, _, used, _, _ = HEADER.unpack_from(self._mm, 0)
                pids = [(i, SLOT.unpack_from(self._mm, HEADER.size + i * SLOT.size)[0]) for i in range(used)]
            finally:
                self._funlock()
        dead = []
        for i, pid in pids:
            if not pid:
                continue
            if not alive(pid):
                dead.append((i, pid))
                continue
            try:
                live[i] = self.usage_of(pid) if self.usage_of else None
            except (OSError, ValueError, IndexError):
                live[i] = None
        ws = None
        if self.container is not None:
            try:
                ws = self.container.working_set()
            except (OSError, ValueError):
                ws = None
        with self._local:
            self._flock()
            try:
                magic, other, at, used, o_ref, o_4xx = HEADER.unpack_from(self._mm, 0)
                for i, pid in dead:
                    slot = SLOT.unpack_from(self._mm, HEADER.size + i * SLOT.size)
                    if slot[0] == pid:
                        o_ref, o_4xx = o_ref + slot[3], o_4xx + slot[4]
                        SLOT.pack_into(self._mm, HEADER.size + i * SLOT.size, 0, 0, 0, 0, 0, 0.0, 0.0)
                if ws is not None:
                    # a worker whose usage cannot be read from outside (GPU) counts as its slot says
                    held = sum(v if v is not None else SLOT.unpack_from(self._mm, HEADER.size + i * SLOT.size)[1] for i, v in live.items())
                    other, at = max(0, ws - held), time.time()
                HEADER.pack_into(self._mm, 0, magic, other, at, used, o_ref, o_4xx)
            finally:
                self._funlock()
        now = self._clock()
        if self.publisher is not None and self.publisher.enabled:
            if self._last_publish is None:
                self._last_publish = now
            elif now - self._last_publish >= self.publish_every:
                self._last_publish = now
                self.publish()

    def drain(self):
        """(highest pressure %, memory refusals, deliberate 4XX) since the last drain, summed over the
        instance's workers (and the dead ones' last counts); the counters start again from zero."""
        with self._local:
            self._flock()
            try:
                mm = self._mm
                magic, other, at, used, o_ref, o_4xx = HEADER.unpack_from(mm, 0)
                refusals, deliberate, pressure, total = o_ref, o_4xx, 0.0, other
                for i in range(used):
                    slot = list(SLOT.unpack_from(mm, HEADER.size + i * SLOT.size))
                    if not slot[0]:
                        continue
                    refusals += slot[3]
                    deliberate += slot[4]
                    pressure = max(pressure, slot[5])
                    total += slot[1] + slot[2]
                    slot[3] = slot[4] = 0
                    slot[5] = 0.0
                    SLOT.pack_into(mm, HEADER.size + i * SLOT.size, *slot)
                HEADER.pack_into(mm, 0, magic, other, at, used, 0, 0)
            finally:
                self._funlock()
        if self.budget:
            pressure = max(pressure, 100.0 * total / self.budget)
        return min(pressure, 1000.0), refusals, deliberate

    def publish(self):
        pressure, refusals, deliberate = self.drain()
        self.publisher.publish(pressure, refusals, deliberate)


class _Locked:
    __slots__ = ("_ledger", "_rss")

    def __init__(self, ledger, own_rss):
        self._ledger = ledger
        self._rss = own_rss

    def __enter__(self):
        ledger = self._ledger
        ledger._local.acquire()
        try:
            ledger._flock()
        except BaseException:
            ledger._local.release()
            raise
        try:
            return View(ledger, ledger._slot(), self._rss)
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        try:
            self._ledger._funlock()
        finally:
            self._ledger._local.release()
        return False
