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
        # The helper's start-up notices are not repeated once per measuring process.
        self.assertNotIn("memory guard off", run.stdout + run.stderr)


def usage(*args):
    return subprocess.run([sys.executable, "-m", "resilient_endpoint_runtime.profile", *args], cwd=RUNTIME, capture_output=True, text=True, timeout=60)


class UsageErrorTest(unittest.TestCase):
    """Every mistake in the arguments is argparse's usage error naming the flag (exit 2), never a traceback."""

    def assertUsageError(self, run, message):
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("usage: python3 -m resilient_endpoint_runtime.profile", run.stderr)
        self.assertIn(message, run.stderr)
        self.assertNotIn("Traceback", run.stderr)

    def test_the_model_and_its_code(self):
        empty = tempfile.mkdtemp()
        self.assertUsageError(usage("--lengths", "powerlaw:5:30"), "the following arguments are required: --model-dir")
        self.assertUsageError(usage("--model-dir", os.path.join(empty, "missing"), "--lengths", "powerlaw:5:30"),
                              "--model-dir: got '%s', which is not a directory" % os.path.join(empty, "missing"))
        self.assertUsageError(usage("--model-dir", empty, "--lengths", "powerlaw:5:30"), "--model-dir: no inference.py in '%s'" % os.path.join(empty, "code"))
        self.assertUsageError(usage("--model-dir", empty, "--code-dir", empty, "--lengths", "powerlaw:5:30"), "--code-dir: no inference.py in '%s'" % empty)
        self.assertUsageError(usage("--model-dir", model_dir(False), "--requests", os.path.join(empty, "none.jsonl")),
                              "--requests: got '%s', which is not a file" % os.path.join(empty, "none.jsonl"))

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
            (["--lengths", "powerlaw:5:30", "--soak", "-1"], "--soak: got -1; allowed: a whole number >= 0"),
            (["--lengths", "powerlaw:5:30", "--modle-dir", d], "unrecognized arguments: --modle-dir"),
        ]:
            with self.subTest(args=args):
                self.assertUsageError(usage("--model-dir", d, *args), message)

    def test_help(self):
        run = usage("--help")
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
