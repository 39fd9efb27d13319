"""A local stand-in for the serving stacks of AWS's images, speaking SageMaker's hosting contract
(``GET /ping``, ``POST /invocations`` on 127.0.0.1) around an example's real ``inference.py``.

The images' own serving code cannot be installed here (no PyPI, no Docker), so each stack's behaviour
towards the user module is reproduced from its source, as read:

- ``toolkit`` — the SageMaker inference toolkit under TorchServe/MMS (aws/sagemaker-inference-toolkit
  ``transformer.py``): input_fn, predict_fn, output_fn called with one more argument, the request's
  ``context``, when they take it; ``context.set_response_status`` sets the status; a returned
  ``(body, content type)`` sets the content type; an exception is answered with its status when it is a
  ``BaseInferenceToolkitError`` and 500 otherwise, the body being the message, a newline and the traceback.
- ``containers`` — sagemaker-containers' Flask worker as the scikit-learn image runs it
  (aws/sagemaker-containers ``_transformer.py``): an ``UnsupportedFormatError`` from input_fn is a 415
  JSON answer, a ``worker.Response`` is sent as it is, a tuple is ``(body, mimetype)``, any other
  exception is a 500.

The modules the examples import inside the containers (``sagemaker_inference.errors``,
``sagemaker_containers.beta.framework.worker``/``errors``) are provided here with those constructors.
"""
import importlib.util
import inspect
import json
import os
import sys
import threading
import traceback
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.environ.get("RESILIENT_ENDPOINT_RUNTIME_DIR") or os.path.normpath(os.path.join(HERE, "..", "..", "..", "runtime", "python"))
if RUNTIME not in sys.path:
    sys.path.insert(0, RUNTIME)


# -- the container-side modules the examples import -------------------------------------------------


def send_answer(handler, status, ctype, out):
    """Writes one HTTP answer (status, optional content type, body) on a BaseHTTPRequestHandler."""
    handler.send_response(status)
    if ctype:
        handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(out)))
    handler.end_headers()
    handler.wfile.write(out)

class BaseInferenceToolkitError(Exception):
    def __init__(self, status_code, message, phrase):
        self.status_code, self.message, self.phrase = status_code, message, phrase
        super().__init__(status_code, message, phrase)


class GenericInferenceToolkitError(BaseInferenceToolkitError):
    def __init__(self, status_code, message=None, phrase=None):
        message = message or "Invalid Request"
        super().__init__(status_code, message, phrase or message)


class UnsupportedFormatError(Exception):
    pass


class Response:
    """sagemaker_containers' worker.Response: a Flask response (body, status, mimetype)."""

    def __init__(self, response=None, status=200, headers=None, mimetype=None, accept=None):
        self.body = response.encode() if isinstance(response, str) else (response or b"")
        self.status = status
        self.mimetype = mimetype or accept or "application/json"


def install_container_modules():
    errors = types.ModuleType("sagemaker_inference.errors")
    errors.BaseInferenceToolkitError = BaseInferenceToolkitError
    errors.GenericInferenceToolkitError = GenericInferenceToolkitError
    pkg = types.ModuleType("sagemaker_inference")
    pkg.errors = errors
    worker = types.ModuleType("sagemaker_containers.beta.framework.worker")
    worker.Response = Response
    cerrors = types.ModuleType("sagemaker_containers.beta.framework.errors")
    cerrors.UnsupportedFormatError = UnsupportedFormatError
    framework = types.ModuleType("sagemaker_containers.beta.framework")
    framework.worker, framework.errors = worker, cerrors
    beta = types.ModuleType("sagemaker_containers.beta")
    beta.framework = framework
    root = types.ModuleType("sagemaker_containers")
    root.beta = beta
    sys.modules.update({
        "sagemaker_inference": pkg, "sagemaker_inference.errors": errors,
        "sagemaker_containers": root, "sagemaker_containers.beta": beta, "sagemaker_containers.beta.framework": framework,
        "sagemaker_containers.beta.framework.worker": worker, "sagemaker_containers.beta.framework.errors": cerrors,
    })


