"""Hearing benchmark: verification (leave-one-voice-out, pitch impostors), diarization on generated
scenes and on a real recorded call (DER, bystander leak, main kept), and speed (RTF, beside pyannote's
real architecture).

    .venv/bin/python benchmarks/hearing_bench.py [--utterances 24] [--scenes 24] [--scene-offset 0]
        [--out out/hearing.json] [--skip verification diarization speed] [--device cpu|cuda|auto]
        [--clips DIR] [--no-pyannote] [--held-out]

--held-out casts the neural voice `heart` (guard.scenes.HELD_OUT, never used for tuning): verification
trials include it as a sixth natural voice, and every diarization scene has it, as the main speaker in
even scenes and as a bystander in odd ones.

--clips keeps the speed clips as WAV files, so a host without the TTS voices (the GPU machine of
benchmarks/gpu_check.sh) times the same audio.

Prints every figure with its trial counts. Voices: the Debian TTS voices of guard.scenes.
"""
from __future__ import annotations

import argparse
import functools
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
from scipy.optimize import linear_sum_assignment

from guard import recordings, scenes
from guard.config import HearingSettings, PolicySettings
from guard.hearing import Hearing
from guard.hearing.calibrate import det, speech_only, trials
from guard.hearing.embed import unit
from guard.hearing.whisper import shared
from guard.policy.selective import choose_main, gate, indistinct, passed_frames
from guard.proto import guard_pb2 as pb
from guard.store.base import Voiceprint

# esp_gb is left out: espeak-ng's en-us and en-gb are one synthetic "person" (cosine 0.89 to each other).
VOICES = ["awb", "rms", "slt", "kal", "ked", "esp_us"]


def cast(rng: np.random.Generator, i: int, n: int) -> list[str]:
    """n voices from the five natural ones, the main speaker first; with --held-out (`heart` among
    VOICES), `heart` takes the main speaker's place in even scenes and the first bystander's in odd ones."""
    voices = [VOICES[j] for j in rng.permutation(5)[:n]]
    if scenes.HELD_OUT[0] in VOICES:
        voices[i % 2] = scenes.HELD_OUT[0]
    return voices


def variants(x: np.ndarray, rng: np.random.Generator, k: int) -> np.ndarray:
    """Recording conditions: level (-32..-16 dBFS) always; then clean, noise at 20-35 dB SNR, or
    reverberation (RT60 0.15-0.35 s), in turn."""
    db = float(rng.uniform(-32, -16))
    y = scenes.level(x, db)
    if k % 3 == 1:
        y = y + scenes.level(rng.normal(size=len(y)).astype(np.float32), db - float(rng.uniform(20, 35)))
    if k % 3 == 2:
        y = scenes.reverb(y, rng, float(rng.uniform(0.15, 0.35)))
    return y.astype(np.float32)


