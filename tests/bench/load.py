"""Light load equipment for ``bench_turns``: a slow provider and a client.

The benchmark measures the app. Its load generator and its fake provider share the
app's two cores, so they are kept cheap, as a load generator written in C would be:
the provider is an asyncio server in a process of its own that speaks HTTP/1.1 with
keep-alive (as the real APIs do) and answers with the OpenAI Responses stream that
``tests.fakes.llm_server`` builds; the client writes each request on a raw socket
and reads the reply by its ``Content-Length``.

Run the provider alone: ``python -m tests.bench.load --port 8200 --delay 1.0``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from typing import Any

from tests.fakes import llm_openai
from tests.fakes.llm_steps import Step
from tests.fakes.llm_usage import counted

REPLY_TEXT = "Hola, soy el asistente."


async def _answer_requests(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    delay: float,
    numbers: itertools.count[int],
) -> None:
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            headers = {
                name.strip().lower(): value.strip()
                for name, _, value in (line.partition(":") for line in header_lines)
                if name
            }
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if not request_line.startswith("POST /v1/responses "):
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                continue
            step, request = Step(text=REPLY_TEXT), json.loads(body)
            reply = llm_openai.reply(  # a load test's model: no prompt cache
                step, request, next(numbers), "/v1/responses", counted(request, step)
            )
            await asyncio.sleep(delay)
            if reply.frames is not None:
                payload = "".join(reply.frames).encode()
                kind = "text/event-stream"
            else:
                payload = json.dumps(reply.body).encode()
                kind = "application/json"
            writer.write(
                f"HTTP/1.1 {reply.status} OK\r\ncontent-type: {kind}\r\n"
                f"content-length: {len(payload)}\r\n\r\n".encode()
                + payload
            )
            await writer.drain()
    finally:
        writer.close()


async def serve_provider(port: int, delay: float) -> None:
    """Answer every Responses request with ``REPLY_TEXT`` after ``delay`` seconds."""
    numbers = itertools.count(1)
    server = await asyncio.start_server(
        lambda r, w: _answer_requests(r, w, delay, numbers),
        "127.0.0.1",
        port,
        backlog=1024,
    )
    async with server:
        await server.serve_forever()


async def post_json(
    port: int, path: str, payload: dict[str, Any], headers: dict[str, str]
) -> tuple[int, Any]:
    """One ``POST`` on a new connection to 127.0.0.1; the status and parsed JSON."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        body = json.dumps(payload).encode()
        lines = [
            f"POST {path} HTTP/1.1",
            f"host: 127.0.0.1:{port}",
            "content-type: application/json",
            f"content-length: {len(body)}",
            "connection: close",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        length = next(
            int(value)
            for name, _, value in (line.partition(":") for line in header_lines)
            if name.strip().lower() == "content-length"
        )
        return int(status_line.split()[1]), json.loads(await reader.readexactly(length))
    finally:
        writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=1.0)
    options = parser.parse_args()
    asyncio.run(serve_provider(options.port, options.delay))


if __name__ == "__main__":
    main()
