"""The examples on the serving stacks of AWS's images, in a cgroup v1 memory limit that plays the container's
memory: what test_memory_limit.py, test_gevent.py and ``scripts/guard-budget.py`` run.

- :class:`GunicornStack` — the scikit-learn image: nginx (``etc/nginx.conf.template`` of aws/sagemaker-containers,
  its paths moved into a scratch directory) in front of ``gunicorn -k gevent`` with the arguments of
  sagemaker-containers' ``_server.py`` (``--timeout``, ``--worker-connections 1000 × workers``, ``-w``), serving
  sklearn_app.py (the model loaded in the first request, as ``serving.main`` does).
- :class:`TorchServeStack` — the PyTorch image: TorchServe's real Python workers with the PyTorch toolkit's handler
  behind ts_frontend.py (a stand-in for the Java front end); needs their sources (``TS_SOURCES``).
- :class:`PreforkStack` — prefork.py: worker processes on one socket around harness.py's stand-ins, no sources needed.

Every process of a stack (the front end too) is in the cgroup; the construct's environment is written for a
container of ``limit`` bytes (:func:`construct_environment`). :func:`incident_requests` is each incident's traffic,
:func:`run_load` sends it and :func:`probe` the ordinary requests after it.
"""
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RUNTIME = os.environ.get("RESILIENT_ENDPOINT_RUNTIME_DIR") or os.path.join(ROOT, "runtime", "python")  # another tree's helper: what a change fixed
MiB = 2**20
CGROUP_ROOT = "/sys/fs/cgroup/memory"
# The ledger's layout (runtime/python/resilient_endpoint_runtime/ledger.py HEADER, SLOT), read from outside the container.
LEDGER_HEADER = struct.Struct("<8sqdqqqqd8x")
LEDGER_SLOT = struct.Struct("<qqqqqqqdd8x")


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


class Cgroup:
    def __init__(self, limit):
        self.path = os.path.join(CGROUP_ROOT, "re-guard-test-%d-%d" % (os.getpid(), int(time.time() * 1000) % 10**7))
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

    def kill_all(self):
        for _ in range(50):
            pids = [int(p) for p in self.read("cgroup.procs").split()]
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)

    def remove(self):
        self.kill_all()
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


def model_dir(name, directory):
    """The example's model.tar.gz (built by `npm run bundle`), unpacked as SageMaker does into /opt/ml/model."""
    archive = os.path.join(ROOT, "dist", "models", name, "model.tar.gz")
    if not os.path.exists(archive):
        raise FileNotFoundError("%s is not built: run `npm run bundle`" % archive)
    d = os.path.join(directory, "model")
    os.makedirs(d, exist_ok=True)
    with tarfile.open(archive) as t:
        t.extractall(d)
    # The runtime helper as it is in this tree (the archive carries a copy from its last build).
    shipped = os.path.join(d, "code", "resilient_endpoint_runtime")
    shutil.rmtree(shipped, ignore_errors=True)
    shutil.copytree(os.path.join(RUNTIME, "resilient_endpoint_runtime"), shipped, ignore=shutil.ignore_patterns("__pycache__"))
    return d


def profile_of(example):
    with open(os.path.join(ROOT, "examples", "models", example, "memory-profile.json")) as f:
        return json.load(f)


CAPS = {"recommender": ("1024", "512"), "clustering": ("200000", "20000")}  # lib/examples: MAX_SEQ_LEN, DEGRADED_MAX_SEQ_LEN


