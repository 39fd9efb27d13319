"""Multi-task Transformer recommender behind a ResilientEndpoint, for AWS's PyTorch inference image.

The PyTorch image runs TorchServe through the SageMaker PyTorch inference toolkit, which loads
code/inference.py from model.tar.gz and calls model_fn / input_fn / predict_fn / output_fn; a function
that takes one more argument than the toolkit passes gets the request's ``context``
(aws/sagemaker-inference-toolkit ``transformer.py``, ``_run_handler_function``), whose
``set_response_status`` is how a handler answers with its own status. A raised exception would be
answered 500 with a traceback, so every deliberate refusal here is a :class:`Rejection` value carried to
``output_fn``: malformed JSON → 400, a wrong content type → 415, too long (incident A's tiers: over
``MAX_SEQ_LEN`` always, over ``DEGRADED_MAX_SEQ_LEN`` at level 2) or no memory left → 413, each a JSON
body. The client sees SageMaker's ``ModelError`` 424 with ``OriginalStatusCode`` 413 (400, 415).

Memory: the :class:`MemoryGuard` admits each request against the container's budget (all workers of the
instance together) with the curve the profiler measured (``memory-profile.json``), a batch as a batch:
truncated to what fits at a degrade level ≥ 1, refused otherwise; the level is the higher of the breaker's
and the container's own. The model is small and generated at load time with a fixed seed (no weights are
shipped); attention makes its memory grow with the square of the sequence length, as incident A's did.

Placement: ``model_fn(model_dir, context)`` — the toolkit passes the context only to a function that takes
it, and only the context says which GPU this worker owns (``system_properties["gpu_id"]``); without it every
worker of a multi-GPU instance would load on GPU 0 (real-account.md item 40).

Request:  {"events": [item ids, newest last], "profile": [20 floats]}
          or a batch: {"instances": [{"events": [...], "profile": [...]}, ...]} (padded to its longest)
Response: {"ctr": p, "cvr": p | null, "dwell": s | null, "degradeLevel": n, "truncated": n}
          or for a batch {"predictions": [{"ctr": ..., "cvr": ..., "dwell": ..., "truncated": n}, ...], "degradeLevel": n}
"""
import json
import os
import random
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

TIERS = LengthTiers()  # MAX_SEQ_LEN / DEGRADED_MAX_SEQ_LEN from the environment (incident A: 1024 / 512)
PROFILE_DIM = 20
VOCAB = 50000
DEGRADED_MODE = os.environ.get("DEGRADED_MODE", "false").lower() == "true"  # the fallback variant: lighter
PROFILE_SIZE_UNIT = "events"  # what the profiler's sizes count
PROFILE_SIZE_SELECTOR = "$.events.length()"  # how the drift monitor reads them from a captured body (the profile records it)
_state = {}


def _stage(stage):
    """Per-stage memory of this worker (its RSS against its budget), batched by the publisher."""
    try:
        if "metrics" not in _state:
            _state["metrics"] = StageMemoryPublisher()
        _state["metrics"].record(stage, process_memory_percent())
    except Exception:  # noqa: BLE001 - metrics never fail a request
        pass


MAX_BATCH = 64


def _one(o):
    events = [int(e) % VOCAB for e in o.get("events", [])]
    profile = [float(x) for x in o.get("profile", [0.0] * PROFILE_DIM)]
    if not events:
        raise ValueError("'events' must hold at least one item id")
    if len(profile) != PROFILE_DIM:
        raise ValueError("'profile' must hold %d numbers" % PROFILE_DIM)
    return events, profile


def parse_request(body, content_type="application/json"):
    """Pure: (events, profile) of a request, a list of them for a batch (``instances``), or a Rejection
    (415 wrong content type, 400 malformed, 413 no memory to parse it)."""
    if (content_type or "application/json").split(";")[0].strip().lower() != "application/json":
        return Rejection(415, "content_type", "send application/json, got %s" % content_type)
    try:
        if isinstance(body, (bytes, bytearray)):
            body = body.decode("utf-8")
        o = json.loads(body)
        if isinstance(o, dict) and "instances" in o:
            batch = [_one(x) for x in o["instances"]]
            if not 1 <= len(batch) <= MAX_BATCH:
                raise ValueError("'instances' must hold 1 to %d requests" % MAX_BATCH)
            return batch
        return _one(o)
    except MemoryError:
        return Rejection(413, "memory", "no memory left to read the request: retry later or send less")
    except (ValueError, TypeError, AttributeError) as e:
        return Rejection(400, "malformed", "the body is not {\"events\": [ids], \"profile\": [%d numbers]} (or {\"instances\": [...]} of them): %s" % (PROFILE_DIM, e))


