"""One memory budget per container: the workers of a container account for each other through a file.

The kernel's OOM killer acts on the container (or the instance), and it kills the largest process, which
need not be the one whose request caused the pressure (real-account.md item 49): budgets per worker do not
bound the container. So every worker of a container writes, in a small shared file in the image's temp
directory (``tempfile.gettempdir()``: AWS's images set ``TEMP=/home/model-server/tmp``, the same directory
for every worker, real-account.md item 47), its resident memory and the estimates of the requests it has
admitted and not yet finished; admission sums them under the file's lock (``fcntl.flock``, held for
microseconds, never during I/O) and admits a request only if it fits what the whole container has left.

**One file per container, not per directory.** The file's name carries the container's identity (the boot,
the PID namespace and the memory cgroup the process runs in): two containers that share a temp directory (a
host path mounted into both) never share a budget, and their PIDs, which may be equal in two namespaces,
never meet in one file. A slot records its process's start time as well as its PID: a slot whose PID now
belongs to another process (a PID reused after its worker died) is dead, and its memory stops counting.

The file (``resilient-endpoint-<identity>-<key>.ledger``, memory-mapped, its blocks allocated up front so
that a full temp directory is an error at open, never a SIGBUS later) holds a header and one slot per
worker: pid and start time, private resident bytes (as of its last admission or release; the libraries all
workers map are counted once, in the container's other memory), bytes reserved by admitted requests, its
counters (memory refusals, deliberate 4XX answers) and its highest pressure since the last publish. What the
workers' slots do not show — the model server's front end, nginx, the OS of a container whose memory is
limited — is the container's "other" memory, sampled four times a second in the background, on a real OS
thread (:mod:`._native`: under gunicorn's gevent worker too, while a request computes), by one worker per
container (the one holding ``<file>.leader``: the kernel releases it when that worker dies and another takes
over): the container's working set (its cgroup's usage less inactive file cache; without a memory limit of
its own, the memory of the server's own process tree — never the whole host's) minus the workers' live
resident memory. The same worker removes dead workers' slots, keeps the container's sustained pressure level
(the level that degrades answers: a line held for a second, not crossed for an instant) and hands the
guard's metrics to their publisher every 10 s (:class:`~.metrics.GuardMetricsPublisher`, which sends them on
a thread of its own: the sampling never waits on the network).

Where the file cannot be used (not Linux, a read-only or full temp directory, no temp directory at all)
:meth:`InstanceLedger.open` says so once and returns a ledger of this process alone (anonymous memory, the
same code): the guard then accounts for its own process against the per-worker budget.

Times are ``time.monotonic()``: a step of the wall clock changes nothing here.
"""
import errno
import hashlib
import logging
import mmap
import os
import struct
import tempfile
import time

from . import _native

log = logging.getLogger("resilient_endpoint_runtime")

MAGIC = b"RELEDG02"
# magic, other bytes, other sampled at (monotonic), slots in use, orphan refusals, orphan 4XX, sustained level,
# the last sampled pressure (% of the budget, memory in use without reservations)
HEADER = struct.Struct("<8sqdqqqqd8x")
# pid, start time (clock ticks after boot), resident, reserved, allocator-free (reusable by this worker),
# memory refusals, deliberate 4XX, pressure max %, updated at (monotonic)
SLOT = struct.Struct("<qqqqqqqdd8x")
SLOTS = 256
SIZE = HEADER.size + SLOTS * SLOT.size
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
PID, START, RESIDENT, RESERVED, FREE, REFUSALS, DELIBERATE, PRESSURE, UPDATED = range(9)
LEVEL_LINES = (80.0, 95.0)  # % of the budget: level 1, level 2 (the guard's degrade_at / critical_at)
HOLD_SAMPLES = 4  # a line held for 4 samples (1 s at the default 0.25 s) moves the level; 5 points below it for as long brings it back
HYSTERESIS = 5.0
TRIM_AT = 80.0  # % of the budget in use: each worker gives its allocator's free memory back (at most once a second)
TRIM_EVERY = 1.0


