"""What each RPC does, independent of gRPC plumbing (server.py adds transport, limits and errors).

Ask in SELECTIVE mode fails closed: if hearing is not loaded or any hearing, policy or backend stage
raises, the answer is a refusal with a reason; the audio never reaches the model ungated.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from guard import audio as audio_mod
from guard.backends import Backend, Task
from guard.config import Settings
from guard.errors import BackendError, BadAudio, BadRequest, GuardError, HearingError, SpeakerNotFound
from guard.hearing import Diarization, Hearing, Track
from guard.metrics import Metrics
from guard.policy import selective, tails
from guard.policy.answer import IDK_TEXT, LETTERS, answered, extract_letter, idk_index
from guard.policy.secrets import REFUSAL, SecretLedger, voice_of
from guard.policy.withheld import WithheldCheck
from guard.proto import guard_pb2 as pb
from guard.store import DEFAULT_HOUSEHOLD, Store, Voiceprint

log = logging.getLogger(__name__)
MAX_OPTIONS = 5


class Refusal(Exception):
    def __init__(self, reason: int, text: str):
        super().__init__(text)
        self.reason, self.text = reason, text


@dataclass
class Timer:
    """Per-request stage timings; each stage also goes to the metrics histogram."""

    metrics: Metrics
    stages: dict[str, float] = field(default_factory=dict)

    def __call__(self, stage: str, seconds: float) -> None:
        self.stages[stage] = self.stages.get(stage, 0.0) + seconds
        self.metrics.observe_stage(stage, seconds)

    def proto(self) -> list[pb.StageTiming]:
        return [pb.StageTiming(stage=k, seconds=v) for k, v in self.stages.items()]


def household_of(name: str) -> str:
    return name or DEFAULT_HOUSEHOLD


class GuardService:
    def __init__(self, settings: Settings, store: Store, hearing: Hearing | None, backend: Backend,
                 metrics: Metrics, ledger: SecretLedger | None = None, words: tails.Recogniser | None = None,
                 withheld: WithheldCheck | None = None):
        self.settings, self.store, self.hearing, self.backend, self.metrics = (
            settings, store, hearing, backend, metrics)
        self.ledger = ledger
        self.withheld = withheld   # the answer check against the speech the gate withheld; None: no check
        self.words = words   # the guard's recogniser (word times for the gate's word tails); None: no tails
        self.embedder_name = settings.hearing.embedder
        self._count_enrolled()

    def _count_enrolled(self) -> None:
        self.metrics.enrolled.set(self.store.count_speakers())

    # audio --------------------------------------------------------------------------------------
    def decode(self, a: pb.Audio, timer: Timer) -> audio_mod.Audio:
        t = time.perf_counter()
        which = a.WhichOneof("data")
        kwargs = {which: getattr(a, which)} if which else {}
        result = audio_mod.decode(**kwargs, sample_rate=a.sample_rate, channels=a.channels,
                                  max_seconds=self.settings.server.max_audio_seconds)
        timer("decode", time.perf_counter() - t)
        return result

    def _require_household(self, household: str) -> None:
        if not self.store.household_exists(household):
            raise SpeakerNotFound(f"household {household!r} does not exist (enroll a speaker to create it)")

    def _require_hearing(self) -> Hearing:
        if self.hearing is None:
            raise HearingError("hearing is disabled (hearing.enabled=false): enrollment needs it")
        return self.hearing

    # voiceprints --------------------------------------------------------------------------------
    def enroll(self, req: pb.EnrollRequest) -> pb.EnrollResponse:
        household = household_of(req.household)
        if not req.speaker_id.strip():
            raise BadRequest("speaker_id is required")
        if not req.clips:
            raise BadAudio("no enrollment clips were sent")
        hearing = self._require_hearing()
        timer = Timer(self.metrics)
        clips = [self.decode(c, timer).samples for c in req.clips]
        ep = hearing.enrollment_print(clips)
        vp = Voiceprint(household, req.speaker_id, req.display_name or req.speaker_id, self.embedder_name,
                        ep.centroid, ep.clips, ep.net_speech_seconds, time.time(), ep.f0_hz)
        replaced = self.store.put_voiceprint(vp)
        self._count_enrolled()
        log.info("enrolled a speaker in household %s (%d clips, %.1f s speech)", household, len(clips),
                 ep.net_speech_seconds)
        return pb.EnrollResponse(speaker=self._speaker_pb(vp.household, vp.speaker_id, vp.display_name,
                                                          len(clips), ep.net_speech_seconds, vp.created_unix),
                                 self_consistency=ep.self_consistency, replaced=replaced)

    def _speaker_pb(self, household, speaker_id, name, clips, speech, created, embedder=None) -> pb.Speaker:
        return pb.Speaker(household=household, speaker_id=speaker_id, display_name=name, clips=clips,
                          net_speech_seconds=speech, created_unix=created,
                          embedder=embedder or self.embedder_name)

    def forget(self, req: pb.ForgetRequest) -> pb.ForgetResponse:
        household = household_of(req.household)
        if req.speaker_id:
            n, m = self.store.forget_speaker(household, req.speaker_id)
        elif req.whole_household:
            n, m = self.store.forget_household(household)
        else:
            raise BadRequest("name a speaker_id, or set whole_household to erase the whole household")
        self._count_enrolled()
        log.info("erased %d speaker(s) and %d secret(s) from household %s", n, m, household)
        return pb.ForgetResponse(speakers_erased=n, secrets_erased=m)

    def list_speakers(self, req: pb.ListSpeakersRequest) -> pb.ListSpeakersResponse:
        household = household_of(req.household)
        self._require_household(household)
        return pb.ListSpeakersResponse(speakers=[
            self._speaker_pb(s.household, s.speaker_id, s.display_name, s.clips, s.net_speech_seconds,
                             s.created_unix, s.embedder) for s in self.store.list_speakers(household)])

    # sessions -----------------------------------------------------------------------------------
    def open_session(self, req: pb.OpenSessionRequest) -> pb.OpenSessionResponse:
        household = household_of(req.household)
        self._require_household(household)
        srv = self.settings.server
        idle = min(req.idle_timeout_seconds or srv.session_idle_seconds, srv.session_idle_max_seconds)
        s = self.store.open_session(household, idle)
        return pb.OpenSessionResponse(session_id=s.session_id, idle_timeout_seconds=idle)

    def close_session(self, req: pb.CloseSessionRequest) -> pb.CloseSessionResponse:
        return pb.CloseSessionResponse(turns=self.store.close_session(household_of(req.household),
                                                                      req.session_id))

    # hearing ------------------------------------------------------------------------------------
    def _hear(self, samples: np.ndarray, household: str, timer: Timer) -> Diarization:
        hearing = self.hearing
        if hearing is None:
            raise Refusal(pb.HEARING_UNAVAILABLE, "hearing is not loaded, so SELECTIVE mode cannot be "
                                                  "honoured")
        try:
            voiceprints = self.store.voiceprints(household, self.embedder_name)
            d = hearing.hear(samples, voiceprints, hook=timer)
        except GuardError:
            raise
        except Exception as e:
            log.exception("hearing failed")
            raise Refusal(pb.HEARING_FAILED, f"hearing failed ({type(e).__name__})") from e
        if not d.speech.any():
            raise BadAudio(f"no speech was heard in {len(samples) / 16000:.1f} s of audio")
        return d

    @staticmethod
    def _speakers_pb(d: Diarization, *main_labels: str) -> list[pb.SpeakerHeard]:
        """Every voice heard; `is_main` for the main speaker's track(s) (more than one where the gate took
        a voice for the main speaker's own, selective.join_same_voice)."""
        return [pb.SpeakerHeard(label=t.label, speaker_id=t.speaker_id, display_name=t.display_name,
                                score=t.score, speech_seconds=t.speech_seconds, loudness_dbfs=t.loudness_dbfs,
                                is_main=t.label in main_labels,
                                segments=[pb.Segment(start=a, end=b, overlap=o) for a, b, o in
                                          t.segments(d.overlap)]) for t in d.tracks]

    def listen(self, req: pb.ListenRequest) -> pb.ListenResponse:
        household = household_of(req.household)
        if not req.session_id:
            raise BadRequest("Listen needs a session_id (OpenSession first)")
        self._require_household(household)
        timer = Timer(self.metrics)
        a = self.decode(req.audio, timer)
        self.store.touch_session(household, req.session_id)
        try:
            d = self._hear(a.samples, household, timer)
        except Refusal as r:
            raise HearingError(r.text) from r
        self.metrics.audio_seconds.inc(a.seconds)
        if self.ledger is None:
            raise HearingError("the secret ledger is not loaded (hearing is disabled): Listen cannot record")
        t = time.perf_counter()
        recorded = self.ledger.record(household, req.session_id, a.samples, d)
        timer("policy", time.perf_counter() - t)
        return pb.ListenResponse(speakers=self._speakers_pb(d), recorded=recorded, audio_seconds=a.seconds,
                                 timings=timer.proto())

    # ask ----------------------------------------------------------------------------------------
    def ask(self, req: pb.AskRequest) -> pb.AskResponse:
        t0 = time.perf_counter()
        household = household_of(req.household)
        mode = req.mode if req.mode != pb.MODE_UNSPECIFIED else pb.SELECTIVE
        options = list(req.options)
        if len(options) > MAX_OPTIONS:
            raise BadRequest(f"{len(options)} options sent; at most {MAX_OPTIONS} (A-E)")
        self._require_household(household)
        timer = Timer(self.metrics)
        a = self.decode(req.audio, timer)
        if req.session_id:
            self.store.touch_session(household, req.session_id)
        self.metrics.audio_seconds.inc(a.seconds)
        resp = pb.AskResponse(mode=mode, audio_seconds=a.seconds, session_id=req.session_id, choice_index=-1)
        selective_mode = mode == pb.SELECTIVE
        try:
            d, held_back = None, []
            if selective_mode:
                d, main, model_audio, streams, held_back = self._selective(a.samples, household, req, resp, timer)
            else:
                d = self._hear(a.samples, household, timer) if self.hearing else None
                streams, main = [], None
                if d is not None:
                    main = selective.choose_main(d, self.settings.policy, a.samples).track
                    resp.speakers.extend(self._speakers_pb(d))
                    streams = [self._isolate(a.samples, d, t) for t in d.tracks]
                    under = selective.under_main(a.samples, d, main, self.settings.policy) if main is not None else None
                    if under is not None:   # a voice under the main speaker, heard in its pauses (decision 121)
                        streams.append(under)
                model_audio = a.samples
            question, spoken = req.question, False
            if not question and d is not None and main is not None and self.ledger is not None:
                question, spoken = self.ledger.asr(self._isolate(a.samples, d, main)).best, True
            allowed, protected = self._memory(household, req.session_id, a.samples, d, main, timer)
            context = [e.content for e in allowed if e.content]   # an instruction alone holds no words
            prompt = selective.build_prompt(question, options, selective=selective_mode,
                                            description=req.main_speaker_desc, context=context,
                                            withheld=sum(bool(e.content) for e in protected))
            checked = selective_mode and self.withheld is not None and bool(held_back)
            task = Task(prompt, question, options, selective_mode, streams, context, spoken, checked)
            text = self._generate(model_audio, task, timer, selective_mode)
            if self.ledger is not None and self.ledger.leaks(text, protected, question):
                raise Refusal(pb.PROTECTED_SECRET, "the answer would disclose something said in confidence by "
                                                   "someone else")
            self._answer(resp, text, options, selective_mode)
            if selective_mode and not resp.refused and answered(text, resp.choice_index, options):
                self._check(held_back, model_audio, task, timer, (a.samples, d, main))
        except Refusal as r:
            self._refuse(resp, r, options)
        except GuardError:
            raise  # bad input and the like: a status, in either mode
        except Exception as e:
            if not selective_mode:
                raise
            log.exception("SELECTIVE request failed; refusing")
            self._refuse(resp, Refusal(pb.INTERNAL, f"internal failure ({type(e).__name__})"), options)
        if resp.refused:
            self.metrics.refusals.labels(pb.RefusalReason.Name(resp.reason)).inc()
        timer("total", time.perf_counter() - t0)
        resp.timings.extend(timer.proto())
        return resp

    def _memory(self, household: str, session_id: str, samples: np.ndarray, d: Diarization | None, main,
                timer: Timer) -> tuple[list, list]:
        """Session ledger entries the requester (the main speaker) may and may not hear."""
        if not session_id:
            return [], []
        if self.ledger is None or d is None or main is None:
            raise Refusal(pb.POLICY_FAILED, "the secret ledger needs hearing and a main speaker to decide "
                                            "what may be disclosed")
        t = time.perf_counter()
        try:
            allowed, protected = self.ledger.split(household, session_id, voice_of(samples, d, main))
        except Exception as e:
            log.exception("secret ledger failed")
            raise Refusal(pb.POLICY_FAILED, f"the secret ledger failed ({type(e).__name__})") from e
        timer("policy", time.perf_counter() - t)
        return allowed, protected

    def _selective(self, samples: np.ndarray, household: str, req: pb.AskRequest, resp: pb.AskResponse,
                   timer: Timer):
        """(diarization, main track, the audio the model may hear, its per-voice streams, the speech withheld
        from it to weigh an answer against) in SELECTIVE mode."""
        d = self._hear(samples, household, timer)
        t = time.perf_counter()
        try:
            choice = selective.choose_main(d, self.settings.policy, samples)
            if choice.track is None:
                resp.speakers.extend(self._speakers_pb(d))
                raise Refusal(pb.NO_SPEECH, "no voice spoke long enough to be the main speaker")
            if not self.settings.policy.gating:  # measurement mode: the model hears everyone
                self._evidence(resp, d, choice)
                return d, choice.track, samples, [self._isolate(samples, d, t) for t in d.tracks], []
            threshold = self.hearing.threshold
            close = selective.indistinct(d, choice.track, threshold, self.settings.policy.indistinct_seconds,
                                         self.settings.policy.indistinct_behind_db)
            if close is not None:   # fail closed: the gate could not know whose speech it let through
                self._evidence(resp, d, choice)
                raise Refusal(pb.VOICES_INDISTINCT, f"voice {close[0].label} cannot be told apart from the "
                                                    f"main speaker {choice.track.label} (cosine "
                                                    f"{close[1]:.2f}, verify threshold {threshold:.2f}), so "
                                                    "who is speaking cannot be established")
            gated = selective.gate(samples, d, choice.track, self.settings.policy,
                                   tails.source(self.words, samples))
            kept = {choice.track.label, *gated.joined}
            held_back = [selective.withheld_speech(samples, d, t, gated.samples, self.settings.policy.hangover_seconds)
                        for t in d.tracks if t.label not in kept]
        except Refusal:
            raise
        except Exception as e:
            log.exception("selective policy failed")
            raise Refusal(pb.POLICY_FAILED, f"selective policy failed ({type(e).__name__})") from e
        self._evidence(resp, d, choice, *gated.joined)
        resp.withheld_seconds = gated.withheld_seconds
        self.metrics.withheld_seconds.inc(gated.withheld_seconds)
        timer("policy", time.perf_counter() - t)
        return d, choice.track, gated.samples, [gated.samples], held_back

    def _request_apart(self, samples: np.ndarray, d: Diarization, main: Track, heard: np.ndarray,
                       question: str) -> tuple[np.ndarray, str]:
        """A spoken question, for the answer check: (what the model heard less the main speaker's last
        utterance, that utterance's words). Weighed whole, the question is in what the model heard and
        always passes (decision 126). No words heard in the utterance: the whole question is weighed."""
        request = selective.last_utterance(main, self.settings.policy.question_pause_seconds)
        asked = self.ledger.asr(self._isolate(samples, d, request)).best or question
        return selective.without(heard, d, request, self.settings.policy.hangover_seconds), asked

    def _check(self, held_back: list[np.ndarray], heard: np.ndarray, task: Task, timer: Timer,
               hearing: tuple[np.ndarray, Diarization, Track]) -> None:
        """SELECTIVE mode, answered: refuse the answer when the question is about a withheld voice's speech
        more than about what the model heard (`heard`) and the memory it was given (guard.policy.withheld,
        decisions 119 and 120). `hearing`: (the request's samples, its diarization, the main track), for a
        spoken question (decision 126)."""
        if self.withheld is None or not held_back:
            return
        t = time.perf_counter()
        try:
            question = task.question
            if task.spoken_question:   # the audio holds the question itself: weigh its request apart
                heard, question = self._request_apart(*hearing, heard, question)
            verdict = self.withheld(heard, held_back, question, task.options, task.context)
        except Exception as e:
            log.exception("withheld-speech check failed")
            raise Refusal(pb.POLICY_FAILED, f"the answer check failed ({type(e).__name__})") from e
        finally:
            timer("policy", time.perf_counter() - t)
        self.metrics.withheld_checks.labels("refused" if verdict.refuse else "passed").inc()
        if verdict.refuse:
            raise Refusal(pb.NOT_FROM_MAIN_SPEAKER, "the question is about what another voice said, which the "
                                                    "guard withheld from the model")

    def _evidence(self, resp: pb.AskResponse, d: Diarization, choice: selective.MainChoice,
                  *joined: str) -> None:
        """Who was heard and who the main speaker is, into the response (also when it refuses)."""
        resp.speakers.extend(self._speakers_pb(d, choice.track.label, *joined))
        resp.main_speaker, resp.main_rule = choice.track.label, choice.rule

    def _isolate(self, samples: np.ndarray, d: Diarization, track) -> np.ndarray:
        return selective.isolate(samples, d, track, self.settings.policy.hangover_seconds)

    def _generate(self, samples: np.ndarray, task: Task, timer: Timer, selective_mode: bool) -> str:
        t = time.perf_counter()
        try:
            return self.backend.generate(samples, task)
        except Exception as e:
            self.metrics.backend_errors.labels(self.backend.name).inc()
            log.exception("backend %s failed", self.backend.name)
            if selective_mode:
                raise Refusal(pb.BACKEND_FAILED, f"the model failed ({type(e).__name__})") from e
            raise BackendError(f"backend {self.backend.name} failed: {type(e).__name__}") from e
        finally:
            timer("backend", time.perf_counter() - t)

    @staticmethod
    def _answer(resp: pb.AskResponse, text: str, options: list[str], selective_mode: bool) -> None:
        resp.answer = text
        if not options:
            return
        letter = extract_letter(text, options)
        if letter:
            resp.choice_letter, resp.choice_index = letter, LETTERS.index(letter)
            if selective_mode and resp.choice_index == idk_index(options):
                resp.refused, resp.reason = True, pb.NOT_FROM_MAIN_SPEAKER
                resp.reason_text = "the model found no answer in what the main speaker said"

    @staticmethod
    def _refuse(resp: pb.AskResponse, r: Refusal, options: list[str]) -> None:
        resp.refused, resp.reason, resp.reason_text = True, r.reason, r.text
        i = idk_index(options)
        resp.answer = options[i] if i >= 0 else (REFUSAL if r.reason == pb.PROTECTED_SECRET else IDK_TEXT)
        if i >= 0:
            resp.choice_letter, resp.choice_index = LETTERS[i], i
