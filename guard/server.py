"""The gRPC server: grpc.aio, health and reflection, limits, deadlines, errors -> statuses, metrics.

Layers, outermost first:
- ErrorInterceptor: the one place domain errors become gRPC statuses (GuardError.code), unknown
  errors become INTERNAL (logged with an id, never echoing content), and every call is counted.
- GuardServicer: admission control (a fixed number of slots: beyond them RESOURCE_EXHAUSTED at once,
  never a queue), deadlines (work runs in a thread pool and is abandoned when the deadline passes), and
  StreamAsk assembly (rejected as soon as the audio crosses the duration limit).
- GuardService (service.py): what each call does.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from guard.backends import make_backend
from guard.config import Settings
from guard.errors import BadAudio, BadRequest, GuardError, Overloaded, TooBig
from guard.hearing import Hearing
from guard.metrics import Metrics
from guard.proto import guard_pb2 as pb
from guard.proto import guard_pb2_grpc as pb_grpc
from guard.service import GuardService
from guard.store import open_store

log = logging.getLogger(__name__)
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Guard"].full_name
MiB = 1024 * 1024


def _outcome(response) -> str:
    return "refused" if getattr(response, "refused", False) else "ok"


def _mode(obj) -> str:
    mode = getattr(obj, "mode", None)
    return pb.Mode.Name(mode).lower() if mode is not None else "none"


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        if handler is None or not details.method.startswith(f"/{SERVICE_NAME}/"):
            return handler
        method = details.method.rsplit("/", 1)[-1]
        if handler.unary_unary:
            inner = handler.unary_unary

            async def unary(request, context):
                return await self._guarded(method, inner, request, context, _mode(request))
            return handler._replace(unary_unary=unary)
        if handler.stream_unary:
            inner_s = handler.stream_unary

            async def stream(request_iterator, context):
                return await self._guarded(method, inner_s, request_iterator, context, "stream")
            return handler._replace(stream_unary=stream)
        return handler

    async def _guarded(self, method, behavior, request, context, mode):
        try:
            response = await behavior(request, context)
        except GuardError as e:
            self.metrics.requests.labels(method, mode, e.code.name.lower()).inc()
            await context.abort(e.code, str(e))
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception:
            incident = uuid.uuid4().hex[:12]
            log.exception("internal error in %s (incident %s)", method, incident)
            self.metrics.requests.labels(method, mode, "internal").inc()
            await context.abort(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")
        self.metrics.requests.labels(method, _mode(response) if mode == "stream" else mode,
                                     _outcome(response)).inc()
        return response


class GuardServicer(pb_grpc.GuardServicer):
    def __init__(self, service: GuardService, settings: Settings):
        self.service = service
        self.settings = settings
        self._pool = ThreadPoolExecutor(settings.server.worker_threads, thread_name_prefix="guard-work")
        self._slots = threading.BoundedSemaphore(settings.server.max_concurrency)
        self.metrics = service.metrics

    async def _work(self, fn, request, context):
        """Run fn(request) in the pool within one admission slot and the call's deadline."""
        if not self._slots.acquire(blocking=False):
            self.metrics.rejected.labels("overloaded").inc()
            raise Overloaded(f"all {self.settings.server.max_concurrency} processing slots are busy; retry "
                             "with backoff")

        def run():
            try:
                return fn(request)
            finally:
                self._slots.release()
                self.metrics.in_flight.dec()

        self.metrics.in_flight.inc()
        future = asyncio.get_running_loop().run_in_executor(self._pool, run)
        remaining = context.time_remaining()
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout=remaining)
        except asyncio.CancelledError:
            # The client's deadline passed or it went away: the call ends now; the thread finishes its
            # current work and then frees its slot.
            self.metrics.rejected.labels("cancelled").inc()
            raise
        except asyncio.TimeoutError:
            self.metrics.rejected.labels("deadline").inc()
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"the deadline ({remaining:.2f} s) passed before the work finished")

    async def Enroll(self, request, context):
        return await self._work(self.service.enroll, request, context)

    async def Forget(self, request, context):
        return await self._work(self.service.forget, request, context)

    async def ListSpeakers(self, request, context):
        return await self._work(self.service.list_speakers, request, context)

    async def OpenSession(self, request, context):
        return await self._work(self.service.open_session, request, context)

    async def CloseSession(self, request, context):
        return await self._work(self.service.close_session, request, context)

    async def Listen(self, request, context):
        return await self._work(self.service.listen, request, context)

    async def Ask(self, request, context):
        return await self._work(self.service.ask, request, context)

    async def StreamAsk(self, request_iterator, context):
        request = await self._assemble(request_iterator)
        return await self._work(self.service.ask, request, context)

    async def _assemble(self, request_iterator) -> pb.AskRequest:
        """StreamStart, chunks..., StreamEnd -> one AskRequest; over-long audio is rejected at once."""
        start: pb.StreamStart | None = None
        chunks: list[bytes] = []
        size = 0
        limit_s = self.settings.server.max_audio_seconds
        limit_bytes = int(self.settings.server.max_message_mb * MiB)
        async for part in request_iterator:
            kind = part.WhichOneof("part")
            if start is None and kind != "start":
                raise BadRequest("a StreamAsk stream must begin with StreamStart")
            if kind == "start":
                if start is not None:
                    raise BadRequest("StreamStart sent twice")
                start = part.start
                if start.encoding == pb.StreamStart.ENCODING_UNSPECIFIED:
                    raise BadRequest("StreamStart.encoding is required (PCM16, FLOAT32 or ENCODED)")
                if start.encoding != pb.StreamStart.ENCODED and not 8000 <= start.sample_rate <= 48000:
                    raise BadAudio(f"StreamStart.sample_rate {start.sample_rate} Hz is unusable; 8000-48000")
            elif kind == "chunk":
                chunks.append(part.chunk)
                size += len(part.chunk)
                if start.encoding == pb.StreamStart.ENCODED:
                    if size > limit_bytes:
                        raise TooBig(f"streamed audio passed {limit_bytes // MiB} MiB")
                else:
                    width = 2 if start.encoding == pb.StreamStart.PCM16 else 4
                    seconds = size / (width * max(1, start.channels) * start.sample_rate)
                    if seconds > limit_s:
                        self.metrics.rejected.labels("too_long").inc()
                        raise TooBig(f"streamed audio passed the {limit_s:.0f} s limit")
            elif kind == "end":
                audio = b"".join(chunks)
                a = pb.Audio(sample_rate=start.sample_rate, channels=start.channels)
                field = {pb.StreamStart.PCM16: "pcm16", pb.StreamStart.FLOAT32: "float32",
                         pb.StreamStart.ENCODED: "encoded"}[start.encoding]
                setattr(a, field, audio)
                return pb.AskRequest(household=start.household, session_id=start.session_id, audio=a,
                                     mode=start.mode, question=part.end.question, options=part.end.options,
                                     main_speaker_desc=start.main_speaker_desc)
        raise BadRequest("the stream ended without StreamEnd")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.service.backend.close()   # the cascade's decode workers (decision 127)


