"""The examples' real code with real frameworks (Debian's python3-torch and python3-sklearn: torch 1.13,
scikit-learn 1.2.1 — the version of AWS's sagemaker-scikit-learn:1.2-1 image), over HTTP through a local
stand-in for each image's serving stack (harness.py), and the profiler and the memory guard end to end.

Without the frameworks these tests are skipped, and say so: `apt-get install -y python3-torch
python3-sklearn python3-numpy python3-boto3`, then run them with /usr/bin/python3.
"""
import functools
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))

from harness import Server, load_example  # noqa: E402


def have(*modules):
    try:
        for m in modules:
            __import__(m)
        return True
    except ImportError:
        if os.environ.get("REQUIRE_FRAMEWORKS") == "1":  # scripts/test-python.mjs found them for this interpreter
            raise
        return False


TORCH = have("torch")
SKLEARN = have("sklearn", "numpy")
INSTALL = "(apt-get install -y python3-torch python3-sklearn python3-numpy, then /usr/bin/python3)"


def model_dir(name):
    """The example's model.tar.gz (built by `npm run bundle`), unpacked as SageMaker does into /opt/ml/model."""
    archive = os.path.join(ROOT, "dist", "models", name, "model.tar.gz")
    if not os.path.exists(archive):
        raise unittest.SkipTest("%s is not built: run `npm run bundle`" % archive)
    d = tempfile.mkdtemp()
    with tarfile.open(archive) as t:
        t.extractall(d)
    return d


def published(level):
    """An inactive guard that reports the breaker's level: the test sets the level the container reads."""
    from resilient_endpoint_runtime import MemoryGuard
    return MemoryGuard(None, None, published=lambda: level)


@unittest.skipUnless(TORCH, "torch not installed: the recommender on real TorchServe-style serving is skipped " + INSTALL)
class RecommenderServingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load_example("recommender")
        cls.model = cls.m.model_fn(tempfile.mkdtemp())
        cls.server = Server(cls.m, cls.model, "toolkit").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__()

    def setUp(self):
        self.m._state["guard"] = published(0)

    def ask(self, events, content_type="application/json", body=None):
        return self.server.invoke(body if body is not None else json.dumps({"events": events, "profile": [0.1] * 20}), content_type)

    def test_a_request_is_answered_with_every_head(self):
        status, ctype, body = self.ask(list(range(300)))
        self.assertEqual((status, ctype), (200, "application/json"))
        o = json.loads(body)
        self.assertTrue(0 < o["ctr"] < 1 and 0 < o["cvr"] < 1 and o["dwell"] > 0)
        self.assertEqual((o["truncated"], o["degradeLevel"]), (0, 0))

    def test_too_long_is_a_413_with_a_json_body_and_no_traceback(self):
        status, ctype, body = self.ask(list(range(1100)))
        self.assertEqual((status, ctype), (413, "application/json"))
        self.assertEqual(json.loads(body)["reason"], "too_long")
        self.assertNotIn(b"Traceback", body)

    def test_bad_input_is_a_4xx_never_a_5xx(self):
        self.assertEqual(self.ask([1], "text/csv")[:2], (415, "application/json"))
        status, _, body = self.ask(None, body="{not json")
        self.assertEqual((status, json.loads(body)["reason"]), (400, "malformed"))
        self.assertEqual(self.ask(None, body=json.dumps({"events": [], "profile": [0.1] * 20}))[0], 400)
        self.assertEqual(self.ask(None, body=json.dumps({"events": [1], "profile": [1.0]}))[0], 400)
        self.assertNotIn(500, self.server.answers)

    def test_a_batch_is_answered_per_sequence_and_admitted_as_a_batch(self):
        body = json.dumps({"instances": [{"events": list(range(n)), "profile": [0.1] * 20} for n in (10, 300, 700)]})
        status, _, out = self.ask(None, body=body)
        o = json.loads(out)
        self.assertEqual((status, len(o["predictions"]), o["degradeLevel"]), (200, 3, 0))
        self.assertTrue(all(0 < p["ctr"] < 1 and p["truncated"] == 0 for p in o["predictions"]))
        from resilient_endpoint_runtime import MemoryCurve, MemoryGuard
        # 1 MiB per 100 events² per sequence, 100 MiB left: one sequence of 700 events fits (49 MiB), three do not.
        self.m._state["guard"] = MemoryGuard(100 * 2**20, MemoryCurve(c=2**20 / 10**4), published=lambda: 0, usage=lambda: 0)
        status, _, out = self.ask(None, body=json.dumps({"instances": [{"events": list(range(700)), "profile": [0.1] * 20}] * 3}))
        self.assertEqual((status, json.loads(out)["reason"]), (413, "memory"))
        self.assertIn("size 700 × 3", json.loads(out)["error"])

    def test_the_worker_is_placed_by_the_toolkits_context(self):
        class Context:
            system_properties = {"gpu_id": 0, "model_dir": "/opt/ml/model"}

        model = self.m.model_fn(tempfile.mkdtemp(), Context())
        self.assertEqual(next(model.parameters()).device.type, "cuda" if __import__("torch").cuda.is_available() else "cpu")

    def test_degraded_truncates_to_the_newest_512_and_drops_the_secondary_heads(self):
        self.m._state["guard"] = published(1)
        o = json.loads(self.ask(list(range(800)))[2])
        self.assertEqual((o["truncated"], o["cvr"], o["dwell"], o["degradeLevel"]), (288, None, None, 1))
        self.m._state["guard"] = published(2)
        status, _, body = self.ask(list(range(800)))
        self.assertEqual((status, json.loads(body)["reason"]), (413, "degraded"))


