"""The profiler on a model with a known memory curve (standard library only: runs without frameworks)."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.dirname(HERE)

# A request of size n holds n KiB for the request's duration: the curve's linear term is 1024 bytes per unit.
INFERENCE = textwrap.dedent('''
    import json
    KEEP = []
    def model_fn(model_dir):
        return {"unit": 1024}
    def input_fn(body, content_type):
        return json.loads(body)
    def predict_fn(data, model):
        block = bytearray(model["unit"] * data["n"])
        for i in range(0, len(block), 4096):
            block[i] = 1  # touch every page: resident, not only reserved
        return {"n": data["n"], "sum": sum(block[::4096])}
    def output_fn(prediction, accept):
        return json.dumps(prediction)
    def profile_request(size):
        return json.dumps({"n": int(size)}), "application/json"
    def request_size(data):
        return data["n"]
    PROFILE_SIZE_UNIT = "kib"
    PROFILE_SIZE_SELECTOR = " $.n "
''')


def model_dir(decoy_helper):
    d = tempfile.mkdtemp()
    code = os.path.join(d, "code")
    os.makedirs(code)
    with open(os.path.join(code, "inference.py"), "w") as f:
        f.write(INFERENCE)
    if decoy_helper:
        # A model packs its own copy of the helper beside inference.py (as the examples do); an older or
        # broken copy there must not be what the profiler's measuring processes run.
        pkg = os.path.join(code, "resilient_endpoint_runtime")
        os.makedirs(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write("raise ImportError('the decoy copy of the helper beside the model code was imported')\n")
    return d


def profiler():
    """The profiler module, imported from the runtime tree (sys.path as it was afterwards)."""
    sys.path.insert(0, RUNTIME)
    try:
        from resilient_endpoint_runtime import profile as module
    finally:
        sys.path.remove(RUNTIME)
    return module


def profile(d, *args):
    out = os.path.join(d, "memory-profile.json")
    run = subprocess.run([sys.executable, "-m", "resilient_endpoint_runtime.profile", "--model-dir", d, *args, "--out", out],
                         cwd=RUNTIME, capture_output=True, text=True, timeout=300)
    return run, (json.load(open(out)) if run.returncode == 0 else None)


class ProfilerTest(unittest.TestCase):
    def test_the_curve_of_a_model_that_holds_one_kib_per_unit(self):
        run, p = profile(model_dir(True), "--lengths", "powerlaw:1000:60000", "--count", "200", "--points", "4", "--repeats", "1", "--soak", "50")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(p["points"]), 4)
        big = max(p["points"], key=lambda x: x["size"])
        # The largest point holds size KiB; RSS peaks come in pages, and the interpreter adds a little.
        self.assertGreater(big["peakBytes"], 0.9 * 1024 * big["size"])
        self.assertLess(big["peakBytes"], 1.5 * 1024 * big["size"] + 2**20)
        at = lambda n: p["curve"]["a"] + p["curve"]["b"] * n + p["curve"]["c"] * n * n  # noqa: E731
        self.assertAlmostEqual(at(50000) / (1024 * 50000), 1.0, delta=0.3)
        self.assertIn("curve: bytes =", run.stdout)
        # What the sizes count and how the drift monitor reads them back, from the module's attributes (trimmed).
        self.assertEqual((p["sizeUnit"], p["sizeSelector"]), ("kib", "$.n"))
        self.assertNotIn("csvSizeSelector", p)  # the module sets none
        # How long the requests waited for a CPU, per point and overall (Linux keeps it; never asserted low: CI is busy).
        self.assertTrue(all(0 <= q["cpuWaitShare"] <= 1 for q in p["points"]), p["points"])
        self.assertTrue(0 <= p["cpuWaitShare"] <= 1)
        # The helper's start-up notices are not repeated once per measuring process.
        self.assertNotIn("memory guard off", run.stdout + run.stderr)
        # The worker's baseline is the model's, not the profiler's: it imported torch to look for a GPU in every
        # measuring process, which put torch's ~200 MiB into any model's baseline (227 MiB for this 21-MiB one).
        self.assertLess(p["baselineBytes"], p["loadedBytes"] + 32 * 2**20, (p["baselineBytes"], p["loadedBytes"]))


class BusyMachineTest(unittest.TestCase):
    def test_requests_that_wait_for_a_cpu_are_reported_and_warned_about(self):
        # The examples' committed profiles read latencies 10–40× what a quiet machine measures (7,060 against 419 ms at
        # 200,000 rows): measured on a busy one, and nothing said so. Here the profiler and a busy loop share one CPU.
        cpu = min(os.sched_getaffinity(0))
        pin = lambda: os.sched_setaffinity(0, {cpu})  # noqa: E731
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pin)
        try:
            d = model_dir(False)
            out = os.path.join(d, "memory-profile.json")
            run = subprocess.run([sys.executable, "-m", "resilient_endpoint_runtime.profile", "--model-dir", d, "--lengths", "powerlaw:30000:60000",
                                  "--count", "20", "--points", "2", "--repeats", "2", "--soak", "0", "--out", out],
                                 cwd=RUNTIME, capture_output=True, text=True, timeout=300, preexec_fn=pin)
        finally:
            burner.kill()
            burner.wait()
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(out) as f:
            p = json.load(f)
        self.assertGreater(p["cpuWaitShare"], 0.3, p["points"])  # two runnable threads on one CPU: about half
        self.assertIn("warning: the machine was busy: the requests spent %.0f %% of their time waiting for a CPU" % (100 * p["cpuWaitShare"]), run.stdout)

    def test_the_share_is_the_points_weighted_by_their_latency_and_warned_above_a_tenth(self):
        module = profiler()
        busy_line, cpu_wait_share = module.busy_line, module.cpu_wait_share
        points = [{"size": 10, "latencyMs": 1.0, "cpuWaitShare": 0.9}, {"size": 900, "latencyMs": 99.0, "cpuWaitShare": 0.05}]
        self.assertEqual(cpu_wait_share(points), round((0.9 * 1 + 0.05 * 99) / 100, 3))  # 0.059: the long request counts
        self.assertIsNone(cpu_wait_share(points + [{"size": 5, "latencyMs": 1.0, "cpuWaitShare": None}]))  # not kept: unknown
        self.assertIsNone(cpu_wait_share([]))
        profile = lambda share: {"cpuWaitShare": share, "sizeUnit": "rows", "points": points}  # noqa: E731
        self.assertIsNone(busy_line(profile(0.10)))
        self.assertIsNone(busy_line(profile(None)))
        self.assertIn("spent 11 % of their time waiting for a CPU (the most at rows 10: 90 %)", busy_line(profile(0.11)))


# Two numpy models for the leak check (issue 40: a model whose memory levels off read "leak"). Both keep
# a workspace per power-of-two request size (64 … 4096 rows of 2048 features): memory grows until the
# largest bucket the traffic reaches, then stays level, as an allocator's growth to the largest request
# does. The second also keeps every request it was sent: a real leak.
LEVEL = textwrap.dedent('''
    import json
    import numpy as np
    FEATURES = 2048
    W = np.random.default_rng(0).standard_normal((FEATURES, 16))
    WORKSPACE = {}
    KEPT = []
    LEAK = %s
    def model_fn(model_dir):
        return W
    def input_fn(body, content_type):
        return np.frombuffer(body, dtype=np.float32).reshape(-1, FEATURES)
    def predict_fn(data, model):
        if LEAK:
            KEPT.append(data.copy())
        bucket = 1 << max(6, (len(data) - 1).bit_length())
        if bucket not in WORKSPACE:
            WORKSPACE[bucket] = np.ones((bucket, FEATURES))
        work = WORKSPACE[bucket][: len(data)]
        np.subtract(data, data.mean(axis=0), out=work)
        return (work @ model).argmax(axis=1)
    def output_fn(prediction, accept):
        return json.dumps(prediction.tolist())
    def profile_request(size):
        return np.random.default_rng(int(size)).standard_normal((int(size), FEATURES), dtype=np.float32).tobytes(), "application/x-npy"
    def request_size(data):
        return len(data)
''')

try:
    import numpy  # noqa: F401
    NUMPY = True
except ImportError:
    NUMPY = False


def numpy_model(leak):
    d = tempfile.mkdtemp()
    os.makedirs(os.path.join(d, "code"))
    with open(os.path.join(d, "code", "inference.py"), "w") as f:
        f.write(LEVEL % leak)
    return d


# Small requests, the largest bucket (3000 rows) early, a new bucket (1500 rows) late: 400 requests.
SOAK = [10] * 40 + [3000] + [10] * 209 + [1500] + [10] * 149


@unittest.skipUnless(NUMPY, "numpy is not installed for %s: the leak check on numpy models is skipped" % sys.executable)
class LeakCheckTest(unittest.TestCase):
    """The leak check on real numpy models, in the profiler's own soak process."""

    def check(self, leak):
        d = numpy_model(leak)
        return profiler().leak_check(d, os.path.join(d, "code"), SOAK)

    def test_a_model_whose_memory_levels_off_is_not_called_a_leak(self):
        # The slope over the soak's second half read +350 kB per request here, and "leak": the late new
        # bucket. Replaying the same requests, memory comes back to the same level at the same request.
        r = self.check(False)
        self.assertEqual(r["verdict"], "no leak", r)
        self.assertEqual((r["passes"], r["requestsPerPass"], r["warmUpPasses"], r["requests"]), (4, 100, 1, 400))
        self.assertEqual(len(r["growthPerPassBytes"]), 2)
        self.assertTrue(all(abs(g) < 2**20 for g in r["growthPerPassBytes"]), r)
        # The warm-up pass grew by the 64 MiB workspace of the largest bucket: it is not counted.
        self.assertGreater(r["rssLastBytes"] - r["rssFirstBytes"], 60 * 2**20)
        # How sure: the smallest leak it could have seen, from the threshold and the pass. Both figures are rounded to
        # the byte from the same unrounded threshold, so dividing the rounded one may land a byte away (21,543 against
        # 21,542 once on CI).
        self.assertAlmostEqual(r["detectionLimitBytesPerRequest"], r["thresholdPerPassBytes"] / 100, delta=1)
        self.assertGreaterEqual(r["thresholdPerPassBytes"], 2**20)

    def test_a_model_that_keeps_every_request_is_a_leak_in_every_measured_pass(self):
        r = self.check(True)
        self.assertEqual(r["verdict"], "leak", r)
        # Each pass keeps its 100 requests again: 99 × 10 rows and one of 3000, 2048 float32 each (≈ 31 MiB).
        kept = (99 * 10 + 3000) * 2048 * 4
        for g in r["growthPerPassBytes"]:
            self.assertGreater(g, 0.9 * kept)
            self.assertLess(g, 1.2 * kept)
        self.assertAlmostEqual(r["slopeBytesPerRequest"] / (kept / 100), 1.0, delta=0.2)


