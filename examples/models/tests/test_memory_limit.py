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
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RUNTIME = os.path.join(ROOT, "runtime", "python")
sys.path.insert(0, HERE)

from test_serving import SKLEARN, TORCH, INSTALL, model_dir  # noqa: E402

MiB = 2**20
CGROUP_ROOT = "/sys/fs/cgroup/memory"


def cgroup_unavailable():
    """Why a memory cgroup cannot be made here (None when it can)."""
    if not os.path.isfile(os.path.join(CGROUP_ROOT, "memory.limit_in_bytes")):
        return "no cgroup v1 memory controller at %s (cgroup2 without the memory controller, or not Linux)" % CGROUP_ROOT
    probe = os.path.join(CGROUP_ROOT, "re-probe-%d" % os.getpid())
    try:
        os.mkdir(probe)
        os.rmdir(probe)
    except OSError as e:
        return "cannot create a memory cgroup (%s): run as root on a machine whose cgroup v1 memory controller is writable" % e
    return None


WHY_NOT = cgroup_unavailable()


class Cgroup:
    def __init__(self, limit):
        self.path = os.path.join(CGROUP_ROOT, "re-guard-test-%d-%d" % (os.getpid(), int(time.time() * 1000) % 100000))
        os.mkdir(self.path)
        self.write("memory.limit_in_bytes", str(limit))

    def write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def read(self, name):
        with open(os.path.join(self.path, name)) as f:
            return f.read()

    def oom_kills(self):
        for line in self.read("memory.oom_control").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return int(self.read("memory.failcnt")) and -1  # an old kernel without the count: unknown

    def enter(self):
        """For Popen's preexec_fn: the child joins the cgroup before it execs the server."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


class Container:
    """prefork.py in a fresh cgroup, with the construct's environment for a container of ``limit`` bytes."""

    def __init__(self, example, stack, workers, threads, limit, env, directory):
        self.limit = limit
        self.level_file = os.path.join(directory, "level")
        self.set_level(0)
        self.cgroup = Cgroup(limit)
        tmp = os.path.join(directory, "tmp")  # the image's TEMP (/home/model-server/tmp): the instance's shared files
        os.mkdir(tmp)
        self.env = dict(os.environ, PYTHONPATH=RUNTIME, TMPDIR=tmp, PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1",
                        RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES=str(int(0.9 * limit)),
                        RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES=str(int(0.9 * limit) // workers),
                        RESILIENT_ENDPOINT_NAME="test", RESILIENT_ENDPOINT_VARIANT="Primary", **env)
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "prefork.py"), example, stack, str(workers), str(threads),
                                      model_dir(example) if example == "clustering" else directory, self.level_file],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, preexec_fn=self.cgroup.enter, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.proc.kill()
            err = self.proc.stderr.read()
            self.cgroup.remove()
            raise AssertionError("the server did not start: %r %s" % (line, err[-3000:]))
        self.url = "http://127.0.0.1:%d/invocations" % int(line.split()[1])
        time.sleep(0.5)  # every worker has loaded: let the instance's leader sample the container once more

    def set_level(self, level):
        with open(self.level_file + ".tmp", "w") as f:
            f.write(str(level))
        os.replace(self.level_file + ".tmp", self.level_file)
        time.sleep(0.5)  # the workers' background refresh (0.2 s TTL) picks it up

    def invoke(self, body, content_type="application/json", timeout=60):
        req = urllib.request.Request(self.url, data=body.encode(), method="POST", headers={"Content-Type": content_type})
        started = time.time()
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.headers.get("Content-Type"), r.read(), time.time() - started
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read(), time.time() - started
        except Exception as e:  # noqa: BLE001 - a timeout or a dropped connection: a hung or dead worker
            return None, None, repr(e).encode(), time.time() - started

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        kills = self.cgroup.oom_kills()
        peak = int(self.cgroup.read("memory.max_usage_in_bytes"))
        self.cgroup.remove()
        lines = [l for l in out.splitlines() if l.startswith("{")]
        record = json.loads(lines[-1]) if lines else {"deaths": "no record: %s" % err[-2000:]}
        return {"oomKills": kills, "deaths": record["deaths"], "peak": peak, "stderr": err}


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
            return json.dumps({"instances": [[2 + (i % 7) * 0.5, 3 + (i % 5) * 0.5] for i in range(n)]})

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
