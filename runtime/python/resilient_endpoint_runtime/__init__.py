"""Runtime helper for model containers behind a ``ResilientEndpoint`` (sagemaker-resilient-endpoint).

Standard library only; ``boto3`` (which AWS's inference images carry) is imported lazily, the
first time a client is needed. Everything takes an injectable client and clock, so it is tested
with stubs.

- :func:`degrade_level` / :class:`DegradeLevel`: the circuit breaker's degrade level (0 normal,
  1 degraded, 2 critical), read from the SSM parameter named in ``RESILIENT_ENDPOINT_DEGRADE_PARAMETER``,
  cached with jitter, never raising into a request.
- :class:`LengthTiers`: incident A's input tiers by level (full length up to ``MAX_SEQ_LEN`` at
  level 0, truncated to ``DEGRADED_MAX_SEQ_LEN`` at level 1, rejected above it at level 2), and batch caps.
- :class:`StageMemoryPublisher`: per-stage memory for the application-tier alarms, with exactly the
  dimensions they watch (``EndpointName``, ``VariantName``, ``Stage``), batched and rate-limited;
  :func:`process_memory_percent` is the worker's own memory against its budget (what a stage uses).
- :class:`MemoryGuard`: admission control against the worker's memory budget with a profiled curve
  (``python3 -m resilient_endpoint_runtime.profile`` measures it), the local level (breaker's or the
  worker's own pressure), and a hard backstop that turns an allocation failure into one 413.
"""
from .degrade import DegradeLevel, degrade_level, ENV_PARAMETER
from .tiers import LengthTiers, Rejection, RequestRejected
from .metrics import StageMemoryPublisher, host_memory_percent, process_memory_percent
from .guard import Admission, MemoryCurve, MemoryGuard

__all__ = [
    "DegradeLevel", "degrade_level", "ENV_PARAMETER",
    "LengthTiers", "Rejection", "RequestRejected",
    "StageMemoryPublisher", "host_memory_percent", "process_memory_percent",
    "Admission", "MemoryCurve", "MemoryGuard",
]
