"""Overhead of the runtime helper's MemoryGuard per request (printed by `npm run bench`).

One worker's admit() and release as a request pays them, with the container's accounting: the level (the
breaker's published level, read through the helper with no parameter configured: a cached attribute, the
refresh is in the background), this worker's private memory from /proc/self/statm, the container's ledger
under its file lock (here with 6 other workers' slots), the curve's estimate and the reservation — twice
(admission and release). Median of three runs of 20,000 requests; CPU time per request.

``--gevent``: the same inside gunicorn's gevent worker's conditions (``gevent.monkey.patch_all()`` before the helper
is imported: each request a greenlet, the helper's locks and threads gevent's originals). Without the flag, the
figure under gevent is added by running this file again with an interpreter that has gevent (FRAMEWORK_PYTHON,
else /usr/bin/python3), or said to be skipped.
"""
import json
import os
import subprocess
import sys

GEVENT = "--gevent" in sys.argv
if GEVENT:
    from gevent import monkey
    monkey.patch_all()  # as gunicorn's gevent worker does, before the application is imported
    import gevent

import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime", "python"))
from resilient_endpoint_runtime.guard import MemoryCurve, MemoryGuard  # noqa: E402
from resilient_endpoint_runtime.ledger import HEADER, MAGIC, SLOT, InstanceLedger  # noqa: E402

os.environ.pop("RESILIENT_ENDPOINT_DEGRADE_PARAMETER", None)
ledger = InstanceLedger(os.path.join(tempfile.mkdtemp(), "bench.ledger"))
for i in range(6):  # the container's other workers
    SLOT.pack_into(ledger._mm, HEADER.size + i * SLOT.size, 4_000_000 + i, 0, 300 * 2**20, 0, 0, 0, 0, 0.0, 0.0)
HEADER.pack_into(ledger._mm, 0, MAGIC, 0, 0.0, 6, 0, 0, 0, 0.0)
guard = MemoryGuard(budget_bytes=14 * 2**30, curve=MemoryCurve(0, 3527.0, 16.02), ledger=ledger)
guard.limit_process()  # the backstop re-armed per admission (a setrlimit per request)
N = 20_000


def requests(n):
    for i in range(n):
        with guard.admit(5 + (i * 37) % 1000):
            pass


runs = []
for _ in range(3):
    t0 = time.process_time()
    if GEVENT:
        # each request on its own greenlet, as the gevent worker serves them
        for start in range(0, N, 1000):
            gevent.joinall([gevent.spawn(requests, 1) for _ in range(1000)])
    else:
        requests(N)
    runs.append((time.process_time() - t0) / N)
runs.sort()
out = {"perRequestUs": runs[1] * 1e6, "runsUs": [r * 1e6 for r in runs], "python": sys.version.split()[0]}
if not GEVENT:
    python = next((p for p in (os.environ.get("FRAMEWORK_PYTHON"), "/usr/bin/python3")
                   if p and subprocess.run([p, "-c", "import gevent"], capture_output=True).returncode == 0), None)
    if python is None:
        out["gevent"] = "skipped: no interpreter imports gevent (apt-get install -y python3-gevent)"
    else:
        r = subprocess.run([python, os.path.abspath(__file__), "--gevent"], capture_output=True, text=True)
        out["gevent"] = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else "failed: %s" % r.stderr[-300:]
print(json.dumps(out))
