"""Per-stage memory for the application-tier alarms."""
import logging
import os
import threading
import time

log = logging.getLogger("resilient_endpoint_runtime")

ENV_NAMESPACE = "RESILIENT_ENDPOINT_METRICS_NAMESPACE"
ENV_ENDPOINT = "RESILIENT_ENDPOINT_NAME"
ENV_VARIANT = "RESILIENT_ENDPOINT_VARIANT"
MAX_DATUMS_PER_CALL = 1000  # PutMetricData accepts up to 1,000 metrics per request


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
    Samples are kept per stage (the maximum, count, sum of each interval) and sent at most once per
    ``interval`` seconds in one PutMetricData call as statistic sets, so a busy worker makes one call
    every ``interval`` seconds whatever its request rate. Errors are logged, never raised.
    """

    def __init__(self, client=None, namespace=None, endpoint_name=None, variant_name=None, interval=60.0, clock=time.monotonic):
        self.namespace = namespace or os.environ.get(ENV_NAMESPACE)
        self.endpoint_name = endpoint_name or os.environ.get(ENV_ENDPOINT)
        self.variant_name = variant_name or os.environ.get(ENV_VARIANT)
        self._client = client
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._stats = {}
        self._last_flush = clock()
        self.calls = 0
        self.enabled = bool(self.namespace and self.endpoint_name and self.variant_name)
        if not self.enabled:
            log.warning("stage memory metrics off: %s, %s and %s must be set", ENV_NAMESPACE, ENV_ENDPOINT, ENV_VARIANT)

    def _cloudwatch(self):
        if self._client is None:
            import boto3  # lazily: only in the container
            self._client = boto3.client("cloudwatch")
        return self._client

    def record(self, stage, percent):
        """Records one sample of a stage's memory (%); sends the batch when the interval has passed."""
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
            due = self._clock() - self._last_flush >= self.interval
        if due:
            self.flush()

    def flush(self):
        """Sends what was recorded (no call when nothing was)."""
        with self._lock:
            stats, self._stats = self._stats, {}
            self._last_flush = self._clock()
        if not stats:
            return
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
        for i in range(0, len(data), MAX_DATUMS_PER_CALL):
            try:
                self.calls += 1
                self._cloudwatch().put_metric_data(Namespace=self.namespace, MetricData=data[i:i + MAX_DATUMS_PER_CALL])
            except Exception as e:  # noqa: BLE001 - metrics must never fail a request
                log.warning("publishing stage memory failed: %s", e)


# The container → breaker contract (lib/breaker/contract.ts GUARD_METRICS, GUARD_METRIC_PERIOD_SECONDS).
GUARD_PRESSURE = "GuardPressure"
GUARD_MEMORY_REFUSALS = "GuardMemoryRefusals"
DELIBERATE_4XX = "DeliberateClientErrors"
GUARD_PERIOD_SECONDS = 10.0


class GuardMetricsPublisher:
    """What the guard absorbs, for the breaker: ``GuardPressure`` (Percent, the interval's maximum of the
    container's memory against its budget), ``GuardMemoryRefusals`` and ``DeliberateClientErrors`` (Count),
    summed over the instance's workers, in one PutMetricData call every 10 s by one worker per instance
    (the ledger's leader, in the background: never in a request's path), high resolution
    (``StorageResolution`` 1), with exactly the dimensions ``EndpointName`` and ``VariantName``, in the
    namespace ``RESILIENT_ENDPOINT_METRICS_NAMESPACE``. Errors are logged (once per kind), never raised."""

    def __init__(self, client=None, namespace=None, endpoint_name=None, variant_name=None):
        self.namespace = namespace or os.environ.get(ENV_NAMESPACE)
        self.endpoint_name = endpoint_name or os.environ.get(ENV_ENDPOINT)
        self.variant_name = variant_name or os.environ.get(ENV_VARIANT)
        self._client = client
        self.enabled = bool(self.namespace and self.endpoint_name and self.variant_name)
        self.calls = 0
        self.failures = 0
        self._warned = set()

    def _cloudwatch(self):
        if self._client is None:
            import boto3  # lazily: only in the container
            from botocore.config import Config

            from .degrade import region_from_environment
            config = Config(connect_timeout=1, read_timeout=2, retries={"total_max_attempts": 2, "mode": "standard"})
            self._client = boto3.client("cloudwatch", region_name=region_from_environment(), config=config)
        return self._client

    def datums(self, pressure, refusals, deliberate):
        dims = [{"Name": "EndpointName", "Value": self.endpoint_name}, {"Name": "VariantName", "Value": self.variant_name}]

        def one(name, value, unit):
            return {"MetricName": name, "Dimensions": dims, "StorageResolution": 1, "Unit": unit,
                    "StatisticValues": {"SampleCount": 1.0, "Sum": float(value), "Minimum": float(value), "Maximum": float(value)}}
        return [one(GUARD_PRESSURE, round(pressure, 2), "Percent"), one(GUARD_MEMORY_REFUSALS, refusals, "Count"),
                one(DELIBERATE_4XX, deliberate, "Count")]

    def publish(self, pressure, refusals, deliberate):
        """One PutMetricData call with the three metrics. Never raises."""
        if not self.enabled:
            return False
        try:
            self.calls += 1
            self._cloudwatch().put_metric_data(Namespace=self.namespace, MetricData=self.datums(pressure, refusals, deliberate))
            return True
        except Exception as e:  # noqa: BLE001 - metrics must never fail the worker
            self.failures += 1
            kind = type(e).__name__
            response = getattr(e, "response", None)
            if isinstance(response, dict):
                kind = (response.get("Error") or {}).get("Code") or kind
            if kind not in self._warned:
                self._warned.add(kind)
                log.warning("publishing the guard's metrics failed (%s): %s", kind, e)
            return False
