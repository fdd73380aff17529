"""Hearing on real synthetic speech: VAD, embedder features, diarization, enrollment gates."""
from __future__ import annotations

import numpy as np
import pytest

from guard import scenes
from guard.config import HearingSettings, PolicySettings
from guard.hearing import Diarization, Hearing, Track
from guard.hearing.vad import FRAME, SileroVad, WebrtcVad
from guard.policy.selective import choose_main, gate, isolate, passed_frames, under_main


def frames_of(turn) -> slice:
    return slice(int(turn.start * 16000) // FRAME, int(turn.end * 16000) // FRAME)


@pytest.mark.parametrize("vad", [WebrtcVad(), SileroVad()], ids=["webrtcvad", "silero"])
def test_vad_finds_speech_and_not_silence(vad, scene):
    mask = vad.speech_mask(scene.samples)
    for t in scene.turns:
        assert mask[frames_of(t)].mean() > 0.8
    assert not vad.speech_mask(np.zeros(32000, np.float32)).any()
    noise = scenes.level(np.random.default_rng(0).normal(size=32000).astype(np.float32), -50)
    assert vad.speech_mask(noise).mean() < 0.1


def test_vad_keeps_no_state_between_calls(scene):
    vad = WebrtcVad()
    first = vad.speech_mask(scene.samples)
    vad.speech_mask(np.random.default_rng(1).normal(0, 0.3, 64000).astype(np.float32))
    assert np.array_equal(first, vad.speech_mask(scene.samples))


def test_mel_matches_resemblyzer_features(hearing, scene):
    from resemblyzer.audio import wav_to_mel_spectrogram

    ours = hearing.embedder.mel(scene.samples[:48000]).numpy()
    theirs = wav_to_mel_spectrogram(scene.samples[:48000])
    assert ours.shape == theirs.shape and np.allclose(ours, theirs, rtol=1e-3, atol=1e-4)


def test_diarization_separates_main_and_bystander(hearing, scene):
    d = hearing.hear(scene.samples, [])
    assert len(d.tracks) == 2
    main = max(d.tracks, key=lambda t: t.loudness_dbfs)
    by = next(t for t in d.tracks if t is not main)
    assert main.loudness_dbfs - by.loudness_dbfs > 6
    for turn in scene.turns:
        track = main if turn.speaker == "awb" else by
        core = slice(frames_of(turn).start + 40, frames_of(turn).stop - 40)
        assert track.frames[core].mean() > 0.9, turn


def test_finer_resegmentation_places_a_change_of_speaker_closer(hearing):
    # a reverberant 2-voice scene of the hearing bench where the main speaker's label began 0.4 s early
    sc = scenes.conversation("ked", ["My favourite dinner is roasted vegetables with a little rice.",
                                     "I think the museum has a new exhibition about ancient maps.",
                                     "Let us plan a picnic by the lake if the sun comes out."],
                             [("rms", ["Please add a dentist appointment for next Thursday afternoon."])],
                             seed=119, overlap=0.5, rt60=0.3)
    coarse = Hearing(hearing.vad, hearing.embedder, HearingSettings(reseg_window_seconds=0))
    misplaced = taken_by_main(sc, "rms", fine=hearing, coarse=coarse)
    assert misplaced["fine"] < misplaced["coarse"] / 2, misplaced


def taken_by_main(sc: scenes.Scene, bystander: str, **hearings: Hearing) -> dict[str, float]:
    """Per named hearing: the share of the bystander's solo speech that the main speaker's track holds
    outside overlap marks."""
    out = {}
    for name, h in hearings.items():
        d = h.hear(sc.samples, [])
        ref = sc.reference(d.n_frames)
        alone = ref[bystander] & ~np.any([m for v, m in ref.items() if v != bystander], axis=0)
        main = choose_main(d, PolicySettings()).track
        out[name] = float((main.frames & alone & ~d.overlap).sum() / alone.sum())
    return out


def test_same_input_same_answer(hearing, scene):
    a, b = hearing.hear(scene.samples, []), hearing.hear(scene.samples, [])
    assert [t.speech_seconds for t in a.tracks] == [t.speech_seconds for t in b.tracks]


def test_voice_embedding_ignores_the_level_the_windows_keep(hearing):
    x = scenes.tts("slt", "I usually take the early train to work on Monday mornings.")
    loud, quiet = scenes.level(x, -16), scenes.level(x, -34)
    emb = hearing.embedder
    assert float(emb.embed(loud) @ emb.embed(quiet)) > 0.999
    starts = np.array([0, 8000])
    raw = emb.embed_windows(loud, starts, 25600) * emb.embed_windows(quiet, starts, 25600)
    assert raw.sum(1).max() < 0.9  # GE2E reads power mels: without the level step the same voice moves


def test_enrollment_print_is_consistent(hearing):
    clips = [scenes.level(scenes.tts("rms", line), -20) for line in (
        "The weather is going to be cold and rainy all weekend long.",
        "I usually take the early train to work on Monday mornings.",
        "My favourite dinner is roasted vegetables with a little rice.")]
    ep = hearing.enrollment_print(clips)
    assert ep.clips.shape == (3, 256) and ep.self_consistency > 0.7 and ep.net_speech_seconds > 5
    assert abs(np.linalg.norm(ep.centroid) - 1) < 1e-5


def two_voices(a: slice, b: slice, n: int = 100) -> tuple[Diarization, np.ndarray]:
    """Voice A in frames a, voice B in frames b, nobody else; and n frames of constant signal."""
    fa, fb = np.zeros(n, bool), np.zeros(n, bool)
    fa[a], fb[b] = True, True
    d = Diarization(n, fa | fb, np.zeros(n, bool), [Track("A", fa, np.ones(4)), Track("B", fb, np.ones(4))])
    return d, np.ones(n * FRAME, np.float32)


def test_isolate_keeps_a_silent_hangover_but_never_another_voice():
    n = 100
    d, x = two_voices(slice(10, 40), slice(45, 80), n)
    kept = isolate(x, d, d.tracks[0], hangover_seconds=0.1).reshape(n, FRAME).max(axis=1) > 0
    assert kept[10:40].all() and kept[40:45].all() and kept[0:10].all()   # 100 ms of silence each side
    assert not kept[45:].any()                                              # B's frames never
    assert not (isolate(x, d, d.tracks[0], 0.0).reshape(n, FRAME).max(axis=1) > 0)[40:45].any()
    passed = gate(x, d, d.tracks[0], PolicySettings(hangover_seconds=0.1)).samples.reshape(n, FRAME).max(axis=1)
    assert (passed[45:80] == 0).all() and (passed[40:45] == 0).all()   # the gate's hangover stops at B's band


def test_gate_hangover_passes_silent_word_tails_but_not_near_another_voice():
    n = 100
    d, x = two_voices(slice(10, 40), slice(55, 80), n)      # A (main), silence, then B
    x = x.copy()
    x[40 * FRAME:55 * FRAME] *= 0.01                         # a tail under the VAD's threshold
    policy = PolicySettings(gate_hangover_seconds=0.1, guard_band_seconds=0.1)
    passed = gate(x, d, d.tracks[0], policy).samples.reshape(n, FRAME).max(axis=1) > 0
    assert passed[0:45].all()                    # 100 ms before and after A's speech (after: up to the band)
    assert not passed[45:].any()                 # never within the band of B, never B itself
    off = gate(x, d, d.tracks[0], PolicySettings(gate_hangover_seconds=0, guard_band_seconds=0.1))
    assert not (off.samples.reshape(n, FRAME).max(axis=1)[40:45] > 0).any()   # 0: none


def test_guard_band_withholds_quiet_main_frames_next_to_another_voice():
    n = 100
    d, x = two_voices(slice(10, 50), slice(50, 80), n)
    x = x.reshape(n, FRAME)
    x[40:50] *= 0.3      # A's last 100 ms sound like B (10 dB down): a misplaced change of speaker
    x[50:80] *= 0.3
    x[20:25] *= 0.3      # a quiet stretch of A far from B
    x = x.reshape(-1)

    def passed(**policy):
        g = gate(x, d, d.tracks[0], PolicySettings(overlap="drop", pause_fill_seconds=0, background_margin_db=0,
                                                   **policy))
        return g.samples.reshape(n, FRAME).max(axis=1) > 0, g.withheld_seconds

    plain, withheld = passed(guard_band_seconds=0)
    assert plain[10:50].all() and not plain[50:].any()
    banded, more = passed(guard_band_seconds=0.15, quiet_margin_db=4)
    assert banded[10:38].all() and not banded[41:].any()   # quiet frames near B withheld, quiet ones far kept
    assert more > withheld
    lenient, _ = passed(guard_band_seconds=0.15, quiet_margin_db=20)
    assert lenient[10:50].all()                              # within 20 dB of A's level: all A's


def test_lead_in_withholds_the_quiet_head_of_a_main_stretch_that_follows_another_voice():
    n = 120
    d, x = two_voices(slice(60, 110), slice(10, 60), n)     # B speaks, then A (the main speaker)
    d.tracks[0].frames[0:8] = True                           # and A alone at the start, after silence
    d.speech[0:8] = True
    x = x.reshape(n, FRAME)
    x[10:80] *= 0.3      # B 10 dB down, and B's last 200 ms labelled A: a misplaced change of speaker
    x[0:3] *= 0.3        # A's own soft onset, with nobody before it
    x[95:98] *= 0.3      # a quiet moment inside A's turn, far from B
    x = x.reshape(-1)

    def passed(seconds):
        g = gate(x, d, d.tracks[0], PolicySettings(overlap="drop", guard_band_seconds=0, pause_fill_seconds=0,
                                                   lead_in_seconds=seconds, background_margin_db=0))
        return g.samples.reshape(n, FRAME).max(axis=1) > 0

    off, on = passed(0.0), passed(0.3)
    assert off[60:110].all() and off[0:8].all()
    assert not on[60:79].any() and on[81:110].all()   # B's misplaced tail withheld, A's turn kept
    assert on[0:8].all()                              # a quiet onset after silence is A's own
    assert not passed(0.1)[60:70].any() and passed(0.1)[71:110].all()   # it looks no further than told


def test_split_overlap_passes_only_the_loud_part_next_to_the_main_speech():
    n = 150
    fa, fb, ov = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool)
    fa[10:60], fb[40:90], ov[40:60] = True, True, True        # A, then B over A's last words, B alone
    fa[110:140], fb[95:125], ov[110:125] = True, True, True   # B, then A over B's last words, A alone
    d = Diarization(n, fa | fb, ov, [Track("A", fa, np.ones(4)), Track("B", fb, np.ones(4))])
    x = np.ones((n, FRAME), np.float32)
    x[48:90] *= 0.3      # A's last word ends at 48: B alone, 10 dB down, in the rest of the overlap
    x[95:117] *= 0.3     # B alone until A starts at 117
    x = x.reshape(-1)

    def passed(overlap):
        g = gate(x, d, d.tracks[0], PolicySettings(overlap=overlap, guard_band_seconds=0, pause_fill_seconds=0))
        return g.samples.reshape(n, FRAME).max(axis=1)

    split, drop, att = passed("split"), passed("drop"), passed("attenuate")
    assert (split[10:47] == 1).all() and not split[49:110].any()     # A's word kept, B's voice not
    assert not split[110:116].any() and (split[118:140] == 1).all()  # A's onset kept, B's tail not
    assert not drop[40:60].any() and not drop[110:125].any()
    assert (att[49:60] > 0).all() and (att[110:116] > 0).all()       # attenuating passes B's voice
    withheld = {o: gate(x, d, d.tracks[0], PolicySettings(overlap=o, guard_band_seconds=0)).withheld_seconds
                for o in ("split", "drop")}
    assert withheld["split"] < withheld["drop"]                       # what passes is not reported withheld


