"""What the container publishes to CloudWatch: per-stage memory for the application-tier alarms, and the guard's
metrics for the breaker. Nothing here talks to AWS in a request's path: a request only records a sample (an
attribute update under a lock); the calls run on a real OS thread of their own (:class:`._native.Courier`,
also under gunicorn's gevent worker), with short connect and no SDK retries, so nothing waits on CloudWatch
— not a request, not the ledger's sampling. A failed call's figures are kept for the next one (bounded, never
dropped: the oldest intervals merge when the bound is reached), and each interval's datums carry its own
timestamp, so a call that catches up stores each count once, in its own interval.
"""
import collections
import datetime
import logging
import os
import threading
import time

from . import _native
from .degrade import error_code as error_kind  # the AWS error code of a failed call, else its class name

log = logging.getLogger("resilient_endpoint_runtime")

ENV_NAMESPACE = "RESILIENT_ENDPOINT_METRICS_NAMESPACE"
ENV_ENDPOINT = "RESILIENT_ENDPOINT_NAME"
ENV_VARIANT = "RESILIENT_ENDPOINT_VARIANT"
ENV_STAGE_SECONDS = "RESILIENT_ENDPOINT_STAGE_METRICS_SECONDS"  # how often a worker sends its stage metrics (default 60, at least 1)
MAX_DATUMS_PER_CALL = 1000  # PutMetricData accepts up to 1,000 metrics per request
CONNECT_TIMEOUT = 2.0
# Long on purpose, and off every request's path: a call not answered in 20 s is taken as not stored and its
# figures go with the next call. A shorter read timeout is what doubled counts (an answer arriving after it,
# stored, then sent again); CloudWatch's PutMetricData answers in milliseconds.
READ_TIMEOUT = 20.0
PENDING_INTERVALS = 360  # one hour of 10-s intervals kept while CloudWatch refuses; older ones merge, never drop


def endpoint_from_environment(service, env=None):
    """``AWS_ENDPOINT_URL_<SERVICE>`` or ``AWS_ENDPOINT_URL`` (what botocore 1.31+ reads itself; older ones, such
    as Debian 12's 1.29, do not), else None."""
    env = os.environ if env is None else env
    return env.get("AWS_ENDPOINT_URL_%s" % service.upper()) or env.get("AWS_ENDPOINT_URL") or None


def cloudwatch_client(read_timeout=READ_TIMEOUT):
    """A CloudWatch client for the background: 2 s to connect, ``read_timeout`` to read, one attempt (no SDK
    retries: a failed call's figures go with the next call instead), the container's Region."""
    import boto3  # lazily: only in the container
    from botocore.config import Config

    from .degrade import region_from_environment
    config = Config(connect_timeout=CONNECT_TIMEOUT, read_timeout=read_timeout, retries={"total_max_attempts": 1, "mode": "standard"})
    return boto3.client("cloudwatch", region_name=region_from_environment(), endpoint_url=endpoint_from_environment("cloudwatch"), config=config)


def process_memory_percent(budget_bytes=None, statm="/proc/self/statm"):
    """This worker's resident memory as a percentage of its budget (``RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES``,
    which the construct writes), or of the host's memory when no budget is known: the memory of the
    process running a stage, not the whole instance's."""
    page = os.sysconf("SC_PAGE_SIZE")
    with open(statm) as f:
        rss = int(f.read().split()[1]) * page
    if budget_bytes is None:
        raw = os.environ.get("RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES", "")
        budget_bytes = int(raw) if raw.isdigit() and int(raw) > 0 else None
    if budget_bytes is None:
        budget_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(100.0, 100.0 * rss / budget_bytes)


def host_memory_percent(meminfo="/proc/meminfo"):
    """Used host memory in percent, from /proc/meminfo (MemTotal − MemAvailable)."""
    values = {}
    with open(meminfo) as f:
        for line in f:
            key, _, rest = line.partition(":")
            values[key] = float(rest.split()[0])
    return 100.0 * (values["MemTotal"] - values["MemAvailable"]) / values["MemTotal"]


