"""Incident A's input tiers, driven by the degrade level."""
import os


class RequestRejected(Exception):
    """A request the container refuses on purpose: a 4XX the caller can tell from a 5XX.

    ``status`` is the HTTP status to answer with (413: the input is too long, for good or for now);
    ``reason`` is ``"too_long"`` (over MAX_SEQ_LEN, always refused) or ``"degraded"`` (over the
    degraded length while the endpoint is critical: retry later or send less).
    """

    def __init__(self, message, status=413, reason="too_long"):
        super().__init__(message)
        self.status = status
        self.reason = reason

    def body(self):
        return {"error": str(self), "reason": self.reason, "status": self.status}


class LengthTiers:
    """Sequence and batch caps by degrade level.

    - level 0: sequences up to ``max_len`` as they are; longer ones rejected (incident A: > 1024);
    - level 1: sequences longer than ``degraded_len`` truncated to their newest ``degraded_len`` events;
    - level 2: sequences longer than ``degraded_len`` rejected (413, reason "degraded").

    Batches: the full batch at level 0, half at level 1, a quarter at level 2 (never below 1).
    ``max_len`` and ``degraded_len`` default to the ``MAX_SEQ_LEN`` / ``DEGRADED_MAX_SEQ_LEN``
    environment the construct's example writes (1024 / 512).
    """

    def __init__(self, max_len=None, degraded_len=None):
        self.max_len = int(max_len if max_len is not None else os.environ.get("MAX_SEQ_LEN", "1024"))
        self.degraded_len = int(degraded_len if degraded_len is not None else os.environ.get("DEGRADED_MAX_SEQ_LEN", "512"))
        if self.max_len < 1 or self.degraded_len < 1:
            raise ValueError("MAX_SEQ_LEN and DEGRADED_MAX_SEQ_LEN must be positive")
        if self.degraded_len > self.max_len:
            raise ValueError("DEGRADED_MAX_SEQ_LEN (%d) must not exceed MAX_SEQ_LEN (%d)" % (self.degraded_len, self.max_len))

    def apply(self, sequence, level):
        """The sequence to run at this level, or :class:`RequestRejected`."""
        n = len(sequence)
        if n > self.max_len:
            raise RequestRejected("input of %d events is longer than the %d accepted" % (n, self.max_len), reason="too_long")
        if n > self.degraded_len and level >= 2:
            raise RequestRejected("input of %d events is longer than the %d accepted while the endpoint is degraded; retry later or send fewer"
                                  % (n, self.degraded_len), reason="degraded")
        if n > self.degraded_len and level >= 1:
            return sequence[-self.degraded_len:]
        return sequence

    @staticmethod
    def batch_cap(batch_size, level):
        """The largest batch to run at this level."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        return max(1, batch_size // (1, 2, 4)[min(max(level, 0), 2)])
