#!/usr/bin/env python3
"""A scripted model server for the real-client tests of the stop hook (issue 38).

It replays a fixed conversation to a real coding-agent client, in the API that client speaks:
the Anthropic Messages API with SSE streaming (`POST /v1/messages`, Claude Code), the OpenAI
Responses API with SSE streaming (`POST /v1/responses`, Codex) and Google's Gemini API
(`POST /v1beta/models/M:streamGenerateContent?alt=sse` and `:generateContent`, Gemini CLI). The client then runs real tools
and fires its real Stop / SubagentStop hooks, which run closegate.

The script (JSON) names threads by a marker and gives each its steps:

    {"threads": {"scene:main": [step, ...], "scene:sub": [step, ...]}}

A request belongs to the thread whose marker appears first in its user messages (the prompt the
client was started with, or the one a subagent was spawned with). Its step is the number of
assistant turns the request already carries, so a retried request gets the same answer and the
server keeps no state between requests. A step is one of

    {"say": TEXT}                         the assistant's final text (ends the turn)
    {"run": COMMAND}                      one shell tool call (Bash / exec_command)
    {"spawn": PROMPT, "background": B}    one subagent (Agent / spawn_agent)
    {"wait": true}                        Codex: wait for the agents just spawned (wait_agent on
                                          the `agent_id`s of the spawn's output)

Requests that offer no shell tool (a client's side requests: titles, summaries) get a short
text. A request past its thread's last step gets "(script ended)" and is logged as an overrun.
Every request is logged as one JSON line: thread, step, api, overrun, and the text of the input
that came after the last assistant turn (a tool's output, or the hook's reason fed back).

Bounded: it binds 127.0.0.1 only, on a port it picks (written to --port-file), and exits after
--max-seconds or --max-requests, whichever comes first. Python 3 standard library only.
"""

import argparse
import http.server
import json
import os
import re
import sys
import threading
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--max-seconds", type=float, default=240)
    p.add_argument("--max-requests", type=int, default=200)
    return p.parse_args()


ARGS = parse_args()
with open(ARGS.script, encoding="utf-8") as f:
    SCRIPT = json.load(f)["threads"]
LOCK = threading.Lock()
COUNT = [0]


def log(entry):
    with LOCK:
        with open(ARGS.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def texts(content):
    """The text of a message's content (a string or a list of blocks), tool results included."""
    if isinstance(content, str):
        return [content]
    out = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        for key in ("text", "content", "output"):
            value = block.get(key)
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, list):
                out.extend(texts(value))
    return out


def thread_of(user_texts):
    """The thread whose marker appears first in the user messages."""
    for text in user_texts:
        found = [(text.find(m), m) for m in SCRIPT if m in text]
        if found:
            return min(found)[1]
    return None


# ---- Anthropic Messages API (Claude Code) ---------------------------------------------------


def anthropic_view(body):
    """(thread, assistant turns so far, input after the last assistant turn, offers a shell)."""
    messages = body.get("messages") or []
    users = [t for m in messages if m.get("role") == "user" for t in texts(m.get("content"))]
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    tail = []
    for m in reversed(messages):
        if m.get("role") == "assistant":
            break
        tail[:0] = texts(m.get("content"))
    tools = {t.get("name") for t in body.get("tools") or []}
    return thread_of(users), turns, "\n".join(tail), "Bash" in tools


def anthropic_events(step, n, tail):
    msg = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "scripted",
           "content": [], "stop_reason": None, "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}
    events = [("message_start", {"type": "message_start", "message": msg})]
    if "say" in step:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": step["say"]}
        stop = "end_turn"
    else:
        if "run" in step:
            name, args = "Bash", {"command": step["run"], "description": "scripted step"}
        else:
            name, args = "Agent", {"description": "scripted subagent", "prompt": step["spawn"],
                                   "subagent_type": "general-purpose",
                                   "run_in_background": bool(step.get("background", False))}
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
        stop = "tool_use"
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop,
                                                              "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in events)


# ---- OpenAI Responses API (Codex) -------------------------------------------------------------


def responses_view(body):
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    users = [t for i in items if i.get("type") == "message" and i.get("role") == "user"
             for t in texts(i.get("content"))]

    def assistant(i):
        return i.get("type") == "function_call" or (
            i.get("type") == "message" and i.get("role") == "assistant")

    turns = sum(1 for i in items if assistant(i))
    tail = []
    for i in reversed(items):
        if assistant(i):
            break
        if i.get("type") == "function_call_output":
            tail[:0] = texts([i])
        elif i.get("role") in ("user", "developer"):
            tail[:0] = texts(i.get("content"))
    tools = {t.get("name") for t in body.get("tools") or []}
    return thread_of(users), turns, "\n".join(tail), "exec_command" in tools


