"""K-Means clustering behind a ResilientEndpoint, for AWS's scikit-learn inference image.

The scikit-learn image (aws/sagemaker-scikit-learn-container, served by sagemaker-containers)
imports this module from SAGEMAKER_SUBMIT_DIRECTORY (/opt/ml/model/code, inside model.tar.gz) as
SAGEMAKER_PROGRAM, and calls model_fn / input_fn / predict_fn / output_fn. A `worker.Response`
returned from predict_fn passes through output_fn, which is how a handler answers with its own
status (the image's documented pattern for unsupported content types).

Request:  {"instances": [[x, y], ...]} (application/json) or rows of "x,y" (text/csv)
Response: {"clusters": [0, 2, ...], "degradeLevel": 0, "truncated": 0}
Incident B's rule: a request's size is bounded (MAX_SEQ_LEN rows), and the degrade level cuts it
(DEGRADED_MAX_SEQ_LEN rows at level 1, longer requests rejected at level 2) with a 413 the caller
can tell from a 5XX.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the runtime helper ships beside this file

from resilient_endpoint_runtime import LengthTiers, RequestRejected, StageMemoryPublisher, degrade_level, host_memory_percent  # noqa: E402

TIERS = LengthTiers(max_len=os.environ.get("MAX_SEQ_LEN", "3000"), degraded_len=os.environ.get("DEGRADED_MAX_SEQ_LEN", "512"))
_publisher = None


def _stage(stage):
    global _publisher
    try:
        if _publisher is None:
            _publisher = StageMemoryPublisher()
        _publisher.record(stage, host_memory_percent())
    except Exception:  # noqa: BLE001 - metrics never fail a request
        pass


def model_fn(model_dir):
    with open(os.path.join(model_dir, "model.json")) as f:
        model = json.load(f)
    if not model.get("centroids"):
        raise ValueError("model.json has no centroids")
    return model


def input_fn(body, content_type):
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8")
    content_type = (content_type or "application/json").split(";")[0].strip().lower()
    if content_type == "application/json":
        rows = json.loads(body)["instances"]
    elif content_type == "text/csv":
        rows = [[float(v) for v in line.split(",")] for line in body.splitlines() if line.strip()]
    else:
        raise ValueError("unsupported content type %s: use application/json or text/csv" % content_type)
    _stage("preprocess")
    return rows


def assign(rows, centroids):
    """Index of the nearest centroid for each row (squared Euclidean distance)."""
    out = []
    for row in rows:
        best, best_d = 0, float("inf")
        for i, c in enumerate(centroids):
            d = sum((a - b) ** 2 for a, b in zip(row, c))
            if d < best_d:
                best, best_d = i, d
        out.append(best)
    return out


def predict(rows, model, level):
    """Pure: the response for these rows at this degrade level (raises RequestRejected)."""
    kept = TIERS.apply(rows, level)
    return {"clusters": assign(kept, model["centroids"]), "degradeLevel": level, "truncated": len(rows) - len(kept)}


def predict_fn(rows, model):
    level = degrade_level()
    try:
        result = predict(rows, model, level)
    except RequestRejected as e:
        from sagemaker_containers.beta.framework import worker  # only inside the container
        return worker.Response(response=json.dumps(e.body()), status=e.status, mimetype="application/json")
    _stage("inference")
    return result


def output_fn(prediction, accept):
    if not isinstance(prediction, dict):  # a worker.Response from predict_fn
        return prediction
    return json.dumps(prediction), "application/json"
