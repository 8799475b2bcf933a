"""An OTLP/HTTP trace receiver for the tests: a real HTTP server on loopback that decodes each
export with the OpenTelemetry project's own protobuf types (`opentelemetry-proto` from PyPI),
keeps every span and the raw bytes, and can be told to hang or to fail."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span


def attributes(span_or_resource) -> dict:
    """The attributes as a plain dict (arrays as lists)."""
    out = {}
    for kv in span_or_resource.attributes:
        v = kv.value
        kind = v.WhichOneof("value")
        if kind == "array_value":
            out[kv.key] = [getattr(x, x.WhichOneof("value")) for x in v.array_value.values]
        else:
            out[kv.key] = getattr(v, kind)
    return out


class OtlpReceiver:
    def __init__(self) -> None:
        self.spans: list[tuple[dict, Span]] = []  # (resource attributes, span)
        self.raw: list[bytes] = []
        self.headers: list[dict] = []
        self.mode = "ok"  # "ok", "hang", "fail"
        self.released = threading.Event()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if receiver.mode == "hang":
                    receiver.released.wait(timeout=60)
                if receiver.mode == "fail":
                    self.send_response(503)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
                    self.send_response(415)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with receiver.lock:
                    receiver.raw.append(body)
                    receiver.headers.append(dict(self.headers))
                    for rs in request.resource_spans:
                        resource = attributes(rs.resource)
                        for ss in rs.scope_spans:
                            for span in ss.spans:
                                receiver.spans.append((resource, span))
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def hang(self) -> None:
        self.released.clear()
        self.mode = "hang"

    def recover(self) -> None:
        self.mode = "ok"
        self.released.set()

    def server_spans(self) -> list[Span]:
        with self.lock:
            return [s for _, s in self.spans if s.kind == Span.SPAN_KIND_SERVER]

    def children_of(self, span: Span) -> list[Span]:
        with self.lock:
            return [s for _, s in self.spans if s.parent_span_id == span.span_id and s.trace_id == span.trace_id]

    def wait_for(self, check, what: str, within: float = 10.0):
        deadline = time.monotonic() + within
        while True:
            found = check()
            if found:
                return found
            assert time.monotonic() < deadline, f"not within {within}s: {what}"
            time.sleep(0.02)

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
