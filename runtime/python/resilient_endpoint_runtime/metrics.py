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