def test_pause_fill_passes_short_silences_inside_the_main_speech_only():
    n = 100
    fa, fb = np.zeros(n, bool), np.zeros(n, bool)
    fa[10:30], fa[35:60], fb[70:90] = True, True, True
    d = Diarization(n, fa | fb, np.zeros(n, bool), [Track("A", fa, np.ones(4)), Track("B", fb, np.ones(4))])
    x = np.ones(n * FRAME, np.float32)

    def passed(fill):
        g = gate(x, d, d.tracks[0], PolicySettings(overlap="drop", pause_fill_seconds=fill, gate_hangover_seconds=0))
        return g.samples.reshape(n, FRAME).max(axis=1) > 0

    assert passed(0.1)[30:35].all() and not passed(0.0)[30:35].any()   # a 50 ms pause inside A's speech
    assert not passed(0.3)[60:].any() and not passed(0.3)[:10].any()    # never the gap up to B, nor the edges


def test_foreground_rule_goes_by_who_holds_the_loud_speech():
    def track(label, seconds, foreground, dbfs=-20.0):
        return Track(label, np.zeros(10, bool), np.ones(4), speech_seconds=seconds, loudness_dbfs=dbfs,
                     foreground_seconds=foreground)

    # the main speaker split in two by diarization, and a bystander 10 dB down who spoke longer than either
    d = Diarization(10, np.zeros(10, bool), np.zeros(10, bool),
                    [track("S1", 2.5, 2.0, -19.4), track("S2", 1.9, 1.5, -21.0), track("S3", 4.5, 0.0, -29.8)])
    assert choose_main(d, PolicySettings()).track.label == "S1"
    # a track that mixes a quiet voice with some of the main speaker's words: longer, but holds less loud speech
    d.tracks = [track("A", 8.6, 6.5, -33.4), track("B", 13.8, 4.0, -38.1)]
    assert choose_main(d, PolicySettings()).track.label == "A"
    # equal foreground: more speech, then the louder
    d.tracks = [track("A", 2.0, 1.0), track("B", 3.0, 1.0)]
    assert choose_main(d, PolicySettings()).track.label == "B"
    d.tracks = [track("A", 3.0, 1.0, -20.0), track("B", 3.0, 1.0, -23.0)]
    assert choose_main(d, PolicySettings()).track.label == "A"