class LeakVerdictTest(unittest.TestCase):
    """The verdict from a soak's samples: (pass, position, RSS bytes)."""

    def verdict(self, growth):
        base = 100 * 2**20
        samples, rss = [], base
        for k, g in enumerate([30 * 2**20] + growth):  # the warm-up pass grows most
            rss += g
            samples += [(k, i, rss + (i % 3) * 4096) for i in range(9, 100, 10)]
        return profiler().leak_verdict(samples, 100)

    def test_grew_in_every_measured_pass_in_none_or_in_some(self):
        self.assertEqual(self.verdict([8 * 2**20, 8 * 2**20, 8 * 2**20])["verdict"], "leak")
        self.assertEqual(self.verdict([0, 2**19, -2**20])["verdict"], "no leak")
        # Growth of the pass after the warm-up, against the warm-up, is not measured (it holds the warm-up's end).
        late = self.verdict([8 * 2**20, 0, 0])
        self.assertEqual((late["verdict"], late["growthPerPassBytes"]), ("no leak", [0, 0]))
        unsure = self.verdict([0, 8 * 2**20, 0])
        self.assertEqual((unsure["verdict"], unsure["growthPerPassBytes"]), ("unsure", [8 * 2**20, 0]))
        # The threshold: 2 % of the memory when that is more than 1 MiB (here ≈ 2.6 MiB of ≈ 130 MiB).
        at = self.verdict([0, int(2.5 * 2**20), int(2.5 * 2**20)])
        self.assertEqual(at["verdict"], "no leak", at)
        self.assertEqual(self.verdict([0, int(2.8 * 2**20), int(2.8 * 2**20)])["verdict"], "leak")


