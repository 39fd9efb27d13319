"""K-Means clustering behind a ResilientEndpoint, for AWS's scikit-learn inference image (incident B).

The scikit-learn image (aws/sagemaker-scikit-learn-container, served by sagemaker-containers' gunicorn)
imports this module from SAGEMAKER_SUBMIT_DIRECTORY (/opt/ml/model/code) as SAGEMAKER_PROGRAM and calls
model_fn / input_fn / predict_fn / output_fn. Its transformer answers 415 only for an
``UnsupportedFormatError`` raised by input_fn; any other exception is a 500 (sagemaker-containers
``_transformer.py``). So every deliberate refusal here is a :class:`Rejection` value that output_fn turns
into a ``worker.Response`` with its status and a JSON body: malformed JSON or rows → 400, a wrong content
type → 415, too many rows at level 2 or no memory left → 413.

Incident B's preprocessing, both ways (``PREPROCESSING``):
- ``standard`` (the fix, default): scikit-learn's ``StandardScaler`` fitted once on the training data at
  load — O(1) state, one float64 copy of the request;
- ``robust-per-request`` (incident B as it was): a ``RobustScaler`` fitted on each request's rows (its
  quantiles need the whole request, sorted) plus per-request copies — memory grows with the rows.
``python3 -m resilient_endpoint_runtime.profile`` shows the two curves.

A request is bounded (MAX_SEQ_LEN rows); at degrade level 1 only the first DEGRADED_MAX_SEQ_LEN rows (or as
many as fit in the container's memory budget) are clustered, and the answer says so — ``clusters[i]`` is
always row ``i``'s cluster; at level 2 larger requests are refused. The fallback variant
(``DEGRADED_MODE=true``) assigns in float32 chunks of 256 rows: lighter.

Request:  {"instances": [[x, y], ...]} (application/json) or rows of "x,y" (text/csv)
Response: {"clusters": [0, 2, ...], "rows": n, "truncated": n, "degradeLevel": n}
"""
import csv
import io
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the runtime helper ships beside this file

from resilient_endpoint_runtime import (  # noqa: E402
    LengthTiers,
    MemoryGuard,
    Rejection,
    RequestRejected,
    StageMemoryPublisher,
    process_memory_percent,
)

TIERS = LengthTiers(max_len=os.environ.get("MAX_SEQ_LEN", "200000"), degraded_len=os.environ.get("DEGRADED_MAX_SEQ_LEN", "20000"))
PREPROCESSING = os.environ.get("PREPROCESSING", "standard")
DEGRADED_MODE = os.environ.get("DEGRADED_MODE", "false").lower() == "true"
PROFILE_SIZE_UNIT = "rows"
# How the drift monitor reads a captured request's rows back (the profile records them): a JSON body's instances, a CSV body's rows.
PROFILE_SIZE_SELECTOR = "$.instances.length()"
PROFILE_CSV_SIZE_SELECTOR = "$.length()"
_state = {}


def _stage(stage):
    try:
        if "metrics" not in _state:
            _state["metrics"] = StageMemoryPublisher()
        _state["metrics"].record(stage, process_memory_percent())
    except Exception:  # noqa: BLE001 - metrics never fail a request
        pass


def model_fn(model_dir):
    """The centroids (in standardized space) and the scaler fitted on the training data, from model.json."""
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    with open(os.path.join(model_dir, "model.json")) as f:
        model = json.load(f)
    if not model.get("centroids"):
        raise ValueError("model.json has no centroids")
    scaler = StandardScaler()
    scaler.fit(np.asarray(model["scaling"]["sample"], dtype=np.float64))  # O(features) state, once
    guard = MemoryGuard.from_environment(model_dir=model_dir)
    if guard.active:
        guard.limit_process()
    _state["guard"] = guard
    return {"centroids": np.asarray(model["centroids"], dtype=np.float64), "scaler": scaler, "features": len(model["features"])}


JSON, CSV = "application/json", "text/csv"


class Request:
    """A request as ``input_fn`` leaves it: the body not parsed yet, its rows counted with one scan of the
    bytes, so that the guard admits the parsing too (a 200,000-row JSON body takes ~50 MiB of Python objects
    to parse — more than the clustering itself) and truncates before it, not after."""

    def __init__(self, body, content_type, rows):
        self.body, self.content_type, self.rows = body, content_type, rows


# A blank line of CSV (nothing but the ASCII whitespace ``bytes.strip`` removes): the first line, and each one after a
# newline (the look-ahead leaves that line's own newline to the next match).
_FIRST_LINE_BLANK = re.compile(rb"[ \t\r\x0b\x0c]*(?:\n|\Z)")
_BLANK_LINE_AFTER = re.compile(rb"\n[ \t\r\x0b\x0c]*(?=\n|\Z)")


def count_rows(body, content_type):
    """Rows of a body without parsing it: the inner lists of ``{"instances": [[x, y], ...]}``, or the non-blank lines of
    CSV — counted in the bytes, no line copied (splitting a 200,000-row body into lines took ~10 MiB the guard had not
    admitted yet, and twice the time)."""
    if content_type == JSON:
        return body.count(b"[") - 1
    blank = (1 if _FIRST_LINE_BLANK.match(body) else 0) + sum(1 for _ in _BLANK_LINE_AFTER.finditer(body))
    return body.count(b"\n") + 1 - blank


def _json_prefix(body, limit):
    """The JSON text of the first ``limit`` rows only (the closing bracket of row ``limit``, then the array's)."""
    pos = body.find(b"[")
    for _ in range(limit):
        pos = body.find(b"]", pos + 1)
        if pos < 0:
            return body
    return body[:pos + 1] + b"]}"