def responses_events(step, n, tail):
    rid = f"resp_{n}"
    if "say" in step:
        item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                "content": [{"type": "output_text", "text": step["say"]}]}
    elif "run" in step:
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                "name": "exec_command",
                # Wait for the command as long as Codex allows (30 s) before it yields.
                "arguments": json.dumps({"cmd": step["run"], "yield_time_ms": 30000})}
    elif "spawn" in step:
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                "namespace": "multi_agent_v1", "name": "spawn_agent",
                "arguments": json.dumps({"message": step["spawn"]})}
    else:
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                "namespace": "multi_agent_v1", "name": "wait_agent",
                "arguments": json.dumps({"targets": re.findall(r'"agent_id"\s*:\s*"([^"]+)"', tail),
                                         "timeout_ms": 120000})}
    usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
             "output_tokens_details": None, "total_tokens": 2}
    events = [
        {"type": "response.created", "response": {"id": rid}},
        {"type": "response.output_item.done", "item": item},
        {"type": "response.completed", "response": {"id": rid, "usage": usage}},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


# ---- Gemini API (Gemini CLI) -----------------------------------------------------------------


def gemini_view(body):
    contents = body.get("contents") or []

    def parts_text(parts):
        out = []
        for part in parts or []:
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            response = part.get("functionResponse")
            if isinstance(response, dict):
                out.append(json.dumps(response.get("response")))
        return out

    users = [t for c in contents if c.get("role") == "user" for t in parts_text(c.get("parts"))]
    turns = sum(1 for c in contents if c.get("role") == "model")
    tail = []
    for c in reversed(contents):
        if c.get("role") == "model":
            break
        tail[:0] = parts_text(c.get("parts"))
    tools = {d.get("name") for t in body.get("tools") or []
             for d in t.get("functionDeclarations") or []}
    return thread_of(users), turns, "\n".join(tail), "run_shell_command" in tools


def gemini_part(step):
    if "say" in step:
        return {"text": step["say"]}
    return {"functionCall": {"name": "run_shell_command",
                             "args": {"command": step["run"], "description": "scripted step"}}}


def gemini_chunk(step):
    return {"candidates": [{"content": {"role": "model", "parts": [gemini_part(step)]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                              "totalTokenCount": 2},
            "modelVersion": "scripted"}


def gemini_events(step, n, tail):
    return f"data: {json.dumps(gemini_chunk(step))}\r\n\r\n".encode()


# ---- the server -------------------------------------------------------------------------------


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/v1/models"):
            return self.reply(200, b'{"data": [], "models": []}')
        self.reply(404, b"{}")

    def do_POST(self):
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self.reply(400, b'{"error": "not JSON"}')
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.reply(200, b'{"input_tokens": 10}')
        if path.endswith(":countTokens"):
            return self.reply(200, b'{"totalTokens": 10}')
        stream = "text/event-stream"
        if path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
            api, view, render = "gemini", gemini_view, gemini_events
            if path.endswith(":generateContent"):
                stream = "application/json"
                render = lambda step, n, tail: json.dumps(gemini_chunk(step)).encode()
        elif path.endswith("/messages"):
            api, view, render = "anthropic", anthropic_view, anthropic_events
        elif path.endswith("/responses"):
            api, view, render = "responses", responses_view, responses_events
        else:
            return self.reply(404, b"{}")
        thread, turns, tail, agentic = view(body)
        steps = SCRIPT.get(thread) if agentic else None
        entry = {"n": n, "api": api, "thread": thread, "step": turns, "input": tail[-4000:]}
        if steps is None:
            step, entry["side"] = {"say": "ok"}, True
        elif turns < len(steps):
            step = steps[turns]
        else:
            step, entry["overrun"] = {"say": "(script ended)"}, True
        entry["reply"] = step
        log(entry)
        self.reply(200, render(step, n, tail), stream)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, ARGS.port_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    deadline = time.monotonic() + ARGS.max_seconds
    while time.monotonic() < deadline and COUNT[0] < ARGS.max_requests:
        time.sleep(0.1)
    why = "time" if COUNT[0] < ARGS.max_requests else "requests"
    log({"stopped": why})
    server.shutdown()
    sys.exit(0)


if __name__ == "__main__":
    main()
