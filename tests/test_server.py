"""Integration: a real `guard serve` process on loopback, real audio, real models."""
from __future__ import annotations

import io
import urllib.request

import grpc
import numpy as np
import pytest
import soundfile as sf
from grpc_health.v1 import health_pb2, health_pb2_grpc

from guard import scenes
from guard.proto import guard_pb2 as pb
from tests.conftest import silence

OPTIONS = ["Seven thirty", "Eight o'clock", "I do not have the information to answer the question", "Noon",
           "Six in the morning"]
BYSTANDER_OPTIONS = ["The brother", "The sister", "I do not have the information to answer the question",
                     "The mother", "The neighbour"]


def status_of(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code(), e.value.details()


def test_health_serving(server):
    stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(server.target))
    for name in ("", "guard.v1.Guard"):
        r = stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
        assert r.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_service(server):
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(grpc.insecure_channel(server.target))
    req = reflection_pb2.ServerReflectionRequest(list_services="")
    resp = next(stub.ServerReflectionInfo(iter([req]), timeout=5))
    names = {s.name for s in resp.list_services_response.service}
    assert "guard.v1.Guard" in names


def test_selective_ask_gates_the_bystander(client, scene_wav):
    r = client.ask(scene_wav, question="What time is the reservation?", options=OPTIONS, mode="selective")
    assert not r.refused, r.reason_text
    assert r.choice_letter == "A" and r.choice_index == 0
    assert len(r.speakers) == 2
    main = [s for s in r.speakers if s.is_main]
    assert len(main) == 1 and main[0].label == r.main_speaker
    assert r.main_rule == pb.FOREGROUND
    assert r.withheld_seconds > 2.0
    stages = {t.stage for t in r.timings}
    assert {"decode", "vad", "diarize", "verify", "policy", "backend", "total"} <= stages


def test_selective_refuses_what_only_the_bystander_said(client, scene_wav):
    r = client.ask(scene_wav, question="Who should be called about the birthday party?",
                   options=BYSTANDER_OPTIONS, mode="selective")
    assert r.refused and r.reason == pb.NOT_FROM_MAIN_SPEAKER
    assert r.choice_index == 2  # reported as the "I don't know" option


def test_general_mode_reports_speakers_without_gating(client, scene_wav):
    r = client.ask(scene_wav, question="What time is the reservation?", options=OPTIONS, mode="general")
    assert r.mode == pb.GENERAL and not r.refused
    assert r.choice_letter == "A"
    assert len(r.speakers) == 2 and r.withheld_seconds == 0 and not r.main_speaker


def test_unspecified_mode_is_selective(server, scene):
    with server.client() as c:
        r = c.stub.Ask(pb.AskRequest(audio=pb.Audio(encoded=_wav(scene.samples)), question="What time?",
                                     options=OPTIONS), timeout=60)
    assert r.mode == pb.SELECTIVE and r.main_speaker


def test_stream_ask_matches_ask(client, scene):
    r = client.stream_ask(scene.samples, question="What time is the reservation?", options=OPTIONS)
    assert r.choice_letter == "A" and r.main_speaker


def _wav(samples: np.ndarray, rate: int = 16000, fmt: str = "WAV") -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, rate, format=fmt)
    return buf.getvalue()


@pytest.mark.parametrize("audio, code, words", [
    (pb.Audio(), grpc.StatusCode.INVALID_ARGUMENT, "empty"),
    (pb.Audio(encoded=b"\x00garbage bytes that are no audio file" * 10), grpc.StatusCode.INVALID_ARGUMENT,
     "not a readable WAV or FLAC"),
    (pb.Audio(float32=np.array([0.1, np.nan, 0.2] * 1000, "<f4").tobytes(), sample_rate=16000),
     grpc.StatusCode.INVALID_ARGUMENT, "NaN"),
    (pb.Audio(pcm16=np.zeros(3000, "<i2").tobytes(), sample_rate=3000), grpc.StatusCode.INVALID_ARGUMENT,
     "3000 Hz"),
    (pb.Audio(pcm16=b"\x01\x02\x03", sample_rate=16000), grpc.StatusCode.INVALID_ARGUMENT, "whole number"),
    (pb.Audio(float32=silence(2.0).astype("<f4").tobytes(), sample_rate=16000),
     grpc.StatusCode.INVALID_ARGUMENT, "no speech"),
    (pb.Audio(pcm16=np.zeros(16000 * 61, "<i2").tobytes(), sample_rate=16000),
     grpc.StatusCode.RESOURCE_EXHAUSTED, "limit is 60 s"),
])
def test_bad_audio_gets_a_clear_status(server, client, scene_wav, audio, code, words):
    got, details = status_of(lambda: client.stub.Ask(pb.AskRequest(audio=audio, mode=pb.SELECTIVE), timeout=30))
    assert got == code and words in details, details
    # and the server keeps serving
    r = client.ask(scene_wav, question="What time is the reservation?", options=OPTIONS)
    assert r.choice_letter == "A"