def parse_rows(body, content_type, limit=None):
    """Pure: the rows of a request (the first ``limit`` when given), or a Rejection (415 wrong content type, 400 malformed)."""
    content_type = (content_type or JSON).split(";")[0].strip().lower()
    try:
        if isinstance(body, str):
            body = body.encode("utf-8")
        if content_type == JSON:
            try:
                rows = json.loads(_json_prefix(body, limit) if limit is not None else body)["instances"]
            except ValueError:
                if limit is None:
                    raise
                rows = json.loads(body)["instances"]  # not the plain shape: the whole body, then the first rows
        elif content_type == CSV:
            lines = [line for line in body.decode("utf-8").split("\n") if line.strip()]
            rows = list(csv.reader(lines[:limit] if limit is not None else lines))
        else:
            return Rejection(415, "content_type", "send application/json or text/csv, got %s" % content_type)
        rows = [[float(v) for v in r] for r in (rows[:limit] if limit is not None else rows)]
    except MemoryError:
        return Rejection(413, "memory", "no memory left to read the request: retry later or send less")
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as e:
        return Rejection(400, "malformed", "the body is not {\"instances\": [[x, y], ...]} or rows of x,y: %s" % e)
    if not rows or any(len(r) != 2 for r in rows):
        return Rejection(400, "malformed", "every row needs 2 features (x, y), and at least one row")
    return rows


def input_fn(body, content_type):
    """The request, counted but not parsed (415 for a content type it does not read, 400 for no rows)."""
    content_type = (content_type or JSON).split(";")[0].strip().lower()
    if content_type not in (JSON, CSV):
        return Rejection(415, "content_type", "send application/json or text/csv, got %s" % content_type)
    if isinstance(body, str):
        body = body.encode("utf-8")
    rows = count_rows(body, content_type)
    if rows < 1:
        return Rejection(400, "malformed", "the body is not {\"instances\": [[x, y], ...]} or rows of x,y, with at least one row")
    _stage("preprocess")
    return Request(body, content_type, rows)


def assign(rows, model):
    """Index of the nearest centroid for each row, after the configured preprocessing."""
    import numpy as np
    from sklearn.metrics import pairwise_distances_argmin

    if PREPROCESSING == "robust-per-request":
        # Incident B as it was: a scaler fitted on every request (quantiles over all its rows) and copies.
        from sklearn.preprocessing import RobustScaler
        X = np.array(rows, dtype=np.float64)
        copies = [X.copy() for _ in range(3)]  # the per-request copies of the original pipeline
        scaled = RobustScaler().fit(np.vstack(copies)).transform(X)
        del copies
    else:
        scaled = model["scaler"].transform(np.asarray(rows, dtype=np.float64))
    if DEGRADED_MODE:
        centroids = model["centroids"].astype(np.float32)
        return [int(i) for start in range(0, len(scaled), 256) for i in pairwise_distances_argmin(scaled[start:start + 256].astype(np.float32), centroids)]
    return [int(i) for i in pairwise_distances_argmin(scaled, model["centroids"])]


def predict(rows, model, level, guard=None):
    """The answer for these rows (parsed, or a :class:`Request` parsed here under the admission) at this level:
    the first rows that the tiers and the memory budget allow; a Rejection when the body is malformed."""
    total = rows.rows if isinstance(rows, Request) else len(rows)
    TIERS.apply(range(total), level)  # RequestRejected over MAX_SEQ_LEN, or over DEGRADED_MAX_SEQ_LEN at level 2
    keep = min(total, TIERS.degraded_len) if level >= 1 else total  # the first rows, so clusters[i] stays row i's
    guard = guard or _state.get("guard") or MemoryGuard(None, None, published=None)
    with guard.admit(keep) as a:  # the parsing, the scaling and the assignment of the rows kept
        if isinstance(rows, Request):
            parsed = parse_rows(rows.body, rows.content_type, limit=a.size if a.size < total else None)
            if isinstance(parsed, Rejection):
                return parsed
            kept = parsed[: a.size]
            if a.size >= total:
                total = len(parsed)
        else:
            kept = rows[: a.size]  # as many as fit in the container's memory budget, still the first ones
        clusters = assign(kept, model)
    return {"clusters": clusters, "rows": len(kept), "truncated": total - len(kept), "degradeLevel": max(level, a.level)}


def predict_fn(rows, model):
    if isinstance(rows, Rejection):
        return rows
    guard = _state.get("guard") or MemoryGuard.from_environment()
    try:
        result = predict(rows, model, guard.level(), guard)
    except RequestRejected as e:
        return Rejection.of(e)
    if not isinstance(result, Rejection):
        _stage("inference")
    return result


def output_fn(prediction, accept):
    if isinstance(prediction, Rejection):
        from sagemaker_containers.beta.framework import worker  # only inside the container
        return prediction.response(worker.Response)  # the status, a JSON body; counted for the guard's metrics
    _stage("postprocess")
    return json.dumps(prediction), "application/json"


# -- the profiler's hooks (python3 -m resilient_endpoint_runtime.profile) ---------------------------------

def profile_request(size):
    """A request of ``size`` rows around the three clusters."""
    rng = random.Random(size)
    centers = ((2, 2), (5, 8), (8, 3))
    rows = [[round(c[0] + rng.gauss(0, 0.7), 3), round(c[1] + rng.gauss(0, 0.7), 3)] for c in (centers[i % 3] for i in range(int(size)))]
    return json.dumps({"instances": rows}), "application/json"


def request_size(data):
    if isinstance(data, Rejection):
        return 0
    return data.rows if isinstance(data, Request) else len(data)
