"""The examples under a real kernel memory limit: the container's workers as separate processes (prefork.py,
as TorchServe and gunicorn run them), each loading its own model, in a cgroup whose memory limit plays the
instance's memory, with the environment the construct writes (the container's budget at 90 % of it, each
worker's share, the profiled curve). Incident A's power-law replay (batches of 2–8 sequences, 5–3,000 events)
and incident B's 17× pulse (concurrent requests of up to 200,000 rows), at level 0 and with the breaker's
level at 1. What must hold: no worker killed (the cgroup's ``oom_kill`` count and the server's own
record), none hung (every request answered within its timeout), every refusal a JSON 4XX, and at level 1
long requests truncated, not refused.

Needs root and the cgroup v1 memory controller (``/sys/fs/cgroup/memory``); elsewhere SKIPPED with the
reason. Real frameworks: Debian's torch 1.13 and scikit-learn 1.2.1.
"""
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RUNTIME = os.path.join(ROOT, "runtime", "python")
sys.path.insert(0, HERE)

from test_serving import SKLEARN, TORCH, INSTALL  # noqa: E402

import stacks  # noqa: E402
from stacks import MiB, Cgroup, cgroup_unavailable  # noqa: E402,F401

WHY_NOT = cgroup_unavailable()


class Container(stacks.PreforkStack):
    """prefork.py in a fresh cgroup, with the construct's environment for a container of ``limit`` bytes."""

    def __init__(self, example, stack, workers, threads, limit, env, directory):
        self.threads = threads
        base = {"RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES": str(int(0.9 * limit)),
                "RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES": str(int(0.9 * limit) // workers),
                "RESILIENT_ENDPOINT_NAME": "test", "RESILIENT_ENDPOINT_VARIANT": "Primary", "OMP_NUM_THREADS": "1"}
        super().__init__(example, workers, limit, dict(base, **env), directory)

    def invoke(self, body, content_type="application/json", timeout=60):
        return super().invoke(body, content_type, timeout)


def curve_of(example):
    """The curve the construct writes from the example's committed memory-profile.json."""
    with open(os.path.join(ROOT, "examples", "models", example, "memory-profile.json")) as f:
        return json.dumps(json.load(f)["curve"])


def concurrently(n, requests, call):
    """Sends ``requests`` over ``n`` client threads; the answers in order."""
    out = [None] * len(requests)
    it = iter(enumerate(requests))
    lock = threading.Lock()

    def client():
        while True:
            with lock:
                try:
                    i, r = next(it)
                except StopIteration:
                    return
            out[i] = call(r)

    threads = [threading.Thread(target=client) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def bounded_pareto(rng, lo, hi, alpha=1.0):
    u = rng.random()
    return (-(u * hi ** alpha - u * lo ** alpha - hi ** alpha) / (hi ** alpha * lo ** alpha)) ** (-1 / alpha)


class Verdict:
    def __init__(self, answers):
        self.answers = answers

    def statuses(self):
        counts = {}
        for a in self.answers:
            counts[a[0]] = counts.get(a[0], 0) + 1
        return counts

    def refusals(self):
        return [json.loads(a[2]) for a in self.answers if a[0] is not None and 400 <= a[0] < 500]

    def ok(self):
        return [json.loads(a[2]) for a in self.answers if a[0] == 200]


@unittest.skipIf(WHY_NOT, "SKIPPED: the tests under a kernel memory limit — %s" % WHY_NOT)
class KernelMemoryLimitTest(unittest.TestCase):
    def assert_held(self, result, answers, timeout):
        v = Verdict(answers)
        self.assertEqual(result["oomKills"], 0, result)  # the kernel killed no worker
        self.assertEqual(result["deaths"], [], result)  # no worker died, of anything
        self.assertNotIn(None, v.statuses(), "a request got no answer (hung or dropped): %s" % [a[2][:200] for a in answers if a[0] is None])
        self.assertTrue(all(a[3] < timeout for a in answers), max(a[3] for a in answers))
        self.assertEqual(set(v.statuses()) - {200, 400, 413, 415}, set(), v.statuses())  # never a 5XX
        for a in answers:
            if a[0] != 200:
                self.assertEqual(a[1], "application/json", a)  # every refusal a JSON 4XX
                self.assertIn(json.loads(a[2])["reason"], ("too_long", "degraded", "memory", "malformed", "content_type"))
        return v

    @unittest.skipUnless(TORCH, "torch not installed: incident A under a memory limit is skipped " + INSTALL)
    def test_incident_a_power_law_batches_on_three_workers(self):
        d = tempfile.mkdtemp()
        # Three workers holding ~385 MiB together (128 MiB private each; libtorch's pages once) in 520 MiB:
        # without the guard this replay gets a worker OOM-killed (measured: 1 kill at 450 and at 520 MiB).
        c = Container("recommender", "toolkit", 3, 1, 520 * MiB,
                      {"RESILIENT_ENDPOINT_MEMORY_CURVE": curve_of("recommender"), "MAX_SEQ_LEN": "1024", "DEGRADED_MAX_SEQ_LEN": "512"}, d)
        rng = random.Random(7)

        def batch(_):
            n = rng.randint(2, 8)
            return json.dumps({"instances": [{"events": list(range(max(5, min(1024, int(bounded_pareto(rng, 5, 3000)) + 300)))),
                                              "profile": [0.1] * 20} for _ in range(n)]})

        try:
            level0 = concurrently(4, [batch(i) for i in range(40)], lambda b: c.invoke(b))
            c.set_level(1)
            level1 = concurrently(4, [batch(i) for i in range(24)], lambda b: c.invoke(b))
        finally:
            result = c.stop()
            shutil.rmtree(d, ignore_errors=True)
        v0 = self.assert_held(result, level0, 60)
        v1 = self.assert_held(result, level1, 60)
        self.assertGreater(len(v0.ok()), 10, v0.statuses())
        self.assertLessEqual(result["peak"], c.limit)
        # Level 1: the tiers cut every sequence to its newest 512 events and the guard cuts further to what
        # fits: long batches are answered truncated, none refused for memory.
        self.assertTrue(any(p["truncated"] > 0 for o in v1.ok() for p in o["predictions"]), v1.statuses())
        # A refusal for memory at level 1 only when nothing fits even truncated; "degraded" only at level 2 (the
        # container itself past 95 %): never a long request refused that a truncation would have served.
        for r in v1.refusals():
            if r["reason"] == "memory":
                self.assertRegex(r["error"], r"the container has \d+ MiB .* refused at level [12]")
        self.assertTrue(all(o["degradeLevel"] >= 1 for o in v1.ok()))

    @unittest.skipUnless(SKLEARN, "scikit-learn not installed: incident B under a memory limit is skipped " + INSTALL)
    def test_incident_b_a_17x_pulse_on_three_workers_of_four_threads(self):
        d = tempfile.mkdtemp()
        # Three workers of ~70 MiB in 330 MiB, four requests at a time each (the image's gevent workers take
        # several): without the guard this pulse gets workers OOM-killed (measured: 2 kills at 330 MiB).
        c = Container("clustering", "containers", 3, 4, 330 * MiB,
                      {"RESILIENT_ENDPOINT_MEMORY_CURVE": curve_of("clustering"), "MAX_SEQ_LEN": "200000", "DEGRADED_MAX_SEQ_LEN": "20000"}, d)
        rng = random.Random(11)

        def request(_):
            n = rng.randint(100000, 200000)  # the pulse's large requests (incident B: 150× a normal user's)
            return stacks.rows_body(n)  # {"instances": [[2 + (i % 7) * 0.5, 3 + (i % 5) * 0.5] for i in range(n)]}

        try:
            off_peak = [c.invoke(request(i)) for i in range(2)]
            pulse = concurrently(17, [request(i) for i in range(17)], lambda b: c.invoke(b))  # 17× the off-peak concurrency
            c.set_level(1)
            degraded = concurrently(17, [request(i) for i in range(17)], lambda b: c.invoke(b))
        finally:
            result = c.stop()
            shutil.rmtree(d, ignore_errors=True)
        self.assert_held(result, off_peak + pulse, 60)
        v1 = self.assert_held(result, degraded, 60)
        self.assertLessEqual(result["peak"], c.limit)
        self.assertTrue(all(a[0] == 200 for a in off_peak), off_peak)
        self.assertTrue(all(o["rows"] <= 20000 for o in v1.ok()), v1.statuses())  # level 1: the first 20,000 rows or fewer
        self.assertTrue(any(o["truncated"] > 0 for o in v1.ok()), v1.statuses())
        # Truncation is what level 1 buys: more of the same pulse answered than at level 0 (measured 4-5 of 17 at
        # level 0; 10-11 at level 1 on a quiet machine, 7 beside npm test's other lane: how many of the 17 overlap in
        # the container, and so fit its budget together, depends on the machine's load, so no fixed count).
        served_at_0 = sum(1 for a in pulse if a[0] == 200)
        self.assertGreater(len(v1.ok()), served_at_0, (v1.statuses(), served_at_0))


if __name__ == "__main__":
    unittest.main()
