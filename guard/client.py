"""A small Python client for the guard service.

    from guard.client import GuardClient
    with GuardClient("127.0.0.1:50051") as c:
        r = c.ask("scene.wav", question="What time?", options=[...], mode="selective")
"""
from __future__ import annotations

from pathlib import Path

import grpc
import numpy as np
from typing_extensions import Self

from guard.audio import to_pcm16
from guard.proto import guard_pb2 as pb
from guard.proto import guard_pb2_grpc as pb_grpc

MODES = {"general": pb.GENERAL, "selective": pb.SELECTIVE}


def audio_from(source: str | Path | bytes | np.ndarray, sample_rate: int = 16000) -> pb.Audio:
    """A file path or file bytes (WAV/FLAC) -> encoded; a float array -> pcm16 at sample_rate."""
    if isinstance(source, np.ndarray):
        return pb.Audio(pcm16=to_pcm16(source), sample_rate=sample_rate, channels=1)
    if isinstance(source, (str, Path)):
        source = Path(source).read_bytes()
    return pb.Audio(encoded=source)


class GuardClient:
    def __init__(self, target: str = "127.0.0.1:50051", timeout: float = 120.0, max_message_mb: float = 64):
        opts = [("grpc.max_send_message_length", int(max_message_mb * 2**20)),
                ("grpc.max_receive_message_length", int(max_message_mb * 2**20))]
        self.channel = grpc.insecure_channel(target, options=opts)
        self.stub = pb_grpc.GuardStub(self.channel)
        self.timeout = timeout

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.channel.close()

    def enroll(self, speaker_id: str, clips, household: str = "", display_name: str = "") -> pb.EnrollResponse:
        return self.stub.Enroll(pb.EnrollRequest(household=household, speaker_id=speaker_id,
                                                 display_name=display_name,
                                                 clips=[audio_from(c) for c in clips]), timeout=self.timeout)

    def forget(self, speaker_id: str = "", household: str = "", whole_household: bool = False):
        return self.stub.Forget(pb.ForgetRequest(household=household, speaker_id=speaker_id,
                                                 whole_household=whole_household), timeout=self.timeout)

    def speakers(self, household: str = "") -> list[pb.Speaker]:
        return list(self.stub.ListSpeakers(pb.ListSpeakersRequest(household=household),
                                           timeout=self.timeout).speakers)

    def open_session(self, household: str = "", idle_timeout_seconds: int = 0) -> str:
        return self.stub.OpenSession(pb.OpenSessionRequest(household=household,
                                                           idle_timeout_seconds=idle_timeout_seconds),
                                     timeout=self.timeout).session_id

    def close_session(self, session_id: str, household: str = "") -> int:
        return self.stub.CloseSession(pb.CloseSessionRequest(household=household, session_id=session_id),
                                      timeout=self.timeout).turns

    def listen(self, session_id: str, audio, household: str = "") -> pb.ListenResponse:
        return self.stub.Listen(pb.ListenRequest(household=household, session_id=session_id,
                                                 audio=audio_from(audio)), timeout=self.timeout)

    def ask(self, audio, *, question: str = "", options: list[str] | None = None, mode: str = "selective",
            household: str = "", session_id: str = "", main_speaker_desc: str = "") -> pb.AskResponse:
        return self.stub.Ask(pb.AskRequest(household=household, session_id=session_id, audio=audio_from(audio),
                                           mode=MODES[mode], question=question, options=options or [],
                                           main_speaker_desc=main_speaker_desc), timeout=self.timeout)

    def stream_ask(self, samples: np.ndarray, *, sample_rate: int = 16000, chunk_seconds: float = 0.5,
                   question: str = "", options: list[str] | None = None, mode: str = "selective",
                   household: str = "", session_id: str = "") -> pb.AskResponse:
        def parts():
            yield pb.StreamAskRequest(start=pb.StreamStart(household=household, session_id=session_id,
                                                           mode=MODES[mode], encoding=pb.StreamStart.PCM16,
                                                           sample_rate=sample_rate, channels=1))
            step = int(chunk_seconds * sample_rate)
            for i in range(0, len(samples), step):
                yield pb.StreamAskRequest(chunk=to_pcm16(samples[i:i + step]))
            yield pb.StreamAskRequest(end=pb.StreamEnd(question=question, options=options or []))
        return self.stub.StreamAsk(parts(), timeout=self.timeout)