def construct_environment(example, limit, workers, guard=True, percent=90):
    """What the construct writes into the model's environment for a container of ``limit`` bytes (the instance's
    memory): the container's budget (``percent`` % of it), each worker's share, the profiled curve, the caps."""
    env = {"MAX_SEQ_LEN": CAPS[example][0], "DEGRADED_MAX_SEQ_LEN": CAPS[example][1], "SAGEMAKER_MODEL_SERVER_WORKERS": str(workers),
           "RESILIENT_ENDPOINT_NAME": "test", "RESILIENT_ENDPOINT_VARIANT": "Primary", "OMP_NUM_THREADS": "1"}
    if guard:
        budget = int(limit * percent / 100)
        env.update(RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES=str(budget), RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES=str(budget // workers),
                   RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT=str(percent),
                   RESILIENT_ENDPOINT_MEMORY_CURVE=json.dumps(profile_of(example)["curve"]))
    return env


class Stack:
    """Processes in a fresh cgroup of ``limit`` bytes; ``url`` once ready; :meth:`stop` says what happened."""

    name = "stack"

    def __init__(self, example, workers, limit, env, directory=None, timeout=60):
        self.example, self.workers, self.limit, self.timeout = example, workers, limit, timeout
        self.dir = directory or tempfile.mkdtemp(prefix="re-stack-")
        os.chmod(self.dir, 0o755)
        self.tmp = os.path.join(self.dir, "tmp")  # the image's TEMP (/home/model-server/tmp): the container's shared files
        os.makedirs(self.tmp, exist_ok=True)
        self.cgroup = Cgroup(limit)
        self.env = dict(os.environ, TMPDIR=self.tmp, PYTHONDONTWRITEBYTECODE="1", **env)
        self.env.pop("RESILIENT_ENDPOINT_DEGRADE_PARAMETER", None)
        self.procs = []
        try:
            self.start()
        except BaseException:
            self.cgroup.remove()
            raise

    def popen(self, args, **kw):
        p = subprocess.Popen(args, env=self.env, preexec_fn=self.cgroup.enter, cwd=self.dir, **kw)
        self.procs.append(p)
        return p

    def invoke(self, body, content_type="application/json", timeout=None):
        """(status, content type, body bytes, seconds); status None for no answer (a timeout, a dropped connection)."""
        req = urllib.request.Request(self.url, data=body if isinstance(body, bytes) else body.encode(), method="POST",
                                     headers={"Content-Type": content_type})
        started = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout + 30) as r:
                return r.status, r.headers.get("Content-Type"), r.read(), time.monotonic() - started
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read(), time.monotonic() - started
        except Exception as e:  # noqa: BLE001 - a timeout or a dropped connection: a hung or dead worker
            return None, None, repr(e).encode(), time.monotonic() - started

    def ledger_header(self):
        """The container's ledger header as its workers see it (None before a worker has made it)."""
        for name in os.listdir(self.tmp):
            if name.endswith("-host.ledger"):
                with open(os.path.join(self.tmp, name), "rb") as f:
                    raw = f.read(LEDGER_HEADER.size)
                return LEDGER_HEADER.unpack(raw) if raw[:8] == b"RELEDG02" else None  # None: another helper's format
        return None

    def cpu_seconds(self):
        """CPU seconds (user + system) of the processes in the container now (a worker that died took its own with it)."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.cgroup.read("cgroup.procs").split():
            try:
                with open("/proc/%s/stat" % pid, "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
            except (OSError, ValueError, IndexError):
                continue
        return total / ticks

    def terminate(self):
        """SIGTERM to the server process (30 s, then SIGKILL): (its last JSON line's record — the workers that died —
        or None, its stderr)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return (json.loads(lines[-1]) if lines else None), err

    def stop(self):
        self.cpu = self.cpu_seconds()
        deaths, log = self.shutdown()
        kills = self.cgroup.oom_kills()
        peak = int(self.cgroup.read("memory.max_usage_in_bytes"))
        self.cgroup.remove()
        return {"oomKills": kills, "deaths": deaths, "peak": peak, "log": log, "cpu": self.cpu}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if os.path.isdir(self.cgroup.path):
            self.stop()