def test_the_foreground_speaker_of_a_real_call_is_the_one_in_front(hearing):
    """Real people (decision 83): Diane in front, Sheila 10 dB down. Diarization mixes them, and the
    track holding most of Sheila also holds some of Diane and is the longest; the main speaker chosen is
    the track that is mostly Diane."""
    from guard import recordings

    sc = recordings.call_scene("speaker90", -10.0)
    d = hearing.hear(sc.samples, [])
    ref = sc.reference(d.n_frames)
    main = choose_main(d, PolicySettings()).track
    assert (main.frames & ref["speaker90"]).sum() > 2 * (main.frames & ref["speaker91"]).sum()
    assert main.speech_seconds < max(t.speech_seconds for t in d.tracks)   # not the longest track
    assert all(0 <= t.foreground_seconds <= t.speech_seconds for t in d.tracks) and main.foreground_seconds > 0


def test_a_cluster_between_two_voices_is_dissolved_but_a_short_voice_is_kept():
    from guard.hearing.diarize import EmbeddedDiarizer
    from guard.hearing.embed import unit

    rng = np.random.default_rng(0)
    a, b, c = np.eye(8)[:3]

    def windows(direction, n):
        return unit(direction + 0.05 * rng.normal(size=(n, 8)))

    emb = np.concatenate([windows(a, 10), windows(unit(a + b), 3), windows(b, 10), windows(c, 3)])
    labels = np.repeat([0, 1, 2, 3], [10, 3, 10, 3])
    centroids = np.stack([unit(emb[labels == k].mean(0)) for k in range(4)])
    d = EmbeddedDiarizer(None, None, transition_windows=4)
    new_labels, new_centroids = d.dissolve_transitions(emb, labels, centroids)
    assert len(new_centroids) == 3                      # the a+b windows were a change of speaker
    assert set(new_labels[10:13]) <= {0, 1}             # they joined a or b
    assert len(set(new_labels[23:])) == 1 and new_labels[23] not in new_labels[:23]  # c stays its own voice
    off = EmbeddedDiarizer(None, None, transition_windows=0)
    assert len(off.dissolve_transitions(emb, labels, centroids)[1]) == 4


