"""A pre-forking model server for the tests under a kernel memory limit: one process per worker, as
TorchServe (a Python worker process per model copy) and gunicorn (the scikit-learn image) run them, each
loading its own model and serving SageMaker's hosting contract (``GET /ping``, ``POST /invocations``) on a
socket they share, with harness.py's stand-in for the image's handler code around the example's real
``inference.py``.

    python3 prefork.py EXAMPLE STACK WORKERS THREADS MODEL_DIR LEVEL_FILE

prints ``PORT <n>`` once every worker has loaded its model, serves until SIGTERM, then prints one JSON line:
the workers that died (pid, signal or exit status) while it served. The breaker's level is read as the
runtime helper reads it (``DegradeLevel``, in the background), from a stand-in for SSM that returns the
level written in ``LEVEL_FILE``. ``PREFORK_PRELOAD`` (module names, comma-separated) are imported before the fork.
"""
import json
import os
import signal
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import Context, containers_invoke, install_container_modules, load_example, send_answer, toolkit_invoke, _call  # noqa: E402


class FileSSM:
    """GetParameter answered from a file the test writes (the breaker's level parameter)."""

    def __init__(self, path):
        self.path = path

    def get_parameter(self, Name):
        with open(self.path) as f:
            level = int(f.read().strip() or 0)
        return {"Parameter": {"Name": Name, "Value": json.dumps({"level": level, "state": "TEST"})}}


def serve(sock, name, stack, threads, model_dir, level_file, ready_w):
    from resilient_endpoint_runtime import degrade
    degrade._default = degrade.DegradeLevel("/test/level", client=FileSSM(level_file), ttl=0.2, jitter=0.0, cache_path=None)
    degrade._default.get()
    install_container_modules()
    m = load_example(name)
    model = _call(m.model_fn, (model_dir,), Context({}))
    invoke = {"toolkit": toolkit_invoke, "containers": containers_invoke}[stack]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args):
            pass

        def do_GET(self):
            self._send(200, "text/plain", b"")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status, ctype, out = invoke(m, model, body, self.headers.get("Content-Type"), "application/json")
            self._send(status, ctype, out)

        def _send(self, status, ctype, out):
            send_answer(self, status, ctype, out)

    cls = ThreadingHTTPServer if threads > 1 else HTTPServer
    httpd = cls(sock.getsockname(), Handler, bind_and_activate=False)
    httpd.socket.close()
    httpd.socket = sock
    os.write(ready_w, b"r")
    httpd.serve_forever()


def main():
    name, stack, workers, threads, model_dir, level_file = sys.argv[1:7]
    workers, threads = int(workers), int(threads)
    # PREFORK_PRELOAD=torch: import these once, before forking, for a test whose workers' memory is not what it measures
    # (each worker still loads its own model after the fork). Off by default: under a memory limit each worker
    # imports its framework itself, as TorchServe's and gunicorn's workers do.
    for module in filter(None, os.environ.get("PREFORK_PRELOAD", "").split(",")):
        __import__(module)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    ready_r, ready_w = os.pipe()
    pids = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                serve(sock, name, stack, threads, model_dir, level_file, ready_w)
            finally:
                os._exit(1)
        pids.append(pid)
    os.close(ready_w)
    for _ in range(workers):
        if not os.read(ready_r, 1):
            break
    print("PORT %d" % sock.getsockname()[1], flush=True)
    deaths = []
    stopping = []
    signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
    while not stopping:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            deaths.append({"pid": pid, "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                           "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None})
        else:
            time.sleep(0.05)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    print(json.dumps({"deaths": deaths, "workers": pids}), flush=True)


if __name__ == "__main__":
    main()