class StageMemoryPublisher:
    """Publishes ``MemoryUtilization`` per processing stage, as the construct's stage alarms watch it.

    Dimensions are exactly ``EndpointName`` (``$RESILIENT_ENDPOINT_NAME``), ``VariantName``
    (``$RESILIENT_ENDPOINT_VARIANT``) and ``Stage``, in the namespace ``$RESILIENT_ENDPOINT_METRICS_NAMESPACE``.
    Samples are kept per stage (the maximum, count, sum of each interval); :meth:`record` is all a request
    pays (no AWS call, ever). The process's background thread flushes them every ``interval`` seconds
    (``$RESILIENT_ENDPOINT_STAGE_METRICS_SECONDS``, default 60) in one
    PutMetricData call of statistic sets, on the publisher's own courier thread; a failed call's statistics
    merge into the next one's. Errors are logged once per kind, never raised.
    """

    def __init__(self, client=None, namespace=None, endpoint_name=None, variant_name=None, interval=None, clock=time.monotonic,
                 background=True):
        self.namespace = namespace or os.environ.get(ENV_NAMESPACE)
        self.endpoint_name = endpoint_name or os.environ.get(ENV_ENDPOINT)
        self.variant_name = variant_name or os.environ.get(ENV_VARIANT)
        self._client = client
        if interval is None:
            raw = os.environ.get(ENV_STAGE_SECONDS, "")
            interval = float(raw) if raw.replace(".", "", 1).isdigit() and float(raw) >= 1 else 60.0
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._stats = {}
        self._last_flush = clock()
        self.calls = 0
        self.failures = 0
        self._warned = set()
        self._background = background
        self._scheduled = None  # the pid whose background flushes this publisher
        self.courier = _native.Courier("resilient-endpoint-stage-metrics", self._make_client)
        self.enabled = bool(self.namespace and self.endpoint_name and self.variant_name)
        if not self.enabled:
            log.warning("stage memory metrics off: %s, %s and %s must be set", ENV_NAMESPACE, ENV_ENDPOINT, ENV_VARIANT)

    def _make_client(self):
        return self._client if self._client is not None else cloudwatch_client()

    def record(self, stage, percent):
        """Records one sample of a stage's memory (%). Never calls AWS."""
        if not self.enabled:
            return
        if not (0 <= percent <= 100):
            log.warning("stage %s memory %r%% is outside 0-100: dropped", stage, percent)
            return
        with self._lock:
            s = self._stats.setdefault(stage, {"SampleCount": 0, "Sum": 0.0, "Minimum": percent, "Maximum": percent})
            s["SampleCount"] += 1
            s["Sum"] += percent
            s["Minimum"] = min(s["Minimum"], percent)
            s["Maximum"] = max(s["Maximum"], percent)
        if self._background and self._scheduled != os.getpid():
            self._scheduled = os.getpid()
            _native.background.every("stage-metrics:%d" % id(self), min(self.interval, 1.0), self.due)

    def due(self):
        """The background's check: flushes once ``interval`` seconds have passed since the last flush."""
        if self._clock() - self._last_flush >= self.interval:
            self.flush()

    def _merge(self, stats):
        with self._lock:
            for stage, v in stats.items():
                s = self._stats.get(stage)
                if s is None:
                    self._stats[stage] = v
                else:
                    s["SampleCount"] += v["SampleCount"]
                    s["Sum"] += v["Sum"]
                    s["Minimum"] = min(s["Minimum"], v["Minimum"])
                    s["Maximum"] = max(s["Maximum"], v["Maximum"])

    def flush(self, wait=None):
        """Hands what was recorded to the courier (no call when nothing was); ``wait``: seconds to wait for the
        call (tests). A call still running, or one that fails, leaves the statistics for the next flush."""
        with self._lock:
            stats, self._stats = self._stats, {}
            self._last_flush = self._clock()
        if not stats:
            return None
        data = [{
            "MetricName": "MemoryUtilization",
            "Dimensions": [
                {"Name": "EndpointName", "Value": self.endpoint_name},
                {"Name": "VariantName", "Value": self.variant_name},
                {"Name": "Stage", "Value": stage},
            ],
            "StatisticValues": values,
            "Unit": "Percent",
        } for stage, values in sorted(stats.items())]

        def send(client):
            try:
                for i in range(0, len(data), MAX_DATUMS_PER_CALL):
                    self.calls += 1
                    client.put_metric_data(Namespace=self.namespace, MetricData=data[i:i + MAX_DATUMS_PER_CALL])
            except Exception as e:  # noqa: BLE001 - metrics must never fail anything
                self.failures += 1
                self._merge(stats)
                self._warn(e)
                return False
            return True

        try:
            job = self.courier.submit(send)
        except _native.Busy:
            self._merge(stats)
            return None
        if wait is not None:
            try:
                return job.result(wait, start_within=wait)
            except TimeoutError:
                return None
        return job

    def _warn(self, e):
        kind = error_kind(e)
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("publishing stage memory failed (%s): %s; kept for the next call", kind, e)


# The container → breaker contract (lib/breaker/contract.ts GUARD_METRICS, GUARD_METRIC_PERIOD_SECONDS).
GUARD_PRESSURE = "GuardPressure"
GUARD_MEMORY_REFUSALS = "GuardMemoryRefusals"
DELIBERATE_4XX = "DeliberateClientErrors"
GUARD_IN_FLIGHT = "GuardInFlightPercent"
GUARD_PERIOD_SECONDS = 10.0


def _mean(a, b):
    """Two merged intervals' in-flight figure: their mean (each an interval's average), or the one there is."""
    if a is None or b is None:
        return b if a is None else a
    return (a + b) / 2.0


