"""Real OS threads under gevent: what runs in the background keeps running while a request computes.

AWS's scikit-learn and XGBoost images serve with gunicorn's gevent worker, which calls
``gevent.monkey.patch_all()`` before it loads the model: a ``threading.Thread`` is then a greenlet, which runs
only when the request in front of it yields. The checks run in a fresh interpreter patched exactly so
(Debian's python3-gevent; skipped, saying so, where gevent is not installed), with a CPU-bound loop standing
for a predict that never yields; the helper's own threads must make progress during it.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from resilient_endpoint_runtime import _native

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.normpath(os.path.join(HERE, ".."))


def have_gevent():
    """Installed for this interpreter (found, not imported: the checks run in a fresh interpreter that imports it, and a
    gevent that is found but does not import fails them there)."""
    import importlib.util
    return importlib.util.find_spec("gevent") is not None


GEVENT = have_gevent()

UNDER_GEVENT = r"""
from gevent import monkey
monkey.patch_all()  # what gunicorn's gevent worker does before it loads the application
import json, os, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
import gevent
from resilient_endpoint_runtime import MemoryCurve, MemoryGuard
from resilient_endpoint_runtime.degrade import DegradeLevel
from resilient_endpoint_runtime.ledger import InstanceLedger
from resilient_endpoint_runtime.metrics import GuardMetricsPublisher

def compute(seconds, until):
    # A predict that never yields to gevent's hub (numpy, torch, scikit-learn in C), for up to `seconds`: it ends once
    # until() holds (what the check waits for has happened while it computed), else after `seconds`. (start, end,
    # seconds until until() held or None.)
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if until():
            now = time.monotonic()
            return started, now, now - started
    return started, time.monotonic(), None

out = {}

class Sampled:
    limit = None
    def __init__(self):
        self.at = []
    def working_set(self):
        self.at.append(time.monotonic())
        return 10 * 2**20

class CloudWatch:
    def __init__(self):
        self.at = []
    def put_metric_data(self, **kw):
        self.at.append(time.monotonic())

# The ledger's leader samples 4 times a second and hands the guard's metrics over every period.
box, cw = Sampled(), CloudWatch()
led = InstanceLedger(os.path.join(tempfile.mkdtemp(), "x.ledger"), container=box)
led.budget = 1000 * 2**20
led.publish_every = 0.3
led.publisher = GuardMetricsPublisher(client=cw, namespace="N", endpoint_name="e", variant_name="v")
led.start()
gevent.sleep(0.05)
t0 = time.monotonic()
# Up to 2 s (8 samples and 6 publishes on an idle host), ended once 3 samples and 2 publishes came during it (~0.7 s).
started, ended, _ = compute(2.0, until=lambda: len([t for t in box.at if t > t0]) >= 3 and len([t for t in cw.at if t > t0]) >= 2)
out["samples"] = len([t for t in box.at if started < t <= ended])
out["publishes"] = len([t for t in cw.at if started < t <= ended])
led.stop()

# The degrade level's refresh, started by a request's read, completes while that request computes.
class SSM:
    def get_parameter(self, Name):
        return {"Parameter": {"Name": Name, "Value": json.dumps({"level": 2})}}

d = DegradeLevel("/p", client=SSM(), cache_path=None, ttl=10.0)
d.get()
_, _, seen = compute(1.0, until=lambda: d._level == 2)
out["levelSeenAfter"] = seen

# The backstop keys on the OS thread: a request on a new greenlet of a warm OS thread arms it.
g = MemoryGuard(100000 * 2**20, MemoryCurve(b=1), published=lambda: 0)
g.limit_process()
first = gevent.spawn(lambda: g.admit(10).__exit__(None, None, None) or gevent.sleep(0.5))  # warms the thread, stays alive
gevent.sleep(0.05)
def second():
    with g.admit(10):
        return g.armed_limit
