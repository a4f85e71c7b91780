"""A scripted chat model for verifiers rollouts on a CPU: an OpenAI-compatible endpoint and an in-process harness.

verifiers' own chat harnesses run a program under ``uv`` that installs its packages from the network; a test
cannot. ``Harness.launch``'s contract allows a loop run in-process as long as every model call goes through
the rollout's interception endpoint, which is what :class:`ScriptedChatHarness` does (one chat request per
segment, the whole conversation so far), so the env, the interaction, the interception, the trace and the
scoring are the library's own. The endpoint (:class:`ScriptedModel`) answers the replies it was given, in
order, and records the messages each request showed the model.

Loaded by id as any harness (``{"harness": {"id": "scripted_model"}}``: this module exports the harness
through ``__all__``; tests/ is on the import path).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import verifiers.v1 as vf
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.runtimes import ProgramResult

__all__ = ["ScriptedChatHarness", "ScriptedChatHarnessConfig"]


class ScriptedModel:
    """An OpenAI-compatible ``/v1/chat/completions`` that answers ``replies`` in order; ``seen`` holds each request's messages."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict[str, Any]]] = []
        self.url = ""

    @contextmanager
    def serving(self) -> Iterator[ScriptedModel]:
        """Serves on a free loopback port (``self.url`` is its base URL, ending in ``/v1``) while the block runs."""
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                model.seen.append(list(body.get("messages") or []))
                reply = model.replies.pop(0) if model.replies else "(no more scripted replies)"
                answer = {
                    "id": f"chatcmpl-{len(model.seen)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model") or "scripted",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()


class ScriptedChatHarnessConfig(vf.HarnessConfig):
    """No settings: the model and its endpoint come from the rollout."""


class ScriptedChatHarness(vf.Harness[ScriptedChatHarnessConfig]):
    """A tool-less chat loop run in-process: one chat request per segment through the rollout's interception."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str, mcp_urls: Any, data: Any, **kwargs: Any) -> Any:
        """Sends the segment's conversation (the system prompt, then the prompt or the resumed messages) to the model once."""
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages.extend(message_to_wire(m) for m in prompt or [])
        async with httpx.AsyncClient(timeout=120) as client:
            answer = await client.post(
                f"{endpoint}/chat/completions", json={"model": ctx.model, "messages": messages}, headers={"Authorization": f"Bearer {secret}"}
            )
        return ProgramResult(exit_code=0 if answer.status_code == 200 else 1, stdout="", stderr=answer.text[-2000:])