class GuardMetricsPublisher:
    """What the guard absorbs, for the breaker: ``GuardPressure`` (Percent, the interval's maximum of the
    container's memory against its budget), ``GuardMemoryRefusals`` and ``DeliberateClientErrors`` (Count),
    ``GuardInFlightPercent`` (Percent, the interval's average of the estimates admitted for requests in flight,
    against the budget: what the endpoint's memory target tracks when the model is guarded),
    summed over the container's workers, every 10 s from one worker per container (the ledger's leader),
    high resolution (``StorageResolution`` 1), with exactly the dimensions ``EndpointName`` and ``VariantName``,
    in the namespace ``RESILIENT_ENDPOINT_METRICS_NAMESPACE``.

    :meth:`publish` only queues the interval (with its timestamp) and hands the queue to the publisher's
    courier thread when that is idle: the ledger's sampling never waits on the network. A call that fails —
    throttled, denied, unreachable, not answered within ``read_timeout`` — keeps its intervals for the next
    call (at most :data:`PENDING_INTERVALS`; beyond, the two oldest merge: counts summed, pressure the higher);
    a call that succeeds removes exactly the intervals it carried. Each datum carries its interval's
    timestamp, so intervals sent late land where they belong. Errors are logged once per kind, never raised."""

    def __init__(self, client=None, namespace=None, endpoint_name=None, variant_name=None, read_timeout=READ_TIMEOUT, wall=time.time):
        self.namespace = namespace or os.environ.get(ENV_NAMESPACE)
        self.endpoint_name = endpoint_name or os.environ.get(ENV_ENDPOINT)
        self.variant_name = variant_name or os.environ.get(ENV_VARIANT)
        self._client = client
        self.read_timeout = read_timeout
        self._wall = wall
        self.enabled = bool(self.namespace and self.endpoint_name and self.variant_name)
        self.calls = 0
        self.failures = 0
        self.merged = 0
        self._warned = set()
        self._pending = collections.deque()
        self._plock = _native.allocate_lock()  # the queue: the leader's background and the courier thread
        self.courier = _native.Courier("resilient-endpoint-guard-metrics", self._make_client)

    def _make_client(self):
        return self._client if self._client is not None else cloudwatch_client(self.read_timeout)

    def datums(self, pressure, refusals, deliberate, timestamp=None, in_flight=None):
        dims = [{"Name": "EndpointName", "Value": self.endpoint_name}, {"Name": "VariantName", "Value": self.variant_name}]

        def one(name, value, unit):
            d = {"MetricName": name, "Dimensions": dims, "StorageResolution": 1, "Unit": unit,
                 "StatisticValues": {"SampleCount": 1.0, "Sum": float(value), "Minimum": float(value), "Maximum": float(value)}}
            if timestamp is not None:
                d["Timestamp"] = datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc)
            return d
        data = [one(GUARD_PRESSURE, round(pressure, 2), "Percent"), one(GUARD_MEMORY_REFUSALS, refusals, "Count"),
                one(DELIBERATE_4XX, deliberate, "Count")]
        if in_flight is not None:
            data.append(one(GUARD_IN_FLIGHT, round(in_flight, 2), "Percent"))
        return data

    @property
    def pending(self):
        """The intervals not stored yet: [(timestamp, pressure, refusals, deliberate, in-flight or None)]."""
        with self._plock:
            return list(self._pending)

    def publish(self, pressure, refusals, deliberate, in_flight=None):
        """Queues one interval and sends the queue in the background (see the class). Never raises, never waits;
        the :class:`~._native.Job` of the call started, or None (off, or the courier is still busy)."""
        if not self.enabled:
            return None
        with self._plock:
            self._pending.append((self._wall(), float(pressure), int(refusals), int(deliberate),
                                  None if in_flight is None else float(in_flight)))
        return self.send()

    def send(self):
        """Hands the queued intervals (up to one call's worth) to the courier, unless it is busy. Merging down to
        the bound happens here, only while no call is in flight (a call's intervals are never merged under it)."""
        if self.courier.busy:
            return None
        with self._plock:
            while len(self._pending) > PENDING_INTERVALS:
                a, b = self._pending.popleft(), self._pending.popleft()
                self._pending.appendleft((b[0], max(a[1], b[1]), a[2] + b[2], a[3] + b[3], _mean(a[4], b[4])))
                self.merged += 1
            batch = list(self._pending)[:MAX_DATUMS_PER_CALL // 4]
        if not batch:
            return None

        def call(client):
            data = [d for t, p, r, x, f in batch for d in self.datums(p, r, x, timestamp=t, in_flight=f)]
            try:
                self.calls += 1
                client.put_metric_data(Namespace=self.namespace, MetricData=data)
            except Exception as e:  # noqa: BLE001 - metrics must never fail the worker
                self.failures += 1
                kind = error_kind(e)
                if kind not in self._warned:
                    self._warned.add(kind)
                    log.warning("publishing the guard's metrics failed (%s): %s; kept for the next call", kind, e)
                return False
            with self._plock:
                for item in batch:  # exactly what this call carried
                    self._pending.remove(item)
            return True

        try:
            return self.courier.submit(call)
        except _native.Busy:
            return None
