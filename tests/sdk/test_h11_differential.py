"""The gateway's HTTP/1.1 head and framing parser against h11's, on the hostile-input corpus
(gateway/tests/hostile/corpus.json): for each case of the framing, head, limits and connection
layers, the same bytes go through an `h11.Connection(h11.SERVER)` and, over a raw socket, to the
real gateway, and both must accept or refuse each request in them alike — except for the cases
in KNOWN_DIVERGENCES, each with the reason. The table is exact: a divergence missing from it
fails, and so does an entry that no longer diverges."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import h11
import pytest

CORPUS_PATH = Path(__file__).resolve().parents[2] / "gateway" / "tests" / "hostile" / "corpus.json"
CORPUS = json.loads(CORPUS_PATH.read_text(encoding="utf-8"))
# The layers whose cases are about HTTP/1.1 itself; `body` cases are about the JSON only.
LAYERS = {"framing", "head", "limits", "connection"}
CASES = [case for case in CORPUS["cases"] if case["layer"] in LAYERS]
# h11 given the gateway's default head limit (pointwork.limits.max_header_bytes), and fed in
# pieces as a socket would deliver them: h11 applies its limit to an incomplete head only.
MAX_HEADER_BYTES = 64 * 1024
PIECE = 4096
READ_TIMEOUT = 15.0

BARE_LF = "h11 takes a bare LF as a line end (RFC 9112 §2.2: MAY); the gateway refuses it, as a proxy in front may not"
VERSION = "h11 accepts any HTTP/d.d version; the gateway only HTTP/1.0 and HTTP/1.1"
# Case name -> why the gateway and h11 disagree on it (as the RFCs want the gateway to behave).
KNOWN_DIVERGENCES: dict[str, str] = {
    # framing
    "Transfer-Encoding with Content-Length": "RFC 9112 §6.3: a server may frame by Transfer-Encoding alone (h11) "
    "or refuse the request (the gateway: a smuggling sign)",
    "a Content-Length list of equal values": "RFC 9110 §8.6: h11 collapses `67, 67`; the gateway takes plain digits "
    "only (MAY reject)",
    "Transfer-Encoding in HTTP/1.0": "h11 decodes the chunked body; RFC 9112 §6.1: the framing MUST be treated as "
    "faulty",
    "a chunk extension of 5 000 bytes": "the gateway caps a chunk-size line at 1 KiB; h11 only at its 64 KiB event "
    "limit",
    "trailer fields that must not be trailers": "h11 validates trailer fields as header fields (refuses a "
    "Transfer-Encoding other than chunked); the gateway discards trailers (RFC 9110 §6.5.1)",
    "a bare LF ending the chunked body, smuggling a request": BARE_LF + " (h11 then sees a second request)",
    # the head
    "obsolete line folding": "RFC 9112 §5.2: replace each obs-fold with SP (h11) or refuse the request (the gateway)",
    "a bare LF ending the request line": BARE_LF,
    "bare LFs everywhere": BARE_LF,
    "a control character in a header value": "h11's field-vchar is any byte but NUL and whitespace; RFC 9110 §5.5 "
    "excludes CTLs, and the gateway refuses them",
    "a Host with a space inside": "h11 does not check the Host value; RFC 9112 §3.2: MUST 400 for an invalid one",
    "an HTTP/2 preface": VERSION,
    "an HTTP/1.2 request": VERSION,
    "an HTTP/2.0 request line": VERSION,
    "an empty line before the request line": "RFC 9112 §2.2: a server SHOULD ignore an empty line before the request "
    "line; the gateway does, h11 refuses it",
    # limits
    "a request target of 20 000 bytes": "h11 has no target limit (the gateway: limits.max_uri_bytes, 414)",
    "a header value of 64 KiB": "h11's size limit applies to an incomplete head only, so a head completed by the read "
    "that crosses it passes; the gateway's limits.max_header_bytes counts the whole head",
    "200 header fields": "h11 has no limit on the number of fields (the gateway: limits.max_headers, 431)",
    "a chunked body past max_body_bytes": "h11 has no body limit (the gateway: limits.max_body_bytes, 413)",
}

ACCEPT, REJECT = "accept", "reject"


def to_bytes(spec) -> bytes:
    """A corpus byte spec: a string of code points below 256, a {repeat, times} part, or a list."""
    if isinstance(spec, str):
        return spec.encode("latin-1")
    if isinstance(spec, dict):
        return spec["repeat"].encode("latin-1") * spec["times"]
    return b"".join(to_bytes(part) for part in spec)


def case_bytes(case: dict) -> bytes:
    body = to_bytes(case.get("body", ""))
    return to_bytes(case["raw"]).replace(b"{body_len}", str(len(body)).encode()) + body


def h11_verdicts(data: bytes) -> list[str]:
    """What h11, as a server, makes of each request in `data` (then the end of the stream)."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES)
    verdicts: list[str] = []
    fed = 0
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError:
            verdicts.append(REJECT)
            return verdicts
        if event is h11.NEED_DATA:
            if conn.their_state is h11.CLOSED:
                return verdicts
            piece = data[fed : fed + PIECE]
            fed += len(piece)
            conn.receive_data(piece)  # b"" once everything was fed: the end of the stream
            continue
        if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return verdicts
        if isinstance(event, h11.EndOfMessage):
            verdicts.append(ACCEPT)
            # Answer (not 2xx: a 2xx would accept a CONNECT's protocol switch), then read on.
            conn.send(h11.Response(status_code=404, headers=[("content-length", "0")]))
            conn.send(h11.EndOfMessage())
            if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                return verdicts
            conn.start_next_cycle()


