import json
import unittest

from resilient_endpoint_runtime import DegradeLevel


class ClientError(Exception):
    """Shaped like botocore's ClientError: the code is in response['Error']['Code']."""

    def __init__(self, code):
        super().__init__(code)
        self.response = {"Error": {"Code": code}}


class StubSSM:
    def __init__(self, values):
        self.values = list(values)  # a value, or an exception to raise, per call
        self.calls = 0

    def get_parameter(self, Name):
        self.calls += 1
        v = self.values[min(self.calls - 1, len(self.values) - 1)]
        if isinstance(v, Exception):
            raise v
        return {"Parameter": {"Name": Name, "Value": v}}


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def level(n, state="DEGRADED"):
    return json.dumps({"level": n, "state": state, "reasons": []})


class DegradeLevelTest(unittest.TestCase):
    def make(self, values, rng=lambda: 0.5, ttl=5.0, jitter=0.2):
        self.clock = Clock()
        self.ssm = StubSSM(values)
        return DegradeLevel("/breaker/x", client=self.ssm, ttl=ttl, jitter=jitter, clock=self.clock, rng=rng)

    def test_reads_the_level(self):
        d = self.make([level(1)])
        self.assertEqual(d.get(), 1)

    def test_cached_for_the_ttl_then_read_again(self):
        d = self.make([level(1), level(2)])
        self.assertEqual(d.get(), 1)
        self.clock.t += 4.9
        self.assertEqual(d.get(), 1)
        self.assertEqual(self.ssm.calls, 1)
        self.clock.t += 0.2
        self.assertEqual(d.get(), 2)
        self.assertEqual(self.ssm.calls, 2)

    def test_jitter_bounds(self):
        for r in (0.0, 0.25, 0.5, 0.999999):
            d = self.make([level(0)], rng=lambda r=r: r)
            interval = d.next_interval()
            self.assertGreaterEqual(interval, 4.0)
            self.assertLessEqual(interval, 6.0)
        lo = self.make([level(0)], rng=lambda: 0.0).next_interval()
        hi = self.make([level(0)], rng=lambda: 0.999999).next_interval()
        self.assertAlmostEqual(lo, 4.0)
        self.assertAlmostEqual(hi, 6.0, places=4)

    def test_workers_do_not_poll_in_step(self):
        import random
        rng = random.Random(7)
        intervals = {round(self.make([level(0)], rng=rng.random).next_interval(), 3) for _ in range(50)}
        self.assertGreater(len(intervals), 40)

    def test_throttling_keeps_the_last_known_level_and_never_raises(self):
        d = self.make([level(2), ClientError("ThrottlingException"), level(1)])
        self.assertEqual(d.get(), 2)
        self.clock.t += 10
        with self.assertLogs("resilient_endpoint_runtime", "WARNING") as logs:
            self.assertEqual(d.get(), 2)
        self.assertIn("ThrottlingException", logs.output[0])
        self.clock.t += 10
        self.assertEqual(d.get(), 1)

    def test_any_exception_keeps_the_level(self):
        d = self.make([level(1), OSError("network down")])
        self.assertEqual(d.get(), 1)
        self.clock.t += 10
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            self.assertEqual(d.get(), 1)

    def test_missing_parameter_is_level_0_with_a_warning(self):
        d = self.make([ClientError("ParameterNotFound")])
        with self.assertLogs("resilient_endpoint_runtime", "WARNING") as logs:
            self.assertEqual(d.get(), 0)
        self.assertIn("not found", logs.output[0])

    def test_unreadable_values_are_level_0_with_a_warning(self):
        for bad in ("not json", json.dumps({"state": "OPEN"}), json.dumps({"level": 7}), json.dumps({"level": "2"}), json.dumps({"level": True}), json.dumps([1])):
            d = self.make([bad])
            with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
                self.assertEqual(d.get(), 0, bad)

    def test_a_warning_is_logged_once_not_per_request(self):
        d = self.make(["not json"])
        with self.assertLogs("resilient_endpoint_runtime", "WARNING") as logs:
            for _ in range(5):
                d.get()
                self.clock.t += 10
        self.assertEqual(len(logs.output), 1)

    def test_no_parameter_configured(self):
        d = DegradeLevel(None, client=StubSSM([level(2)]))
        d.parameter_name = None
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            self.assertEqual(d.get(), 0)

    def test_parameter_name_from_the_environment(self):
        import os
        os.environ["RESILIENT_ENDPOINT_DEGRADE_PARAMETER"] = "/from/env"
        try:
            self.assertEqual(DegradeLevel(client=StubSSM([level(0)])).parameter_name, "/from/env")
        finally:
            del os.environ["RESILIENT_ENDPOINT_DEGRADE_PARAMETER"]

    def test_bad_settings(self):
        with self.assertRaises(ValueError):
            DegradeLevel("/p", client=StubSSM([]), ttl=0)
        with self.assertRaises(ValueError):
            DegradeLevel("/p", client=StubSSM([]), jitter=1.5)


if __name__ == "__main__":
    unittest.main()