def test_oversized_message_is_rejected(client):
    big = pb.Audio(pcm16=b"\x00\x00" * (3 * 1024 * 1024), sample_rate=16000)  # 6 MiB > 4 MiB limit
    code, _ = status_of(lambda: client.stub.Ask(pb.AskRequest(audio=big), timeout=30))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_over_long_stream_is_cut_off_at_the_limit(client):
    sent = []

    def parts():
        yield pb.StreamAskRequest(start=pb.StreamStart(encoding=pb.StreamStart.PCM16, sample_rate=16000))
        for _ in range(200):  # 200 s offered in 1 s chunks; the limit is 60 s
            sent.append(1)
            yield pb.StreamAskRequest(chunk=np.zeros(16000, "<i2").tobytes())
        yield pb.StreamAskRequest(end=pb.StreamEnd(question="?"))

    code, details = status_of(lambda: client.stub.StreamAsk(parts(), timeout=30))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "60 s limit" in details
    assert len(sent) < 200  # rejected while the client was still streaming


def test_stream_must_start_with_start(client):
    code, details = status_of(lambda: client.stub.StreamAsk(iter([pb.StreamAskRequest(chunk=b"\x00\x00")]),
                                                            timeout=10))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "StreamStart" in details


def test_too_many_options(client, scene_wav):
    code, details = status_of(lambda: client.ask(scene_wav, question="?", options=list("abcdef")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "at most 5" in details


def test_unknown_speaker_and_household(client):
    code, details = status_of(lambda: client.forget("nobody-here"))
    assert code == grpc.StatusCode.NOT_FOUND and "nobody-here" in details
    code, details = status_of(lambda: client.speakers("no-such-household"))
    assert code == grpc.StatusCode.NOT_FOUND and "no-such-household" in details


def test_enroll_list_identify_forget(client, enroll_clips, scene_wav):
    household = "test-enroll"
    r = client.enroll("anna", enroll_clips["awb"], household=household, display_name="Anna")
    assert r.speaker.speaker_id == "anna" and r.speaker.clips == 3 and r.self_consistency > 0.7
    assert [s.speaker_id for s in client.speakers(household)] == ["anna"]
    ask = client.ask(scene_wav, question="What time is the reservation?", options=OPTIONS, household=household)
    main = next(s for s in ask.speakers if s.is_main)
    assert main.speaker_id == "anna" and ask.main_rule == pb.ENROLLED
    assert all(not s.speaker_id for s in ask.speakers if not s.is_main)
    # the same audio in another household matches nobody there
    other = client.ask(scene_wav, question="What time?", options=OPTIONS)
    assert all(not s.speaker_id for s in other.speakers)
    assert client.forget("anna", household=household).speakers_erased == 1
    assert client.speakers(household) == []


def test_enrollment_gates(client, enroll_clips, scene_wav):
    short = scenes.level(scenes.tts("awb", "Hello there, good morning."), -20)
    code, details = status_of(lambda: client.enroll("short", [short]))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "net speech" in details and "3.0 s" in details
    code, details = status_of(lambda: client.enroll("two", [scene_wav]))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "voices" in details
    mixed = enroll_clips["awb"][:2] + enroll_clips["slt"][2:]
    code, details = status_of(lambda: client.enroll("mixed", mixed))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "disagree" in details
    assert all(s.speaker_id not in ("short", "two", "mixed") for s in client.speakers())


def test_sessions(client, scene_wav):
    sid = client.open_session()
    heard = client.listen(sid, scene_wav)
    assert len(heard.speakers) == 2 and heard.audio_seconds > 5
    r = client.ask(scene_wav, question="What time?", options=OPTIONS, session_id=sid)
    assert r.session_id == sid
    assert client.close_session(sid) == 2
    code, _ = status_of(lambda: client.listen(sid, scene_wav))
    assert code == grpc.StatusCode.NOT_FOUND
    code, details = status_of(lambda: client.stub.Listen(pb.ListenRequest(audio=pb.Audio()), timeout=5))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "session_id" in details


def test_metrics_count_calls(server, client, scene_wav):
    client.ask(scene_wav, question="What time is the reservation?", options=OPTIONS)
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=5).read().decode()
    values = {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines()
              if line.startswith("guard_") and " " in line}
    assert values['guard_requests_total{method="Ask",mode="selective",outcome="ok"}'] >= 1
    assert values["guard_audio_seconds_total"] > 0
    assert values["guard_withheld_audio_seconds_total"] > 0
    assert values['guard_stage_seconds_count{stage="diarize"}'] >= 1
    assert "guard_in_flight_requests" in values and "guard_enrolled_speakers" in values
