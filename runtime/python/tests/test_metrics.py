import os
import tempfile
import unittest

from resilient_endpoint_runtime import StageMemoryPublisher, host_memory_percent


class StubCloudWatch:
    def __init__(self, fail=False):
        self.calls = []
        self.fail = fail

    def put_metric_data(self, Namespace, MetricData):
        if self.fail:
            raise RuntimeError("Rate exceeded")
        self.calls.append((Namespace, MetricData))


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class StageMemoryPublisherTest(unittest.TestCase):
    def make(self, **kw):
        self.cw = StubCloudWatch(**kw)
        self.clock = Clock()
        return StageMemoryPublisher(client=self.cw, namespace="ResilientEndpoint/Application", endpoint_name="rec-endpoint",
                                    variant_name="Primary", interval=60, clock=self.clock)

    def test_exactly_the_dimensions_the_stage_alarms_watch(self):
        p = self.make()
        p.record("inference", 71.5)
        p.flush()
        namespace, data = self.cw.calls[0]
        self.assertEqual(namespace, "ResilientEndpoint/Application")
        self.assertEqual(data[0]["MetricName"], "MemoryUtilization")
        self.assertEqual(data[0]["Unit"], "Percent")  # the alarms' threshold is a percentage
        self.assertEqual(data[0]["Dimensions"], [
            {"Name": "EndpointName", "Value": "rec-endpoint"},
            {"Name": "VariantName", "Value": "Primary"},
            {"Name": "Stage", "Value": "inference"},
        ])

    def test_batched_and_rate_limited_one_call_per_interval(self):
        p = self.make()
        for i in range(1000):
            p.record("preprocess" if i % 2 else "inference", 50 + i % 30)
            self.clock.t += 0.05  # 20 samples a second for 50 s
        self.assertEqual(self.cw.calls, [])
        self.clock.t += 10.5  # past the 60-s interval
        p.record("inference", 90)
        self.assertEqual(len(self.cw.calls), 1)
        stats = {d["Dimensions"][2]["Value"]: d["StatisticValues"] for d in self.cw.calls[0][1]}
        self.assertEqual(stats["inference"]["Maximum"], 90)
        self.assertEqual(stats["inference"]["SampleCount"] + stats["preprocess"]["SampleCount"], 1001)

    def test_errors_are_logged_never_raised(self):
        p = self.make(fail=True)
        p.record("inference", 60)
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            p.flush()

    def test_out_of_range_samples_are_dropped(self):
        p = self.make()
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            p.record("inference", 140)
        p.flush()
        self.assertEqual(self.cw.calls, [])

    def test_off_without_the_environment(self):
        for k in ("RESILIENT_ENDPOINT_METRICS_NAMESPACE", "RESILIENT_ENDPOINT_NAME", "RESILIENT_ENDPOINT_VARIANT"):
            os.environ.pop(k, None)
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            p = StageMemoryPublisher(client=StubCloudWatch())
        p.record("inference", 50)
        p.flush()
        self.assertFalse(p.enabled)

    def test_host_memory_percent(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    4000000 kB\n")
        try:
            self.assertAlmostEqual(host_memory_percent(f.name), 75.0)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
