"""The circuit breaker's degrade level, as the model container reads it.

Design (each point answers something a real container did to the earlier version):

- **Never raises into a request.** Any failure keeps the last known level. botocore's connection errors
  (``ReadTimeoutError``, ``ConnectTimeoutError``, ``EndpointConnectionError``, ``ConnectionClosedError``)
  have no ``response``, and some have ``response=None``: the error code is read defensively.
- **Knows its Region.** SageMaker hosting does not promise ``AWS_REGION`` (real-account.md item 30), so
  the client is created for ``AWS_DEFAULT_REGION`` (which the construct writes into every model's
  environment), else ``AWS_REGION``, else ``SAGEMAKER_REGION``.
- **Never in a request's path.** A request reads the cached level (an attribute); when it is due, the
  refresh runs in a background thread — a real OS thread (:mod:`._native`), also under gunicorn's gevent
  worker, where a greenlet would wait for the request to yield — and the SSM call inside it has an
  **overall deadline** (1 s by default), not only botocore's per-read timeouts (0.5 s to connect, 0.5 s per
  read, one attempt): a response trickling a byte every 0.3 s never resets a per-read timeout, so the call
  runs on the level's own courier thread (one thread for the client's every call: under gevent a socket
  belongs to its thread) and the refresh gives up on it at the deadline (a late answer is dropped; no second
  call starts while it lingers). Making the client (importing boto3: seconds on a busy host) happens on
  that thread before the call and is not charged to the deadline, so the first read is not a failure that
  delays the level by a backoff. Each failure doubles the wait (up to 60 s).
- **A monotonic clock.** Every time here, the shared file's included, is ``time.monotonic()`` (one clock
  for every process of a host): a step of the wall clock neither freezes the level nor forces a read.
- **One reader per instance, failures shared.** The workers of an instance share the level through a
  small file in the image's temp directory (``tempfile.gettempdir()``: AWS's images set
  ``TEMP=/home/model-server/tmp``, real-account.md item 47; ``RESILIENT_ENDPOINT_LEVEL_CACHE`` overrides it):
  a worker uses it while it is fresher than the TTL, and only the worker that takes the file's lock
  (non-blocking ``fcntl.flock``) calls SSM. A failed read is written there too, with the time of the next
  try, so an unreachable SSM costs one read per instance per interval, not one per worker. With the
  default 10 s ± 20 % TTL an instance makes ~0.1 GetParameter calls per second whatever its worker count
  (Parameter Store's default throughput is 40 TPS per account and Region, shared with GetParameters and
  PutParameter: real-account.md item 29).
- A missing parameter, an unreadable value or a level outside 0–2 counts as level 0, with a warning
  logged once per distinct problem.
"""
import errno
import hashlib
import json
import logging
import os
import random
import tempfile
import threading
import time

from . import _native

ENV_PARAMETER = "RESILIENT_ENDPOINT_DEGRADE_PARAMETER"
ENV_CACHE = "RESILIENT_ENDPOINT_LEVEL_CACHE"
REGION_VARIABLES = ("AWS_DEFAULT_REGION", "AWS_REGION", "SAGEMAKER_REGION")
DEFAULT_CACHE = "default"  # <temp dir>/resilient-endpoint-level-<hash of the parameter name>.json
LEVELS = (0, 1, 2)
MAX_BACKOFF = 60.0
DEADLINE = 1.0  # seconds: the whole SSM call, however the bytes arrive
CLIENT_SETUP = 30.0  # seconds a new client may take to be made (boto3's import) before the first call starts
CLOCK = "monotonic"  # what the shared file's times are


class DeadlineExceeded(Exception):
    """The SSM call did not finish within the refresh's overall deadline."""

log = logging.getLogger("resilient_endpoint_runtime")


def region_from_environment(env=None):
    """The Region the container runs in: AWS_DEFAULT_REGION, AWS_REGION or SAGEMAKER_REGION (first set)."""
    env = os.environ if env is None else env
    for name in REGION_VARIABLES:
        if env.get(name):
            return env[name]
    return None


def error_code(e):
    """The AWS error code of an exception (botocore ClientError), else its class name. Never raises."""
    response = getattr(e, "response", None)
    if isinstance(response, dict):
        code = (response.get("Error") or {}).get("Code")
        if code:
            return str(code)
    return type(e).__name__


def ssm_client(region=None):
    """A boto3 SSM client that fails fast: one attempt, 0.5 s to connect, 0.5 s to read."""
    import boto3  # lazily: only in the container
    from botocore.config import Config

    from .metrics import endpoint_from_environment
    config = Config(connect_timeout=0.5, read_timeout=0.5, retries={"total_max_attempts": 1, "mode": "standard"})
    return boto3.client("ssm", region_name=region or region_from_environment(), endpoint_url=endpoint_from_environment("ssm"), config=config)


