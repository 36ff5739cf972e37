"""A protocol-v2 driver written in Python, so the driver protocol is tested without Node.

It runs a real Python adapter (``hello.adapter`` = ``NAME`` or ``NAME#MODE``, NAME as on --adapter; when hello
names nothing, as for ``--adapter=cmd:...``, the ``--adapter NAME`` of its command line) against its replay host
over HTTP, with the Python link (replay/link.py) on a virtual-time loop, and speaks exactly what
docs/worker-protocol.md (version 2) says a driver speaks.
Modes break it on purpose: ``dies`` (exits after the first callback), ``hangs`` (never answers the run),
``garbage`` (writes a line that is not JSON), ``invalid`` (returns a result RES-01 must reject), ``buffers``
(reports every callback only once the step returned: STR-02 must fail), ``loadfail`` (hello fails). ``meets``
proves runs overlap in separate drivers: a run leaves its pid in ``$HELIX_FAKE_MEETING`` and waits (up to 20 s)
for another driver's pid there, and leaves ``PID.met`` if one came.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from helix_conformance.adapters import AdapterNotFound, resolve_adapter
from helix_conformance.contract import (
    AbortController,
    AdapterContext,
    ErrorStepResult,
    LLMConfig,
    LLMGenerateInput,
    LLMStreamCallbacks,
    Message,
    Tool,
)
from helix_conformance.replay.clock import VirtualTimeLoop
from helix_conformance.replay.idle_threads import waits_for_others
from helix_conformance.replay.link import LinkAddress, counting, link_to
from helix_conformance.replay.trace import Trace

LOCK = threading.Lock()
OUT = -1


def send(message_type: str, **fields: Any) -> None:
    line = json.dumps({"v": 2, "type": message_type, **fields}, default=str) + "\n"
    with LOCK:
        os.write(OUT, line.encode())


def snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def encode(value: Any) -> Any:
    """A value as Helix JSON: models by alias, exceptions as {name, message, code, ..., ref}."""
    if isinstance(value, BaseException):
        data: dict[str, Any] = {"name": type(value).__name__, "message": str(value), "ref": id(value)}
        for field in ("code", "retryable", "status_code"):
            if hasattr(value, field):
                data[camel(field)] = getattr(value, field)
        cause = getattr(value, "cause", None) or value.__cause__
        if cause is not None:
            data["cause"] = encode(cause)
        return data
    if isinstance(value, ErrorStepResult):
        return {"type": "error", "error": encode(value.error), "shouldStop": value.should_stop,
                "stopReason": value.stop_reason}  # fmt: skip
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True)
    return value


def tool(data: dict[str, Any]) -> Tool:
    return Tool(
        name=data["name"],
        description=data["description"],
        input_schema=data["inputSchema"],
        strict=data["strict"],
    )


class Driver:
    def __init__(self) -> None:
        self.spec: Any = None
        self.mode = ""
        self.loop = VirtualTimeLoop()
        self.loop.virtual = False  # no jumps but a run's, granted by its host
        self.controllers: dict[Any, AbortController] = {}

    def hello(self, msg: dict[str, Any]) -> None:
        # Started as a command (--adapter=cmd:...), hello names nothing: the command line says which adapter.
        named = str(msg["adapter"]) or sys.argv[sys.argv.index("--adapter") + 1]
        name, _, self.mode = named.partition("#")
        if self.mode == "loadfail":
            send("error", kind="adapter_not_found", message=f"cannot load {name}: it is broken on purpose")
            return
        try:
            self.spec = resolve_adapter(name).spec
        except AdapterNotFound as exc:
            send("error", kind="adapter_not_found", message=str(exc))
            return
        spec = self.spec
        send("ready", pid=os.getpid(), runtime=f"python {sys.version.split()[0]}", target=name,
             spec={"name": spec.name, "wire_profile": spec.wire_profile, "model": spec.model,
                   "capabilities": sorted(spec.capabilities), "description": spec.description,
                   "servers": sorted(spec.servers)})  # fmt: skip

    async def run(self, msg: dict[str, Any]) -> None:
        run_id, _raw, ctx = msg["id"], msg["input"], msg["context"]
        if self.mode == "hangs":
            await asyncio.sleep(3600)
        if self.mode == "meets":
            await self.meet(Path(os.environ["HELIX_FAKE_MEETING"]))
        if self.mode == "garbage":
            with LOCK:
                os.write(OUT, b"this is not json\n")
        controller = AbortController() if msg.get("withSignal", True) else None
        self.controllers[run_id] = controller  # type: ignore[assignment]
        if msg.get("abortBefore") and controller:
            controller.abort("aborted before the step started")
        replay = msg["replay"]
        marks = Trace()  # what the link reports, in order: where each of these events fell
        refusing = int(replay.get("refusingPort") or 0)  # connect_error: attempts there are reported (rf)
        link = link_to(LinkAddress(replay["httpPort"], replay["controlPort"], replay["token"], refusing))
        link.begin(replay["token"], marks)
        self.loop.link, self.loop.virtual = link, bool(replay.get("virtualTime", True))

        def obey(what: str) -> None:
            if what == "abort" and controller is not None:
                controller.abort("aborted by the harness mid-stream")
            elif what == "cancel" and controller is not None and not controller.signal.aborted:
                # NT-03 as a driver does it: the step's signal is aborted at the host's cancel point
                send("abort_sent", id=run_id, name="cancelled by the harness")
                marks.add("abort", name="cancelled by the harness")
                controller.abort("aborted by the harness mid-stream")

        self.loop.on_instruction = obey
        buffered: list[tuple[str, Any]] = []
        deltas = [0]

        def make(name: str) -> Any:
            def callback(*args: Any) -> Any:
                if self.mode == "buffers":
                    buffered.append(("callback", {"name": camel(name), "args": [encode(a) for a in args]}))
                else:
                    send("callback", id=run_id, name=camel(name), args=[encode(a) for a in args])
                    marks.add("callback", name=name)
                if self.mode == "dies":
                    os._exit(7)
                if name == "on_text_delta" and controller and msg.get("abortOnTextDelta"):
                    deltas[0] += 1
                    if deltas[0] == msg["abortOnTextDelta"]:
                        send("abort_sent", id=run_id, name="from onTextDelta")
                        marks.add("abort", name="from on_text_delta")
                        controller.abort("aborted by the caller from onTextDelta")
                if msg.get("callbacks") == "raising":
                    raise RuntimeError(f"{name} raises on purpose (STR-11)")
                if msg.get("callbacks") in ("async", "slow"):
                    return done(name)
                return None

            return callback

        async def done(name: str) -> None:
            await asyncio.sleep(0.02 if msg.get("callbacks") == "slow" else 0)
            send("callback_done", id=run_id, name=camel(name))
            marks.add("callback_done", name=name)

        names = ("on_text_delta", "on_thinking", "on_tool_call", "on_error")
        callbacks = (
            None if msg.get("callbacks") == "none" else LLMStreamCallbacks(**{n: make(n) for n in names})
        )
        context = AdapterContext(api_key=ctx["apiKey"], base_url=ctx["baseUrl"], timeout=ctx["timeout"])
        try:
            with counting(replay["httpPort"], refusing):
                await self.steps(msg, run_id, context, controller, callbacks, buffered, marks)
        finally:
            link.end()
            self.loop.link, self.loop.virtual = None, False
        send("done", id=run_id, pending=None, uncaught=[])

    async def steps(
        self,
        msg: dict[str, Any],
        run_id: Any,
        context: AdapterContext,
        controller: AbortController | None,
        callbacks: LLMStreamCallbacks | None,
        buffered: list[tuple[str, Any]],
        marks: Trace,
    ) -> None:
        raw = msg["input"]
        adapter = self.spec.factory(context)
        for step in range(int(msg.get("steps") or 1)):
            step_input = LLMGenerateInput(
                messages=TypeAdapter(list[Message]).validate_python(raw["messages"]),
                tools=[
                    Tool(
                        name=t["name"],
                        description=t["description"],
                        input_schema=t["inputSchema"],
                        strict=t["strict"],
                    )
                    for t in raw["tools"]
                ],
                config=LLMConfig.model_validate(raw["config"]),
                abort_signal=controller.signal if controller else None,
                callbacks=callbacks,
                agent_id=raw["agentId"],
                agent_type=raw["agentType"],
            )
            result = await adapter.generate_step(step_input)
            for kind, fields in buffered:
                send(kind, id=run_id, **fields)
                marks.add(kind, name=snake(fields["name"]))
            data = encode(result)
            if self.mode == "invalid":
                data = {
                    "type": "text",
                    "content": 42,
                    "shouldStop": "yes",
                    "stopReason": "finished",
                    "extra": 1,
                }
            send("returned", id=run_id, step=step, result=data, inputBefore=raw, inputAfter=raw, stepMs=1.0)
            marks.add("returned")
        await asyncio.sleep(float(msg.get("lateWaitMs") or 1) / 1000)

    async def meet(self, room: Path) -> None:
        (room / str(os.getpid())).touch()
        for _ in range(2000):
            if any(p.name.isdigit() and p.name != str(os.getpid()) for p in room.iterdir()):
                (room / f"{os.getpid()}.met").touch()
                return
            await asyncio.sleep(0.01)

    def abort(self, msg: dict[str, Any]) -> None:
        controller = self.controllers.get(msg.get("id"))
        if controller is not None:
            send("abort_sent", id=msg["id"], name="harness")
            controller.abort(msg.get("reason"))


def main() -> None:
    global OUT
    read_fd, OUT = (int(x) for x in sys.argv[sys.argv.index("--fds") + 1].split(","))
    driver = Driver()
    stream = os.fdopen(read_fd, "rb")

    def reader() -> None:
        for line in stream:
            msg = json.loads(line)
            kind = msg.get("type")
            if kind == "shutdown":
                os._exit(0)
            if kind == "hello":
                driver.loop.call_soon_threadsafe(driver.hello, msg)
            elif kind == "run":
                driver.loop.call_soon_threadsafe(lambda m=msg: driver.loop.create_task(driver.run(m)))
            elif kind == "abort":
                driver.loop.call_soon_threadsafe(driver.abort, msg)
        os._exit(0)

    waits_for_others(reader.__code__)  # blocked on the harness's pipe: never the adapter's work (clock.py)
    threading.Thread(target=reader, daemon=True).start()
    driver.loop.run_forever()


if __name__ == "__main__":
    main()
