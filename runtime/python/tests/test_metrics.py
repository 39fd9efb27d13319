import os
import tempfile
import threading
import unittest

from resilient_endpoint_runtime import StageMemoryPublisher, host_memory_percent


class StubCloudWatch:
    def __init__(self, fail=False, delay=0.0):
        self.calls = []
        self.fail = fail
        self.delay = delay
        self.threads = set()

    def put_metric_data(self, Namespace, MetricData):
        self.threads.add(threading.get_ident())
        if self.delay:
            threading.Event().wait(self.delay)
        if self.fail:
            raise RuntimeError("Rate exceeded")
        self.calls.append((Namespace, MetricData))


def time_now():
    import time
    return time.monotonic()


def wait_for(predicate, timeout=5.0):
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError("not reached within %.1f s" % timeout)


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
                                    variant_name="Primary", interval=60, clock=self.clock, background=False)

    def test_exactly_the_dimensions_the_stage_alarms_watch(self):
        p = self.make()
        p.record("inference", 71.5)
        self.assertTrue(p.flush(wait=5))
        namespace, data = self.cw.calls[0]
        self.assertEqual(namespace, "ResilientEndpoint/Application")
        self.assertEqual(data[0]["MetricName"], "MemoryUtilization")
        self.assertEqual(data[0]["Unit"], "Percent")  # the alarms' threshold is a percentage
        self.assertEqual(data[0]["Dimensions"], [
            {"Name": "EndpointName", "Value": "rec-endpoint"},
            {"Name": "VariantName", "Value": "Primary"},
            {"Name": "Stage", "Value": "inference"},
        ])

    def test_batched_and_rate_limited_one_call_per_interval_never_in_a_requests_path(self):
        p = self.make()
        for i in range(1000):
            p.record("preprocess" if i % 2 else "inference", 50 + i % 30)
            self.clock.t += 0.05  # 20 samples a second for 50 s
            p.due()  # the background's check
        self.assertEqual(self.cw.calls, [])
        self.clock.t += 10.5  # past the 60-s interval
        p.record("inference", 90)
        self.assertEqual(self.cw.calls, [])  # a request only records, whatever the time: it never waits on CloudWatch
        p.due()
        wait_for(lambda: len(self.cw.calls) == 1)
        self.assertEqual(self.cw.threads, {p.courier._thread.ident})  # the courier's thread made the call
        stats = {d["Dimensions"][2]["Value"]: d["StatisticValues"] for d in self.cw.calls[0][1]}
        self.assertEqual(stats["inference"]["Maximum"], 90)
        self.assertEqual(stats["inference"]["SampleCount"] + stats["preprocess"]["SampleCount"], 1001)

    def test_errors_are_logged_never_raised_and_the_samples_go_with_the_next_call(self):
        p = self.make(fail=True)
        p.record("inference", 60)
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            self.assertFalse(p.flush(wait=5))
        p.record("inference", 80)
        self.cw.fail = False
        self.assertTrue(p.flush(wait=5))
        stats = self.cw.calls[0][1][0]["StatisticValues"]
        self.assertEqual((stats["SampleCount"], stats["Sum"], stats["Minimum"], stats["Maximum"]), (2, 140.0, 60, 80))

    def test_a_slow_cloudwatch_holds_no_request_and_no_flush(self):
        p = self.make(delay=1.0)
        p.record("inference", 60)
        p.flush()  # hands the call over and returns
        started = time_now()
        for i in range(100):
            p.record("inference", 61)
        p.flush()  # the courier is busy: kept for the next flush
        self.assertLess(time_now() - started, 0.5)  # the call takes a second: nobody waited for it
        wait_for(lambda: len(self.cw.calls) == 1 and not p.courier.busy, 3)
        self.assertTrue(p.flush(wait=3))
        self.assertEqual(self.cw.calls[1][1][0]["StatisticValues"]["SampleCount"], 100)

    def test_out_of_range_samples_are_dropped(self):
        p = self.make()
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            p.record("inference", 140)
        self.assertIsNone(p.flush())
        self.assertEqual(self.cw.calls, [])

    def test_off_without_the_environment(self):
        for k in ("RESILIENT_ENDPOINT_METRICS_NAMESPACE", "RESILIENT_ENDPOINT_NAME", "RESILIENT_ENDPOINT_VARIANT"):
            os.environ.pop(k, None)
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            p = StageMemoryPublisher(client=StubCloudWatch())
        p.record("inference", 50)
        self.assertIsNone(p.flush())
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