def command(*args):
    """``python3 -m resilient_endpoint_runtime.profile ARGS`` as a command."""
    return subprocess.run([sys.executable, "-m", "resilient_endpoint_runtime.profile", *args], cwd=RUNTIME, capture_output=True, text=True, timeout=60)


def usage(*args):
    """The same command's exit status, stdout and stderr for arguments it refuses, from its ``main`` in this process (a fresh
    interpreter per case cost ~0.1 s of CPU, 15 of them a run): argparse's usage error exits (SystemExit 2) before
    anything runs; an exception that escapes is a traceback and exit status 1, as the interpreter would print it."""
    import contextlib
    import io
    import traceback
    profile = profiler()
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            profile.main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        except Exception:  # noqa: BLE001 - what the command would print
            traceback.print_exc()
            code = 1
    return subprocess.CompletedProcess(["profile", *args], code, out.getvalue(), err.getvalue())


class UsageErrorTest(unittest.TestCase):
    """Every mistake in the arguments is argparse's usage error naming the flag (exit 2), never a traceback."""

    def assertUsageError(self, run, message):
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("usage: python3 -m resilient_endpoint_runtime.profile", run.stderr)
        self.assertIn(message, run.stderr)
        self.assertNotIn("Traceback", run.stderr)

    def test_the_model_and_its_code(self):
        empty = tempfile.mkdtemp()
        self.assertUsageError(command("--lengths", "powerlaw:5:30"), "the following arguments are required: --model-dir")  # as a command, once
        self.assertUsageError(usage("--lengths", "powerlaw:5:30"), "the following arguments are required: --model-dir")
        self.assertUsageError(usage("--model-dir", os.path.join(empty, "missing"), "--lengths", "powerlaw:5:30"),
                              "--model-dir: got '%s', which is not a directory" % os.path.join(empty, "missing"))
        self.assertUsageError(usage("--model-dir", empty, "--lengths", "powerlaw:5:30"), "--model-dir: no inference.py in '%s'" % os.path.join(empty, "code"))
        self.assertUsageError(usage("--model-dir", empty, "--code-dir", empty, "--lengths", "powerlaw:5:30"), "--code-dir: no inference.py in '%s'" % empty)
        self.assertUsageError(usage("--model-dir", model_dir(False), "--requests", os.path.join(empty, "none.jsonl")),
                              "--requests: got '%s', which is not a file" % os.path.join(empty, "none.jsonl"))

    def test_a_size_selector_that_is_not_a_string_is_refused_before_measuring(self):
        for bad in ("PROFILE_SIZE_SELECTOR = 3", "PROFILE_CSV_SIZE_SELECTOR = '  '"):
            with self.subTest(bad=bad):
                d = model_dir(False)
                with open(os.path.join(d, "code", "inference.py"), "a") as f:
                    f.write(bad + "\n")
                run, p = profile(d, "--lengths", "powerlaw:1000:60000", "--count", "20", "--points", "2", "--repeats", "1", "--soak", "0")
                self.assertEqual((run.returncode, p), (1, None))
                attribute, value = bad.split(" = ")
                self.assertIn("inference.py: %s is %s; allowed: a drift selector string" % (attribute, value), run.stderr)
                self.assertNotIn("Traceback", run.stderr)
                self.assertNotIn("peak memory added", run.stdout)  # nothing measured

    def test_malformed_values(self):
        d = model_dir(False)
        for args, message in [
            (["--lengths", "bogus"], "argument --lengths: got 'bogus'; allowed: powerlaw:LO:HI[:ALPHA]"),
            (["--lengths", "powerlaw:3000:5"], "argument --lengths: got 'powerlaw:3000:5'"),
            (["--lengths", "powerlaw:5:3000:0"], "argument --lengths: got 'powerlaw:5:3000:0'"),
            (["--lengths", "powerlaw:5:30", "--mobile-extra", "lots"], "argument --mobile-extra: got 'lots'; allowed: a percentage such as 15%"),
            (["--lengths", "powerlaw:5:30", "--mobile-share=-5%"], "argument --mobile-share: got '-5%'"),
            (["--lengths", "powerlaw:5:30", "--count", "0"], "argument --count: got '0'; allowed: a whole number >= 1"),
            (["--lengths", "powerlaw:5:30", "--points", "many"], "argument --points: got 'many'"),
            (["--lengths", "powerlaw:5:30", "--soak", "-1"], "--soak: got -1; allowed: 0 (no leak check) or a whole number >= 40"),
            (["--lengths", "powerlaw:5:30", "--soak", "39"], "--soak: got 39; allowed: 0 (no leak check) or a whole number >= 40 (4 passes of at least 10 requests)"),
            (["--lengths", "powerlaw:5:30", "--modle-dir", d], "unrecognized arguments: --modle-dir"),
        ]:
            with self.subTest(args=args):
                self.assertUsageError(usage("--model-dir", d, *args), message)

    def test_help(self):
        run = command("--help")
        self.assertEqual(run.returncode, 0)
        self.assertIn("--model-dir MODEL_DIR", run.stdout)


