"""CloudWatch out of every request's path, every count stored once: the recommender on three worker processes
(TorchServe's real Python workers when ``TS_SOURCES`` holds their sources, else prefork.py's stand-in for them),
its stage metrics and the guard's metrics sent to a local stand-in for CloudWatch (cloudwatch_standin.py) that
answers late (5 s), throttles, denies, and hangs, one after the other, then comes back.

What must hold: no request slower than 2 s (it was 5.1 s when CloudWatch answered after 5 s, 60 s when it never
answered, and TorchServe killed the workers), no worker dies, and once CloudWatch is back, every deliberate 4XX the
clients got is stored exactly once in ``DeliberateClientErrors``, and every prediction once in the stage metrics.

Needs root and the cgroup v1 memory controller (the stack runs in a cgroup of 2 GiB), torch and botocore. ~70 s of
wall time, a few seconds of CPU.
"""
import json
import os
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import stacks  # noqa: E402
from cloudwatch_standin import StandIn  # noqa: E402
from test_serving import INSTALL, TORCH  # noqa: E402

WHY_NOT = stacks.cgroup_unavailable()
PHASES = (("ok", 6), ("slow", 8), ("throttle", 8), ("deny", 8), ("hang", 8))


def have_botocore():
    try:
        import botocore  # noqa: F401
        return True
    except ImportError:
        return False


@unittest.skipIf(WHY_NOT, "SKIPPED: the CloudWatch stand-in test — %s" % WHY_NOT)
@unittest.skipUnless(TORCH and have_botocore(), "torch or botocore not installed: the CloudWatch stand-in test is skipped " + INSTALL)
class CloudWatchOffTheRequestPathTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cloudwatch = StandIn(delay=5.0).__enter__()
        limit = 2048 * stacks.MiB
        env = stacks.construct_environment("recommender", limit, 3)
        env.update(cls.cloudwatch.environment(), RESILIENT_ENDPOINT_STAGE_METRICS_SECONDS="2")
        kind = stacks.TorchServeStack if stacks.TorchServeStack.sources() else stacks.PreforkStack
        if kind is stacks.PreforkStack:
            env["PREFORK_PRELOAD"] = "torch"  # one import of torch for the three workers: their memory is not what this measures
        cls.stack = kind("recommender", 3, limit, env)
        cls.answers = []
        stop = threading.Event()
        lock = threading.Lock()
        ordinary = stacks.body("recommender", ([20], 1))
        malformed = json.dumps({"events": [], "profile": [0.1] * 20})

        def client(n):
            i = 0
            while not stop.is_set():
                i += 1
                bad = i % 10 == n  # one request in ten a deliberate 400
                a = cls.stack.invoke(malformed if bad else ordinary, timeout=120)
                with lock:
                    cls.answers.append((time.monotonic(), cls.cloudwatch.mode, a[0], a[3]))
                time.sleep(0.15)

        try:
            threads = [threading.Thread(target=client, args=(n,)) for n in range(3)]
            for t in threads:
                t.start()
            for mode, seconds in PHASES:
                cls.cloudwatch.mode = mode
                time.sleep(seconds)
            cls.cloudwatch.mode = "ok"
            stop.set()
            for t in threads:
                t.join()
            # Back: the next 10-s period sends what was kept, the stage metrics within their 2 s.
            expected = sum(1 for a in cls.answers if a[2] == 400)
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline and cls.cloudwatch.total("DeliberateClientErrors") < expected:
                time.sleep(0.5)
            time.sleep(4)  # a call that would store a second copy has time to
        finally:
            cls.result = cls.stack.stop()
            cls.cloudwatch.__exit__()

    def test_no_request_waits_on_cloudwatch_whatever_it_does(self):
        slowest = max(a[3] for a in self.answers)
        by_mode = {m: max((a[3] for a in self.answers if a[1] == m), default=0.0) for m, _ in PHASES}
        self.assertLess(slowest, 2.0, by_mode)
        self.assertNotIn(None, {a[2] for a in self.answers})
        self.assertEqual({a[2] for a in self.answers}, {200, 400})

    def test_no_worker_dies(self):
        self.assertEqual((self.result["oomKills"], self.result["deaths"]), (0, []))

    def test_every_deliberate_4xx_is_stored_once_when_cloudwatch_comes_back(self):
        expected = sum(1 for a in self.answers if a[2] == 400)
        self.assertGreater(expected, 20)
        self.assertEqual(self.cloudwatch.total("DeliberateClientErrors"), expected)
        self.assertEqual(self.cloudwatch.total("GuardMemoryRefusals"), 0)
        modes = {mode for _, mode in self.cloudwatch.calls}
        self.assertTrue({"slow", "throttle", "deny", "hang"} <= modes, modes)  # it was asked in every mode

    def test_every_prediction_is_in_the_stage_metrics_once(self):
        counted = sum(d.get("count", 0) for d in self.cloudwatch.stored
                      if d.get("name") == "MemoryUtilization" and d["dimensions"].get("Stage") == "inference")
        self.assertEqual(counted, sum(1 for a in self.answers if a[2] == 200))


if __name__ == "__main__":
    unittest.main()
