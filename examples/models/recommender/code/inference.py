"""Multi-task Transformer recommender behind a ResilientEndpoint, for AWS's PyTorch inference image.

The PyTorch image runs TorchServe through the SageMaker PyTorch inference toolkit, which loads
code/inference.py from model.tar.gz and calls model_fn / input_fn / predict_fn / output_fn. An
`sagemaker_inference.errors.GenericInferenceToolkitError(status, message)` raised from a handler
is answered with that status (aws/sagemaker-inference-toolkit `transformer.py`).

The model is small and generated at load time with a fixed seed (this example ships no weights);
the code path is the real one: load, apply incident A's length tiers and the breaker's degrade
level, predict the CTR / CVR / dwell-time heads (the secondary heads off when degraded).

Request:  {"events": [item ids, newest last], "profile": [20 floats]}
Response: {"ctr": p, "cvr": p | null, "dwell": s | null, "degradeLevel": n, "truncated": n}
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the runtime helper ships beside this file

from resilient_endpoint_runtime import LengthTiers, RequestRejected, degrade_level  # noqa: E402

TIERS = LengthTiers()  # MAX_SEQ_LEN / DEGRADED_MAX_SEQ_LEN from the environment (1024 / 512)
PROFILE_DIM = 20
VOCAB = 50000


def parse_request(body, content_type="application/json"):
    """Pure: the events and profile of a request (ValueError on a malformed one)."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8")
    if (content_type or "application/json").split(";")[0].strip().lower() != "application/json":
        raise ValueError("send application/json")
    o = json.loads(body)
    events = [int(e) % VOCAB for e in o.get("events", [])]
    profile = [float(x) for x in o.get("profile", [0.0] * PROFILE_DIM)]
    if not events:
        raise ValueError("'events' must hold at least one item id")
    if len(profile) != PROFILE_DIM:
        raise ValueError("'profile' must hold %d numbers" % PROFILE_DIM)
    return events, profile


def plan(events, level):
    """Pure: which events to run and which heads to compute at this degrade level."""
    kept = TIERS.apply(events, level)  # RequestRejected over the limits
    heads = ("ctr", "cvr", "dwell") if level == 0 else ("ctr",)  # incident A: secondary heads off when degraded
    return kept, heads


def model_fn(model_dir):
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

    device = "cuda" if torch.cuda.is_available() else "cpu"
    return Recommender().to(device).eval()


def input_fn(body, content_type):
    return parse_request(body, content_type)


def predict_fn(data, model):
    import torch
    events, profile = data
    level = degrade_level()
    try:
        kept, heads = plan(events, level)
    except RequestRejected as e:
        from sagemaker_inference import errors  # only inside the container
        raise errors.GenericInferenceToolkitError(e.status, json.dumps(e.body()))
    device = next(model.parameters()).device
    with torch.no_grad():
        out = model(torch.tensor([kept], device=device), torch.tensor([profile], device=device), heads)
    result = {"ctr": torch.sigmoid(out["ctr"]).item(), "cvr": None, "dwell": None, "degradeLevel": level, "truncated": len(events) - len(kept)}
    if "cvr" in out:
        result["cvr"] = torch.sigmoid(out["cvr"]).item()
        result["dwell"] = torch.nn.functional.softplus(out["dwell"]).item()
    return result


def output_fn(prediction, accept):
    return json.dumps(prediction)
