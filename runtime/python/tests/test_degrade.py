"""The degrade-level reader, with botocore's real client, exceptions and timeouts where boto3 is installed.

The SSM side is a real boto3 client: botocore's Stubber for AWS's error answers (throttling, a missing
parameter), and a local TCP server that accepts connections but never answers for an SSM that is slow or
unreachable. Without boto3 (a bare interpreter) those tests say they were skipped.
"""
import json
import multiprocessing
import os
import socket
import tempfile
import threading
import time
import unittest

from resilient_endpoint_runtime import DegradeLevel
from resilient_endpoint_runtime.degrade import error_code, region_from_environment, ssm_client

try:
    import boto3  # noqa: F401
    import botocore.exceptions as botocore_exceptions
    from botocore.stub import Stubber
    HAVE_BOTO = True
except ImportError:  # pragma: no cover - a bare interpreter
    HAVE_BOTO = False

needs_boto = unittest.skipUnless(HAVE_BOTO, "boto3/botocore not installed: real-client tests skipped")


def level(n, state="DEGRADED"):
    return json.dumps({"level": n, "state": state, "reasons": []})


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


class SilentServer:
    """Accepts TCP connections on 127.0.0.1 and never answers: an SSM endpoint that hangs."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.held = []
        self.stop = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        return "http://127.0.0.1:%d" % self.sock.getsockname()[1]

    def _accept(self):
        self.sock.settimeout(0.1)
        while not self.stop:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                pass

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()
        for c in self.held:
            c.close()
        self.sock.close()


class TricklingServer:
    """An HTTP server on 127.0.0.1 that answers 200 with a GetParameter body, one byte every 0.3 s."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return "http://127.0.0.1:%d" % self.sock.getsockname()[1]

    def _serve(self):
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn = self.sock.accept()[0]
            except OSError:
                continue
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn):
        body = json.dumps({"Parameter": {"Name": "/p", "Value": level(2), "Type": "String"}}).encode()
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        try:
            conn.settimeout(2)
            conn.recv(65536)
            for i in range(len(answer)):
                if self.stop.wait(0.3):
                    break
                conn.sendall(answer[i:i + 1])
        except OSError:
            pass
        finally:
            conn.close()

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.sock.close()


def real_client(endpoint_url="https://ssm.us-east-1.amazonaws.com"):
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    import boto3
    from botocore.config import Config
    # The same fail-fast settings as ssm_client(), pointed at a test endpoint.
    return boto3.client("ssm", region_name="us-east-1", endpoint_url=endpoint_url,
                        config=Config(connect_timeout=0.5, read_timeout=0.5, retries={"total_max_attempts": 1}))