def _read(path):
    with open(path) as f:
        return f.read()


def container_identity(proc="/proc"):
    """A short digest naming this container: the boot, the PID namespace and the memory cgroup of the
    process (each where readable). Every worker of one container has the same; two containers never do."""
    parts = []
    for name, read in (("boot", lambda: _read("%s/sys/kernel/random/boot_id" % proc).strip()),
                       ("pidns", lambda: os.readlink("%s/self/ns/pid" % proc)),
                       ("cgroup", lambda: _memory_cgroup_line(_read("%s/self/cgroup" % proc)))):
        try:
            parts.append("%s=%s" % (name, read()))
        except (OSError, ValueError):
            parts.append("%s=?" % name)
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:10]


def _memory_cgroup_line(text):
    lines = text.splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return path
    for line in lines:
        if line.startswith("0::"):
            return line[3:]
    return "?"


def ledger_path(key, directory=None, identity=None):
    """The container's ledger for ``key`` ('host', 'gpu0', …), in the image's temp directory (``OSError`` when
    there is none)."""
    digest = hashlib.sha1(("%s|%s|%s" % (os.environ.get("RESILIENT_ENDPOINT_NAME", ""), os.environ.get("RESILIENT_ENDPOINT_VARIANT", ""),
                                         identity if identity is not None else container_identity())).encode()).hexdigest()[:12]
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


def start_time(pid="self"):
    """When the process started (clock ticks after boot, /proc/<pid>/stat field 22): with the PID, who it is."""
    with open("/proc/%s/stat" % pid, "rb") as f:
        raw = f.read()
    return int(raw[raw.rindex(b")") + 2:].split()[19])


def alive(pid, started=None):
    """True while ``pid`` is the process that wrote its slot (same start time, when one was recorded)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if started:
        try:
            return start_time(pid) == started
        except (OSError, ValueError, IndexError):
            return False
    return True


class ContainerMemory:
    """The container's memory in use and its limit: its cgroup (v1 or v2) when that has a limit below the
    host's memory. Without one (a laptop, a container run without ``--memory``) the host's used memory is
    not the container's: what is in use is then the memory of the server's own process tree (the worker's
    parent — gunicorn's master, TorchServe's front end — and its descendants), their private memory each
    plus the largest shared part once. ``root`` and ``proc`` are injectable for tests."""

    TREE_REFRESH = 5.0  # seconds between walks of /proc for the tree's members

    def __init__(self, root="/sys/fs/cgroup", proc="/proc"):
        self.proc = proc
        self.host_total = self._meminfo().get("MemTotal", 0)
        self.cgroup, self.version = self._find(root)
        self.limit = self._limit() if self.cgroup else None
        if self.limit is None or self.limit >= self.host_total:
            self.cgroup, self.limit = None, None  # no limit of its own: the server's processes are what it holds
        self._members = None
        self._members_at = None

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
        """Bytes in use that the kernel cannot simply drop: the cgroup's usage less inactive file cache, or
        without a limit of its own the server's process tree (see the class)."""
        if self.cgroup is None:
            return self._tree_memory()
        usage = int(self._read("memory.usage_in_bytes" if self.version == 1 else "memory.current"))
        inactive = 0
        key = "total_inactive_file" if self.version == 1 else "inactive_file"
        for line in self._read("memory.stat").splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                inactive = int(value)
        return max(0, usage - inactive)

    # -- without a limit: the server's own processes ------------------------------------------------------

    def _stat(self, pid):
        with open(os.path.join(self.proc, str(pid), "stat"), "rb") as f:
            raw = f.read()
        return raw[raw.rindex(b")") + 2:].split()

    def _root(self):
        """The server's process: this process's parent, unless that is the init of its namespace (then this process)."""
        me = self._stat("self")
        parent = int(me[1])
        return parent if parent > 1 else int(os.path.basename(os.path.realpath(os.path.join(self.proc, "self"))))

    def members(self, now=None):
        """The PIDs of the server's process tree (refreshed every few seconds: a walk of /proc)."""
        now = time.monotonic() if now is None else now
        if self._members is not None and now - self._members_at < self.TREE_REFRESH:
            return self._members
        root = self._root()
        children = {}
        for name in os.listdir(self.proc):
            if name.isdigit():
                try:
                    children.setdefault(int(self._stat(name)[1]), []).append(int(name))
                except (OSError, ValueError, IndexError):
                    continue
        out, todo = [], [root]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo.extend(children.get(pid, ()))
        self._members, self._members_at = out, now
        return out

    def _tree_memory(self):
        private, shared = 0, 0
        for pid in self.members():
            try:
                with open(os.path.join(self.proc, str(pid), "statm"), "rb") as f:
                    fields = f.read().split()
            except OSError:
                continue
            private += (int(fields[1]) - int(fields[2])) * PAGE
            shared = max(shared, int(fields[2]) * PAGE)
        return private + shared


