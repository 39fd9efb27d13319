"""The runtime helper's mutation run (`npm run mutation`): realistic one-line bugs in
runtime/python/resilient_endpoint_runtime/, each applied alone to a scratch copy, the helper's unittest
suite run against it. A mutant is killed when the suite fails. No packaged mutation tool for Python is
available offline here, so the mutants are listed below: each is a bug that would break a promise the
README makes (never raises, never blocks, one reader per instance, the tiers, the guard's admission).
Target: >= 85 % killed. Exit code 1 below it.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime", "python")
PKG = "resilient_endpoint_runtime"

# (file, original text, mutated text, what the bug breaks)
MUTANTS = [
    ("degrade.py", 'response = getattr(e, "response", None)\n    if isinstance(response, dict):', 'response = getattr(e, "response", {})\n    if True:', "error_code raises on botocore's response=None errors"),
    ("degrade.py", "for name in REGION_VARIABLES:", "for name in REGION_VARIABLES[1:]:", "AWS_DEFAULT_REGION ignored"),
    ("degrade.py", 'connect_timeout=0.5, read_timeout=0.5', 'connect_timeout=60, read_timeout=60', "a hung SSM blocks a request for a minute"),
    ("degrade.py", '"total_max_attempts": 1', '"total_max_attempts": 5', "SDK retries inside a request's path"),
    ("degrade.py", "if self._clock() < self._next_read:", "if self._clock() <= self._next_read - self.ttl:", "reads on almost every request"),
    ("degrade.py", "if not self._refreshing.acquire(blocking=False):", "if not self._refreshing.acquire(blocking=True):", "requests wait behind the refreshing thread"),
    ("degrade.py", "return self.ttl * (1 + self.jitter * (2 * self._rng() - 1))", "return self.ttl", "instances poll in step (no jitter)"),
    ("degrade.py", 'if code == "ParameterNotFound":', 'if code == "ParameterMissing":', "a missing parameter is treated as a failure with backoff"),
    ("degrade.py", "self._failures += 1", "self._failures = 1", "no growing backoff under throttling"),
    ("degrade.py", "backoff = min(MAX_BACKOFF, self.ttl * 2 ** self._failures)", "backoff = self.ttl", "no backoff under throttling"),
    ("degrade.py", "self._next_read = now + self.next_interval()\n        self._fetched = now", "self._next_read = float('-inf')\n        self._fetched = now", "the expiry is not set after a read"),
    ("degrade.py", "if isinstance(level, bool) or level not in LEVELS or fetched > now + 60 or", "if level not in LEVELS or", "a corrupt shared file is trusted"),
    ("degrade.py", "if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):", "if False:", "every worker reads SSM when the lock is taken"),
    ("degrade.py", "if isinstance(level, bool) or level not in LEVELS:", "if level not in LEVELS:", "true is read as level 1"),
    ("tiers.py", "if n > self.max_len:", "if n >= self.max_len:", "a request of exactly MAX_SEQ_LEN refused"),
    ("tiers.py", "if n > self.degraded_len and level >= 2:", "if n > self.degraded_len and level > 2:", "level 2 never refuses"),
    ("tiers.py", "return sequence[-self.degraded_len:]", "return sequence[:self.degraded_len]", "truncation keeps the oldest events"),
    ("tiers.py", "if n > self.degraded_len and level >= 1:", "if n > self.degraded_len and level >= 2:", "level 1 never truncates"),
    ("tiers.py", "if self.degraded_len > self.max_len:", "if self.degraded_len > self.max_len + 1:", "a degraded length above the maximum accepted"),
    ("guard.py", "if isinstance(e, MemoryError):\n        return True", "if isinstance(e, MemoryError):\n        return False", "a MemoryError is not an OOM"),
    ("guard.py", "return self.a + self.b * size + self.c * size * size", "return self.a + self.b * size + self.c * size", "the estimate is linear"),
    ("guard.py", "return max(0, int(math.floor(size + 1e-9)))", "return max(0, int(math.ceil(size)))", "the largest size that fits rounds up"),
    ("guard.py", "if available < self.a:\n            return 0", "if available < 0:\n            return 0", "a fixed cost larger than what is left still admits"),
    ("guard.py", "return 2 if share >= self.critical_at else 1 if share >= self.degrade_at else 0", "return 0", "no local pressure level"),
    ("guard.py", "return max(self._published_level(), self.pressure_level())", "return self._published_level()", "the container's own pressure ignored"),
    ("guard.py", "if estimate > available:", "if estimate > self.budget:", "admission against the whole budget, not what is left"),
    ("guard.py", "fits = min(size, self.curve.largest_within(available / batch)) if truncatable and level >= 1 else 0", "fits = min(size, self.curve.largest_within(available / batch))", "truncates at level 0 instead of refusing"),
    ("guard.py", "self.curve.largest_within(available / batch)", "self.curve.largest_within(available)", "a batch truncated as if it were one sequence"),
    ("guard.py", "estimate = batch * self.curve(size)", "estimate = self.curve(size)", "a batch estimated as one sequence"),
    ("guard.py", "if self._inflight == 1 and threading.get_ident() in self._warm:", "if True:", "the backstop armed before a thread's first inference (hangs OpenBLAS)"),
    ("guard.py", "except MemoryError as e:\n            self.rejected += 1", "except ZeroDivisionError as e:\n            self.rejected += 1", "a MemoryError in the guard's own path is a 500"),
    ("guard.py", "if ledger is not None and self.active:\n            self.register()", "if False:\n            self.register()", "a worker that has not run a request is not in the container's accounting"),
    ("guard.py", "return min(budget, limit * percent // 100)", "return budget", "the container's own smaller limit ignored"),
    ("guard.py", "ledger.count(refusal=reason == \"memory\")", "ledger.count(refusal=reason in (\"memory\", \"degraded\"))", "the breaker's own level-2 refusals counted back to it as memory refusals"),
    ("degrade.py", "            if not self.background:\n", "            if True:\n", "the refresh runs in the request's thread"),
    ("degrade.py", "t.join(self.deadline)", "t.join()", "no overall deadline: a trickling answer holds the refresh"),
    ("degrade.py", "                self._write_shared(self._level, self._fetched", "                0 and self._write_shared(self._level, self._fetched", "a failure is not shared: every worker retries"),
    ("degrade.py", "if retry is not None and retry > due:", "if False:", "a worker ignores the instance's recorded failure"),
    ("ledger.py", "            elif slot[0]:\n                total += slot[1] + slot[2]", "            elif False:\n                total += slot[1] + slot[2]", "the other workers' memory not counted"),
    ("ledger.py", "        total = self.other\n", "        total = 0\n", "the container's other memory ignored"),
    ("ledger.py", "            if not alive(pid):\n                dead.append((i, pid))", "            if False:\n                dead.append((i, pid))", "a dead worker's memory counted for ever"),
    ("ledger.py", "                    slot[3] = slot[4] = 0", "                    pass", "counts published again every period"),
    ("ledger.py", "        return max(0, usage - inactive)", "        return usage", "reclaimable file cache counted as used"),
    ("ledger.py", "        if self.limit is None or self.limit >= self.host_total:", "        if self.limit is None:", "a cgroup limit larger than the host taken as the container's"),
    ("metrics.py", '"StorageResolution": 1,', '"StorageResolution": 60,', "the guard's metrics at standard resolution (the breaker reads 10 s)"),
    ("metrics.py", 'one(DELIBERATE_4XX, deliberate, "Count")', 'one(DELIBERATE_4XX, refusals, "Count")', "deliberate 4XX published as memory refusals"),
    ("tiers.py", "        self.count()\n        if context is not None:", "        if context is not None:", "a refusal answered through TorchServe not counted"),
    ("profile.py", "    k = max([1.0] +", "    k = 1.0 or max([1.0] +", "the curve runs under the measured points"),
    ("profile.py", "lo, hi = max(1, min(sizes)), max(max(sizes), int(largest or 0))", "lo, hi = max(1, min(sizes)), max(sizes)", "the largest admitted size extrapolated, not measured"),
    ("guard.py", "self._reserved += estimate", "pass", "admitted requests reserve nothing"),
    ("guard.py", "self._reserved = max(0.0, self._reserved - estimate)", "self._reserved = self._reserved", "a finished request keeps its reservation"),
    ("metrics.py", '"Unit": "Percent",', '"Unit": "Count",', "the stage metric published as a count"),
]


def run_suite(root):
    r = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", root, "-t", root], cwd=root, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if r.returncode != 0 and os.environ.get("MUTATE_VERBOSE"):
        print(r.stderr[-3000:])
    return r.returncode == 0


def main():
    work = tempfile.mkdtemp(prefix="mutate-python-")
    try:
        base = os.path.join(work, "python")
        shutil.copytree(ROOT, base, ignore=shutil.ignore_patterns("__pycache__"))
        if not run_suite(base):
            os.environ["MUTATE_VERBOSE"] = "1"
            run_suite(base)
            print("the suite fails without mutants: fix it first")
            return 1
        survived = []
        killed = 0
        for i, (name, old, new, why) in enumerate(MUTANTS, 1):
            path = os.path.join(base, PKG, name)
            with open(path) as f:
                src = f.read()
            if src.count(old) != 1:
                print("mutant %d (%s): its original text is not found exactly once: update the list" % (i, name))
                return 1
            with open(path, "w") as f:
                f.write(src.replace(old, new))
            try:
                alive = run_suite(base)
            finally:
                with open(path, "w") as f:
                    f.write(src)
            if alive:
                survived.append((name, why))
            else:
                killed += 1
            print("  %-8s %2d/%d %-10s %s" % ("survived" if alive else "killed", i, len(MUTANTS), name, why))
        score = 100.0 * killed / len(MUTANTS)
        print("runtime helper mutation score: %.1f %% (%d of %d killed)" % (score, killed, len(MUTANTS)))
        for name, why in survived:
            print("  survived: %s: %s" % (name, why))
        return 0 if score >= 85 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
