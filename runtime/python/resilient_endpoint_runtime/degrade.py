"""The circuit breaker's degrade level, as the model container reads it."""
import json
import logging
import os
import random
import threading
import time

ENV_PARAMETER = "RESILIENT_ENDPOINT_DEGRADE_PARAMETER"
LEVELS = (0, 1, 2)

log = logging.getLogger("resilient_endpoint_runtime")


class DegradeLevel:
    """Reads the degrade level from SSM Parameter Store, cached.

    - The value is cached for ``ttl`` seconds, each expiry moved by up to ``jitter`` × ttl either way,
      so the workers of a fleet do not poll in step (GetParameter throughput is shared per account
      and region: SSM API reference, GetParameter; re:Post "ssm-parameter-store-rate-exceeded").
    - Any error (throttling, network, permissions) keeps the last known level and never raises into
      a request; the next read is attempted after another TTL.
    - A missing parameter, an unreadable value or a level outside 0–2 counts as level 0, with a
      logged warning (logged once per distinct problem, not per request).
    """

    def __init__(self, parameter_name=None, client=None, ttl=5.0, jitter=0.2, clock=time.monotonic, rng=random.random):
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
        self._level = 0
        self._expires = float("-inf")
        self._lock = threading.Lock()
        self._warned = set()
        self.reads = 0

    def _ssm(self):
        if self._client is None:
            import boto3  # lazily: only in the container
            self._client = boto3.client("ssm")
        return self._client

    def _warn(self, key, message):
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message)

    def next_interval(self):
        """Seconds until the next read: the TTL moved by up to ±jitter × TTL."""
        return self.ttl * (1 + self.jitter * (2 * self._rng() - 1))

    def get(self):
        """The current level (0, 1 or 2). Never raises."""
        now = self._clock()
        with self._lock:
            if now < self._expires:
                return self._level
            self._expires = now + self.next_interval()
            if not self.parameter_name:
                self._warn("no-parameter", "%s is not set: degrade level 0" % ENV_PARAMETER)
                self._level = 0
                return self._level
            try:
                self.reads += 1
                value = self._ssm().get_parameter(Name=self.parameter_name)["Parameter"]["Value"]
            except Exception as e:  # noqa: BLE001 - nothing may reach the request
                code = getattr(e, "response", {}).get("Error", {}).get("Code", type(e).__name__)
                if code == "ParameterNotFound":
                    self._warn("not-found", "degrade parameter %s not found: level 0" % self.parameter_name)
                    self._level = 0
                else:
                    self._warn("error-" + str(code), "reading the degrade level failed (%s): keeping level %d" % (code, self._level))
                return self._level
            self._level = self._parse(value)
            return self._level

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


def degrade_level():
    """The degrade level through one process-wide :class:`DegradeLevel` (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = DegradeLevel()
    return _default.get()