NGINX = """worker_processes auto;
daemon off;
pid %(dir)s/nginx.pid;
error_log %(dir)s/nginx-error.log;
user root;
worker_rlimit_nofile 4096;
events {
  worker_connections 2048;
}
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  client_body_temp_path %(dir)s/nginx-body;
  proxy_temp_path %(dir)s/nginx-proxy;
  upstream gunicorn {
    server unix:%(dir)s/gunicorn.sock;
  }
  server {
    listen 127.0.0.1:%(port)d deferred;
    client_max_body_size 0;
    keepalive_timeout 3;
    location ~ ^/(ping|invocations|execution-parameters) {
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header Host $http_host;
      proxy_redirect off;
      proxy_read_timeout %(timeout)ds;
      proxy_pass http://gunicorn;
    }
    location / {
      return 404 "{}";
    }
  }
}
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class GunicornStack(Stack):
    """nginx → ``gunicorn -k gevent`` (sagemaker-containers' arguments) → sklearn_app.py, all in the cgroup."""

    name = "gunicorn+gevent+nginx"

    def start(self):
        self.model_dir = model_dir(self.example, self.dir)
        self.env.update(SM_MODEL_DIR=self.model_dir, EXAMPLE=self.example)
        port = free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX % {"dir": self.dir, "port": port, "timeout": self.timeout})
        self.gunicorn_log = os.path.join(self.dir, "gunicorn.log")
        log = open(self.gunicorn_log, "ab")
        self.gunicorn = self.popen([sys.executable, "-m", "gunicorn", "--timeout", str(self.timeout), "-k", "gevent",
                                    "--pythonpath", ",".join([HERE, RUNTIME]), "-b", "unix:%s/gunicorn.sock" % self.dir,
                                    "--worker-connections", str(1000 * self.workers), "-w", str(self.workers), "--log-level", "info",
                                    "sklearn_app:main"], stdout=log, stderr=log)
        self.nginx = self.popen(["nginx", "-c", conf, "-p", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = "http://127.0.0.1:%d/invocations" % port
        ping = "http://127.0.0.1:%d/ping" % port
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(ping, timeout=60) as r:
                    if r.status == 200:
                        break
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if self.gunicorn.poll() is not None or self.nginx.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("the stack did not start: %s" % open(self.gunicorn_log).read()[-3000:])
            time.sleep(0.2)
        # Each worker loads its model on its first request (serving.main): ping until every worker has.
        while len(self.loaded()) < self.workers and time.monotonic() < deadline:
            threads = [threading.Thread(target=lambda: urllib.request.urlopen(ping, timeout=60).read()) for _ in range(2 * self.workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            time.sleep(0.2)

    def loaded(self):
        """Workers that have loaded the model: their slots in the container's ledger (the guard registers at load)."""
        for name in os.listdir(self.tmp):
            if name.endswith("-host.ledger"):
                with open(os.path.join(self.tmp, name), "rb") as f:
                    raw = f.read()
                if raw[:8] != b"RELEDG02":
                    return list(range(self.workers))  # another helper's format: trust the pings
                used = LEDGER_HEADER.unpack_from(raw, 0)[3]
                return [s[0] for s in (LEDGER_SLOT.unpack_from(raw, LEDGER_HEADER.size + i * LEDGER_SLOT.size) for i in range(used)) if s[0]]
        # No ledger (the guard off): count the workers that said they loaded.
        return re.findall(r"stage memory metrics off|memory guard off", open(self.gunicorn_log, errors="replace").read())[:self.workers] \
            if "RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES" not in self.env else []

    def shutdown(self):
        for p in (self.nginx, self.gunicorn):
            if p.poll() is None:
                p.send_signal(signal.SIGQUIT if p is self.nginx else signal.SIGTERM)
        for p in (self.nginx, self.gunicorn):
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log = open(self.gunicorn_log, errors="replace").read()
        deaths = [{"kind": k} for k in re.findall(r"WORKER TIMEOUT|was sent SIGKILL|was sent code \d+|exited with code \d+", log)]
        return deaths, log


class TorchServeStack(Stack):
    """ts_frontend.py with TorchServe's real Python workers and the PyTorch toolkit (sources in ``TS_SOURCES``)."""

    name = "torchserve-worker"

    @staticmethod
    def sources():
        d = os.environ.get("TS_SOURCES")
        ok = d and all(os.path.isdir(os.path.join(d, p)) for p in ("ts", "src/sagemaker_inference", "src/sagemaker_pytorch_serving_container"))
        return d if ok else None

    def start(self):
        src = self.sources()
        if src is None:
            raise FileNotFoundError("TS_SOURCES must hold pytorch/serve's ts/ and src/ of the two SageMaker toolkits")
        self.model_dir = model_dir(self.example, self.dir)
        self.proc = self.popen([sys.executable, os.path.join(HERE, "ts_frontend.py"), src, self.model_dir, str(self.workers), self.dir,
                                str(self.timeout)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            raise AssertionError("the stack did not start: %r %s %s" % (line, self.proc.stderr.read()[-2000:],
                                                                        open(os.path.join(self.dir, "torchserve-workers.log"), errors="replace").read()[-3000:]))
        self.url = "http://127.0.0.1:%d/invocations" % int(line.split()[1])

    def shutdown(self):
        record, err = self.terminate()
        deaths = record["deaths"] if record else [{"kind": "no record: %s" % err[-500:]}]
        return deaths, open(os.path.join(self.dir, "torchserve-workers.log"), errors="replace").read()


class PreforkStack(Stack):
    """prefork.py: worker processes on one socket around harness.py's stand-ins (toolkit: TorchServe's handler path;
    containers: the scikit-learn image's), ``threads`` > 1 for a thread per request."""

    name = "prefork"
    threads = 1

    def start(self):
        self.level_file = os.path.join(self.dir, "level")
        self.set_level(0, wait=0)
        stack = "toolkit" if self.example == "recommender" else "containers"
        self.proc = self.popen([sys.executable, os.path.join(HERE, "prefork.py"), self.example, stack, str(self.workers), str(self.threads),
                                model_dir(self.example, self.dir), self.level_file], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            raise AssertionError("the server did not start: %r %s" % (line, self.proc.stderr.read()[-3000:]))
        self.url = "http://127.0.0.1:%d/invocations" % int(line.split()[1])
        time.sleep(0.5)  # every worker has loaded: let the container's leader sample once more

    def set_level(self, level, wait=0.5):
        """Writes the breaker's level, then (when the server runs) waits until the workers answer with it. A worker
        reads its level in the background when a request finds it due and answers that request with the level it had
        (the runtime helper never waits on a read), so a sleep alone leaves each worker's next request at the old level:
        ordinary requests go until 10 answers a worker in a row carry it (or 20 s)."""
        with open(self.level_file + ".tmp", "w") as f:
            f.write(str(level))
        os.replace(self.level_file + ".tmp", self.level_file)
        time.sleep(wait)  # the workers' refresh TTL (0.2 s) has passed
        if getattr(self, "url", None) is None or wait == 0:
            return
        needed, run, deadline = 10 * self.workers, 0, time.monotonic() + 20
        while run < needed and time.monotonic() < deadline:
            status, _, out, _ = self.invoke(body(self.example, ORDINARY[self.example]))
            try:
                seen = json.loads(out).get("degradeLevel") if status == 200 else None
            except ValueError:
                seen = None
            run = run + 1 if seen is not None and seen >= level else 0
            if run == 0:
                time.sleep(0.05)  # its refresh is under way
        if run < needed:
            raise AssertionError("the workers did not answer at level %d within 20 s" % level)

    def shutdown(self):
        record, err = self.terminate()
        return (record["deaths"] if record else "no record: %s" % err[-2000:]), err


# -- traffic ------------------------------------------------------------------------------------------------


def bounded_pareto(rng, lo, hi, alpha=1.0):
    u = rng.random()
    return (-(u * hi ** alpha - u * lo ** alpha - hi ** alpha) / (hi ** alpha * lo ** alpha)) ** (-1 / alpha)


def incident_requests(example, n, seed=1, batch_share=0.2):
    """Each incident's traffic as request specs (size, batch): incident A — sequence lengths on a power law from 5 to
    3,000 events (alpha 1), ``batch_share`` of the requests batches of 2–8 such sequences; incident B — rows on a
    power law from 100 to 200,000 (alpha 1: the profile's P50 200, P99 ~9,600, P99.9 ~160,000 rows)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if example == "recommender":
            batch = rng.randint(2, 8) if rng.random() < batch_share else 1
            out.append(([int(bounded_pareto(rng, 5, 3000)) for _ in range(batch)], batch))
        else:
            out.append(([int(bounded_pareto(rng, 100, 200000))], 1))
    return out


def body(example, spec):
    sizes, batch = spec
    if example == "recommender":
        one = lambda n: {"events": list(range(1, n + 1)), "profile": [0.1] * 20}  # noqa: E731
        return json.dumps({"instances": [one(s) for s in sizes]} if batch > 1 else one(sizes[0]))
    return rows_body(sizes[0])


# Row i of a clustering request is [2 + (i % 7) * 0.5, 3 + (i % 5) * 0.5]: the rows repeat every 35.
_ROWS = [json.dumps([2 + (i % 7) * 0.5, 3 + (i % 5) * 0.5]) for i in range(35)]
_PERIOD = ", ".join(_ROWS)


def rows_body(n):
    """``json.dumps({"instances": [[2 + (i % 7) * 0.5, 3 + (i % 5) * 0.5] for i in range(n)]})`` — the same bytes, built
    from the rows' 35-row period (a 150,000-row body cost the client 0.2 s of CPU as a list dumped, 36 of them a run)."""
    whole, rest = divmod(n, len(_ROWS))
    return '{"instances": [' + ", ".join([_PERIOD] * whole + _ROWS[:rest]) + "]}"


ORDINARY = {"recommender": ([20], 1), "clustering": ([200], 1)}  # the profiles' P50 requests


def classify(answer):
    """'ok', 'refused' (the guard: 413 'memory'), 'by-design' (a tier: too_long, degraded), 'failed' (anything else)."""
    status, _, out, _ = answer
    if status == 200:
        return "ok"
    if status is not None and 400 <= status < 500:
        try:
            reason = json.loads(out)["reason"]
        except (ValueError, KeyError, TypeError):
            return "failed"
        return "refused" if reason == "memory" else "by-design"
    return "failed"


def run_load(stack, specs, concurrency, timeout=None):
    """Sends ``specs`` over ``concurrency`` client threads; the answers in order (status, type, body, seconds)."""
    out = [None] * len(specs)
    it = iter(enumerate(specs))
    lock = threading.Lock()

    def client():
        while True:
            with lock:
                try:
                    i, spec = next(it)
                except StopIteration:
                    return
            out[i] = stack.invoke(body(stack.example, spec), timeout=timeout)

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def probe(stack, n=20, idle=2.0):
    """``n`` ordinary requests, one at a time, ``idle`` seconds after the load: how many are answered."""
    time.sleep(idle)
    return sum(1 for _ in range(n) if stack.invoke(body(stack.example, ORDINARY[stack.example]))[0] == 200)


def tally(answers):
    counts = {"ok": 0, "refused": 0, "by-design": 0, "failed": 0}
    for a in answers:
        counts[classify(a)] += 1
    return counts


SMALLEST_MARGIN = 1.25  # the goals hold from 0.8 × the documented smallest budget up


def smallest_budget(example, workers, profile=None):
    """The documented smallest guard budget (bytes) for ``workers`` workers of ``example``: 1.25 × (workers × the profile's
    warm baseline + its P99.9 request as the caps admit it) — what ``RE-GuardBudget`` (lib/checks/rules/guard-budget.ts)
    computes from the same profile. The instance (container) memory it needs is this ÷ 0.9 (the default budget percent)."""
    p = profile or profile_of(example)
    cap = int(CAPS[example][0])
    c = p["curve"]
    size = min(p["percentiles"]["p999"]["size"], cap)
    p999 = round(c["a"] + c["b"] * size + c["c"] * size * size)
    return math.ceil(SMALLEST_MARGIN * (workers * p["baselineBytes"] + p999))


def cleanup(directory):
    shutil.rmtree(directory, ignore_errors=True)
