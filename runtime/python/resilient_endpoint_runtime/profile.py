"""Measures a model's memory on its real inference code, per request size, before launch day.

    python3 -m resilient_endpoint_runtime.profile --model-dir DIR (--lengths powerlaw:5:3000 | --requests FILE)
        [--mobile-extra 15%] [--mobile-share 40%] [--count 2000] [--points 8] [--out memory-profile.json]

Both incidents' root cause was that nobody measured memory on the real request distribution (A tested at
length 100, real lengths follow a power law from 5 to 3000; B's scaler is O(n) in the rows). The profiler
runs ``model_fn`` / ``input_fn`` / ``predict_fn`` / ``output_fn`` of ``DIR/code/inference.py`` as the
SageMaker toolkits call them, in a **fresh process per size point**, and reports for each size the peak
memory a request adds over its whole path — the body's bytes handed to ``input_fn``, parsing and scaling,
the model, ``output_fn`` serialising the answer — (RSS: Linux's peak, VmHWM, reset before each request;
CUDA: the allocator's peak when a GPU is present) and its latency, at sizes up to the distribution's
upper bound (measured there, not extrapolated); the fitted curve (bytes = a + b·size + c·size², non-negative
least squares); the worker's memory with the model loaded and after a first request (``loadedBytes``,
``baselineBytes``: the first inference's thread pools and BLAS buffers are in the baseline); the memory of the P50 / P99 / P99.9 request of the given distribution; and a leak check
(a soak of ``--soak`` requests from the distribution in one process: the same requests four times over,
the first pass the warm-up — the allocator growing to the largest requests is not a leak — and a leak only
when memory grew by more than a threshold in every later pass, with the smallest leak it could see); and how much
of the requests' time their thread spent waiting for a CPU (``cpuWaitShare``, from the kernel's schedstat: above
a tenth it warns that the machine was busy, whose latencies read high). It writes
``memory-profile.json``, which ``MemoryGuard`` and the construct (``MemoryProfile.fromFile``) read.

The inference module provides two small hooks besides the toolkit's functions:
``profile_request(size) -> (body, content_type)`` builds a request of a size (sequence length, rows),
and ``request_size(data) -> int`` says the size of a decoded request (for ``--requests``: JSON lines of
``{"body": ..., "contentType": ...}`` from data capture or a log). Module attributes name what the sizes
count and how they are read back from a captured body, as the profile records them: ``PROFILE_SIZE_UNIT``
(``sizeUnit``, e.g. ``"events"``), ``PROFILE_SIZE_SELECTOR`` (``sizeSelector``, a drift selector such as
``"$.events.length()"``) and ``PROFILE_CSV_SIZE_SELECTOR`` (``csvSizeSelector``, e.g. ``"$.length()"`` for
rows); without a selector the drift monitor cannot compare captured sizes with the profile. While it measures, the length caps of
``LengthTiers`` are lifted (``RESILIENT_ENDPOINT_PROFILING=1``) and the memory guard is off (no budget in
the environment), so the curve covers the whole distribution.
"""
import argparse
import importlib.util
import inspect
import json
import logging
import math
import multiprocessing
import os
import random
import sys
import time

MiB = 2**20


# -- the inference module, called as the toolkits call it ---------------------------------------------