@unittest.skipUnless(SKLEARN, "scikit-learn not installed: the clustering example on real scikit-learn is skipped " + INSTALL)
class ClusteringServingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load_example("clustering")
        cls.model = cls.m.model_fn(model_dir("clustering"))
        cls.server = Server(cls.m, cls.model, "containers").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__()

    def setUp(self):
        self.m._state["guard"] = published(0)

    def test_the_readme_request(self):
        status, ctype, body = self.server.invoke(json.dumps({"instances": [[2, 2], [8, 3], [5, 8]]}))
        self.assertEqual((status, ctype), (200, "application/json"))
        self.assertEqual(json.loads(body), {"clusters": [0, 2, 1], "rows": 3, "truncated": 0, "degradeLevel": 0})
        status, _, body = self.server.invoke("2,2\n8,3\n5,8\n", "text/csv")
        self.assertEqual(json.loads(body)["clusters"], [0, 2, 1])

    def test_truncation_keeps_the_first_rows_so_each_answer_is_its_rows(self):
        self.m._state["guard"] = published(1)
        rows = [[2, 2], [8, 3], [5, 8]] * 8400  # 25,200 rows: row i is in cluster [0, 2, 1][i % 3]
        o = json.loads(self.server.invoke(json.dumps({"instances": rows}))[2])
        self.assertEqual((o["rows"], o["truncated"]), (20000, 5200))  # the first DEGRADED_MAX_SEQ_LEN rows
        self.assertEqual(o["clusters"], [[0, 2, 1][i % 3] for i in range(20000)])

    def test_critical_refuses_large_requests_with_a_413(self):
        self.m._state["guard"] = published(2)
        status, ctype, body = self.server.invoke(json.dumps({"instances": [[2, 2]] * 25000}))
        self.assertEqual((status, ctype, json.loads(body)["reason"]), (413, "application/json", "degraded"))
        self.assertEqual(self.server.invoke(json.dumps({"instances": [[2, 2]] * 1000}))[0], 200)

    def test_bad_input_is_a_4xx_never_a_5xx(self):
        self.assertEqual(self.server.invoke("x", "application/x-npy")[:2], (415, "application/json"))
        for bad in ("{nope", json.dumps({"rows": []}), json.dumps({"instances": [[1]]}), json.dumps({"instances": [["a", "b"]]})):
            status, ctype, body = self.server.invoke(bad)
            self.assertEqual((status, ctype, json.loads(body)["reason"]), (400, "application/json", "malformed"), bad)
        self.assertNotIn(500, self.server.answers)

    def test_the_fallback_is_lighter_and_agrees(self):
        light = load_example("clustering", {"DEGRADED_MODE": "true"})
        os.environ.pop("DEGRADED_MODE")
        model = light.model_fn(model_dir("clustering"))
        light._state["guard"] = published(0)
        rows = [[2, 2], [8, 3], [5, 8]] * 100
        self.assertTrue(light.DEGRADED_MODE)
        self.assertEqual(light.predict(rows, model, 0)["clusters"], self.m.predict(rows, self.model, 0)["clusters"])


