"""Prometheus metrics (guard_* names, _seconds and _total suffixes). One registry per server."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

STAGES = ("decode", "vad", "diarize", "verify", "policy", "backend", "total")
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter("guard_requests_total", "Requests by method, mode and outcome.",
                                ["method", "mode", "outcome"], registry=r)
        self.refusals = Counter("guard_refusals_total", "SELECTIVE refusals by reason.", ["reason"], registry=r)
        self.stage_seconds = Histogram("guard_stage_seconds", "Latency of each request stage.", ["stage"],
                                       buckets=LATENCY_BUCKETS, registry=r)
        self.audio_seconds = Counter("guard_audio_seconds_total", "Seconds of request audio processed.",
                                     registry=r)
        self.withheld_seconds = Counter("guard_withheld_audio_seconds_total",
                                        "Seconds of audio kept from the model by selective hearing.", registry=r)
        self.withheld_checks = Counter("guard_withheld_checks_total", "SELECTIVE answers weighed against the "
                                       "withheld speech, by verdict (passed, refused).", ["verdict"], registry=r)
        self.in_flight = Gauge("guard_in_flight_requests", "Requests being processed now.", registry=r)
        self.enrolled = Gauge("guard_enrolled_speakers", "Enrolled speakers, all households.", registry=r)
        self.backend_errors = Counter("guard_backend_errors_total", "Failed backend calls.", ["backend"],
                                      registry=r)
        self.rejected = Counter("guard_rejected_total", "Requests turned away before work (overload, limits).",
                                ["reason"], registry=r)

    def observe_stage(self, stage: str, seconds: float) -> None:
        self.stage_seconds.labels(stage).observe(seconds)

    def serve(self, port: int, host: str = "0.0.0.0") -> int:
        """Expose /metrics over HTTP; returns the bound port."""
        server, _ = start_http_server(port, addr=host, registry=self.registry)
        return server.server_port
