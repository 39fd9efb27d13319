"""TorchServe as AWS's PyTorch inference image runs it, with TorchServe's real Python workers and a stand-in for
its Java front end (which cannot be built here: no Maven Central).

    python3 ts_frontend.py SOURCES MODEL_DIR WORKERS DIRECTORY [RESPONSE_TIMEOUT]

``SOURCES`` holds pytorch/serve's ``ts`` package and the ``src`` trees of aws/sagemaker-inference-toolkit and
aws/sagemaker-pytorch-inference-toolkit (``git clone`` them; ``scripts/guard-budget.py --help`` says how). Each
worker is ``ts/model_service_worker.py`` on a Unix socket, loaded with the toolkit's handler
(``sagemaker_pytorch_serving_container.handler_service:handle``, as the toolkit's ``torchserve.py`` configures
TorchServe) and the model directory (``code/inference.py`` beside it), with ``TS_DECODE_INPUT_REQUEST=false``
(the toolkit's ``default-ts.properties``: ``decode_input_request=false``). The front end speaks TorchServe's
binary protocol to them (``ts/protocol/otf_message_handler.py``), one request per worker at a time (batch size 1,
the toolkit's default), and answers as TorchServe's ``WorkerThread`` does: the worker's status and body; a worker
that dies or does not answer within ``RESPONSE_TIMEOUT`` (default 60 s) is answered 500 ``Worker died.`` (507 when
it was killed by signal 9) and started again, with TorchServe's back-off (1, 1, 2, 3, 5, 8 … s).

Prints ``PORT <n>`` once every worker has loaded the model; on SIGTERM stops the workers and prints one JSON line:
{"deaths": [{"pid", "signal", "exit"}...], "restarts": n}.
"""
import json
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.normpath(os.path.join(HERE, "..", "..", "..", "runtime", "python"))
HANDLER = "sagemaker_pytorch_serving_container.handler_service:handle"
BACKOFF = (1, 1, 2, 3, 5, 8, 13, 21)


def _int(v):
    return struct.pack("!i", v)


def _str(b):
    b = b.encode() if isinstance(b, str) else b
    return _int(len(b)) + b


def load_message(model_dir):
    # | L | model name | model path | batch size | handler | gpu id (-1: CPU) | envelope | limitMaxImagePixels |
    return b"L" + _str("model") + _str(model_dir) + _int(1) + _str(HANDLER) + _int(-1) + _str("") + struct.pack("!?", True)


def inference_message(request_id, headers, content_type, body):
    msg = b"I" + _str(request_id)
    for k, v in headers.items():
        msg += _str(k) + _str(v)
    msg += _int(-1)
    msg += _str("body") + _str(content_type) + _str(body)
    msg += _int(-1)
    return msg + _int(-1)


def _read(conn, n):
    data = bytearray()
    while n > 0:
        chunk = conn.recv(n)
        if not chunk:
            raise EOFError("the worker closed its socket")
        data += chunk
        n -= len(chunk)
    return bytes(data)


def _read_int(conn):
    return struct.unpack("!i", _read(conn, 4))[0]


def _read_str(conn):
    n = _read_int(conn)
    return _read(conn, n) if n > 0 else b""


def read_response(conn):
    """(code, message, [(request id, content type, status, phrase, headers, body)])."""
    code = _read_int(conn)
    message = _read_str(conn).decode()
    out = []
    while True:
        n = _read_int(conn)
        if n == -1:
            return code, message, out
        request_id = _read(conn, n).decode()
        ctype = _read_str(conn).decode()
        status = _read_int(conn)
        phrase = _read_str(conn).decode()
        headers = {}
        for _ in range(_read_int(conn)):
            k = _read_str(conn).decode()
            headers[k] = _read_str(conn).decode()
        out.append((request_id, ctype, status, phrase, headers, _read_str(conn)))