if __name__ == "__main__":
    unittest.main()


class CurveFitTest(unittest.TestCase):
    def test_the_curve_covers_every_measured_point_of_a_mebibyte_or_more(self):
        from resilient_endpoint_runtime.profile import fit_curve
        MiB = 2**20
        # Linear below, steeper at the top (a parse that copies): least squares alone runs under the top point.
        points = [(100, 1000), (22797, 3.8 * MiB), (67523, 17.0 * MiB), (200000, 55.3 * MiB)]
        c = fit_curve(points)
        est = lambda x: c["a"] + c["b"] * x + c["c"] * x * x  # noqa: E731
        for x, y in points[1:]:
            self.assertGreaterEqual(est(x), y * 0.9999, x)
        self.assertAlmostEqual(max(est(x) / y for x, y in points[1:] if est(x) / y < 1.0001), 1.0, places=3)  # touches one point
        self.assertLess(est(200000), 1.2 * 55.3 * MiB)

    def test_the_largest_size_measured_is_the_distributions_upper_bound(self):
        from resilient_endpoint_runtime.profile import size_points, upper_bound
        self.assertEqual(upper_bound("powerlaw:100:200000"), 200000)
        self.assertEqual(upper_bound("powerlaw:5:3000:1.2", "15%"), 3450)
        self.assertIsNone(upper_bound(None))
        pts = size_points([120, 5000, 167000], 4, 200000)
        self.assertEqual((pts[0], pts[-1], len(pts)), (120, 200000, 4))
        self.assertEqual(size_points([120, 5000, 167000], 4)[-1], 167000)