def load_module(code_dir):
    path = os.path.join(code_dir, "inference.py")
    sys.path.insert(0, code_dir)
    spec = importlib.util.spec_from_file_location("inference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call(fn, *args):
    """A handler function with or without the toolkit's trailing ``context`` argument (here: None)."""
    n = len(inspect.signature(fn).parameters)
    return fn(*args) if n == len(args) else fn(*(args + (None,)))


def handle(module, model, body, content_type, accept="application/json"):
    """The whole request path as a server runs it: the body as the bytes a server hands over, input_fn
    (parsing, scaling), predict_fn, output_fn (serialising the answer)."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    data = call(module.input_fn, body, content_type)
    prediction = call(module.predict_fn, data, model)
    return call(module.output_fn, prediction, accept)


# -- memory of this process -----------------------------------------------------------------------

def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _runqueue_wait_ns():
    """Nanoseconds the calling thread has spent runnable but waiting for a CPU (the kernel's schedstat, second
    field: Documentation/scheduler/sched-stats.rst), or None where the kernel does not keep it."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None


#: Above this share of the requests' time spent waiting for a CPU, the profiler warns that the machine was busy.
BUSY_SHARE = 0.10


def reset_peak():
    """Resets VmHWM (Linux ≥ 4.0: writing 5 to clear_refs) so the next peak is this request's."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _gpu():
    """torch when the model loaded it and a GPU is present, else None. Only a model that imported torch can hold
    CUDA memory; importing it here for any other model would add torch's ~200 MiB to the worker's measured
    baseline (a scikit-learn model's ``baselineBytes`` read 299 MiB where the loaded model held 93 MiB) and cost
    each size point's process a second of CPU."""
    torch = sys.modules.get("torch")
    try:
        return torch if torch is not None and torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - a partly imported or stubbed torch: no GPU to measure
        return None


def _measure_point(model_dir, code_dir, size, repeats, queue):
    """In a fresh process: load the model, then the peak memory a request of ``size`` adds, and its latency."""
    os.environ["RESILIENT_ENDPOINT_PROFILING"] = "1"  # LengthTiers lifts its caps: the whole distribution is measured
    # The helper's start-up notices (no guard, no metrics, no parameter outside SageMaker) would repeat
    # once per size point; the profile is what this process reports.
    logging.getLogger("resilient_endpoint_runtime").setLevel(logging.ERROR)
    try:
        module = load_module(code_dir)
        model = call(module.model_fn, model_dir)
        loaded = _status("VmRSS")
        body, ctype = module.profile_request(1)
        handle(module, model, body, ctype)  # warm up (first-call allocations are not the request's)
        torch = _gpu()
        body, ctype = module.profile_request(size)
        if isinstance(body, str):
            body = body.encode("utf-8")  # the server holds the bytes before the request path starts
        peaks, gpu_peaks, latencies, waits = [], [], [], []
        for _ in range(repeats):
            import gc
            gc.collect()
            baseline = _status("VmRSS")
            resettable = reset_peak()
            if torch:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                gpu_base = torch.cuda.memory_allocated()
            waited = _runqueue_wait_ns()
            started = time.perf_counter()
            handle(module, model, body, ctype)
            if torch:
                torch.cuda.synchronize()
                gpu_peaks.append(torch.cuda.max_memory_allocated() - gpu_base)
            latencies.append(1000 * (time.perf_counter() - started))
            after = _runqueue_wait_ns()
            waits.append(None if waited is None or after is None else (after - waited) / 1e6)
            peak = _status("VmHWM") if resettable else _status("VmRSS")
            peaks.append(max(0, peak - baseline))
        # The time the request's thread waited for a CPU, over its requests' time: a busy machine's latencies read high.
        wait_share = sum(waits) / sum(latencies) if None not in waits and sum(latencies) > 0 else None
        queue.put({"size": size, "peakBytes": max(peaks), "gpuPeakBytes": max(gpu_peaks) if gpu_peaks else None,
                   "latencyMs": sorted(latencies)[len(latencies) // 2],
                   "cpuWaitShare": None if wait_share is None else round(min(1.0, wait_share), 3),
                   "baselineBytes": _status("VmRSS"), "loadedBytes": loaded})
    except Exception as e:  # noqa: BLE001 - reported by the parent
        queue.put({"size": size, "error": "%s: %s" % (type(e).__name__, e)})


def measure(model_dir, code_dir, sizes, repeats=3, timeout=600):
    """One fresh process per size point (spawned, so nothing of one point's memory is left for the next)."""
    ctx = multiprocessing.get_context("spawn")
    out = []
    for size in sizes:
        q = ctx.Queue()
        p = ctx.Process(target=_measure_point, args=(model_dir, code_dir, size, repeats, q))
        p.start()
        try:
            result = q.get(timeout=timeout)
        except Exception:  # noqa: BLE001
            result = {"size": size, "error": "no answer (killed: out of memory?)"}
        p.join(timeout)
        if p.exitcode not in (0, None):
            result.setdefault("error", "the process died with exit code %s (out of memory?)" % p.exitcode)
        out.append(result)
    return out


#: The leak check replays the same requests this many times in one process: the first pass is the warm-up.
SOAK_PASSES = 4


def _soak(model_dir, code_dir, sizes, queue, passes=SOAK_PASSES):
    """In one process: the same requests ``passes`` times over, RSS after every ``step``-th request of each
    pass (the same positions in every pass)."""
    os.environ["RESILIENT_ENDPOINT_PROFILING"] = "1"
    logging.getLogger("resilient_endpoint_runtime").setLevel(logging.ERROR)
    try:
        module = load_module(code_dir)
        model = call(module.model_fn, model_dir)
        step = max(1, len(sizes) // 50)
        rss = []
        for k in range(passes):
            for i, size in enumerate(sizes):
                body, ctype = module.profile_request(size)
                handle(module, model, body, ctype)
                if i % step == step - 1:
                    rss.append((k, i, _status("VmRSS")))
        queue.put({"samples": rss})
    except Exception as e:  # noqa: BLE001
        queue.put({"error": "%s: %s" % (type(e).__name__, e)})


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return 0.0 if not n else float(s[n // 2]) if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def leak_verdict(samples, per_pass):
    """The verdict from RSS samples ``(pass, position, bytes)`` of a soak that replayed ``per_pass`` requests.

    The first pass is the warm-up: the allocator grows to the largest requests of the distribution once
    (glibc keeps freed heap and raises its mmap threshold after a large request), which is not a leak, and
    a random soak keeps meeting new largest requests. Replaying the same requests removes that: from the
    second pass on a model that does not leak comes back to the same memory at the same request, and one
    that leaks is higher by what it kept. Each measured pass's growth is the median, over the positions,
    of RSS minus RSS at the same position one pass before; it is a leak only when every measured pass grew
    by more than the threshold (1 MiB, or 2 % of the process's memory if more), no leak when none did,
    and unsure otherwise. The threshold over the pass is the smallest leak the check can see."""
    passes = sorted({k for k, _, _ in samples})
    at = {(k, i): b for k, i, b in samples}
    growth, spread = [], []
    for k in passes[1:]:
        if k - 1 == passes[0]:
            continue  # pass 2 against the warm-up pass would count the warm-up
        diffs = [at[(k, i)] - at[(k - 1, i)] for kk, i, _ in samples if kk == k and (k - 1, i) in at]
        if diffs:
            g = _median(diffs)
            growth.append(g)
            spread.append(_median([abs(d - g) for d in diffs]))
    rss = _median([b for _, _, b in samples])
    threshold = max(1 * MiB, 0.02 * rss)
    grew = [g > threshold for g in growth]
    verdict = "unsure" if not growth else "leak" if all(grew) else "no leak" if not any(grew) else "unsure"
    mean = sum(growth) / len(growth) if growth else 0.0
    return {
        "requests": per_pass * len(passes),
        "passes": len(passes),
        "requestsPerPass": per_pass,
        "warmUpPasses": 1,
        "growthPerPassBytes": [round(g) for g in growth],
        "spreadPerPassBytes": [round(x) for x in spread],
        "thresholdPerPassBytes": round(threshold),
        "slopeBytesPerRequest": round(mean / per_pass, 1) if per_pass else 0.0,
        "detectionLimitBytesPerRequest": round(threshold / per_pass) if per_pass else None,
        "rssFirstBytes": samples[0][2],
        "rssLastBytes": samples[-1][2],
        "verdict": verdict,
    }


def leak_check(model_dir, code_dir, sizes, timeout=1800, passes=SOAK_PASSES):
    """The leak check: ``sizes`` split over ``passes`` replays of the same requests in one process (the
    first one the warm-up), judged by ``leak_verdict``."""
    per_pass = sizes[: max(1, len(sizes) // passes)]
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_soak, args=(model_dir, code_dir, per_pass, q, passes))
    p.start()
    result = q.get(timeout=timeout)
    p.join(timeout)
    if "error" in result:
        return {"requests": len(per_pass) * passes, "error": result["error"]}
    return leak_verdict(result["samples"], len(per_pass))


# -- the curve ----------------------------------------------------------------------------------

def fit_curve(points):
    """Non-negative least squares for bytes = a + b·size + c·size² over (size, bytes) points: the full fit,
    or — when a coefficient would be negative — the best fit without it."""
    best = None
    for terms in ((0, 1, 2), (0, 2), (1, 2), (0, 1), (2,), (1,), (0,)):
        coef = _lstsq([[s ** t for t in terms] for s, _ in points], [y for _, y in points])
        if coef is None or min(coef) < 0:
            continue
        full = [0.0, 0.0, 0.0]
        for t, c in zip(terms, coef):
            full[t] = c
        err = sum((full[0] + full[1] * s + full[2] * s * s - y) ** 2 for s, y in points)
        if best is None or err < best[0] * 0.999:
            best = (err, full)
    a, b, c = best[1] if best else (0.0, 0.0, 0.0)
    # An admission curve must not promise less than was measured: raised (a, b, c × k) to cover every point of
    # 1 MiB or more (smaller ones are page-sized noise). Least squares alone ran 21 % under the largest point.
    k = max([1.0] + [y / (a + b * x + c * x * x) for x, y in points if y >= 2**20 and a + b * x + c * x * x > 0])
    return {"a": a * k, "b": b * k, "c": c * k}


def _lstsq(rows, ys):
    """Normal equations, Gaussian elimination (a handful of unknowns: no numpy needed)."""
    k = len(rows[0])
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    aty = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(k)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(ata[r][col]))
        if abs(ata[pivot][col]) < 1e-300:
            return None
        ata[col], ata[pivot] = ata[pivot], ata[col]
        aty[col], aty[pivot] = aty[pivot], aty[col]
        for r in range(k):
            if r != col:
                f = ata[r][col] / ata[col][col]
                ata[r] = [x - f * y for x, y in zip(ata[r], ata[col])]
                aty[r] -= f * aty[col]
    return [aty[i] / ata[i][i] for i in range(k)]


# -- the request distribution -------------------------------------------------------------------

def bounded_pareto(rng, lo, hi, alpha):
    """A power law on [lo, hi] with exponent alpha (the simulator's and incident A's length distribution)."""
    u = rng.random()
    la, ha = lo ** alpha, hi ** alpha
    return (-(u * ha - u * la - ha) / (ha * la)) ** (-1 / alpha)


def sample_sizes(spec, count, mobile_extra=0.0, mobile_share=0.4, seed=0, requests=None, module=None):
    """Sizes of ``count`` requests: from ``powerlaw:LO:HI[:ALPHA]``, or the sizes of the requests in a file."""
    rng = random.Random(seed)
    if requests is not None:
        sizes = []
        with open(requests) as f:
            for line in f:
                if line.strip():
                    o = json.loads(line)
                    body = o["body"] if isinstance(o["body"], str) else json.dumps(o["body"])
                    sizes.append(module.request_size(call(module.input_fn, body, o.get("contentType", "application/json"))))
        sizes = [sizes[i % len(sizes)] for i in range(count)]
    else:
        kind, lo, hi, *rest = spec.split(":")
        if kind != "powerlaw":
            raise ValueError("--lengths must be powerlaw:LO:HI[:ALPHA]")
        alpha = float(rest[0]) if rest else 1.0
        sizes = [bounded_pareto(rng, float(lo), float(hi), alpha) for _ in range(count)]
    return [max(1, int(round(s * (1 + mobile_extra) if rng.random() < mobile_share else s))) for s in sizes]


def upper_bound(spec, mobile_extra=None):
    """The largest size of ``powerlaw:LO:HI[:ALPHA]`` (with the mobile clients' extra), else None."""
    if not spec or not spec.startswith("powerlaw:"):
        return None
    return int(round(float(spec.split(":")[2]) * (1 + _pct(mobile_extra))))


def percentile(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(math.ceil(p / 100 * len(s))) - 1))]


def size_points(sizes, n, largest=None):
    """``n`` sizes, geometrically spaced from the smallest to the largest of the distribution — or to
    ``largest``, the largest size the distribution admits (its upper bound), so that the curve is measured
    there rather than extrapolated from the largest size the sample happened to draw."""
    lo, hi = max(1, min(sizes)), max(max(sizes), int(largest or 0))
    if n < 2 or hi <= lo:
        return [hi]
    return sorted({int(round(lo * (hi / lo) ** (i / (n - 1)))) for i in range(n)})


# -- the command ---------------------------------------------------------------------------------

# The inference module's attributes that say how its sizes are read from a JSON body (and a CSV body), as
# drift selectors: the profile's fields the drift monitor measures captured requests with (docs/drift.md).
SELECTORS = (("PROFILE_SIZE_SELECTOR", "sizeSelector", "$.events.length()"), ("PROFILE_CSV_SIZE_SELECTOR", "csvSizeSelector", "$.length()"))


def size_selectors(module, code_dir):
    """The profile's selector fields from the module's attributes (those it sets); a usage error for one that is
    not a non-empty string, before anything is measured."""
    out = {}
    for attribute, field, example in SELECTORS:
        value = getattr(module, attribute, None)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise SystemExit("%s/inference.py: %s is %r; allowed: a drift selector string that reads the size from a "
                             "request's body, e.g. %r (or leave it unset)" % (code_dir, attribute, value, example))
        out[field] = value.strip()
    return out


def run(args):
    code_dir = args.code_dir or os.path.join(args.model_dir, "code")
    # The hooks only; the parent's import path stays as it was, so that the processes it spawns to measure
    # run this profiler, not the copy of the helper packed beside the model's code.
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    module = load_module(code_dir)
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        if name.split(".")[0] == "resilient_endpoint_runtime":
            del sys.modules[name]
    for hook in ("profile_request", "request_size"):
        if not hasattr(module, hook):
            raise SystemExit("%s/inference.py needs a %s() hook for the profiler (see the module's docstring)" % (code_dir, hook))
    selectors = size_selectors(module, code_dir)
    sizes = sample_sizes(args.lengths, args.count, _pct(args.mobile_extra), _pct(args.mobile_share), requests=args.requests, module=module)
    points = measure(args.model_dir, code_dir, size_points(sizes, args.points, upper_bound(args.lengths, args.mobile_extra)), repeats=args.repeats)
    good = [p for p in points if "error" not in p]
    if len(good) < 2:
        raise SystemExit("too few size points measured: %s" % [p.get("error") for p in points])
    gpu = any(p.get("gpuPeakBytes") for p in good)
    key = "gpuPeakBytes" if gpu else "peakBytes"
    curve = fit_curve([(p["size"], p[key]) for p in good])

    def est(s):
        return curve["a"] + curve["b"] * s + curve["c"] * s * s

    pct = {name: {"size": percentile(sizes, q), "bytes": round(est(percentile(sizes, q)))} for name, q in (("p50", 50), ("p99", 99), ("p999", 99.9))}
    leak = leak_check(args.model_dir, code_dir, sizes[: args.soak]) if args.soak else None
    profile = {
        "version": 1,
        "sizeUnit": getattr(module, "PROFILE_SIZE_UNIT", "size"),
        **selectors,
        "device": "cuda" if gpu else "cpu",
        "distribution": args.requests or args.lengths,
        "requests": len(sizes),
        "baselineBytes": max(p["baselineBytes"] for p in good),
        "loadedBytes": max(p["loadedBytes"] for p in good),
        "points": [{k: v for k, v in p.items() if k not in ("baselineBytes", "loadedBytes")} for p in points],
        "curve": curve,
        "percentiles": pct,
        "leak": leak,
        "cpuWaitShare": cpu_wait_share(good),
    }
    with open(args.out, "w") as f:
        json.dump(profile, f, indent=1)
    print(table(profile))
    return profile


def cpu_wait_share(points):
    """The share of the measured requests' time their thread spent waiting for a CPU (the points' shares weighted by
    their latency), or None where the kernel does not say."""
    shares = [(p["cpuWaitShare"], p["latencyMs"]) for p in points if p.get("cpuWaitShare") is not None]
    if not shares or len(shares) < len(points):
        return None
    total = sum(ms for _, ms in shares)
    return round(sum(share * ms for share, ms in shares) / total, 3) if total > 0 else None


def busy_line(profile):
    """A warning when the requests waited for a CPU for more than BUSY_SHARE of their time, else None."""
    share = profile.get("cpuWaitShare")
    if share is None or share <= BUSY_SHARE:
        return None
    worst = max((p for p in profile["points"] if p.get("cpuWaitShare") is not None), key=lambda p: p["cpuWaitShare"])
    return ("warning: the machine was busy: the requests spent %.0f %% of their time waiting for a CPU (the most at %s %d: %.0f %%), "
            "so the latencies read high, and the planner and the simulator size fleets on them. Profile again with nothing "
            "else running (memory figures are not affected)." % (100 * share, profile["sizeUnit"], worst["size"], 100 * worst["cpuWaitShare"]))


def table(profile):
    unit = profile["sizeUnit"]
    rows = ["| %s | peak memory added | latency (ms) |" % unit, "|---|---|---|"]
    for p in profile["points"]:
        if "error" in p:
            rows.append("| %d | %s | |" % (p["size"], p["error"]))
        else:
            mem = p["gpuPeakBytes"] if profile["device"] == "cuda" else p["peakBytes"]
            rows.append("| %d | %.1f MiB | %.1f |" % (p["size"], mem / MiB, p["latencyMs"]))
    c = profile["curve"]
    rows.append("")
    rows.append("curve: bytes = %.0f + %.1f × %s + %.3f × %s²   (baseline %.0f MiB)" % (c["a"], c["b"], unit, c["c"], unit, profile["baselineBytes"] / MiB))
    for name in ("p50", "p99", "p999"):
        q = profile["percentiles"][name]
        rows.append("%-5s request: %s %d → %.1f MiB" % ({"p50": "P50", "p99": "P99", "p999": "P99.9"}[name], unit, q["size"], q["bytes"] / MiB))
    if profile["leak"]:
        rows.append(leak_line(profile["leak"]))
    busy = busy_line(profile)
    if busy:
        rows.append(busy)
    return "\n".join(rows)


def leak_line(lk):
    """The leak check's verdict, what it rests on, and how small a leak it could see."""
    if lk.get("error"):
        return "leak check over %d requests: %s" % (lk["requests"], lk["error"])
    grown = ", ".join("%+.1f MiB" % (g / MiB) for g in lk["growthPerPassBytes"]) or "none"
    why = {
        "leak": "memory grew by more than %.1f MiB in every measured pass" % (lk["thresholdPerPassBytes"] / MiB),
        "no leak": "memory came back to the same level at the same requests (a leak of %s bytes per request or more would show)"
        % format(lk["detectionLimitBytesPerRequest"], ","),
        "unsure": "memory grew by more than %.1f MiB in some measured passes only: run a longer --soak"
        % (lk["thresholdPerPassBytes"] / MiB),
    }[lk["verdict"]]
    return "leak check: %s (%s). The same %d requests %d times in one process, the first pass the warm-up; growth per measured pass: %s (%+.0f bytes per request)" % (
        lk["verdict"], why, lk["requestsPerPass"], lk["passes"], grown, lk["slopeBytesPerRequest"])


def _pct(text):
    if text is None:
        return 0.0
    text = str(text).strip()
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


# -- the arguments: every mistake is a usage error naming the flag (exit 2), never a traceback -------------

def _lengths(text):
    parts = text.split(":")
    try:
        nums = [float(x) for x in parts[1:]]
    except ValueError:
        nums = []
    if parts[0] != "powerlaw" or len(nums) not in (2, 3) or not 0 < nums[0] < nums[1] or (len(nums) == 3 and nums[2] <= 0):
        raise argparse.ArgumentTypeError("got %r; allowed: powerlaw:LO:HI[:ALPHA] with 0 < LO < HI and ALPHA > 0, e.g. powerlaw:5:3000" % text)
    return text


def _share(text):
    try:
        value = _pct(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError("got %r; allowed: a percentage such as 15%% or a fraction such as 0.15" % text)
    return text


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("got %r; allowed: a whole number >= 1" % text)
    return value


def parser():
    p = argparse.ArgumentParser(prog="python3 -m resilient_endpoint_runtime.profile", description=__doc__.split("\n\n")[0])
    p.add_argument("--model-dir", required=True, help="the unpacked model.tar.gz (model files, code/inference.py)")
    p.add_argument("--code-dir", help="where inference.py is (default: MODEL_DIR/code)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--lengths", type=_lengths, help="powerlaw:LO:HI[:ALPHA], e.g. powerlaw:5:3000 (incident A)")
    src.add_argument("--requests", help="JSON lines of {\"body\": ..., \"contentType\": ...}")
    p.add_argument("--mobile-extra", type=_share, default="0%", help="a share of requests this much larger, e.g. 15%% (incident A's mobile clients)")
    p.add_argument("--mobile-share", type=_share, default="40%", help="the share of requests that are larger (default 40%%)")
    p.add_argument("--count", type=_positive, default=2000, help="requests drawn from the distribution (percentiles)")
    p.add_argument("--soak", type=int, default=None, help="requests of the leak check, in four passes of the same requests, the first the warm-up (default: --count; 0: no leak check)")
    p.add_argument("--points", type=_positive, default=8, help="size points measured, each in a fresh process")
    p.add_argument("--repeats", type=_positive, default=3, help="requests per size point (the peak of them)")
    p.add_argument("--out", default="memory-profile.json")
    return p


def parse(argv=None):
    """The arguments, with the files they name checked: a usage error (exit 2) names the flag and what is missing."""
    p = parser()
    args = p.parse_args(argv)
    code_dir = args.code_dir or os.path.join(args.model_dir, "code")
    if not os.path.isdir(args.model_dir):
        p.error("--model-dir: got %r, which is not a directory; allowed: the unpacked model.tar.gz" % args.model_dir)
    if not os.path.isfile(os.path.join(code_dir, "inference.py")):
        flag = "--code-dir" if args.code_dir else "--model-dir"
        p.error("%s: no inference.py in %r; allowed: a directory with the model's inference.py (MODEL_DIR/code unless --code-dir says)" % (flag, code_dir))
    if args.requests is not None and not os.path.isfile(args.requests):
        p.error("--requests: got %r, which is not a file; allowed: JSON lines of requests" % args.requests)
    if args.soak is not None and (args.soak < 0 or 0 < args.soak < SOAK_PASSES * 10):
        p.error("--soak: got %d; allowed: 0 (no leak check) or a whole number >= %d (%d passes of at least 10 requests)" % (args.soak, SOAK_PASSES * 10, SOAK_PASSES))
    return args


def main(argv=None):
    args = parse(argv)
    if args.soak is None:
        args.soak = args.count
    run(args)


if __name__ == "__main__":
    main()