class DegradeLevelTest(unittest.TestCase):
    def make(self, values, rng=lambda: 0.5, ttl=10.0, jitter=0.2, cache_path=None):
        self.clock = Clock()
        self.ssm = StubSSM(values)
        return DegradeLevel("/breaker/x", client=self.ssm, ttl=ttl, jitter=jitter, clock=self.clock, rng=rng, cache_path=cache_path, background=False)

    def test_reads_the_level(self):
        self.assertEqual(self.make([level(1)]).get(), 1)

    def test_cached_for_the_ttl_then_read_again(self):
        d = self.make([level(1), level(2)])
        self.assertEqual(d.get(), 1)
        self.clock.t += 9.9
        self.assertEqual(d.get(), 1)
        self.assertEqual(self.ssm.calls, 1)
        self.clock.t += 0.2
        self.assertEqual(d.get(), 2)
        self.assertEqual(self.ssm.calls, 2)

    def test_jitter_bounds(self):
        lo = self.make([level(0)], rng=lambda: 0.0).next_interval()
        hi = self.make([level(0)], rng=lambda: 0.999999).next_interval()
        self.assertAlmostEqual(lo, 8.0)
        self.assertAlmostEqual(hi, 12.0, places=4)

    def test_instances_do_not_poll_in_step(self):
        import random
        rng = random.Random(7)
        intervals = {round(self.make([level(0)], rng=rng.random).next_interval(), 3) for _ in range(50)}
        self.assertGreater(len(intervals), 40)

    def test_any_exception_keeps_the_level_and_backs_off(self):
        d = self.make([level(1), OSError("network down"), OSError("network down"), level(2)])
        self.assertEqual(d.get(), 1)
        self.clock.t += 11
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            self.assertEqual(d.get(), 1)
        # The failure doubled the wait (20 s ± 20 %): requests in between never call SSM.
        self.clock.t += 15
        self.assertEqual(d.get(), 1)
        self.assertEqual(self.ssm.calls, 2)
        self.clock.t += 10
        self.assertEqual(d.get(), 1)  # second failure: 40 s now
        self.assertEqual(self.ssm.calls, 3)
        self.clock.t += 25
        self.assertEqual(d.get(), 1)  # 25 s later: still waiting (the wait grows with each failure)
        self.assertEqual(self.ssm.calls, 3)
        self.clock.t += 25
        self.assertEqual(d.get(), 2)

    def test_an_exception_without_a_response_dict_never_raises(self):
        class NoResponse(Exception):
            response = None

        d = self.make([NoResponse("boom")])
        self.assertEqual(d.get(), 0)
        self.assertEqual(error_code(NoResponse()), "NoResponse")

    def test_missing_parameter_is_level_0_with_a_warning(self):
        class NotFound(Exception):
            response = {"Error": {"Code": "ParameterNotFound"}}

        d = self.make([NotFound()])
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
                self.clock.t += 20
        self.assertEqual(len(logs.output), 1)

    def test_no_parameter_configured(self):
        d = DegradeLevel(None, client=StubSSM([level(2)]), cache_path=None, background=False)
        d.parameter_name = None
        with self.assertLogs("resilient_endpoint_runtime", "WARNING"):
            self.assertEqual(d.get(), 0)

    def test_parameter_name_and_region_from_the_environment(self):
        saved = dict(os.environ)
        try:
            os.environ["RESILIENT_ENDPOINT_DEGRADE_PARAMETER"] = "/from/env"
            self.assertEqual(DegradeLevel(client=StubSSM([level(0)])).parameter_name, "/from/env")
            for k in ("AWS_DEFAULT_REGION", "AWS_REGION", "SAGEMAKER_REGION"):
                os.environ.pop(k, None)
            self.assertIsNone(region_from_environment())
            os.environ["SAGEMAKER_REGION"] = "eu-west-1"
            self.assertEqual(region_from_environment(), "eu-west-1")
            os.environ["AWS_REGION"] = "eu-central-1"
            self.assertEqual(region_from_environment(), "eu-central-1")
            os.environ["AWS_DEFAULT_REGION"] = "ap-south-1"  # what the construct writes wins
            self.assertEqual(region_from_environment(), "ap-south-1")
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def test_bad_settings(self):
        with self.assertRaises(ValueError):
            DegradeLevel("/p", client=StubSSM([]), ttl=0)
        with self.assertRaises(ValueError):
            DegradeLevel("/p", client=StubSSM([]), jitter=1.5)

    def test_requests_never_wait_for_a_refresh_it_runs_in_the_background(self):
        entered = threading.Event()
        release = threading.Event()

        class SlowSSM:
            calls = 0

            def get_parameter(self, Name):
                SlowSSM.calls += 1
                entered.set()
                release.wait(5)
                return {"Parameter": {"Value": level(2)}}

        d = DegradeLevel("/p", client=SlowSSM(), cache_path=None, deadline=10)
        started = time.perf_counter()
        results = [d.get()]  # starts the refresh
        entered.wait(5)
        results += [d.get() for _ in range(100)]  # while the refresh is in flight
        elapsed = time.perf_counter() - started
        t = time.perf_counter()
        d.refresh()  # a second refresh while one is in flight: returns at once, never queues behind it
        self.assertLess(time.perf_counter() - t, 0.5)
        release.set()
        wait_for(lambda: d.get() == 2)
        self.assertEqual(set(results), {0})
        self.assertLess(elapsed, 0.05 + 0.5)  # entered.wait: the background thread's start-up only
        self.assertEqual(SlowSSM.calls, 1)
        self.assertEqual(d.get(), 2)