@dataclass
class Running:
    server: grpc.aio.Server
    port: int
    metrics_port: int
    health: HealthServicer
    servicer: GuardServicer

    async def stop(self, grace: float | None) -> None:
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        self.servicer.close()


def load_components(settings: Settings, metrics: Metrics) -> GuardService:
    t = time.perf_counter()
    store = open_store(settings)
    hearing = Hearing.from_settings(settings.hearing) if settings.hearing.enabled else None
    if hearing is None:
        log.warning("hearing is disabled: SELECTIVE requests will be refused (fail closed)")
    if not settings.policy.gating:
        log.warning("policy.gating is OFF: SELECTIVE requests reach the model ungated (measurement only)")
    backend = make_backend(settings.backend)
    ledger = words = withheld = None
    if hearing is not None:
        from guard.hearing.asr import Transcriber
        from guard.hearing.whisper import shared
        from guard.policy.privacy_text import PrivacyText
        from guard.policy.secrets import SecretLedger

        lead = shared(settings.policy.ledger_whisper, "policy.ledger_whisper")
        asr = Transcriber(lead=lead, runner_ups=False)   # the ledger reads the 1-best alone
        second = shared(settings.policy.ledger_second_whisper, "policy.ledger_second_whisper")
        again = Transcriber(lead=second, runner_ups=False) if second is not None and second is not lead else None
        ledger = SecretLedger(store, asr, PrivacyText(settings.policy), hearing.threshold, settings.policy,
                              second=again)
        words = shared(settings.policy.tail_whisper, "policy.tail_whisper")   # the gate's word tails
        if settings.policy.withheld_check:
            from guard.policy.withheld import WithheldCheck

            # hears as the ledger does, both recognisers (decision 137)
            withheld = WithheldCheck(asr, settings.policy.withheld_margin,
                                     again if settings.policy.withheld_second else None)
    log.info("loaded store=%s hearing=%s backend=%s in %.1f s", settings.store.kind,
             settings.hearing.embedder if hearing else "off", backend.name, time.perf_counter() - t)
    return GuardService(settings, store, hearing, backend, metrics, ledger, words=words, withheld=withheld)


async def start(settings: Settings, service: GuardService | None = None) -> Running:
    metrics = service.metrics if service else Metrics()
    service = service or load_components(settings, metrics)
    srv = settings.server
    max_bytes = int(srv.max_message_mb * MiB)
    server = grpc.aio.server(interceptors=[ErrorInterceptor(metrics)],
                             options=[("grpc.max_receive_message_length", max_bytes),
                                      ("grpc.max_send_message_length", max_bytes)],
                             maximum_concurrent_rpcs=srv.max_concurrency * 4)
    servicer = GuardServicer(service, settings)
    pb_grpc.add_GuardServicer_to_server(servicer, server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection((SERVICE_NAME, reflection.SERVICE_NAME, "grpc.health.v1.Health"),
                                        server)
    port = server.add_insecure_port(f"{srv.host}:{srv.port}")
    if port == 0:
        raise OSError(f"could not bind {srv.host}:{srv.port}")
    await server.start()
    for name in ("", SERVICE_NAME):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    metrics_port = metrics.serve(srv.metrics_port, srv.host) if srv.metrics_port else 0
    log.info("guard serving on %s:%d (metrics on :%d)", srv.host, port, metrics_port)
    return Running(server, port, metrics_port, health, servicer)


async def serve(settings: Settings, ready=None) -> None:
    """Run until SIGTERM/SIGINT; in-flight calls get server.grace_seconds to finish."""
    running = await start(settings)
    if ready:
        ready(running)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down: draining in-flight calls for up to %.0f s", settings.server.grace_seconds)
    await running.stop(settings.server.grace_seconds)
    log.info("stopped")