def load_example(name, env=None):
    """The example's inference.py as the image loads it (code/ on sys.path, the runtime beside it)."""
    install_container_modules()
    if RUNTIME not in sys.path:
        sys.path.insert(0, RUNTIME)
    for k, v in (env or {}).items():
        os.environ[k] = v
    path = os.path.join(HERE, "..", name, "code", "inference.py")
    spec = importlib.util.spec_from_file_location("%s_inference_%d" % (name, id(env)), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the two serving stacks -----------------------------------------------------------------------------

class Context:
    """What TorchServe/MMS hands the toolkit: request properties, and the response's status and type."""

    def __init__(self, headers, system_properties=None):
        self.headers = headers
        # TorchServe's worker context: gpu_id is the worker's GPU (None on a CPU host), model_dir the model
        self.system_properties = system_properties or {"gpu_id": None, "model_dir": "/opt/ml/model"}
        self.status = (200, "OK")
        self.content_type = None

    def set_response_status(self, code=200, phrase="", idx=0):
        self.status = (code, phrase)

    def set_response_content_type(self, idx, value):
        self.content_type = value


def _call(fn, args, context):
    n = len(inspect.signature(fn).parameters)
    if n == len(args):
        return fn(*args)
    if n == len(args) + 1:
        return fn(*(args + (context,)))
    raise TypeError("%s takes %d arguments" % (fn.__name__, n))


def toolkit_invoke(module, model, body, content_type, accept):
    """(status, content type, body) as the inference toolkit's Transformer answers (see the module's docstring)."""
    context = Context({"Content-Type": content_type, "Accept": accept})
    try:
        data = body.decode("utf-8") if content_type in ("application/json", "text/csv") else body
        data = _call(module.input_fn, (data, content_type), context)
        prediction = _call(module.predict_fn, (data, model), context)
        result = _call(module.output_fn, (prediction, accept), context)
        response, ctype = (result[0], result[1]) if isinstance(result, tuple) else (result, accept)
        return context.status[0], ctype, response.encode() if isinstance(response, str) else response
    except Exception as e:  # noqa: BLE001 - as the toolkit does
        trace = traceback.format_exc()
        if not isinstance(e, BaseInferenceToolkitError):
            e = GenericInferenceToolkitError(500, str(e))
        return e.status_code, context.content_type, ("%s\n%s" % (e.message, trace)).encode()


def containers_invoke(module, model, body, content_type, accept):
    """(status, content type, body) as sagemaker-containers' transformer answers."""
    try:
        try:
            data = module.input_fn(body, content_type)
        except UnsupportedFormatError as e:
            return 415, "application/json", json.dumps({"error": "UnsupportedFormatError", "error-message": str(e)}).encode()
        prediction = module.predict_fn(data, model)
        result = module.output_fn(prediction, accept)
        if isinstance(result, tuple):
            result = Response(result[0], mimetype=result[1])
        return result.status, result.mimetype, result.body
    except Exception:  # noqa: BLE001 - Flask answers 500
        return 500, "text/html", traceback.format_exc().encode()


class Server:
    """``GET /ping`` and ``POST /invocations`` on 127.0.0.1 around a loaded model, in a background thread."""

    def __init__(self, module, model, stack):
        invoke = {"toolkit": toolkit_invoke, "containers": containers_invoke}[stack]
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self._send(200 if self.path == "/ping" else 404, "text/plain", b"")

            def do_POST(self):
                if self.path != "/invocations":
                    return self._send(404, "text/plain", b"")
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, ctype, out = invoke(module, model, body, self.headers.get("Content-Type"), self.headers.get("Accept", "application/json"))
                outer.answers.append(status)
                self._send(status, ctype, out)

            def _send(self, status, ctype, out):
                send_answer(self, status, ctype, out)

        self.answers = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def invoke(self, body, content_type="application/json"):
        """(status, content type, body) of one request, over HTTP."""
        import urllib.error
        import urllib.request
        data = body.encode() if isinstance(body, str) else body
        req = urllib.request.Request(self.url + "/invocations", data=data, method="POST", headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read()