class ProcessMemory:
    """One process's memory (a ledger of this process alone: the per-worker fallback)."""

    limit = None

    def working_set(self):
        return statm()[0]


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

    __slots__ = ("_ledger", "_index", "other", "total", "own", "level", "workers")

    def __init__(self, ledger, index, own_rss):
        self._ledger = ledger
        self._index = index
        mm = ledger._mm
        header = HEADER.unpack_from(mm, 0)
        self.other, used, self.level = header[1], header[3], header[6]
        total = self.other
        own = None
        workers = 1
        for i, slot in enumerate(SLOT.iter_unpack(mm[HEADER.size:HEADER.size + max(used, index + 1) * SLOT.size])):
            if i == index:
                own = list(slot)
                own[RESIDENT] = own_rss if own_rss is not None else own[RESIDENT]
                total += own[RESIDENT] + own[RESERVED]
            elif slot[PID]:
                total += slot[RESIDENT] + slot[RESERVED]
                workers += 1
        self.total = total  # the container's memory: every worker's resident and reserved bytes, and the rest
        self.workers = workers
        self.own = own
        if own_rss is not None:
            SLOT.pack_into(mm, HEADER.size + index * SLOT.size, *own)

    def reserve(self, delta, pressure=None, refusal=False):
        """Adds ``delta`` to this worker's reservations (negative: releases) and records its pressure."""
        own = self.own
        own[RESERVED] = max(0, own[RESERVED] + delta)
        self.total += delta
        if refusal:
            own[REFUSALS] += 1
        if pressure is not None and pressure > own[PRESSURE]:
            own[PRESSURE] = pressure
        own[UPDATED] = time.monotonic()
        SLOT.pack_into(self._ledger._mm, HEADER.size + self._index * SLOT.size, *own)


