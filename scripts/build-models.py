#!/usr/bin/env python3
"""Builds the example models as SageMaker model artifacts (standard library only, reproducible).

dist/models/clustering/model.tar.gz: K-Means centroids fitted here on the data set the repo ships
(examples/models/clustering/data/points.csv), standardized (zero mean, unit variance per feature: the
inference code fits scikit-learn's StandardScaler on the same sample at load, so it reproduces the
scaling exactly), as model.json at the archive's root (the scikit-learn
image extracts model.tar.gz into /opt/ml/model and passes that directory to model_fn), and the
inference code under code/ with the runtime helper beside it (SAGEMAKER_SUBMIT_DIRECTORY
/opt/ml/model/code, SAGEMAKER_PROGRAM inference.py, as the SageMaker Python SDK packs code for
network-isolated models).

dist/models/recommender/model.tar.gz: code/inference.py and the runtime helper (the PyTorch
inference toolkit loads code/inference.py from model.tar.gz); the weights are generated at load time.

Archives are byte-for-byte reproducible (sorted members, zero mtimes and owners), so the CDK asset
hash only changes when the content does.
"""
import csv
import gzip
import io
import json
import os
import random
import sys
import tarfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RUNTIME = os.path.join(ROOT, "runtime", "python", "resilient_endpoint_runtime")
K = 3


def kmeans(points, k, seed=0, iterations=100):
    """Lloyd's algorithm with k-means++ seeding (fixed seed): the centroids."""
    rng = random.Random(seed)
    centroids = [rng.choice(points)]
    while len(centroids) < k:
        d2 = [min(sum((a - b) ** 2 for a, b in zip(p, c)) for c in centroids) for p in points]
        r, acc = rng.random() * sum(d2), 0.0
        for p, d in zip(points, d2):
            acc += d
            if acc >= r:
                centroids.append(p)
                break
    for _ in range(iterations):
        groups = [[] for _ in range(k)]
        for p in points:
            i = min(range(k), key=lambda j: sum((a - b) ** 2 for a, b in zip(p, centroids[j])))
            groups[i].append(p)
        moved = [tuple(sum(x) / len(g) for x in zip(*g)) if g else centroids[i] for i, g in enumerate(groups)]
        if moved == centroids:
            break
        centroids = moved
    return sorted([round(x, 4) for x in c] for c in centroids)


def pack(out, files):
    """A reproducible model.tar.gz from {archive path: bytes}."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            data = files[name]
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = len(data), 0, 0o644, 0, 0, "", ""
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    write_whole(out, packed.getvalue())


def write_whole(path, data):
    """Writes a file so that a reader (a synth or a test running meanwhile) sees the old bytes or the new, never a part."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    part = path + ".part-%d" % os.getpid()
    try:
        with open(part, "wb") as f:
            f.write(data)
        os.replace(part, path)
    finally:
        if os.path.exists(part):
            os.remove(part)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def runtime_files():
    return {"code/resilient_endpoint_runtime/" + n: read(os.path.join(RUNTIME, n)) for n in sorted(os.listdir(RUNTIME)) if n.endswith(".py")}


def main(argv):
    # Where the archives go: dist/models (what the example stacks upload), or the folder given by --out.
    models = os.path.join(ROOT, "dist", "models")
    if argv[:1] == ["--out"] and len(argv) == 2:
        models = os.path.abspath(argv[1])
    elif argv:
        sys.stderr.write("usage: build-models.py [--out FOLDER]  (default: dist/models)\n")
        return 2
    with open(os.path.join(ROOT, "examples", "models", "clustering", "data", "points.csv")) as f:
        points = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(f)]
    # Standardized space (population variance, as StandardScaler computes it), then k-means there.
    n = len(points)
    mean = [sum(p[i] for p in points) / n for i in range(2)]
    std = [(sum((p[i] - mean[i]) ** 2 for p in points) / n) ** 0.5 for i in range(2)]
    scaled = [tuple((p[i] - mean[i]) / std[i] for i in range(2)) for p in points]
    centroids = kmeans(scaled, K)
    model = json.dumps(
        {"algorithm": "k-means", "k": K, "features": ["x", "y"], "centroids": centroids, "trainedOn": n, "scaling": {"sample": [list(p) for p in points]}},
        indent=1,
    ).encode()
    clustering = {"model.json": model, "code/inference.py": read(os.path.join(ROOT, "examples", "models", "clustering", "code", "inference.py")), **runtime_files()}
    recommender = {"code/inference.py": read(os.path.join(ROOT, "examples", "models", "recommender", "code", "inference.py")), **runtime_files()}
    for name, files in (("clustering", clustering), ("recommender", recommender)):
        out = os.path.join(models, name, "model.tar.gz")
        pack(out, files)
        # The profile the example stacks read (MemoryProfile.fromFile), beside the archive it describes.
        profile = os.path.join(ROOT, "examples", "models", name, "memory-profile.json")
        if os.path.exists(profile):
            write_whole(os.path.join(models, name, "memory-profile.json"), read(profile))
        print("built %s (%d bytes, %d files)" % (os.path.relpath(out, ROOT), os.path.getsize(out), len(files)))
    print("clustering centroids: %s" % centroids)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