def wait_for(predicate, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return True
        time.sleep(0.01)
    raise AssertionError("not reached within %.1f s" % timeout)


def refresh_ended(d, timeout):
    """Waits until ``d``'s background refresh has returned: what it found is in the shared file and the
    instance's lock is released. (``d._failures`` moves before the file is written: a test that waited on it
    raced the write.)"""
    wait_for(lambda: d._refresher is not None and not d._refresher[1].is_alive(), timeout)


class TimingTest(unittest.TestCase):
    def test_the_first_read_is_not_late_when_making_the_client_takes_longer_than_the_deadline(self):
        # Importing boto3 and making the client takes seconds on a busy host; charged to the 1-s deadline, the
        # first read of every process failed and the level arrived a back-off (~20 s) late.
        class SlowClient(DegradeLevel):
            def _ssm(self):
                if self._client is None:
                    time.sleep(1.5)
                    self._client = StubSSM([level(2)])
                return self._client

        d = SlowClient("/p", cache_path=None, deadline=1.0)
        started = time.monotonic()
        self.assertEqual(d.get(), 0)  # never waits: the read runs in the background
        wait_for(lambda: d.get() == 2, 4.0)
        self.assertLess(time.monotonic() - started, 1.5 + 1.0 + 1.5)  # the client's making, then at most the deadline (a busy host's slack)
        self.assertEqual((d._failures, d.reads), (0, 1))

    def test_a_backward_step_of_the_wall_clock_does_not_freeze_the_level(self):
        # A wall clock stepped back an hour (NTP, a VM restored) held the last level for that hour: the expiry was
        # wall-clock time. The module is loaded afresh while time.time is the stepping clock, as a process starting
        # at that moment would be; the level must still refresh after its TTL.
        import importlib
        from unittest import mock

        import resilient_endpoint_runtime.degrade as degrade_module
        wall = [time.time()]
        with mock.patch("time.time", lambda: wall[0]):
            fresh = importlib.reload(degrade_module)
            try:
                d = fresh.DegradeLevel("/p", client=StubSSM([level(1), level(2)]), ttl=0.2, jitter=0.0, cache_path=None, background=False)
                self.assertEqual(d.get(), 1)
                wall[0] -= 3600  # the step back
                time.sleep(0.3)
                self.assertEqual(d.get(), 2)
            finally:
                importlib.reload(degrade_module)


class SharedAcrossWorkersTest(unittest.TestCase):
    """One reader per instance: the workers share the level through a file; only the lock holder calls SSM."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "level.json")

    def test_a_second_worker_uses_the_file_without_calling_ssm(self):
        clock = Clock()
        a_ssm, b_ssm = StubSSM([level(1)]), StubSSM([level(2)])
        a = DegradeLevel("/p", client=a_ssm, clock=clock, rng=lambda: 0.5, cache_path=self.path, background=False)
        b = DegradeLevel("/p", client=b_ssm, clock=clock, rng=lambda: 0.5, cache_path=self.path, background=False)
        self.assertEqual(a.get(), 1)
        self.assertEqual(b.get(), 1)
        self.assertEqual((a_ssm.calls, b_ssm.calls), (1, 0))
        clock.t += 11  # stale: whoever looks first refreshes it for both
        self.assertEqual(b.get(), 2)
        self.assertEqual(a.get(), 2)
        self.assertEqual((a_ssm.calls, b_ssm.calls), (1, 1))

    def test_a_corrupt_or_future_dated_shared_file_is_not_trusted(self):
        for content in ({"level": True, "fetchedAt": 1000.0, "clock": "monotonic"}, {"level": 2, "fetchedAt": 1000.0 + 3600, "clock": "monotonic"},
                        {"level": 7, "fetchedAt": 1000.0, "clock": "monotonic"},
                        {"level": 2, "fetchedAt": 1000.0}):  # an older helper's file: wall-clock times, not comparable
            with open(self.path, "w") as f:
                json.dump(content, f)
            ssm = StubSSM([level(1)])
            d = DegradeLevel("/p", client=ssm, clock=Clock(), rng=lambda: 0.5, cache_path=self.path, background=False)
            self.assertEqual(d.get(), 1, content)
            self.assertEqual(ssm.calls, 1, content)

    def test_a_worker_that_finds_the_lock_taken_keeps_its_level(self):
        import fcntl
        held = open(self.path + ".lock", "a")
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            ssm = StubSSM([level(2)])
            d = DegradeLevel("/p", client=ssm, cache_path=self.path, background=False)
            self.assertEqual(d.get(), 0)
            self.assertEqual(ssm.calls, 0)
        finally:
            held.close()

    def test_eight_forked_workers_make_about_one_call_per_ttl(self):
        ctx = multiprocessing.get_context("fork")
        counter = ctx.Value("i", 0)

        def worker(path, counter):
            class CountingSSM:
                def get_parameter(self, Name):
                    with counter.get_lock():
                        counter.value += 1
                    return {"Parameter": {"Value": level(1)}}

            d = DegradeLevel("/p", client=CountingSSM(), ttl=0.5, jitter=0.2, cache_path=path)
            end = time.time() + 2.0
            seen = False
            while time.time() < end:
                v = d.get()
                # A worker that starts while another holds the lock answers its initial 0 at once (it never
                # waits); once it has the level it never loses it.
                assert v == 1 or (v == 0 and not seen), v
                seen = seen or v == 1
                time.sleep(0.002)
            assert seen

        procs = [ctx.Process(target=worker, args=(self.path, counter)) for _ in range(8)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(10)
        self.assertTrue(all(p.exitcode == 0 for p in procs))
        # 2 s at a 0.5 s TTL: ~4–6 reads for the instance (8 workers on their own would make ~32).
        self.assertLessEqual(counter.value, 10)
        self.assertGreaterEqual(counter.value, 3)


@needs_boto
class RealBotocoreTest(unittest.TestCase):
    def test_throttling_from_the_real_client_keeps_the_level(self):
        client = real_client()
        stub = Stubber(client)
        stub.add_response("get_parameter", {"Parameter": {"Name": "/p", "Value": level(2), "Type": "String"}}, {"Name": "/p"})
        stub.add_client_error("get_parameter", service_error_code="ThrottlingException", http_status_code=400)
        stub.add_client_error("get_parameter", service_error_code="ParameterNotFound", http_status_code=400)
        clock = Clock()
        with stub:
            d = DegradeLevel("/p", client=client, clock=clock, rng=lambda: 0.5, cache_path=None, background=False)
            self.assertEqual(d.get(), 2)
            clock.t += 11
            with self.assertLogs("resilient_endpoint_runtime", "WARNING") as logs:
                self.assertEqual(d.get(), 2)
            self.assertIn("ThrottlingException", logs.output[0])
            clock.t += 25
            self.assertEqual(d.get(), 0)  # the parameter is gone: level 0

    def test_botocore_connection_errors_have_no_response_and_never_raise(self):
        for e in (
            botocore_exceptions.ReadTimeoutError(endpoint_url="https://ssm.us-east-1.amazonaws.com/"),
            botocore_exceptions.ConnectTimeoutError(endpoint_url="https://ssm.us-east-1.amazonaws.com/"),
            botocore_exceptions.ConnectionClosedError(endpoint_url="https://ssm.us-east-1.amazonaws.com/"),
            botocore_exceptions.EndpointConnectionError(endpoint_url="https://ssm.us-east-1.amazonaws.com/"),
            botocore_exceptions.NoCredentialsError(),
        ):
            d = DegradeLevel("/p", client=StubSSM([level(1), e]), clock=Clock(), cache_path=None, background=False)
            d.get()
            d._clock.t += 11
            self.assertEqual(d.get(), 1, type(e).__name__)
            self.assertEqual(error_code(e), type(e).__name__)

    def test_an_ssm_that_never_answers_never_holds_a_request(self):
        with SilentServer() as url:
            d = DegradeLevel("/p", client=real_client(url), cache_path=None)
            started = time.perf_counter()
            self.assertEqual(d.get(), 0)
            for _ in range(100):
                d.get()
            elapsed = time.perf_counter() - started
            wait_for(lambda: d.reads == 1 and d._failures == 1)  # the background read gave up
        self.assertLess(elapsed, 0.25)  # the requests never waited, not even the first (0.5 s would be one read timeout)

    def test_a_response_trickling_a_byte_every_0_3_s_is_abandoned_at_the_deadline(self):
        # botocore's read timeout is per socket read: a byte every 0.3 s never trips the 0.5 s timeout, and
        # this answer takes ~30 s to arrive. The refresh gives up at its overall deadline (1 s), records
        # the failure in the instance's file, and no request waits meanwhile.
        path = os.path.join(tempfile.mkdtemp(), "level.json")
        with TricklingServer() as url:
            d = DegradeLevel("/p", client=real_client(url), cache_path=path)
            started = time.perf_counter()
            answers = []
            while time.perf_counter() - started < 1.6:
                t = time.perf_counter()
                answers.append((d.get(), time.perf_counter() - t))
                time.sleep(0.01)
            self.assertTrue(all(level == 0 for level, _ in answers))
            self.assertLess(max(took for _, took in answers), 0.25)  # never a read: the answer trickles for ~30 s
            refresh_ended(d, 1.0)
            self.assertEqual(d._failures, 1)
            with open(path) as f:
                shared = json.load(f)
            self.assertGreater(shared["retryAt"], time.monotonic() + 5)  # shared: the instance's next try, after a back-off
            # A second worker of the instance reads the failure from the file and does not call SSM.
            other = DegradeLevel("/p", client=StubSSM([level(2)]), cache_path=path, background=False)
            self.assertEqual(other.get(), 0)
            self.assertEqual(other._client.calls, 0)
            self.assertEqual(d.reads, 1)

    def test_an_unreachable_ssm_fails_fast_and_is_shared_with_the_other_workers(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there: connection refused
        path = os.path.join(tempfile.mkdtemp(), "level.json")
        d = DegradeLevel("/p", client=real_client("http://127.0.0.1:%d" % port), cache_path=path)
        started = time.perf_counter()
        self.assertEqual(d.get(), 0)
        self.assertLess(time.perf_counter() - started, 0.25)  # no network wait (a thread start under load)
        refresh_ended(d, 1.5)
        self.assertEqual(d._failures, 1)
        others = [DegradeLevel("/p", client=StubSSM([level(2)]), cache_path=path, background=False) for _ in range(7)]
        self.assertEqual([o.get() for o in others], [0] * 7)
        self.assertEqual(sum(o._client.calls for o in others), 0)  # one read per instance per interval

    def test_the_client_is_made_for_the_region_in_the_environment(self):
        saved = dict(os.environ)
        try:
            for k in ("AWS_DEFAULT_REGION", "AWS_REGION"):
                os.environ.pop(k, None)
            os.environ["SAGEMAKER_REGION"] = "eu-west-1"
            client = ssm_client()
            self.assertEqual(client.meta.region_name, "eu-west-1")
            self.assertEqual(client.meta.config.retries.get("total_max_attempts"), 1)
            self.assertEqual((client.meta.config.connect_timeout, client.meta.config.read_timeout), (0.5, 0.5))
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def test_no_region_anywhere_is_level_0_with_a_warning_not_an_exception(self):
        saved = dict(os.environ)
        try:
            for k in ("AWS_DEFAULT_REGION", "AWS_REGION", "SAGEMAKER_REGION"):
                os.environ.pop(k, None)
            os.environ["AWS_CONFIG_FILE"] = "/nonexistent"
            d = DegradeLevel("/p", cache_path=None, background=False)
            with self.assertLogs("resilient_endpoint_runtime", "WARNING") as logs:
                self.assertEqual(d.get(), 0)
            self.assertIn("NoRegionError", logs.output[0])
        finally:
            os.environ.clear()
            os.environ.update(saved)


if __name__ == "__main__":
    unittest.main()
