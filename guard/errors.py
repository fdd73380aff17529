"""Domain errors. Each maps to one gRPC status code, in one place (server.interceptors).

Raise these anywhere below the server; never catch-and-default. Messages are shown to clients, so they
say what was wrong and what to do, and never contain audio, transcripts, voiceprints or secrets.
"""
from __future__ import annotations

import grpc


class GuardError(Exception):
    """Base class: a failure the client should hear about with a specific status."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL


class BadAudio(GuardError):
    """Audio that cannot be decoded or used (empty, garbage, NaN, unusable rate, too long)."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class BadRequest(GuardError):
    """A request field that is missing or malformed."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class EnrollmentRejected(GuardError):
    """Enrollment audio failed a quality gate (too little speech, several voices, clips disagree)."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class SpeakerNotFound(GuardError):
    code = grpc.StatusCode.NOT_FOUND


class SessionNotFound(GuardError):
    code = grpc.StatusCode.NOT_FOUND


class TooBig(GuardError):
    """Over a configured limit (audio duration, message size)."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Overloaded(GuardError):
    """Every concurrency slot is taken: rejected at once rather than queued."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class ConfigError(GuardError):
    """A setting is missing or wrong (e.g. a model path that does not exist). Names the setting."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class BackendError(GuardError):
    """The model behind the guard failed (timeout, HTTP error, bad output)."""

    code = grpc.StatusCode.UNAVAILABLE


class StoreUnavailable(GuardError):
    """The shared store (Postgres) cannot be reached or failed mid-transaction; nothing was changed."""

    code = grpc.StatusCode.UNAVAILABLE


class HearingError(GuardError):
    """A hearing stage (VAD, diarization, embedding, verification) failed."""

    code = grpc.StatusCode.INTERNAL