def plan(events, level):
    """Pure: which events to run and which heads to compute at this degrade level (RequestRejected over the tiers)."""
    kept = TIERS.apply(events, level)
    heads = ("ctr", "cvr", "dwell") if level == 0 and not DEGRADED_MODE else ("ctr",)  # secondary heads off when degraded
    return kept, heads


def model_fn(model_dir, context=None):
    import torch  # in the PyTorch image
    torch.manual_seed(0)

    class Recommender(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(VOCAB, 64)
            layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
            self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2)
            self.profile = torch.nn.Linear(PROFILE_DIM, 64)
            self.heads = torch.nn.ModuleDict({h: torch.nn.Linear(64, 1) for h in ("ctr", "cvr", "dwell")})

        def forward(self, events, profile, heads):
            h = self.encoder(self.embed(events)).mean(dim=1) + self.profile(profile)
            return {name: self.heads[name](h).squeeze(-1) for name in heads}

    # This worker's own GPU (the toolkit's context), not GPU 0 for every worker of a multi-GPU instance.
    gpu_id = (getattr(context, "system_properties", None) or {}).get("gpu_id") or 0
    device = torch.device("cuda:%d" % int(gpu_id)) if torch.cuda.is_available() else torch.device("cpu")
    model = Recommender().to(device).eval()
    guard = MemoryGuard.from_environment(model_dir=model_dir, context=context)
    if guard.active:
        guard.limit_process()  # the last resort: armed once this worker has run a request
    _state["guard"] = guard
    return model


def input_fn(body, content_type, context=None):
    data = parse_request(body, content_type)
    _stage("preprocess")
    return data


def predict_fn(data, model, context=None):
    if isinstance(data, Rejection):
        return data
    import torch
    guard = _state.get("guard") or MemoryGuard.from_environment()
    level = guard.level()  # the breaker's level, or the container's own pressure if higher
    batch = data if isinstance(data, list) else [data]
    try:
        planned = [plan(events, level) for events, _ in batch]
        heads = planned[0][1]
        longest = max(len(kept) for kept, _ in planned)
        with guard.admit(longest, batch=len(batch)) as a:  # a batch is estimated as a batch, padded to its longest
            kept = [k[-a.size:] for k, _ in planned]  # the newest events that fit in the container's budget
            width = max(len(k) for k in kept)
            device = next(model.parameters()).device
            events = torch.tensor([[0] * (width - len(k)) + k for k in kept], device=device)
            profiles = torch.tensor([p for _, p in batch], device=device)
            with torch.no_grad():
                out = model(events, profiles, heads)
            level = max(level, a.level)
            rows = []
            for i, (ev, _) in enumerate(batch):
                row = {"ctr": torch.sigmoid(out["ctr"][i]).item(), "cvr": None, "dwell": None, "truncated": len(ev) - len(kept[i])}
                if "cvr" in out:
                    row["cvr"] = torch.sigmoid(out["cvr"][i]).item()
                    row["dwell"] = torch.nn.functional.softplus(out["dwell"][i]).item()
                rows.append(row)
    except RequestRejected as e:
        return Rejection.of(e)
    _stage("inference")
    if isinstance(data, list):
        return {"predictions": rows, "degradeLevel": level}
    return dict(rows[0], degradeLevel=level)


def output_fn(prediction, accept, context=None):
    if isinstance(prediction, Rejection):
        return prediction.answer(context)  # the status on TorchServe's context, a JSON body
    _stage("postprocess")
    return json.dumps(prediction), "application/json"


# -- the profiler's hooks (python3 -m resilient_endpoint_runtime.profile) ---------------------------------

def profile_request(size):
    """A request of ``size`` events (random item ids, a fixed profile)."""
    rng = random.Random(size)
    return json.dumps({"events": [rng.randrange(VOCAB) for _ in range(int(size))], "profile": [0.1] * PROFILE_DIM}), "application/json"


def request_size(data):
    if isinstance(data, Rejection):
        return 0
    return max(len(e) for e, _ in data) if isinstance(data, list) else len(data[0])