def profile(name, *args):
    out = os.path.join(tempfile.mkdtemp(), "memory-profile.json")
    run = subprocess.run([sys.executable, "-m", "resilient_endpoint_runtime.profile", "--model-dir", model_dir(name), *args, "--out", out],
                         cwd=os.path.join(ROOT, "runtime", "python"), capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "runtime", "python")})
    if run.returncode != 0:
        raise AssertionError(run.stderr[-3000:])
    with open(out) as f:
        return json.load(f), run.stdout


CLUSTERING_ARGS = ("--lengths", "powerlaw:1000:200000:0.5", "--count", "50", "--points", "3", "--repeats", "1", "--soak", "0")


@functools.lru_cache(maxsize=None)
def clustering_profile():
    return profile("clustering", *CLUSTERING_ARGS)


MEASURE = r"""
import json, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
from harness import load_example, containers_invoke
m = load_example("clustering")
model = m.model_fn(sys.argv[3])
def status(field):
    return [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(field)][0]
small = json.dumps({"instances": [[2, 2]] * 10}).encode()
containers_invoke(m, model, small, "application/json", "application/json")  # warm
n = int(sys.argv[4])
body = json.dumps({"instances": [[2 + (i % 7) * 0.5, 3 + (i % 5) * 0.5] for i in range(n)]}).encode()  # as the server holds it
import gc; gc.collect()
base = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
out = containers_invoke(m, model, body, "application/json", "application/json")
print(json.dumps({"status": out[0], "added": status("VmHWM") - base}))
"""


@functools.lru_cache(maxsize=None)
def recommender_profile():
    """The recommender profiled once for the suite (a profile is ~5 s of CPU: a fresh process per size point)."""
    return profile("recommender", "--lengths", "powerlaw:5:3000", "--mobile-extra", "15%", "--count", "400", "--points", "4", "--repeats", "1", "--soak", "150")