class Worker:
    def __init__(self, frontend, index):
        self.frontend = frontend
        self.index = index
        self.sock_name = os.path.join(frontend.directory, ".ts.sock.%d" % (9000 + index))
        self.proc = None
        self.conn = None
        self.failures = 0

    def start(self):
        f = self.frontend
        env = dict(os.environ, TS_DECODE_INPUT_REQUEST="false",
                   PYTHONPATH=os.pathsep.join([os.path.join(f.model_dir, "code"), f.sources, os.path.join(f.sources, "src"), RUNTIME,
                                               os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen([sys.executable, os.path.join(f.sources, "ts", "model_service_worker.py"), "--sock-type", "unix",
                                      "--sock-name", self.sock_name, "--metrics-config", os.path.join(f.sources, "ts", "configs", "metrics.yaml")],
                                     env=env, stdout=f.log, stderr=f.log, cwd=f.directory)
        deadline = time.monotonic() + 120
        while True:
            try:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.connect(self.sock_name)
                break
            except OSError:
                conn.close()
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("worker %d did not start (exit %s)" % (self.index, self.proc.poll()))
                time.sleep(0.1)
        conn.sendall(load_message(f.model_dir))
        code, message, _ = read_response(conn)
        if code != 200:
            raise RuntimeError("worker %d did not load the model: %d %s" % (self.index, code, message))
        self.conn = conn
        return self

    def predict(self, request_id, headers, content_type, body, timeout):
        self.conn.settimeout(timeout)
        self.conn.sendall(inference_message(request_id, headers, content_type, body))
        return read_response(self.conn)

    def died(self):
        """Stops the process (if it lives on, unanswering) and records how it ended."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        rc = self.proc.returncode
        self.frontend.deaths.append({"pid": self.proc.pid, "signal": -rc if rc < 0 else None, "exit": rc if rc >= 0 else None})
        try:
            self.conn.close()
        except OSError:
            pass
        return rc


class Frontend:
    def __init__(self, sources, model_dir, workers, directory, response_timeout):
        self.sources, self.model_dir, self.directory, self.response_timeout = sources, model_dir, directory, response_timeout
        self.log = open(os.path.join(directory, "torchserve-workers.log"), "ab")
        self.deaths = []
        self.restarts = 0
        self.idle = queue.Queue()
        self.counter = 0
        self.lock = threading.Lock()
        for w in [Worker(self, i).start() for i in range(workers)]:
            self.idle.put(w)

    def restart(self, worker):
        def again():
            delay = BACKOFF[min(worker.failures, len(BACKOFF) - 1)]
            worker.failures += 1
            time.sleep(delay)
            try:
                worker.start()
                worker.failures = 0
                self.restarts += 1
                self.idle.put(worker)
            except Exception:  # noqa: BLE001 - try again, as TorchServe does
                if worker.proc is not None and worker.proc.poll() is None:
                    worker.proc.kill()
                self.restart(worker)

        threading.Thread(target=again, daemon=True).start()

    def invoke(self, headers, content_type, body):
        worker = self.idle.get()
        with self.lock:
            self.counter += 1
            request_id = "req-%d" % self.counter
        try:
            code, message, replies = worker.predict(request_id, headers, content_type, body, self.response_timeout)
        except (EOFError, OSError, socket.timeout):
            rc = worker.died()
            self.restart(worker)
            status = 507 if rc == -signal.SIGKILL else 500
            return status, "application/json", json.dumps({"code": status, "type": "InternalServerException", "message": "Worker died."}).encode()
        self.idle.put(worker)
        if not replies or code != 200:
            return code, "application/json", json.dumps({"code": code, "type": "ServiceUnavailableException", "message": message}).encode()
        _, ctype, status, _, _, out = replies[0]
        return status, ctype or "application/json", out

    def stop(self):
        while True:
            try:
                w = self.idle.get_nowait()
            except queue.Empty:
                break
            if w.proc.poll() is None:
                w.proc.terminate()


def main():
    sources, model_dir, workers, directory = sys.argv[1:5]
    timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 60.0
    front = Frontend(os.path.abspath(sources), os.path.abspath(model_dir), int(workers), directory, timeout)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args):
            pass

        def do_GET(self):
            self._send(200 if self.path == "/ping" else 404, "application/json", b"{}")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {"Content-Type": self.headers.get("Content-Type", "application/json"), "Accept": self.headers.get("Accept", "application/json")}
            status, ctype, out = front.invoke(headers, headers["Content-Type"], body)
            self._send(status, ctype, out)

        def _send(self, status, ctype, out):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stopping.set())
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    print("PORT %d" % httpd.server_address[1], flush=True)
    stopping.wait()
    httpd.shutdown()
    front.stop()
    print(json.dumps({"deaths": front.deaths, "restarts": front.restarts}), flush=True)


if __name__ == "__main__":
    main()
