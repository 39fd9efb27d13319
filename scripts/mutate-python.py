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
    ("guard.py", "return max(self._published_level(), self._sustained_level())", "return self._published_level()", "the container's own pressure ignored"),
    ("guard.py", "        if estimate > room:\n", "        if estimate > self.budget:\n", "admission against the whole budget, not what is left"),
    ("guard.py", "fits = min(size, self.curve.largest_within(room / batch)) if truncatable and pressed >= 1 else 0", "fits = min(size, self.curve.largest_within(room / batch))", "truncates at level 0 instead of refusing"),
    ("guard.py", "self.curve.largest_within(room / batch)", "self.curve.largest_within(room)", "a batch truncated as if it were one sequence"),
    ("guard.py", "estimate = batch * self.curve(size)", "estimate = self.curve(size)", "a batch estimated as one sequence"),
    ("guard.py", "if self._inflight == 1 and _native.get_ident() in self._warm:", "if True:", "the backstop armed before a thread's first inference (hangs OpenBLAS)"),
    ("guard.py", "except MemoryError as e:\n            self.rejected += 1", "except ZeroDivisionError as e:\n            self.rejected += 1", "a MemoryError in the guard's own path is a 500"),
    ("guard.py", "if ledger is not None and budget_bytes is not None:\n            self.register()", "if False:\n            self.register()", "a worker that has not run a request is not in the container's accounting"),
    ("guard.py", "return min(budget, limit * percent // 100)", "return budget", "the container's own smaller limit ignored"),
    ("guard.py", "ledger.count(refusal=reason == \"memory\")", "ledger.count(refusal=reason in (\"memory\", \"degraded\"))", "the breaker's own level-2 refusals counted back to it as memory refusals"),
    ("degrade.py", "            if not self.background:\n", "            if True:\n", "the refresh runs in the request's thread"),
    ("degrade.py", "return job.result(self.deadline, start_within=CLIENT_SETUP)", "return job.result(None, start_within=CLIENT_SETUP)", "no overall deadline: a trickling answer holds the refresh"),
    ("degrade.py", "                self._write_shared(self._level, self._fetched", "                0 and self._write_shared(self._level, self._fetched", "a failure is not shared: every worker retries"),
    ("degrade.py", "if retry is not None and retry > due:", "if False:", "a worker ignores the instance's recorded failure"),
    ("ledger.py", "            elif slot[PID]:\n                total += slot[RESIDENT] + slot[RESERVED]", "            elif False:\n                total += slot[RESIDENT] + slot[RESERVED]", "the other workers' memory not counted"),
    ("ledger.py", "        total = self.other\n", "        total = 0\n", "the container's other memory ignored"),
    ("ledger.py", "            if not alive(pid, started):\n                dead.append((i, pid))", "            if False:\n                dead.append((i, pid))", "a dead worker's memory counted for ever"),
    ("ledger.py", "                    slot[REFUSALS] = slot[DELIBERATE] = 0", "                    pass", "counts published again every period"),
    ("ledger.py", "        return max(0, usage - inactive)", "        return usage", "reclaimable file cache counted as used"),
    ("ledger.py", "        if self.limit is None or self.limit >= self.host_total:", "        if self.limit is None:", "a cgroup limit larger than the host taken as the container's"),
    ("metrics.py", '"StorageResolution": 1,', '"StorageResolution": 60,', "the guard's metrics at standard resolution (the breaker reads 10 s)"),
    ("metrics.py", 'one(DELIBERATE_4XX, deliberate, "Count")', 'one(DELIBERATE_4XX, refusals, "Count")', "deliberate 4XX published as memory refusals"),
    ("tiers.py", "        self.count()\n        if context is not None:", "        if context is not None:", "a refusal answered through TorchServe not counted"),
    ("profile.py", "    k = max([1.0] +", "    k = 1.0 or max([1.0] +", "the curve runs under the measured points"),
    ("profile.py", "lo, hi = max(1, min(sizes)), max(max(sizes), int(largest or 0))", "lo, hi = max(1, min(sizes)), max(sizes)", "the largest admitted size extrapolated, not measured"),
    ("profile.py", "        if k - 1 == passes[0]:\n            continue", "        if False:\n            continue", "the leak check counts the warm-up pass"),
    ("profile.py", "            for i, size in enumerate(sizes):\n                body, ctype", "            for i, size in enumerate(sizes if k == 0 else list(reversed(sizes))):\n                body, ctype", "the leak check compares different requests at a position"),
    ("profile.py", "threshold = max(1 * MiB, 0.02 * rss)", "threshold = 0", "every wobble of RSS is a leak"),
    ("profile.py", '"leak" if all(grew)', '"leak" if any(grew)', "one pass that grew is a leak"),
    ("profile.py", "            g = _median(diffs)", "            g = max(diffs)", "one position's jump is the pass's growth"),
    ("profile.py", "        if not isinstance(value, str) or not value.strip():", "        if False:", "a selector that is not a string is written into the profile"),
    ("profile.py", "        out[field] = value.strip()", "        out[field] = value", "a selector's surrounding blanks kept"),
    ("profile.py", "        **selectors,\n", "", "the module's selectors never reach the profile (drift loses RequestSize)"),
    ("profile.py", "    if share is None or share <= BUSY_SHARE:", "    if share is None or share < BUSY_SHARE:", "a busy-machine warning at exactly a tenth"),
    ("profile.py", "            waits.append(None if waited is None or after is None else (after - waited) / 1e6)", "            waits.append(0.0)", "time spent waiting for a CPU never measured"),
    ("profile.py", "    return round(sum(share * ms for share, ms in shares) / total, 3) if total > 0 else None", "    return round(sum(share for share, _ in shares) / len(shares), 3)", "the wait share not weighted by the points' latency"),
    ("profile.py", "    if not shares or len(shares) < len(points):", "    if not shares:", "a partly unknown wait share reported as known"),
    ("guard.py", "self._reserved += estimate", "pass", "admitted requests reserve nothing"),
    ("guard.py", "self._reserved = max(0.0, self._reserved - estimate)", "self._reserved = self._reserved", "a finished request keeps its reservation"),
    ("metrics.py", '"Unit": "Percent",', '"Unit": "Count",', "the stage metric published as a count"),
    # Issue 37: real threads under gevent, refusals that end with the pressure, nothing in a request's path, the ledger's edges.
    ("_native.py", "                found = monkey.get_original(module, name)", "                found = getattr(__import__(module), name)", "under gevent the helper's threads are greenlets"),
    ("_native.py", "            if self._job is not None:\n                raise Busy", "            if False:\n                raise Busy", "a call handed over while the previous one still runs"),
    ("_native.py", "                if self.client is None:\n                    self.client = self._make_client()\n                job.began = time.monotonic()\n                job.started.set()",
     "                job.started.set()\n                if self.client is None:\n                    self.client = self._make_client()\n                job.began = time.monotonic()", "making the client charged to the first call's deadline"),
    ("_native.py", "            begun.acquire(True, START_WAIT)", "            pass", "start returns before its thread runs: a worker exiting then segfaults (CPython gh-108987)"),
    ("_native.py", "            if _state.exiting:\n                return self", "            if False:\n                return self", "threads start while the interpreter exits"),
    ("_native.py", "        _state.exiting = True", "        pass", "the exit gate never closes"),
    ("_native.py", "atexit.register(_exiting)", "pass", "the exit gate never registered"),
    ("ledger.py", "identity if identity is not None else container_identity()", '""', "two containers sharing a temp directory share one budget"),
    ("ledger.py", "    if started:\n        try:", "    if False:\n        try:", "a slot whose PID another process now has keeps counting"),
    ("ledger.py", "                    os.posix_fallocate(fd, 0, SIZE)", "                    pass", "a full temp directory is a SIGBUS at the first write"),
    ("ledger.py", "            return self._tree_memory()", "            m = self._meminfo()\n            return max(0, m.get('MemTotal', 0) - m.get('MemAvailable', 0))", "without a memory limit the whole host's memory counts"),
    ("ledger.py", "        if now < self._next_trim or HEADER.unpack_from(self._mm, 0)[7] < TRIM_AT:", "        if True:", "no memory given back under pressure (the ratchet)"),
    ("ledger.py", "if slot[RESERVED] == 0 and slot[RESIDENT] != v:", "if False:", "an idle worker's resident memory never refreshed"),
    ("ledger.py", "if after is not None and after > live[i]:", "if False:", "growth between the two reads lands in the other memory"),
    ("ledger.py", "header[1], header[2] = sorted(self._others)[len(self._others) // 2], time.monotonic()", "header[1], header[2] = self._others[-1], time.monotonic()", "one odd sample moves the other memory"),
    ("ledger.py", "            if held and min(self._recent) >= line:", "            if max(self._recent) >= line:", "a line crossed for an instant degrades answers"),
    ("ledger.py", "            if level >= k and max(self._recent) >= line - HYSTERESIS:", "            if False:", "no hysteresis: the level flaps at its line"),
    ("guard.py", "        return max(0, min(free, used_own - self._floor) - self._promised)", "        return 0", "a worker's own free heap never reused"),
    ("guard.py", "        return max(0, min(free, used_own - self._floor) - self._promised)", "        return max(0, min(free, used_own - self._floor))", "the same free heap promised to two requests"),
    ("guard.py", "            room -= small * (view.workers if view is not None else 1)", "            pass", "large requests take the ordinary ones' last share"),
    ("guard.py", "            room = max(room, self.hard_limit - small - used)", "            pass", "ordinary requests refused at the budget: a container refusing everything for ever"),
    ("guard.py", "            spinning = system >= SPIN_TICKS and system >= 2 * user", "            spinning = False and system >= SPIN_TICKS and system >= 2 * user", "a worker spinning on failed allocations hangs"),
    ("guard.py", "level = max(published, view.level if view is not None else self._share_level(used / self.budget))", "level = max(published, self._share_level(used / self.budget))", "answers degraded by a reservation crossing the line"),
    ("metrics.py", "                return False\n            with self._plock:", "                with self._plock:\n                    self._pending.clear()\n                return False\n            with self._plock:", "a failed interval's counts dropped"),
    ("metrics.py", "            if timestamp is not None:\n                d[\"Timestamp\"]", "            if False:\n                d[\"Timestamp\"]", "intervals sent late stored at the catch-up's time"),
    ("metrics.py", "READ_TIMEOUT = 20.0", "READ_TIMEOUT = 2.0", "a late answer sent again: counted twice"),
    ("metrics.py", "                self._pending.appendleft((b[0], max(a[1], b[1]), a[2] + b[2], a[3] + b[3], _mean(a[4], b[4])))", "                self._pending.appendleft((b[0], max(a[1], b[1]), b[2], b[3], _mean(a[4], b[4])))", "the queue's bound drops counts"),
    ("metrics.py", "                self._pending.appendleft((b[0], max(a[1], b[1]), a[2] + b[2], a[3] + b[3], _mean(a[4], b[4])))", "                self._pending.appendleft((b[0], max(a[1], b[1]), a[2] + b[2], a[3] + b[3], None))", "merging drops the in-flight figure"),
    ("metrics.py", "            data.append(one(GUARD_IN_FLIGHT, round(in_flight, 2), \"Percent\"))", "            pass", "GuardInFlightPercent never published"),
    ("ledger.py", "                    self._in_flight[1] += 1", "                    pass", "in-flight not averaged over the interval's samples"),
    ("ledger.py", "                    reserved += slot[RESERVED]\n                    slot[REFUSALS] = slot[DELIBERATE] = 0", "                    slot[REFUSALS] = slot[DELIBERATE] = 0", "in-flight without samples reads nothing"),
    ("metrics.py", "                self.failures += 1\n                self._merge(stats)", "                self.failures += 1", "a failed stage call's samples lost"),
    ("metrics.py", "        if self._background and self._scheduled != os.getpid():", "        if self._clock() - self._last_flush >= self.interval:\n            self.flush(wait=60)\n        if self._background and self._scheduled != os.getpid():", "the stage flush back in a request's path"),
    ("metrics.py", 'return env.get("AWS_ENDPOINT_URL_%s" % service.upper()) or env.get("AWS_ENDPOINT_URL") or None', "return None", "the container's CloudWatch endpoint ignored"),
    ("degrade.py", "clock=time.monotonic, rng=random.random", "clock=time.time, rng=random.random", "a wall-clock step freezes the level"),
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
        if not run_suite(base) and not run_suite(base):  # once more: a busy host can trip a timing assertion
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