def embed_voices(h: Hearing, n: int, pitch: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    out = {}
    for v in VOICES:
        embs = []
        for k, s in enumerate(scenes.SENTENCES[:n]):
            x = variants(scenes.tts(v, s, pitch_cents=pitch), rng, k)
            embs.append(h.embedder.embed(speech_only(x, h.vad)))
        out[v] = np.stack(embs)
    return out


def verification(h: Hearing, n: int) -> dict:
    embs = embed_voices(h, n)
    scores, labels = trials(embs)
    pooled = det(scores, labels)
    shipped = {"threshold": h.threshold, "frr": float((scores[labels] < h.threshold).mean()),
               "far": float((scores[~labels] >= h.threshold).mean())}
    lovo, thresholds = {}, {}
    for rule in ("eer", "far_1pct"):
        c = {"genuine": 0, "false_rejects": 0, "impostor": 0, "false_accepts": 0}
        for v in VOICES:
            rest = det(*trials({k: e for k, e in embs.items() if k != v}))
            t = rest.eer_threshold if rule == "eer" else rest.threshold_far_1pct
            thresholds.setdefault(rule, {})[v] = t
            s, lab = trials(embs, tested=[v])
            c["genuine"] += int(lab.sum())
            c["false_rejects"] += int((s[lab] < t).sum())
            c["impostor"] += int((~lab).sum())
            c["false_accepts"] += int((s[~lab] >= t).sum())
        c["frr"], c["far"] = c["false_rejects"] / c["genuine"], c["false_accepts"] / c["impostor"]
        if rule == "eer":
            c["eer"] = (c["frr"] + c["far"]) / 2
        lovo[f"threshold_at_{rule}_of_other_voices"] = {**c, "thresholds": thresholds[rule]}
    pitch = {}
    for cents in (-200, 200):
        shifted = embed_voices(h, n, pitch=cents)
        acc, total, cos = 0, 0, []
        for v in VOICES:
            c = unit(embs[v][:3].mean(0))
            sc = shifted[v] @ c
            cos.extend(sc.tolist())
            acc += int((sc >= thresholds["far_1pct"][v]).sum())
            total += len(sc)
        pitch[f"{cents:+d} cents"] = {"trials": total, "accepted": acc, "accept_rate": acc / total,
                                      "mean_cosine_to_owner": float(np.mean(cos))}
    return {"pooled": pooled.as_dict(), "at_shipped_threshold": shipped, "leave_one_voice_out": lovo,
            "pitch_impostors": pitch}


def make_scene(i: int, n_speakers: int, bystander_db: float = -10.0) -> tuple[scenes.Scene, str]:
    rng = np.random.default_rng(100 + i)
    voices = cast(rng, i, n_speakers)  # natural voices only
    lines = [scenes.SENTENCES[j] for j in rng.permutation(len(scenes.SENTENCES))]
    main, bys = voices[0], voices[1:]
    sc = scenes.conversation(main, lines[:3], [(b, [lines[3 + k]]) for k, b in enumerate(bys)], seed=i,
                             overlap=0.5, rt60=0.3 if i % 2 else 0.0, bystander_db=bystander_db)
    return sc, main


def make_background_scene(i: int) -> tuple[scenes.Scene, str]:
    """A bystander talking under the main speaker, 10 or 15 dB down."""
    rng = np.random.default_rng(700 + i)
    main, by = cast(rng, i, 2)
    lines = [scenes.SENTENCES[j] for j in rng.permutation(len(scenes.SENTENCES))]
    return scenes.background(main, lines[:3], by, lines[3:5], seed=i, bystander_db=-10.0 if i % 2 else -15.0,
                             rt60=0.3 if i % 4 == 3 else 0.0), main


CALL_LEVELS = (0.0, -6.0, -10.0, -15.0)


def make_call_scene(i: int) -> tuple[scenes.Scene, str]:
    """The real recorded call (guard.recordings): each of its two people in front in turn, the other as
    recorded (0 dB) or 6, 10, 15 dB down. Eight distinct scenes; i wraps."""
    main = recordings.CALL_SPEAKERS[i % 2]
    return recordings.call_scene(main, CALL_LEVELS[(i // 2) % len(CALL_LEVELS)]), main


def der(ref: dict[str, np.ndarray], hyp: list[np.ndarray]) -> tuple[float, float]:
    """Frame DER, no collar, overlap scored: (error frames, reference speaker-frames)."""
    r = np.stack(list(ref.values())).astype(int)
    hmat = np.stack(hyp).astype(int) if hyp else np.zeros((0, r.shape[1]), int)
    cost = -(r @ hmat.T) if len(hmat) else np.zeros((len(r), 0))
    ri, hi = linear_sum_assignment(cost) if len(hmat) else ([], [])
    correct = sum(int((r[a] & hmat[b]).sum()) for a, b in zip(ri, hi))
    err = int(np.maximum(r.sum(0), hmat.sum(0) if len(hmat) else 0).sum()) - correct
    return err, int(r.sum())


ENROLL_LINES = ["Please turn on the radio in the kitchen.", "What time does the pharmacy open tomorrow?",
                "Add washing up liquid to my shopping list."]


def voiceprint(h: Hearing, voice: str) -> Voiceprint:
    """The voice enrolled as `guard enroll` does it: three clean clips at -20 dBFS, lines no scene uses."""
    ep = h.enrollment_print([scenes.level(scenes.tts(voice, line), -20.0) for line in ENROLL_LINES])
    return Voiceprint("bench", voice, voice, h.settings.embedder, ep.centroid, ep.clips, ep.net_speech_seconds,
                      0.0, ep.f0_hz)


def diarization(h: Hearing, n: int, offset: int = 0, only: tuple[str, ...] = ()) -> dict:
    """DER, main-speaker identification, and what the SELECTIVE gate passes, for each policy side by side:
    the default (split overlap, the 0.3 s lead-in check, the 0.2 s silent hangover, the background rule,
    word tails: each scene is transcribed by the service's recogniser for them; the same-voice join) and
    the default without the word tails, without the tails' slack, without the background rule, without
    its deep-level test (a voice at the main speaker's pitch), and without the same-voice join;
    split with the lead-in and no hangover, with neither, and with a 0.6 s lead-in; attenuate and drop
    (attenuated overlap counts as passed); drop with the lead-in; drop without its guard band, without
    pause fill, and without both (the drop and attenuate rows have neither lead-in nor hangover).
    `offset` shifts the scene seeds (another set of scenes for the same figures); `only` names the scene
    kinds to hear (all when empty). Every row but `no_background` has the background rule, every row but
    `no_tails` the word tails, every row but `no_tails` and `no_tail_slack` the tails' slack, and every
    row but `no_same_voice` the same-voice join, and every row but `no_indistinct` the refusal where a
    voice cannot be told from the main speaker (nothing passes; `scenes_refused` counts the default
    row's); `indistinct_strict` refuses for such a voice however far behind it is (decision 76's rule),
    `indistinct_behind_6` exempts one 6 dB behind instead of the default 9 (decision 79). Scenes: 2 and
    3 speakers taking turns, `background` (a bystander talking under the main speaker), and `equal_level` (2 speakers taking turns, the bystander
    as loud as the main speaker), and `call`: real people (guard.recordings: a recorded telephone call,
    each person in front in turn, the other 0, 6, 10 or 15 dB down; at most 8 scenes, and no `enrolled`
    rows: the recording holds no other speech of theirs to enroll from). The `enrolled` rows hear the
    same scenes with the main speaker enrolled (the household's owner; the bystanders are guests), gated
    by the default policy: the production setting."""
    no_hangover = {"gate_hangover_seconds": 0.0}
    off = {"lead_in_seconds": 0.0, **no_hangover}
    policies = {"default": PolicySettings(),   # split, 0.3 s lead-in, 0.2 s hangover, background, word tails
                "no_tails": PolicySettings(tail_seconds=0),
                "no_tail_slack": PolicySettings(tail_slack_seconds=0),
                "no_background": PolicySettings(background_margin_db=0),
                "no_background_deep": PolicySettings(background_deep_db=0),
                "no_same_voice": PolicySettings(same_voice_db=0),
                "no_indistinct": PolicySettings(indistinct_seconds=0),
                "indistinct_strict": PolicySettings(indistinct_behind_db=0.0),
                "indistinct_behind_6": PolicySettings(indistinct_behind_db=6.0),
                "split_lead_in": PolicySettings(overlap="split", lead_in_seconds=0.3, **no_hangover),
                "split": PolicySettings(overlap="split", **off),
                "split_lead_in_0.6": PolicySettings(overlap="split", lead_in_seconds=0.6, **no_hangover),
                "attenuate": PolicySettings(overlap="attenuate", **off),
                "drop": PolicySettings(overlap="drop", **off),
                "drop_lead_in": PolicySettings(overlap="drop", lead_in_seconds=0.3, **no_hangover),
                "drop_no_guard_band": PolicySettings(overlap="drop", guard_band_seconds=0, **off),
                "drop_no_pause_fill": PolicySettings(overlap="drop", pause_fill_seconds=0, **off),
                "drop_neither": PolicySettings(overlap="drop", guard_band_seconds=0, pause_fill_seconds=0, **off)}
    out = {}
    recogniser = shared(PolicySettings().tail_whisper, "policy.tail_whisper")
    voiceprints: dict[str, Voiceprint] = {}
    kinds = {"2_speakers": lambda i: make_scene(i + 100 + offset, 2),
             "3_speakers": lambda i: make_scene(i + 150 + offset, 3),
             "background": lambda i: make_background_scene(i + offset),
             # a bystander as loud as the main speaker (0 or 2 dB down): where the same-voice join can
             # take a bystander at the main speaker's pitch for the main speaker (decision 74)
             "equal_level": lambda i: make_scene(i + 200 + offset, 2, bystander_db=-2.0 * (i % 2)),
             "call": make_call_scene}
    for kind, make in kinds.items():
        if only and kind not in only:
            continue
        real = kind == "call"   # real people: no other speech of theirs to enroll from
        n_kind = min(n, 2 * len(CALL_LEVELS)) if real else n
        e_tot = r_tot = 0
        by_s = main_s = overlap_s = 0.0
        by_leak = dict.fromkeys(policies, 0.0)
        main_kept = dict.fromkeys(policies, 0.0)
        overlap_kept = dict.fromkeys(policies, 0.0)   # the main speaker's speech under another voice
        main_ok = enrolled_ok = by_voice = refused = 0
        enrolled = {"bystander": 0.0, "main": 0.0}
        e_enr = 0
        for i in range(n_kind):
            sc, main = make(i)
            d = h.hear(sc.samples, [])
            # the service's own recogniser: word times for the tails (once per scene, for every row)
            words = functools.partial(list, recogniser(sc.samples))
            ref = sc.reference(d.n_frames)
            e, r = der(ref, [t.frames for t in d.tracks])
            e_tot, r_tot = e_tot + e, r_tot + r
            choice = choose_main(d, PolicySettings())
            others = np.any([m for s, m in ref.items() if s != main], axis=0)
            by_only = others & ~ref[main]
            main_only = ref[main] & ~others
            by_s += by_only.sum() / 100
            main_s += main_only.sum() / 100
            overlap_s += (ref[main] & others).sum() / 100
            for name, policy in policies.items():
                pf, no = passed(h, sc.samples, d, choice.track, policy, words)
                refused += int(no and name == "default")
                by_leak[name] += (by_only & pf).sum() / 100
                main_kept[name] += (main_only & pf).sum() / 100
                overlap_kept[name] += (ref[main] & others & pf).sum() / 100
            mf = choice.track.frames
            main_ok += int((mf & ref[main]).sum() > (mf & others).sum())
            if real:
                continue
            de = h.hear(sc.samples, [voiceprints.setdefault(main, voiceprint(h, main))])
            e_enr += der(ref, [t.frames for t in de.tracks])[0]
            ce = choose_main(de, PolicySettings())
            mf = ce.track.frames
            enrolled_ok += int((mf & ref[main]).sum() > (mf & others).sum())
            by_voice += int(ce.rule == pb.ENROLLED and ce.track.speaker_id == main)
            pf, _ = passed(h, sc.samples, de, ce.track, PolicySettings(), words)
            enrolled["bystander"] += (by_only & pf).sum() / 100
            enrolled["main"] += (main_only & pf).sum() / 100
        enrolled_rows = {} if real else {
            "enrolled_DER": e_enr / r_tot, "enrolled_main_identified": enrolled_ok / n_kind,
            "enrolled_main_verified": by_voice / n_kind,
            "enrolled_bystander_leak_share": enrolled["bystander"] / by_s,
            "enrolled_main_kept_share": enrolled["main"] / main_s}
        out[kind] = {"scenes": n_kind, "DER": e_tot / r_tot, "bystander_seconds": by_s, "main_seconds": main_s,
                     "main_identified": main_ok / n_kind, "scenes_refused": refused,
                     **{f"bystander_leak_share_{p}": by_leak[p] / by_s for p in policies},
                     **{f"main_kept_share_{p}": main_kept[p] / main_s for p in policies},
                     "main_overlapped_seconds": overlap_s,
                     **{f"main_overlapped_passed_share_{p}": overlap_kept[p] / overlap_s
                        for p in policies},
                     **enrolled_rows}
    return out


def passed(h: Hearing, samples: np.ndarray, d, main, policy: PolicySettings, words) -> tuple[np.ndarray, bool]:
    """((n_frames,) bool, refused): what the service's SELECTIVE path lets reach the model: the gate's
    output, or nothing where a voice the verifier cannot tell from the main speaker makes it refuse
    (decision 76)."""
    g = gate(samples, d, main, policy, words)
    if indistinct(d, main, h.threshold, policy.indistinct_seconds, policy.indistinct_behind_db) is not None:
        return np.zeros(d.n_frames, bool), True
    return passed_frames(g.samples, d.n_frames), False


def speed_clip(seconds: int, clips: str) -> np.ndarray:
    """Two-speaker scenes joined to `seconds`. With `clips` set, read from / written to
    DIR/speed_{seconds}s.wav, so a machine without the TTS voices (a GPU host) times the same audio."""
    path = Path(clips) / f"speed_{seconds}s.wav" if clips else None
    if path is not None and path.exists():
        x, sr = sf.read(path, dtype="float32")
        assert sr == 16000, path
        return x
    parts = []
    i = 0
    while sum(len(p) for p in parts) < seconds * 16000:
        sc, _ = make_scene(900 + i, 2)
        parts.append(sc.samples)
        i += 1
    x = np.concatenate(parts)[: seconds * 16000]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(path, x, 16000, subtype="FLOAT")
    return x


def speed(h: Hearing, clips: str = "", pyannote: bool = True) -> dict:
    from guard.hearing.diarize_pyannote import PyannoteDiarizer
    from guard.layouts import pyannote_pipeline

    pa = None
    if pyannote:
        folder = pyannote_pipeline(Path(tempfile.mkdtemp()) / "pyannote")
        pa = PyannoteDiarizer(str(folder), h.embedder, h.settings.device)
    out = {"device": h.embedder.device, "torch_threads": torch.get_num_threads(),
           "window_seconds": h.settings.window_seconds, "hop_seconds": h.settings.hop_seconds}
    for seconds in (10, 60):
        x = speed_clip(seconds, clips)
        runs = [("guard", lambda a: h.hear(a, []))] + ([("pyannote_random_init", pa)] if pa else [])
        for name, fn in runs:
            fn(x)  # warm
            t = time.perf_counter()
            reps = 3
            for _ in range(reps):
                fn(x)
            out[f"{name}_rtf_{seconds}s"] = (time.perf_counter() - t) / reps / seconds
        if pa:
            out[f"ratio_{seconds}s"] = out[f"pyannote_random_init_rtf_{seconds}s"] / out[f"guard_rtf_{seconds}s"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--utterances", type=int, default=24)
    ap.add_argument("--scenes", type=int, default=24)
    ap.add_argument("--scene-offset", type=int, default=0, help="shift the scene seeds (300: a second set)")
    ap.add_argument("--kinds", nargs="*", default=[], help="diarization scene kinds to hear (default: all)")
    ap.add_argument("--out", default="")
    ap.add_argument("--skip", nargs="*", default=[], choices=["verification", "diarization", "speed"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads (this machine has 2 cores)")
    ap.add_argument("--no-pyannote", action="store_true", help="time guard alone")
    ap.add_argument("--clips", default="", help="folder for the speed clips (read if there, else written)")
    ap.add_argument("--held-out", action="store_true", help="cast the neural voice `heart` (see above)")
    args = ap.parse_args()
    if args.held_out:
        VOICES.insert(5, scenes.HELD_OUT[0])   # after the five natural voices: cast() draws from those
    torch.set_num_threads(args.threads)
    h = Hearing.from_settings(HearingSettings(device=args.device))
    report = {}
    for name, fn in (("verification", lambda: verification(h, args.utterances)),
                     ("diarization", lambda: diarization(h, args.scenes, args.scene_offset, tuple(args.kinds))),
                     ("speed", lambda: speed(h, args.clips, not args.no_pyannote))):
        if name in args.skip:
            continue
        t = time.time()
        report[name] = fn()
        print(f"== {name} ({time.time() - t:.0f} s)")
        print(json.dumps(report[name], indent=2))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