out["armedOnAWarmThread"] = gevent.spawn(second).get() is not None
first.kill()
print(json.dumps(out))
"""


@unittest.skipUnless(GEVENT, "gevent is not installed for %s (apt-get install python3-gevent): the gevent checks are skipped" % sys.executable)
class UnderGeventTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = subprocess.run([sys.executable, "-c", UNDER_GEVENT, RUNTIME], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError(r.stderr[-3000:])
        cls.out = json.loads(r.stdout.strip().splitlines()[-1])

    def test_the_ledgers_sampling_goes_on_while_a_request_computes(self):
        self.assertGreaterEqual(self.out["samples"], 3, self.out)  # 0.25-s samples over 2 s: 8 on an idle host (a greenlet: none)

    def test_the_guards_metrics_are_handed_over_while_a_request_computes(self):
        self.assertGreaterEqual(self.out["publishes"], 2, self.out)  # every 0.3 s here (10 s in a container)

    def test_the_level_read_started_by_a_request_arrives_while_it_computes(self):
        self.assertIsNotNone(self.out["levelSeenAfter"], self.out)
        self.assertLess(self.out["levelSeenAfter"], 1.0, self.out)  # a greenlet: never, while it computes

    def test_the_backstop_arms_for_a_new_greenlet_on_an_os_thread_that_has_run_a_request(self):
        self.assertTrue(self.out["armedOnAWarmThread"], self.out)


class NativeTest(unittest.TestCase):
    def test_a_thread_runs_joins_and_reports_its_ids(self):
        seen = []
        t = _native.Thread(lambda: (seen.append((threading.get_ident(), threading.get_native_id())), time.sleep(0.1)), "t").start()
        self.assertTrue(t.is_alive())
        t.join(2)
        self.assertFalse(t.is_alive())
        self.assertEqual(seen, [(t.ident, t.native_id)])

    def test_start_returns_once_the_thread_runs(self):
        # start_new_thread returns before the thread binds its state; an interpreter exiting in that window crashed
        # (SIGSEGV at exit of any worker that had just started the guard's background: CPython gh-108987, < 3.11.6).
        release = _native.Event()
        for _ in range(5):
            t = _native.Thread(lambda: release.wait(5), "t").start()
            self.assertIsNotNone(t.native_id)  # set by the thread itself: it has run by the time start() returned
        release.set()

    def test_nothing_starts_once_the_interpreter_exits(self):
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from resilient_endpoint_runtime import _native\n"
                "import atexit; atexit._run_exitfuncs()  # what the interpreter runs as it exits\n"
                "ran = []\n"
                "t = _native.Thread(lambda: ran.append(1), 't').start()\n"
                "_native.sleep(0.2)\n"
                "print(ran, t.is_alive(), t.native_id)\n") % RUNTIME
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "[] False None"), r.stderr)

    def test_an_event_wakes_a_waiter_and_times_out(self):
        e = _native.Event()
        self.assertFalse(e.wait(0.05))
        threading.Timer(0.05, e.set).start()
        self.assertTrue(e.wait(2))
        e.set()  # twice: no error
        self.assertTrue(e.is_set())

    def test_a_courier_makes_its_client_before_the_call_and_refuses_a_second_call_while_busy(self):
        made, release = [], _native.Event()

        def make():
            time.sleep(0.3)
            made.append(threading.get_ident())
            return "client"

        c = _native.Courier("test", make)
        job = c.submit(lambda client: (release.wait(5), client)[1])
        self.assertTrue(job.started.wait(2))
        with self.assertRaises(_native.Busy):
            c.submit(lambda client: None)
        with self.assertRaises(TimeoutError):
            job.result(deadline=0.05, start_within=1)  # started; its answer is late: the caller gives up, the call goes on
        release.set()
        self.assertEqual(job.result(2, 2), "client")
        self.assertEqual(made, [c._thread.ident])  # made on the courier's own thread, once
        self.assertEqual(c.submit(lambda client: client + "!").result(2, 2), "client!")
        self.assertEqual(len(made), 1)

    def test_a_call_that_raises_hands_its_exception_to_the_caller(self):
        c = _native.Courier("test", lambda: None)

        def boom(client):
            raise ValueError("boom")

        with self.assertRaises(ValueError):
            c.submit(boom).result(2, 2)
        self.assertFalse(c.busy)

    def test_the_background_runs_tasks_logs_a_failing_one_once_and_stops_with_no_tasks(self):
        bg = _native.Background(tick=0.02)
        runs = []
        with self.assertLogs("resilient_endpoint_runtime", "WARNING") as logs:
            bg.every("ok", 0.02, lambda: runs.append(1))
            bg.every("bad", 0.02, lambda: 1 / 0)
            time.sleep(0.6)
        self.assertGreater(len(runs), 3)
        self.assertEqual(len([l for l in logs.output if "bad" in l]), 1)
        bg.cancel("ok")
        bg.cancel("bad")
        time.sleep(0.1)
        self.assertFalse(bg.running())

    def test_a_forked_child_gets_its_own_courier_thread_and_background(self):
        c = _native.Courier("test", lambda: os.getpid())
        self.assertEqual(c.submit(lambda client: client).result(2, 2), os.getpid())
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                got = c.submit(lambda client: client).result(2, 2)
                ran = []
                _native.background.every("child", 0.01, lambda: ran.append(1))
                time.sleep(0.1)
                os.write(w, json.dumps([got, os.getpid(), len(ran) > 0]).encode())
            finally:
                os._exit(0)
        os.close(w)
        os.waitpid(pid, 0)
        got, child, ran = json.loads(os.read(r, 1000))
        self.assertEqual(got, child)  # the child's client, made in the child
        self.assertTrue(ran)

    def test_not_patched_here(self):
        self.assertFalse(_native.gevent_patched())
        self.assertEqual(_native.get_ident(), threading.get_ident())


if __name__ == "__main__":
    unittest.main()
