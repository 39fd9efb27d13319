"""A local stand-in for CloudWatch's PutMetricData, speaking the query protocol botocore uses for it in the images'
Python (``Action=PutMetricData&Version=2010-08-01&MetricData.member.N...`` in a form body; XML answers, as the
CloudWatch API reference documents them), that can be told to misbehave:

- ``ok`` — stores the datums and answers at once;
- ``slow`` — stores them and answers ``delay`` seconds later (an answer that arrives late, after being stored);
- ``throttle`` — 400 ``Throttling`` (nothing stored), as CloudWatch answers over its rate;
- ``deny`` — 403 ``AccessDenied`` (nothing stored);
- ``hang`` — reads the call and never answers (nothing stored); when the mode changes, the held connections are
  dropped, as a network path that comes back resets them.

Point a client at it with ``AWS_ENDPOINT_URL_CLOUDWATCH`` (the runtime helper passes it to boto3, which reads it
itself from botocore 1.31). ``stored`` holds what it kept: one dict per datum (name, dimensions, unit, timestamp,
the statistic set's sum and sample count, storage resolution); ``calls`` one (time, mode) per call.
"""
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OK = ('<PutMetricDataResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/">'
      '<ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ResponseMetadata></PutMetricDataResponse>')
ERROR = ('<ErrorResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/"><Error><Type>Sender</Type><Code>%s</Code>'
         '<Message>%s</Message></Error><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ErrorResponse>')


def datums(form):
    """The PutMetricData datums of a query-protocol form (``MetricData.member.N.*``)."""
    out = {}
    for key, values in form.items():
        parts = key.split(".")
        if len(parts) < 4 or parts[0] != "MetricData" or parts[1] != "member":
            continue
        d = out.setdefault(int(parts[2]), {"dimensions": {}})
        field, value = ".".join(parts[3:]), values[0]
        if field == "MetricName":
            d["name"] = value
        elif field in ("Unit", "Timestamp"):
            d[field.lower()] = value
        elif field == "StorageResolution":
            d["resolution"] = int(value)
        elif field == "StatisticValues.Sum":
            d["sum"] = float(value)
        elif field == "StatisticValues.SampleCount":
            d["count"] = float(value)
        elif field.startswith("Dimensions.member."):
            _, _, n, what = field.split(".")
            d.setdefault("_dims", {}).setdefault(n, {})[what] = value
    for d in out.values():
        d["dimensions"] = {v["Name"]: v["Value"] for v in d.pop("_dims", {}).values()}
    return [out[k] for k in sorted(out)]


class StandIn:
    def __init__(self, mode="ok", delay=5.0):
        self.mode = mode
        self.delay = delay
        self.stored = []
        self.stored_at = []
        self.calls = []
        self._held = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                form = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
                mode = outer.mode
                with outer._lock:
                    outer.calls.append((time.monotonic(), mode))
                if form.get("Action", [""])[0] != "PutMetricData":
                    return self._answer(400, ERROR % ("InvalidAction", "only PutMetricData here"))
                if mode == "hang":
                    with outer._lock:
                        outer._held.append(self.connection)
                    while outer.mode == "hang":
                        time.sleep(0.05)
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if mode == "throttle":
                    return self._answer(400, ERROR % ("Throttling", "Rate exceeded"))
                if mode == "deny":
                    return self._answer(403, ERROR % ("AccessDenied", "User is not authorized to perform: cloudwatch:PutMetricData"))
                got = datums(form)
                with outer._lock:
                    outer.stored.extend(got)
                    outer.stored_at.append((time.monotonic(), {d.get("name") for d in got}))
                if mode == "slow":
                    time.sleep(outer.delay)
                self._answer(200, OK)

            def _answer(self, status, xml):
                out = xml.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.mode = "ok"
        self.httpd.shutdown()
        self.httpd.server_close()

    def environment(self):
        """What a container needs to send its metrics here."""
        return {"AWS_ENDPOINT_URL_CLOUDWATCH": self.url, "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "RESILIENT_ENDPOINT_METRICS_NAMESPACE": "Test/Guard"}

    def total(self, name):
        with self._lock:
            return sum(d.get("sum", 0.0) for d in self.stored if d.get("name") == name)

    def arrivals(self, name):
        """When calls carrying ``name`` were stored (monotonic), in order."""
        with self._lock:
            return [t for t, names in self.stored_at if name in names]
