"""Requests drawn from an example's own memory profile, encoded by its own inference code, for
test/drift-like-with-like.test.ts.

The sizes come from the runtime helper's profiler (``sample_sizes``: the sampler the profile was measured
with, ``powerlaw:LO:HI`` from the profile's ``distribution``); each body is written by the example's own
encoder, ``profile_request`` (for the clustering example, the first rows of one large request of it, as
JSON or, every other one, as the CSV lines its ``input_fn`` also reads); and each is read back with the
example's own code (``request_size(parse_request(...))``; ``count_rows(...)``, what its ``input_fn``
computes, and for a sample ``parse_rows``, what its ``predict`` parses), so a body the inference code would
measure differently fails the test.

    python3 drift_requests.py EXAMPLE WINDOW [WINDOW ...]
    WINDOW: OUT_DIR:COUNT:SEED[,SEED...][:LONGER:PAD]

writes, for each window, OUT_DIR/<seed>.jsonl: one line per request, {"body", "contentType", "size",
"readSize"} (one process for every window: the example's code is loaded and its rows drawn once).
LONGER F makes every request (1 + F) times longer (the profiler's mobile_extra with a share of 100 %); PAD F
adds F times each body's bytes as trailing whitespace (the same request, uncompressed: incident A's mobile
clients sent ~15 % larger payloads).
"""
import argparse
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))

from resilient_endpoint_runtime.profile import sample_sizes  # noqa: E402


def load(example):
    code = os.path.join(ROOT, "examples", "models", example, "code", "inference.py")
    spec = importlib.util.spec_from_file_location("%s_inference" % example, code)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Prefixes:
    """Bodies of any size up to ``largest`` as the example's own ``profile_request`` writes them, cheaply:
    the clustering example's encoder draws every row one by one (~2.5 s for a thousand requests of its
    distribution), so its rows are drawn once, by ``profile_request(largest)``, and a request of n rows is
    the first n of them, joined as ``json.dumps`` joins them (or as CSV lines). Sizes and encodings are the
    example's; only the row values repeat between requests, which no feature compared here reads."""

    def __init__(self, module, largest):
        rows = json.loads(module.profile_request(largest)[0])["instances"]
        # Each row as json.dumps writes it (a float's repr), without a json.dumps call per row; checked on a sample.
        self.json = ["[%r, %r]" % (x, y) for x, y in rows]
        for i in range(0, len(rows), max(1, len(rows) // 100)):
            if self.json[i] != json.dumps(rows[i]):
                raise SystemExit("row %d: %s is not json.dumps's %s" % (i, self.json[i], json.dumps(rows[i])))
        self.csv = ["%s,%s" % (x, y) for x, y in rows]

    def body(self, size, content_type):
        if content_type == "text/csv":
            return "\n".join(self.csv[:size])
        return '{"instances": [' + ", ".join(self.json[:size]) + "]}"


def read_size(example, module, body, content_type):
    """The request's size as the example's input_fn reads it."""
    if example == "recommender":
        return module.request_size(module.parse_request(body, content_type))
    return module.count_rows(body.encode("utf-8"), content_type)


def window(spec):
    """OUT_DIR:COUNT:SEEDS[:LONGER:PAD] as (out, count, seeds, longer, pad)."""
    parts = spec.rsplit(":", 4) if spec.count(":") >= 4 else spec.rsplit(":", 2)
    if len(parts) not in (3, 5):
        raise argparse.ArgumentTypeError("a window is OUT_DIR:COUNT:SEED[,SEED...][:LONGER:PAD], got %r" % spec)
    longer, pad = (float(parts[3]), float(parts[4])) if len(parts) == 5 else (0.0, 0.0)
    return parts[0], int(parts[1]), [int(x) for x in parts[2].split(",")], longer, pad


def main():
    p = argparse.ArgumentParser()
    p.add_argument("example", choices=["recommender", "clustering"])
    p.add_argument("windows", nargs="+", type=window)
    a = p.parse_args()
    module = load(a.example)
    with open(os.path.join(ROOT, "examples", "models", a.example, "memory-profile.json")) as f:
        distribution = json.load(f)["distribution"]
    cache = {}
    hi = float(distribution.split(":")[2])
    drawn = {}  # the clustering example's rows, by the largest request a window can have
    for out_dir, count, seeds, longer, pad in a.windows:
        largest = int(round(hi * (1 + longer)))
        if a.example == "clustering" and largest not in drawn:
            drawn[largest] = Prefixes(module, largest)
        prefixes = drawn.get(largest)
        for seed in seeds:
            sizes = sample_sizes(distribution, count, mobile_extra=longer, mobile_share=1.0 if longer else 0.0, seed=seed)
            with open(os.path.join(out_dir, "%d.jsonl" % seed), "w") as out:
                for i, size in enumerate(sizes):
                    if prefixes:
                        content_type = "text/csv" if i % 2 == 1 else "application/json"
                        body = prefixes.body(size, content_type)
                    else:
                        if size not in cache:
                            cache[size] = module.profile_request(size)
                        body, content_type = cache[size]
                    if pad:
                        extra = round(len(body.encode("utf-8")) * pad)
                        body += ("\n" if content_type == "text/csv" else "") + " " * extra
                    if a.example == "clustering" and i % 50 == 0 and size <= 20000:
                        rows = module.parse_rows(body, content_type)  # the whole body, as predict() parses it
                        if not isinstance(rows, list) or len(rows) != size or any(len(r) != 2 for r in rows):
                            raise SystemExit("the clustering code does not read %d rows from request %d of seed %d" % (size, i, seed))
                    out.write(json.dumps({"body": body, "contentType": content_type, "size": size, "readSize": read_size(a.example, module, body, content_type)}))
                    out.write("\n")


if __name__ == "__main__":
    main()
