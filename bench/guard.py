"""Overhead of the runtime helper's MemoryGuard per request (printed by `npm run bench`).

One worker's admit() and release as a request pays them, with the container's accounting: the level (the
breaker's published level, read through the helper with no parameter configured: a cached attribute, the
refresh is in the background), this worker's private memory from /proc/self/statm, the instance's ledger
under its file lock (here with 6 other workers' slots), the curve's estimate and the reservation — twice
(admission and release). Median of three runs of 20,000 requests; CPU time per request.
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime", "python"))
from resilient_endpoint_runtime.guard import MemoryCurve, MemoryGuard  # noqa: E402
from resilient_endpoint_runtime.ledger import HEADER, SLOT, InstanceLedger  # noqa: E402

os.environ.pop("RESILIENT_ENDPOINT_DEGRADE_PARAMETER", None)
ledger = InstanceLedger(os.path.join(tempfile.mkdtemp(), "bench.ledger"))
for i in range(6):  # the instance's other workers
    SLOT.pack_into(ledger._mm, HEADER.size + i * SLOT.size, 4_000_000 + i, 300 * 2**20, 0, 0, 0, 0.0, 0.0)
HEADER.pack_into(ledger._mm, 0, b"RELEDG01", 0, 0.0, 6, 0, 0)
guard = MemoryGuard(budget_bytes=14 * 2**30, curve=MemoryCurve(0, 3527.0, 16.02), ledger=ledger)
guard.limit_process()  # the backstop re-armed per admission (a setrlimit per request)
N = 20_000
runs = []
for _ in range(3):
    t0 = time.process_time()
    for i in range(N):
        with guard.admit(5 + (i * 37) % 1000):
            pass
    runs.append((time.process_time() - t0) / N)
runs.sort()
print(json.dumps({"perRequestUs": runs[1] * 1e6, "runsUs": [r * 1e6 for r in runs], "python": sys.version.split()[0]}))