@unittest.skipUnless(TORCH and SKLEARN, "torch / scikit-learn not installed: the profiler on the examples is skipped " + INSTALL)
class ProfilerTest(unittest.TestCase):
    def test_the_recommender_grows_with_the_square_of_the_sequence_length(self):
        p, printed = recommender_profile()
        self.assertEqual(p["sizeUnit"], "events")
        self.assertGreater(p["curve"]["c"], 0)
        sizes = [q["size"] for q in p["points"] if "error" not in q]
        big, small = max(sizes), min(sizes)
        peaks = {q["size"]: q["peakBytes"] for q in p["points"]}
        self.assertGreater(peaks[big], 20 * peaks[small] + 2**20)
        self.assertLess(p["percentiles"]["p50"]["bytes"], p["percentiles"]["p999"]["bytes"])
        self.assertEqual(p["leak"]["verdict"], "no leak")
        self.assertIn("curve: bytes =", printed)
        self.assertIn("P99.9 request: events", printed)

    def test_incident_b_the_per_request_robust_scaler_costs_more_than_the_fitted_standard_scaler(self):
        fixed, _ = clustering_profile()
        os.environ["PREPROCESSING"] = "robust-per-request"
        try:
            incident, _ = profile("clustering", *CLUSTERING_ARGS)
        finally:
            os.environ.pop("PREPROCESSING")
        top = max(q["size"] for q in fixed["points"])
        est = lambda p, n: p["curve"]["a"] + p["curve"]["b"] * n + p["curve"]["c"] * n * n  # noqa: E731
        # At 200,000 rows the parsed request dominates both (Python lists of floats); the per-request scaler and
        # its copies add a third again on top (measured: ~39 MiB fixed, ~55 MiB as incident B had it).
        self.assertGreater(est(incident, top) - est(fixed, top), 0.25 * est(fixed, top))

    def test_the_clustering_curve_matches_a_request_at_its_largest_admitted_size_within_10_percent(self):
        # The whole request path (the body's bytes, parsing, scaling, clustering, the answer) measured at
        # MAX_SEQ_LEN (200,000 rows) through the scikit-learn image's handler path, in a fresh process; the
        # profiler measures up to its distribution's upper bound instead of extrapolating (the curve said
        # 63 MiB where 87 MiB were measured).
        p, _ = clustering_profile()
        self.assertEqual(max(q["size"] for q in p["points"]), 200000)
        run = subprocess.run([sys.executable, "-c", MEASURE, HERE, os.path.join(ROOT, "runtime", "python"), model_dir("clustering"), "200000"],
                             capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        measured = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertEqual(measured["status"], 200)
        c = p["curve"]
        estimate = c["a"] + c["b"] * 200000 + c["c"] * 200000 ** 2
        self.assertLess(abs(estimate - measured["added"]), 0.10 * measured["added"], (estimate / 2**20, measured["added"] / 2**20))


REPLAY = r"""
import json, os, random, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
os.environ.update({"MAX_SEQ_LEN": "3000", "DEGRADED_MAX_SEQ_LEN": "3000"})
from harness import load_example, toolkit_invoke
from resilient_endpoint_runtime import MemoryCurve, MemoryGuard
from resilient_endpoint_runtime.guard import process_rss
m = load_example("recommender")
model = m.model_fn(sys.argv[3])
curve = MemoryCurve.from_json(json.loads(sys.argv[4]))
budget = process_rss() + int(sys.argv[5]) * 2**20   # a small worker: this much above the loaded model
guard = MemoryGuard(budget, curve, published=lambda: 0)
guard.limit_process()                                 # the backstop, as the example's model_fn enables it
m._state["guard"] = guard
open("/proc/self/clear_refs", "w").write("5")
rng = random.Random(42)
answers, reasons, slowest = {}, {}, 0.0
for _ in range(150):
    u = rng.random(); lo, hi = 5.0, 3000.0
    n = int((-(u * hi - u * lo - hi) / (hi * lo)) ** -1)  # the power law of incident A (alpha 1)
    started = time.time()
    status, _, body = toolkit_invoke(m, model, json.dumps({"events": list(range(n)), "profile": [0.1] * 20}).encode(), "application/json", "application/json")
    slowest = max(slowest, time.time() - started)
    answers[status] = answers.get(status, 0) + 1
    if status != 200:
        why = json.loads(body)["error"]
        reasons["backstop" if "ran out of memory" in why else "estimate"] = reasons.get("backstop" if "ran out of memory" in why else "estimate", 0) + 1
peak = [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM")][0]
print(json.dumps({"answers": answers, "reasons": reasons, "peak": peak, "budget": budget, "slowest": slowest}))
"""


@unittest.skipUnless(TORCH and SKLEARN, "torch not installed: the guard's power-law replay is skipped " + INSTALL)
class GuardReplayTest(unittest.TestCase):
    def replay(self, headroom_mib):
        p, _ = recommender_profile()
        run = subprocess.run([sys.executable, "-c", REPLAY, HERE, os.path.join(ROOT, "runtime", "python"), tempfile.mkdtemp(), json.dumps(p["curve"]),
                              str(headroom_mib)], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        return json.loads(run.stdout.strip().splitlines()[-1])

    def test_a_power_law_replay_on_a_small_budget_every_request_served_or_cleanly_refused_and_the_peak_under_budget(self):
        r = self.replay(150)
        self.assertEqual(set(r["answers"]) - {"200", "413"}, set(), r)  # never a 5XX
        self.assertGreater(r["answers"].get("200", 0), 140, r)
        self.assertLessEqual(r["peak"], r["budget"])
        # Refusals where they belong: the estimate refuses; the backstop (RLIMIT_DATA counts virtual
        # reservations) no longer refuses requests the budget holds (it refused 20 of 21 before).
        self.assertEqual(r["reasons"].get("backstop", 0), 0, r)

    def test_a_budget_100_mib_above_the_loaded_model_never_hangs_the_first_inference(self):
        # RLIMIT_DATA set before the first inference hung OpenBLAS's first buffer allocation for ever
        # (real-account.md item 49): at this budget every request timed out. Now: answered, each in seconds.
        r = self.replay(100)
        self.assertEqual(set(r["answers"]) - {"200", "413"}, set(), r)
        self.assertGreater(r["answers"].get("200", 0), 100, r)
        self.assertLess(r["slowest"], 10, r)


if __name__ == "__main__":
    unittest.main()
