"""Overhead of the runtime helper's MemoryGuard per request (printed by `npm run bench`).

One worker's admit() and release as a request pays them: the level (the breaker's published level, read
through the helper with no parameter configured, plus this worker's pressure from /proc/self/statm), the
curve's estimate and the reservation. Median of three runs of 20,000 requests; CPU time per request.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime", "python"))
from resilient_endpoint_runtime.guard import MemoryCurve, MemoryGuard  # noqa: E402

os.environ.pop("RESILIENT_ENDPOINT_DEGRADE_PARAMETER", None)
guard = MemoryGuard(budget_bytes=4 * 2**30, curve=MemoryCurve(0, 3527.0, 16.02))
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