def test_a_long_quiet_run_of_one_cluster_is_split_off_as_a_farther_voice():
    from guard.hearing.diarize import EmbeddedDiarizer

    d = EmbeddedDiarizer(None, None, window_seconds=1.6, hop_seconds=0.4, level_split_db=6, level_split_windows=4)
    n = 2000                                           # 20 s of speech frames, windows every 0.4 s
    speech = np.ones(n, bool)
    x = np.ones(n * FRAME, np.float32) * 0.1
    x[800 * FRAME:1300 * FRAME] *= 0.3                 # 5 s, 10 dB down: a bystander merged into the cluster
    x[1600 * FRAME:1680 * FRAME] *= 0.3                # 0.8 s dip: too short to be a voice of its own
    starts = d.windows(speech, d.window, d.hop)
    labels = d.split_by_level(x, speech, starts, np.zeros(len(starts), np.int64))
    inside = (starts // FRAME >= 800) & (starts // FRAME + d.window // FRAME <= 1300)
    assert len(set(labels[inside])) == 1 and labels[inside][0] == 1
    apart = (starts // FRAME + d.window // FRAME <= 800) | (starts // FRAME >= 1300)
    assert set(labels[apart]) == {0}                   # the loud voice and its short dip stay together
    mild = x.copy()
    mild[800 * FRAME:1300 * FRAME] /= 0.3
    mild[800 * FRAME:1300 * FRAME] *= 0.7              # 3 dB down: the same voice
    assert set(d.split_by_level(mild, speech, starts, np.zeros(len(starts), np.int64))) == {0}


def test_level_split_keeps_a_similar_farther_voice_out_of_the_main_speaker(hearing):
    # a 3-voice scene of the hearing bench's second set: clustering merged rms's whole turn into awb's
    sc = scenes.conversation("awb", ["Call the plumber about the leaking pipe under the kitchen sink.",
                                     "Our neighbours are going on holiday to Portugal next month.",
                                     "I think the museum has a new exhibition about ancient maps."],
                             [("kal", ["Let us plan a picnic by the lake if the sun comes out."]),
                              ("rms", ["I finished reading that long history book about old ships."])],
                             seed=451, overlap=0.5, rt60=0.3)
    merged = Hearing(hearing.vad, hearing.embedder, HearingSettings(level_split_db=0))
    taken = taken_by_main(sc, "rms", split=hearing, merged=merged)
    assert taken["merged"] > 0.9 and taken["split"] < 0.25, taken


def background_heard(hearing, main_voice: str, bystander: str):
    """A background scene (bystander 15 dB down under the main speaker): (scene, diarization, main track)."""
    sc = scenes.background(main_voice, ["The weather is going to be cold and rainy all weekend long.",
                                        "Please add a dentist appointment for next Thursday afternoon.",
                                        "The car needs new tyres before we drive up to the mountains."],
                           bystander, ["Our neighbours are going on holiday to Portugal next month.",
                                       "I finished reading that long history book about old ships."],
                           seed=3, bystander_db=-15.0)
    d = hearing.hear(sc.samples, [])
    return sc, d, choose_main(d, PolicySettings()).track


def background_gate(hearing, main_voice: str, bystander: str):
    """`background_heard`'s diarization, and passed(**policy) -> (share of bystander-only speech passed,
    share of main-only speech kept)."""
    sc, d, main = background_heard(hearing, main_voice, bystander)
    ref = sc.reference(d.n_frames)
    by_only, main_only = ref[bystander] & ~ref[main_voice], ref[main_voice] & ~ref[bystander]

    def passed(**policy):
        p = passed_frames(gate(sc.samples, d, main, PolicySettings(**policy)).samples, d.n_frames)
        return (p & by_only).sum() / by_only.sum(), (p & main_only).sum() / main_only.sum()
    return d, passed


def test_background_voice_talking_under_the_main_speaker_is_withheld_in_its_pauses(hearing):
    # a voice 15 dB down talking under the main speaker is one voice to the diarizer; between the main
    # speaker's sentences it is heard alone, and that is what the background rule withholds
    d, passed = background_gate(hearing, "awb", "slt")
    on, off = passed(), passed(background_margin_db=0)
    assert len(d.tracks) == 1 and off[0] > 0.8, (len(d.tracks), off)   # unseparated: all of it passed
    assert on[0] < 0.1 and on[1] > 0.97, on


def test_background_voice_at_the_main_speakers_pitch_is_withheld_when_far_below_it(hearing):
    # ked and rms speak within 2 semitones of each other, so the pitch test alone passes rms 15 dB down
    # in ked's pauses; the deep-level test (decision 77) withholds it and keeps ked's own speech
    _, passed = background_gate(hearing, "ked", "rms")
    on, pitch_only = passed(), passed(background_deep_db=0)
    assert pitch_only[0] > 0.4, pitch_only
    assert on[0] < 0.05 and on[1] > 0.98, on


def test_general_mode_hears_the_voice_under_the_main_speaker_on_its_own(hearing):
    # decision 121: the frames the background rule takes for a voice under the main speaker (one track to
    # the diarizer) are GENERAL mode's extra stream; little of the main speaker's own speech is in it
    sc, d, main = background_heard(hearing, "awb", "slt")
    ref = sc.reference(d.n_frames)
    under = under_main(sc.samples, d, main, PolicySettings())
    heard = passed_frames(under, d.n_frames)
    assert len(d.tracks) == 1 and (heard & ref["slt"] & ~ref["awb"]).sum() > 100
    assert (heard & ref["awb"]).sum() < 0.1 * heard.sum()
    assert under_main(sc.samples, d, main, PolicySettings(background_margin_db=0)) is None
