"""Incident A's input tiers, driven by the degrade level."""
import json
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
        if os.environ.get("RESILIENT_ENDPOINT_PROFILING") == "1":
            # The profiler measures the model over the whole request distribution: no caps while it runs.
            self.max_len = self.degraded_len = 1 << 40
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


class Rejection:
    """A 4XX answer the model code decided on (bad input, too long, degraded, no memory), carried from
    ``input_fn`` / ``predict_fn`` to ``output_fn`` as a value, so that the answer is the status and a JSON
    body — not the toolkit's 500 with a traceback. Build it from a :class:`RequestRejected` or directly.

    The client sees it as SageMaker's ``ModelError`` (HTTP 424) with ``OriginalStatusCode`` = ``status``
    and ``OriginalMessage`` = the JSON body.
    """

    def __init__(self, status, reason, message):
        if not 400 <= status < 500:
            raise ValueError("a rejection is a 4XX, got %r" % status)
        self.status = status
        self.reason = reason
        self.message = message

    @classmethod
    def of(cls, e):
        return cls(e.status, e.reason, str(e))

    def body(self):
        return json.dumps({"error": self.message, "reason": self.reason, "status": self.status})

    def phrase(self):
        return {400: "Bad Request", 413: "Payload Too Large", 415: "Unsupported Media Type"}.get(self.status, "Rejected")

    def answer(self, context=None):
        """For the SageMaker inference toolkit (TorchServe, MMS): sets the status on the request's context
        (``context.set_response_status``, the toolkit's own mechanism) and returns ``(body, content type)``.
        Counted in the guard's ``DeliberateClientErrors`` (and ``GuardMemoryRefusals`` for memory)."""
        self.count()
        if context is not None:
            context.set_response_status(code=self.status, phrase=self.phrase())
        return self.body(), "application/json"

    def response(self, response_class):
        """For the scikit-learn image (sagemaker-containers): ``response_class`` is its ``worker.Response``;
        returns it with the status and the JSON body. Counted like :meth:`answer`."""
        self.count()
        return response_class(response=self.body(), status=self.status, mimetype="application/json")

    def count(self):
        """Counts this answer for the guard's metrics (the instance's ledger; nothing without one)."""
        from .guard import count_answer
        count_answer(self.status, self.reason)