class InstanceLedger:
    """The shared accounting of one container's workers for one memory (the host's, or one GPU's).

    ``path=None``: a ledger of this process alone, in anonymous memory (no file, no lock, always its own
    leader): the fallback where no shared file can be used."""

    def __init__(self, path, container=None, sample_interval=0.25, clock=time.monotonic, usage_of=lambda pid: private_memory(pid)[0]):
        self.path = path
        self.shared = path is not None
        self.container = container
        self.usage_of = usage_of  # a worker's memory read from outside (host: /proc/<pid>/statm), or None
        self.sample_interval = sample_interval
        self._clock = clock
        self.budget = None  # the container's budget (bytes), set by the guard: the pressure the leader samples
        self._pid = None
        self._index = None
        self._task = None
        self._leader = None
        self.publisher = None
        self.publish_every = 10.0
        self._last_publish = None
        self._recent = []  # the last samples' pressure (%), for the sustained level
        self._in_flight = [0.0, 0]  # this interval's samples of the admitted estimates (% of the budget): sum, count
        self._others = []  # the last samples of the other memory (their median is the header's)
        self._workers = ()  # the slots those samples were taken with
        self.trim = None  # this worker's allocator.trim (set by the guard): called under pressure
        self._next_trim = 0.0
        self.trims = 0
        self._local = _native.allocate_lock()  # the flock is per open file, shared by this process's threads: a real lock, never a greenlet's
        if path is None:
            self._fd = None
            self._mm = mmap.mmap(-1, SIZE)
            HEADER.pack_into(self._mm, 0, MAGIC, 0, 0.0, 0, 0, 0, 0, 0.0)
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            self._fd = fd
            self._flock()
            try:
                if os.fstat(fd).st_size < SIZE:
                    os.ftruncate(fd, SIZE)
                if hasattr(os, "posix_fallocate"):
                    # Blocks on disk now: a full temp directory fails here (ENOSPC), not with SIGBUS at the first write.
                    os.posix_fallocate(fd, 0, SIZE)
                self._mm = mmap.mmap(fd, SIZE)
                if self._mm[:8] != MAGIC:
                    self._mm[:SIZE] = b"\0" * SIZE
                    HEADER.pack_into(self._mm, 0, MAGIC, 0, 0.0, 0, 0, 0, 0, 0.0)
            finally:
                self._funlock()
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def open(cls, key, directory=None, container=None, usage_of=lambda pid: private_memory(pid)[0]):
        """The container's ledger, or — logged once — a ledger of this process alone where a shared file cannot
        be used (not Linux, no temp directory, a read-only or full one)."""
        try:
            import fcntl  # noqa: F401 - Linux only
            path = ledger_path(key, directory)
            return cls(path, container=container, usage_of=usage_of)
        except (OSError, ValueError, ImportError) as e:
            log.warning("memory guard: no shared ledger for %s (%s: %s): this worker accounts for itself only, against its own share",
                        key, type(e).__name__, e)
            return None

    @classmethod
    def private(cls, container=None):
        """A ledger of this process alone (anonymous memory)."""
        return cls(None, container=container, usage_of=lambda pid: private_memory(pid)[0])

    def _flock(self):
        if self._fd is not None:
            import fcntl
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def _funlock(self):
        if self._fd is not None:
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
        header = list(HEADER.unpack_from(mm, 0))
        used = header[3]
        try:
            mine = start_time()
        except (OSError, ValueError, IndexError):
            mine = 0
        free = None
        for i in range(SLOTS):
            spid, sstart = SLOT.unpack_from(mm, HEADER.size + i * SLOT.size)[:2]
            if spid == pid and sstart in (mine, 0):
                free = i
                break
            if free is None and (spid == 0 or (i >= used) or not alive(spid, sstart)):
                free = i
        if free is None:
            raise OSError(errno.ENOSPC, "no free slot in the ledger (%d workers)" % SLOTS)
        old = SLOT.unpack_from(mm, HEADER.size + free * SLOT.size)
        if old[PID] and old[PID] != pid:  # a dead worker's slot: keep its unpublished counts
            header[4] += old[REFUSALS]
            header[5] += old[DELIBERATE]
        SLOT.pack_into(mm, HEADER.size + free * SLOT.size, pid, mine, 0, 0, 0, 0, 0, 0.0, time.monotonic())
        header[3] = max(used, free + 1)
        HEADER.pack_into(mm, 0, *header)
        self._pid, self._index = pid, free
        return free

    def count(self, refusal):
        """Counts one deliberate 4XX answer (and a memory refusal when ``refusal``) in this worker's slot."""
        with self.locked() as v:
            v.own[DELIBERATE] += 1
            v.reserve(0, refusal=refusal)

    def set_free(self, free):
        """Records the memory this worker's allocator holds free (reusable by its own next request)."""
        with self.locked() as v:
            v.own[FREE] = max(0, int(free))
            SLOT.pack_into(self._mm, HEADER.size + v._index * SLOT.size, *v.own)

    def level(self):
        """The container's sustained pressure level (0, 1, 2), as the leader keeps it."""
        return HEADER.unpack_from(self._mm, 0)[6]

    def pressure(self):
        """The last sampled pressure: memory in use (without reservations) in % of the budget."""
        return HEADER.unpack_from(self._mm, 0)[7]

    # -- the background work of one worker per container ----------------------------------------------

    def start(self):
        """Starts this process's background sampling (again after a fork): a task of the process's real
        background thread (:data:`._native.background`). Cheap when it runs."""
        name = "ledger:%s:%d" % (self.path, id(self))
        if self._task == (name, os.getpid()) and _native.background.running() and _native.background.has(name):
            return
        self._task = (name, os.getpid())
        self._leader = None
        _native.background.every(name, self.sample_interval, self.tick)

    @property
    def started(self):
        """True once :meth:`start` was called (in this process or the one it was forked from)."""
        return self._task is not None

    def stop(self):
        if self._task is not None:
            _native.background.cancel(self._task[0])

    def lead(self):
        """True when this process is the container's leader (takes ``<file>.leader`` if nobody holds it)."""
        if not self.shared:
            return True
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

    def _sustained(self, pressure, level):
        """The level after this sample: up to a line held for HOLD_SAMPLES samples, down once HYSTERESIS points
        below it for as long."""
        self._recent = (self._recent + [pressure])[-HOLD_SAMPLES:]
        held = len(self._recent) == HOLD_SAMPLES
        for k in (2, 1):
            line = LEVEL_LINES[k - 1]
            if held and min(self._recent) >= line:
                return k
            if level >= k and max(self._recent) >= line - HYSTERESIS:
                return k
        return 0

    def _usage(self, pid):
        try:
            return self.usage_of(pid) if self.usage_of else None
        except (OSError, ValueError, IndexError):
            return None

    def upkeep(self):
        """Every worker's own step: under pressure (the leader's last sample ≥ 80 % of the budget), gives the memory
        its allocator keeps free back to the container, at most once a second. What a request freed stays in the
        worker's heap otherwise (glibc keeps up to twice its largest freed block at the top): measured, four
        recommender workers grew from 137 to 156–167 MiB each over 1,000 requests, and the container's memory in
        use, counted as spent, ended every admission."""
        if self.trim is None:
            return
        now = time.monotonic()
        if now < self._next_trim or HEADER.unpack_from(self._mm, 0)[7] < TRIM_AT:
            return
        self._next_trim = now + TRIM_EVERY
        if self.trim():
            self.trims += 1

    def tick(self):
        """One background step: this worker's upkeep; then, as the leader, sample the container's other memory, drop
        dead workers' slots, refresh idle workers' resident memory, keep the sustained level, and hand the guard's
        metrics to their publisher when they are due."""
        self.upkeep()
        if not self.lead():
            return
        live = {}
        with self._local:
            self._flock()
            try:
                used = HEADER.unpack_from(self._mm, 0)[3]
                pids = [(i,) + SLOT.unpack_from(self._mm, HEADER.size + i * SLOT.size)[:2] for i in range(used)]
            finally:
                self._funlock()
        dead = []
        for i, pid, started in pids:
            if not pid:
                continue
            if not alive(pid, started):
                dead.append((i, pid))
                continue
            live[i] = self._usage(pid)
        ws = None
        if self.container is not None:
            try:
                ws = self.container.working_set()
            except (OSError, ValueError):
                ws = None
        if ws is not None:
            # Read again after the container: a worker that grew between the two reads (a large request allocating
            # 100 MiB in milliseconds) is in the container's figure, and must be in the workers' too, or the growth
            # lands in "other" — measured: a 116-MiB phantom for a quarter of a second, refusing requests of 80 KB.
            for i, pid, _ in pids:
                if i in live and live[i] is not None:
                    after = self._usage(pid)
                    if after is not None and after > live[i]:
                        live[i] = after
        with self._local:
            self._flock()
            try:
                header = list(HEADER.unpack_from(self._mm, 0))
                for i, pid in dead:
                    slot = SLOT.unpack_from(self._mm, HEADER.size + i * SLOT.size)
                    if slot[PID] == pid:
                        header[4] += slot[REFUSALS]
                        header[5] += slot[DELIBERATE]
                        SLOT.pack_into(self._mm, HEADER.size + i * SLOT.size, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0)
                held = reserved = 0
                for i, v in live.items():  # a worker whose usage cannot be read from outside (GPU) counts as its slot says
                    slot = SLOT.unpack_from(self._mm, HEADER.size + i * SLOT.size)
                    reserved += slot[RESERVED]
                    if v is None:
                        held += slot[RESIDENT]
                        continue
                    held += v
                    if slot[RESERVED] == 0 and slot[RESIDENT] != v:
                        # An idle worker holds what it holds now (after a trim, less): never a busy one, whose
                        # growth its reservation already counts.
                        slot = list(slot)
                        slot[RESIDENT] = v
                        SLOT.pack_into(self._mm, HEADER.size + i * SLOT.size, *slot)
                if ws is not None:
                    workers = tuple(sorted(live))
                    if workers != self._workers:  # a worker came or went: its memory moved between "other" and the slots
                        self._others, self._workers = [], workers
                    self._others = (self._others + [max(0, ws - held)])[-3:]
                    header[1], header[2] = sorted(self._others)[len(self._others) // 2], time.monotonic()  # the median of 3
                if self.budget:
                    self._in_flight[0] += 100.0 * reserved / self.budget
                    self._in_flight[1] += 1
                    in_use = (self._others[-1] if ws is not None else header[1]) + held  # this sample's, for the level (which holds its own)
                    header[7] = 100.0 * in_use / self.budget
                    header[6] = self._sustained(header[7], header[6])
                HEADER.pack_into(self._mm, 0, *header)
            finally:
                self._funlock()
        now = self._clock()
        if self.publisher is not None and self.publisher.enabled:
            if self._last_publish is None:
                self._last_publish = now
            elif now - self._last_publish >= self.publish_every:
                # On a fixed cadence: a publish that came late (a C call holding the interpreter's lock) does not push the next ones.
                self._last_publish = max(self._last_publish + self.publish_every, now - self.publish_every)
                self.publish()

    def drain(self):
        """(highest pressure %, memory refusals, deliberate 4XX, in-flight %) since the last drain, summed over the
        container's workers (and the dead ones' last counts); the counters start again from zero. In-flight is
        the estimates admitted for requests in flight, summed over the workers, against the budget: the average
        of the interval's samples (``GuardInFlightPercent``, what a memory target tracks: it carries the load
        alone, no model copies or allocator cache, so it falls as instances are added), or the present sum when
        the interval has none."""
        with self._local:
            self._flock()
            try:
                mm = self._mm
                header = list(HEADER.unpack_from(mm, 0))
                refusals, deliberate, pressure, total, reserved = header[4], header[5], 0.0, header[1], 0
                for i in range(header[3]):
                    slot = list(SLOT.unpack_from(mm, HEADER.size + i * SLOT.size))
                    if not slot[PID]:
                        continue
                    refusals += slot[REFUSALS]
                    deliberate += slot[DELIBERATE]
                    pressure = max(pressure, slot[PRESSURE])
                    total += slot[RESIDENT] + slot[RESERVED]
                    reserved += slot[RESERVED]
                    slot[REFUSALS] = slot[DELIBERATE] = 0
                    slot[PRESSURE] = 0.0
                    SLOT.pack_into(mm, HEADER.size + i * SLOT.size, *slot)
                header[4] = header[5] = 0
                HEADER.pack_into(mm, 0, *header)
            finally:
                self._funlock()
        samples, self._in_flight = self._in_flight, [0.0, 0]
        in_flight = 0.0
        if self.budget:
            pressure = max(pressure, 100.0 * total / self.budget)
            in_flight = samples[0] / samples[1] if samples[1] else 100.0 * reserved / self.budget
        return min(pressure, 1000.0), refusals, deliberate, min(in_flight, 1000.0)

    def publish(self):
        """Drains the interval's figures and hands them to the publisher (which sends them in the background)."""
        pressure, refusals, deliberate, in_flight = self.drain()
        self.publisher.publish(pressure, refusals, deliberate, in_flight)


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