class DegradeLevel:
    """Reads the degrade level from SSM Parameter Store: cached per instance, never blocking, never raising.

    ``client`` and ``clock`` are injectable for tests; ``cache_path=None`` turns the shared file off
    (each process reads on its own); ``background=False`` refreshes in the calling thread (tests that step
    a clock); ``deadline``: seconds the whole SSM call may take.
    """

    def __init__(self, parameter_name=None, client=None, ttl=10.0, jitter=0.2, clock=time.monotonic, rng=random.random,
                 cache_path=DEFAULT_CACHE, region=None, background=True, deadline=DEADLINE):
        if not 0 <= jitter < 1:
            raise ValueError("jitter must be in [0, 1)")
        if ttl <= 0:
            raise ValueError("ttl must be > 0 seconds")
        self.parameter_name = parameter_name if parameter_name is not None else os.environ.get(ENV_PARAMETER)
        self._client = client
        self.ttl = ttl
        self.jitter = jitter
        self._clock = clock
        self._rng = rng
        if cache_path == DEFAULT_CACHE:
            digest = hashlib.sha1((self.parameter_name or "").encode()).hexdigest()[:12]
            try:
                cache_path = os.environ.get(ENV_CACHE) or os.path.join(tempfile.gettempdir(), "resilient-endpoint-level-%s.json" % digest)
            except OSError as e:  # no usable temp directory: every process reads on its own
                log.warning("degrade level: no temp directory for the shared level (%s): each worker reads SSM", e)
                cache_path = None
        self.cache_path = cache_path
        self.region = region
        self._level = 0
        self._next_read = float("-inf")
        self._failures = 0
        self._refreshing = threading.Lock()  # held only to decide who refreshes, never waited on
        self._warned = set()
        self.reads = 0
        self.background = background
        self.deadline = deadline
        self._refresher = None  # (pid, thread) of the refresh in flight
        self._starting = threading.Lock()
        self._fetched = None
        self._made_in = None  # the pid that made the client (None: injected)
        self.courier = _native.Courier("resilient-endpoint-ssm", self._ssm)

    # -- what requests call --------------------------------------------------------------------------

    def get(self):
        """The current level (0, 1 or 2). Never raises, never waits: a due refresh starts in the background."""
        try:
            if self._clock() < self._next_read:
                return self._level
            if not self.background:
                self.refresh()
                return self._level
            running = self._refresher
            if running is not None and running[0] == os.getpid() and running[1].is_alive():
                return self._level
            if self._starting.acquire(blocking=False):
                try:
                    t = _native.Thread(self.refresh, "resilient-endpoint-level")
                    self._refresher = (os.getpid(), t)
                    t.start()
                finally:
                    self._starting.release()
        except Exception as e:  # noqa: BLE001 - nothing may reach the request
            self._warn("internal-" + type(e).__name__, "degrade level: unexpected %s: keeping level %d" % (type(e).__name__, self._level))
        return self._level

    def refresh(self):
        """One refresh (the shared file, else SSM within the deadline); what the background thread runs."""
        if not self._refreshing.acquire(blocking=False):
            return  # another thread is refreshing
        try:
            self._refresh(self._clock())
        except Exception as e:  # noqa: BLE001
            self._warn("internal-" + type(e).__name__, "degrade level: unexpected %s: keeping level %d" % (type(e).__name__, self._level))
            self._next_read = self._clock() + min(MAX_BACKOFF, self.ttl)
        finally:
            self._refreshing.release()

    def next_interval(self):
        """Seconds until the next read: the TTL moved by up to ±jitter × TTL (so instances do not poll in step)."""
        return self.ttl * (1 + self.jitter * (2 * self._rng() - 1))

    # -- the refresh ---------------------------------------------------------------------------------

    def _refresh(self, now):
        if not self.parameter_name:
            self._warn("no-parameter", "%s is not set: degrade level 0" % ENV_PARAMETER)
            self._level = 0
            self._next_read = now + self.next_interval()
            return
        shared = self._read_shared(now)
        if shared is not None:
            level, fetched, retry, failures = shared
            self._level = level
            self._fetched = fetched
            due = fetched + self.next_interval()
            if retry is not None and retry > due:
                due = retry  # a worker of this instance failed to read after that: not before its retry time
                self._failures = max(self._failures, failures)
            if due > now:
                self._next_read = due
                return
        lock = self._lock_shared()
        if lock is False:
            # Another worker of this instance is reading SSM now: keep what we have, look again shortly.
            self._next_read = now + min(1.0, self.ttl)
            return
        try:
            self._read_ssm()
        finally:
            if lock is not None:
                lock.close()

    def _read_ssm(self):
        try:
            self.reads += 1
            value = self._call()["Parameter"]["Value"]
        except Exception as e:  # noqa: BLE001 - nothing may reach the request
            code = error_code(e)
            if code == "ParameterNotFound":
                self._warn("not-found", "degrade parameter %s not found: level 0" % self.parameter_name)
                self._level = 0
                self._failures = 0
                self._schedule(self._clock(), 0)
            else:
                self._failures += 1
                self._warn("error-" + code, "reading the degrade level failed (%s): keeping level %d" % (code, self._level))
                backoff = min(MAX_BACKOFF, self.ttl * 2 ** self._failures)
                now = self._clock()
                self._next_read = now + backoff * (1 + self.jitter * (2 * self._rng() - 1))
                self._write_shared(self._level, self._fetched if self._fetched is not None else now - 2 * self.ttl,
                                   retry=self._next_read, failures=self._failures)
            return
        self._failures = 0
        self._level = self._parse(value)
        self._schedule(self._clock(), self._level)

    def prepare(self):
        """Makes the client now, on the courier's thread (the guard calls it when the worker loads its model), so
        that the first read starts at once. Never raises, never waits."""
        if self.parameter_name and self.background:
            try:
                self.courier.submit(lambda client: None)
            except Exception:  # noqa: BLE001 - Busy, or anything: the first read makes it
                pass

    def _call(self):
        """GetParameter within the overall deadline, on the courier's thread (a late answer is dropped; no second
        call while it lingers). The deadline runs from the call's start: making the client is not charged to it."""
        if not self.background and self.deadline is None:
            return self._ssm().get_parameter(Name=self.parameter_name)
        try:
            job = self.courier.submit(lambda client: client.get_parameter(Name=self.parameter_name))
        except _native.Busy:
            raise DeadlineExceeded("the previous call is still running past its deadline")
        try:
            return job.result(self.deadline, start_within=CLIENT_SETUP)
        except TimeoutError as e:
            raise DeadlineExceeded(str(e))

    def _schedule(self, now, level):
        """After a successful call (expiry set *after* the call, so a slow call never makes every request read)."""
        self._next_read = now + self.next_interval()
        self._fetched = now
        if level is not None:
            self._write_shared(level, now)

    def _ssm(self):
        if self._client is None or (self._made_in is not None and self._made_in != os.getpid()):
            self._client = ssm_client(self.region)  # made here (a forked child never uses its parent's connections)
            self._made_in = os.getpid()
        return self._client

    @property
    def _straggler(self):
        """The courier's call still running past its deadline (for tests), or None."""
        return self.courier if self.courier.busy else None

    # -- the instance-wide cache file -------------------------------------------------------------

    def _read_shared(self, now):
        """(level, fetched_at, retry_at or None, failures) from the shared file when it is readable, else None."""
        if not self.cache_path:
            return None
        try:
            with open(self.cache_path) as f:
                o = json.load(f)
            if o.get("clock") != CLOCK:
                return None  # written by an older helper, in wall-clock time
            level, fetched = o["level"], float(o["fetchedAt"])
            retry = float(o["retryAt"]) if o.get("retryAt") is not None else None
            failures = int(o.get("failures", 0))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if isinstance(level, bool) or level not in LEVELS or fetched > now + 60 or (retry is not None and retry > now + 2 * MAX_BACKOFF):
            return None
        return level, fetched, retry, failures

    def _write_shared(self, level, now, retry=None, failures=0):
        if not self.cache_path:
            return
        tmp = "%s.%d.tmp" % (self.cache_path, os.getpid())
        o = {"level": level, "fetchedAt": now, "clock": CLOCK}
        if retry is not None:
            o.update(retryAt=retry, failures=failures)
        try:
            with open(tmp, "w") as f:
                json.dump(o, f)
            os.replace(tmp, self.cache_path)  # atomic: readers see the old or the new file, never half
        except OSError as e:
            self._warn("cache-" + str(e.errno), "degrade level cache %s not writable (%s): each worker reads SSM" % (self.cache_path, e))

    def _lock_shared(self):
        """The refresh lock of the instance: an open file (held), False (another process holds it) or None (no file cache)."""
        if not self.cache_path:
            return None
        try:
            import fcntl
        except ImportError:  # not on Linux: every process reads on its own
            return None
        try:
            f = open(self.cache_path + ".lock", "a")
        except OSError:
            return None
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except OSError as e:
            f.close()
            if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return False
            return None

    # -- values ------------------------------------------------------------------------------------

    def _warn(self, key, message):
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message)

    def _parse(self, value):
        try:
            level = json.loads(value)["level"]
        except (ValueError, TypeError, KeyError):
            self._warn("unreadable", "degrade parameter value is not JSON with a 'level': level 0")
            return 0
        if isinstance(level, bool) or level not in LEVELS:
            self._warn("range-" + repr(level), "degrade level %r is not 0, 1 or 2: level 0" % (level,))
            return 0
        return level


_default = None
_default_lock = threading.Lock()


def _process_default():
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = DegradeLevel()
    return _default


def degrade_level():
    """The degrade level through one process-wide :class:`DegradeLevel` (created on first use)."""
    return _process_default().get()


def prepare():
    """Starts the process-wide reader (its first read, and the client it needs) ahead of the first request."""
    try:
        reader = _process_default()
        reader.prepare()
        reader.get()
    except Exception:  # noqa: BLE001 - a level is advice: never fails a worker
        pass
