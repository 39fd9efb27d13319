"""The scikit-learn image's WSGI application, for gunicorn's gevent worker behind nginx (stacks.py).

AWS's scikit-learn image runs ``gunicorn -k gevent ... sagemaker_sklearn_container.serving:main`` behind nginx
(aws/sagemaker-containers ``_server.py``; aws/sagemaker-scikit-learn-container ``serving.py``): ``main`` builds
sagemaker-containers' Flask ``Worker`` on its first call — importing the user module and calling ``model_fn`` inside
the first request, after gunicorn's worker has monkey-patched the process — and routes ``/ping`` and
``/invocations`` to it. sagemaker-containers cannot be installed here (no PyPI), so its worker's answer to the
user module is reproduced from its source by harness.py's ``containers_invoke`` (an ``UnsupportedFormatError``
from input_fn is a 415, a returned ``worker.Response`` is sent as it is, a tuple is ``(body, mimetype)``, any other
exception a 500); everything around it here is real: Flask, gunicorn's gevent worker, nginx.

Environment: ``SM_MODEL_DIR`` (the unpacked model.tar.gz) and ``EXAMPLE`` (default ``clustering``).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import flask  # noqa: E402

from harness import containers_invoke, install_container_modules, load_example  # noqa: E402

_app = {}


def _worker():
    if "flask" not in _app:  # as serving.main: the user module and its model on the first request
        install_container_modules()
        module = load_example(os.environ.get("EXAMPLE", "clustering"))
        model = module.model_fn(os.environ["SM_MODEL_DIR"])
        app = flask.Flask("sklearn_app")

        @app.route("/ping")
        def ping():
            return flask.Response(status=200)

        @app.route("/invocations", methods=["POST"])
        def invocations():
            request = flask.request
            status, ctype, body = containers_invoke(module, model, request.get_data(), request.content_type,
                                                    request.headers.get("Accept", "application/json"))
            return flask.Response(body, status=status, mimetype=ctype)

        _app["flask"] = app
    return _app["flask"]


def main(environ, start_response):
    return _worker()(environ, start_response)