def exchange(addr: tuple[str, int], data: bytes) -> bytes:
    """Sends `data` on a fresh connection, half-closes it, and returns all the gateway sent."""
    out = bytearray()
    with socket.create_connection(addr, timeout=READ_TIMEOUT) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # answered and closed (reset) before it read everything
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
    return bytes(out)


def responses(raw: bytes, head_request: bool) -> list[tuple[int, bytes]]:
    """The (status, body) of each response in `raw`, interim ones included."""
    found = []
    while raw:
        end = raw.find(b"\r\n\r\n")
        assert end >= 0, f"not a response head (content where none is due?): {raw[:200]!r}"
        head = raw[:end].decode("latin-1")
        raw = raw[end + 4 :]
        status = int(head.split(" ", 2)[1])
        length = re.search(r"(?im)^content-length:\s*(\d+)\s*$", head)
        size = 0 if status < 200 or head_request or not length else int(length.group(1))
        found.append((status, raw[:size]))
        raw = raw[size:]
    return found


def gateway_verdicts(answer: bytes, head_request: bool) -> list[str]:
    """Which requests the gateway's HTTP layer accepted: a refusal by the codec (a malformed
    head or framing, a limit, a timeout) counts as a reject, an answer from a handler (404,
    405, an unreadable JSON body's 400) as an accept. No answer at all is a reject."""
    verdicts = []
    for status, body in responses(answer, head_request):
        if status < 200:
            continue
        message = ""
        if status >= 400 and body:
            message = json.loads(body)["error"]["message"]
        codec = status in (408, 413, 414, 431, 501, 505) or (status == 400 and message.startswith("malformed request"))
        verdicts.append(REJECT if codec else ACCEPT)
    return verdicts or [REJECT]


@pytest.fixture(scope="module")
def gateway_addr(gateway_with) -> tuple[str, int]:
    stack = gateway_with(CORPUS["model"], CORPUS["pointwork"])
    host, port = stack.gateway_url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def test_the_corpus_and_the_table_agree():
    names = [case["name"] for case in CORPUS["cases"]]
    assert len(names) == len(set(names)), "case names are unique"
    assert len(names) >= 60, f"{len(names)} cases"
    stale = set(KNOWN_DIVERGENCES) - {case["name"] for case in CASES}
    assert not stale, f"KNOWN_DIVERGENCES names no differential case: {sorted(stale)}"


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_gateway_and_h11_accept_and_refuse_alike(case, gateway_addr):
    data = case_bytes(case)
    theirs = h11_verdicts(data)
    ours = gateway_verdicts(exchange(gateway_addr, data), head_request=data.startswith(b"HEAD "))
    reason = KNOWN_DIVERGENCES.get(case["name"])
    if reason is None:
        assert ours == theirs, f"gateway {ours}, h11 {theirs}: a divergence not in KNOWN_DIVERGENCES"
    else:
        assert ours != theirs, f"both {ours}: no longer diverges ({reason}); remove it from KNOWN_DIVERGENCES"
