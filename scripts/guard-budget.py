"""Measures the memory guard at and around the documented smallest budget, on the serving stacks of AWS's images
(`npm run guard:budget`; docs/container.md, "The smallest budget"). Needs root (cgroup v1 memory limits), the
frameworks (torch, scikit-learn), gunicorn, gevent, flask and nginx (Debian packages), and the example models
(`npm run bundle`).

For each example, worker count, concurrency, budget factor and guard setting: a fresh container (every process of
the stack in a cgroup whose memory limit is factor × the documented smallest *instance* memory for that many workers —
RE-GuardBudget's figure, from the example's memory-profile.json), the construct's environment for it, the incident's
traffic (examples/models/tests/stacks.py `incident_requests`), then a probe of 20 ordinary requests 2 s after the load.
The goal, for every guarded run at a factor ≥ 0.8: 0 OOM kills, refused + failed ≤ 1 % of the requests, the probe
answered 20 of 20. Prints a row per run (markdown with --markdown), the CPU seconds it took and the machine's load,
and exits 1 when a guarded run at ≥ 0.8 misses the goal. (A run's CPU seconds: the container's processes and this
script's client threads.)

Stacks: the recommender on TorchServe's real Python workers with the PyTorch toolkit when TS_SOURCES holds their
sources —

    git clone https://github.com/pytorch/serve && git clone https://github.com/aws/sagemaker-inference-toolkit \\
      && git clone https://github.com/aws/sagemaker-pytorch-inference-toolkit
    mkdir ts-sources && cp -r serve/ts ts-sources/ && mkdir ts-sources/src \\
      && cp -r sagemaker-inference-toolkit/src/sagemaker_inference sagemaker-pytorch-inference-toolkit/src/sagemaker_pytorch_serving_container ts-sources/src/
    TS_SOURCES=$PWD/ts-sources npm run guard:budget

(else on prefork.py's stand-in for them, and the table says so); the clustering example on nginx + gunicorn's gevent
worker (sagemaker-containers' arguments).
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "models", "tests"))

import stacks  # noqa: E402

GOAL_FROM = 0.8


def csv(kind):
    return lambda s: [kind(x) for x in s.split(",") if x]


def stack_for(example, choice):
    if choice == "auto":
        if example == "clustering":
            return stacks.GunicornStack
        return stacks.TorchServeStack if stacks.TorchServeStack.sources() else stacks.PreforkStack
    return {"torchserve": stacks.TorchServeStack, "gunicorn": stacks.GunicornStack, "prefork": stacks.PreforkStack}[choice]


def run(example, kind, workers, concurrency, factor, guard, requests, seed):
    budget = stacks.smallest_budget(example, workers)
    limit = int(factor * budget / 0.9)
    env = stacks.construct_environment(example, limit, workers, guard=guard)
    started, cpu = time.monotonic(), os.times()
    s = kind(example, workers, limit, env)
    try:
        answers = stacks.run_load(s, stacks.incident_requests(example, requests, seed=seed), concurrency)
        probe = stacks.probe(s)
    finally:
        result = s.stop()
    t = stacks.tally(answers)
    after = os.times()
    row = {"example": example, "stack": kind.name, "workers": workers, "concurrency": concurrency, "factor": factor,
           "limitMiB": limit // stacks.MiB, "guard": guard, "requests": requests, "answered": t["ok"], "refused": t["refused"],
           "byDesign": t["by-design"], "failed": t["failed"], "oomKills": result["oomKills"], "workerDeaths": len(result["deaths"]),
           "probe": probe, "peakMiB": result["peak"] // stacks.MiB, "seconds": round(time.monotonic() - started, 1),
           "cpuSeconds": round(result["cpu"] + (after.user + after.system) - (cpu.user + cpu.system), 1)}
    row["goal"] = None if not guard or factor < GOAL_FROM else (
        row["oomKills"] == 0 and row["refused"] + row["failed"] <= 0.01 * requests and probe == 20)
    return row


COLUMNS = ("example", "stack", "workers", "concurrency", "factor", "limitMiB", "guard", "answered", "refused", "byDesign", "failed",
           "oomKills", "probe", "peakMiB", "cpuSeconds", "goal")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--example", choices=["recommender", "clustering", "all"], default="all")
    p.add_argument("--stack", choices=["auto", "torchserve", "gunicorn", "prefork"], default="auto")
    p.add_argument("--workers", type=csv(int), default=[1, 2, 4])
    p.add_argument("--concurrency", type=csv(int), default=[1, 2, 4, 8])
    p.add_argument("--factors", type=csv(float), default=[0.8, 1.0], help="budget factors of the documented smallest (default 0.8,1.0)")
    p.add_argument("--guard", type=csv(lambda x: x == "on"), default=[True, False], help="on,off (default both)")
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", help="append each row as a JSON line to this file")
    p.add_argument("--markdown", action="store_true")
    a = p.parse_args()
    why = stacks.cgroup_unavailable()
    if why:
        p.error(why)
    examples = ["recommender", "clustering"] if a.example == "all" else [a.example]
    if a.markdown:
        print("| " + " | ".join(COLUMNS) + " |")
        print("|" + "---|" * len(COLUMNS))
    missed = []
    cpu = 0.0
    for example in examples:
        kind = stack_for(example, a.stack)
        for workers in a.workers:
            for concurrency in a.concurrency:
                for factor in a.factors:
                    for guard in a.guard:
                        row = run(example, kind, workers, concurrency, factor, guard, a.requests, a.seed)
                        cpu += row["cpuSeconds"]
                        if row["goal"] is False:
                            missed.append(row)
                        if a.out:
                            with open(a.out, "a") as f:
                                f.write(json.dumps(row) + "\n")
                        if a.markdown:
                            print("| " + " | ".join(str(row[c]) for c in COLUMNS) + " |", flush=True)
                        else:
                            print(json.dumps(row), flush=True)
    print("CPU %.0f s; load %s; %d guarded run(s) at ≥ %.1f × the smallest budget missed the goal" % (
        cpu, " ".join("%.2f" % x for x in os.getloadavg()), len(missed), GOAL_FROM), file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
