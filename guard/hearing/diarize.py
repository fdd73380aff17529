"""Embedded diarization: who spoke when, from VAD + windowed speaker embeddings.

Steps (each a small function with stated shapes):
1. windows:   W-sample windows every H samples that are at least half speech (short speech gets one
              window centred on it).                                   -> starts (n,)
2. embed:     one batched embedder call.                                -> E (n, d), unit rows
3. cluster:   average-linkage agglomerative clustering on cosine distance, cut at 1 - cluster_threshold;
              clusters whose centroids match the same enrolled voiceprint are merged (anchoring). A small
              cluster (<= transition_windows) lying between two larger ones (closer to each of them than
              they are to each other) is windows straddling a change of speaker: it is dissolved and its
              windows join their nearest cluster, so step 4 marks the change overlapped and step 5 settles it.
              A run of at least level_split_windows consecutive windows of one cluster lying level_split_db
              or more below the cluster's median level is split off as a voice of its own: two similar
              voices at different distances (a bystander 10 dB down) can share a cluster.
4. resegment: every 10 ms speech frame takes the cluster with the highest mean similarity over the
              windows covering it; frames covered by windows of several clusters whose mean similarities
              lie within overlap_margin are marked overlapped and labelled with every speaker among
              those windows (gating treats them as not-only-main). Then again, near each change found,
              with finer windows (reseg_window every reseg_hop, default 1.0 s every 0.1 s) scored
              against the same centroids: clustering wants long windows (stable voices), placing a
              change of speaker wants short ones (a 1.6 s window reaching 0.5 s into the next turn still
              scores as the louder voice).
5. refine:    overlap-marked stretches get a second look with short (0.3 s) windows; frames whose
              similarities clearly favour one voice (margin >= refine_margin) take that voice.
6. voices:    each voice's own (non-overlapped) speech is embedded as a whole, level-normalised, the
              way enrollment embeds: that embedding, not the cluster centroid, is compared with
              voiceprints (the windows above keep their level, which helps tell a near voice from a far one).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from guard.audio import dbfs, frame_dbfs
from guard.hearing.embed import Embedder, unit
from guard.hearing.vad import FRAME, Vad, near, runs
from guard.store.base import Voiceprint


@dataclass
class Track:
    """One voice heard in one request."""

    label: str
    frames: np.ndarray            # (n_frames,) bool: 10 ms frames where this voice speaks
    # (d,) unit: embedder.embed of this voice's own (non-overlapped) speech, the way enrollment embeds,
    # so it compares with voiceprints (not the clustering windows' centroid)
    embedding: np.ndarray
    speech_seconds: float = 0.0
    loudness_dbfs: float = -120.0
    speaker_id: str = ""          # enrolled identity, "" when none matched
    display_name: str = ""
    score: float = 0.0            # best cosine to a household voiceprint (0 when none enrolled)
    enrolled_f0_hz: float = 0.0   # the matched voiceprint's enrollment pitch (0: none or unknown)
    foreground_seconds: float = 0.0   # its speech among the recording's louder half (mark_foreground)

    def segments(self, overlap: np.ndarray) -> list[tuple[float, float, bool]]:
        """[(start_s, end_s, overlapped)] runs of this voice, split where overlap changes."""
        out = []
        for s, e in runs(self.frames):
            ov = overlap[s:e]
            cuts = [s, *(s + 1 + np.flatnonzero(np.diff(ov.astype(np.int8)))).tolist(), e]
            for a, b in itertools.pairwise(cuts):
                out.append((a * FRAME / 16000, b * FRAME / 16000, bool(overlap[a])))
        return out


@dataclass
class Diarization:
    n_frames: int
    speech: np.ndarray                       # (n_frames,) bool
    overlap: np.ndarray                      # (n_frames,) bool: two or more voices
    tracks: list[Track] = field(default_factory=list)

    def track(self, label: str) -> Track:
        return next(t for t in self.tracks if t.label == label)


def mark_foreground(samples: np.ndarray, d: Diarization) -> None:
    """Sets each track's `foreground_seconds`: its frames among the recording's louder half of speech
    (10 ms frames at or above the median level of all speech frames). Who holds the loud speech is the
    foreground speaker even where diarization mixed two voices into one track: a track's mean level
    and length then describe neither voice (decision 83)."""
    if not d.speech.any():
        return
    level = frame_dbfs(samples, d.n_frames)
    loud = d.speech & (level >= np.median(level[d.speech]))
    for t in d.tracks:
        t.foreground_seconds = float((t.frames & loud).sum() * FRAME / 16000)


class EmbeddedDiarizer:
    """VAD + embedder + clustering. Thresholds are cosines of the configured embedder."""

    def __init__(self, vad: Vad, embedder: Embedder, *, window_seconds: float = 1.6, hop_seconds: float = 0.4,
                 cluster_threshold: float = 0.8, verify_threshold: float = 0.8, overlap_margin: float = 0.08,
                 refine_seconds: float = 0.3, refine_margin: float = 0.02, transition_windows: int = 4,
                 reseg_window_seconds: float = 1.0, reseg_hop_seconds: float = 0.1, level_split_db: float = 0.0,
                 level_split_windows: int = 4):
        self.vad, self.embedder = vad, embedder
        self.window = int(window_seconds * 16000) // FRAME * FRAME
        self.hop = int(hop_seconds * 16000) // FRAME * FRAME
        self.cluster_threshold = cluster_threshold
        self.verify_threshold = verify_threshold
        self.overlap_margin = overlap_margin
        self.refine_window = int(refine_seconds * 16000) // FRAME * FRAME
        self.refine_margin = refine_margin
        self.transition_windows = transition_windows
        self.reseg_window = int(reseg_window_seconds * 16000) // FRAME * FRAME
        self.reseg_hop = max(FRAME, int(reseg_hop_seconds * 16000) // FRAME * FRAME)
        self.level_split_db, self.level_split_windows = level_split_db, level_split_windows

    def __call__(self, samples: np.ndarray, voiceprints: list[Voiceprint] = (),
                 speech: np.ndarray | None = None) -> Diarization:
        speech = self.vad.speech_mask(samples) if speech is None else speech
        nf = len(speech)
        result = Diarization(nf, speech, np.zeros(nf, bool))
        if not speech.any():
            return result
        starts = self.windows(speech, self.window, self.hop)
        emb = self.embedder.embed_windows(samples, starts, self.window)
        labels = self.cluster(emb, voiceprints)
        if self.level_split_db > 0:
            labels = self.split_by_level(samples, speech, starts, labels)
        centroids = np.stack([unit(emb[labels == k].mean(0)) for k in range(labels.max() + 1)])
        labels, centroids = self.dissolve_transitions(emb, labels, centroids)
        frame_label, overlap, members = self.resegment(starts, emb @ centroids.T, labels, speech, self.window)
        if len(centroids) > 1 and self.reseg_window:
            self.resegment_changes(samples, speech, centroids, frame_label, overlap, members)
        if self.refine_window and len(centroids) > 1 and overlap.any():
            self.refine(samples, centroids, frame_label, overlap, members)
        result.overlap = overlap
        for k in range(len(centroids)):
            frames = (frame_label == k) | (overlap & members[:, k])
            if not frames.any():
                continue
            only = np.repeat(frames & ~overlap, FRAME)[:len(samples)]
            own = samples[only] if only.any() else samples[np.repeat(frames, FRAME)[:len(samples)]]
            t = Track(label="", frames=frames, embedding=self.embedder.embed(own),
                      speech_seconds=float(frames.sum() * FRAME / 16000), loudness_dbfs=dbfs(own))
            result.tracks.append(t)
        result.tracks.sort(key=lambda t: int(np.argmax(t.frames)))  # S1 speaks first
        for i, t in enumerate(result.tracks):
            t.label = f"S{i + 1}"
        mark_foreground(samples, result)
        return result

    def resegment_changes(self, samples: np.ndarray, speech: np.ndarray, centroids: np.ndarray,
                          frame_label: np.ndarray, overlap: np.ndarray, members: np.ndarray) -> None:
        """Step 4's finer pass, only where it can matter: speech within one fine window of a change of
        label or of overlap in the coarse pass is resegmented with every fine window that reaches it (so
        those frames get exactly what a full fine pass would give them). Measured on the hearing bench's
        48 scenes: the same passed and kept shares as a full fine pass, with 47-55 % of its windows.
        Updates the arrays in place."""
        nf, wf = len(speech), self.reseg_window // FRAME
        lab = np.where(overlap, -2, frame_label)
        sp = np.flatnonzero(speech)
        at = np.flatnonzero(lab[sp[1:]] != lab[sp[:-1]])
        change = overlap.copy()
        change[sp[at]] = change[sp[at + 1]] = True
        zone = near(change, self.reseg_window / 16000) & speech
        if not zone.any():
            return
        fine = self.windows(speech, self.reseg_window, self.reseg_hop)
        reach = np.concatenate([[0], np.cumsum(zone)])
        f = fine // FRAME
        fine = fine[reach[np.minimum(f + wf, nf)] > reach[f]]
        if not len(fine):
            return
        sims = self.embedder.embed_windows(samples, fine, self.reseg_window) @ centroids.T
        fl, fo, fm = self.resegment(fine, sims, sims.argmax(1), speech, self.reseg_window)
        frame_label[zone], overlap[zone], members[zone] = fl[zone], fo[zone], fm[zone]

    def refine(self, samples: np.ndarray, centroids: np.ndarray, frame_label: np.ndarray, overlap: np.ndarray,
               members: np.ndarray) -> None:
        """Second pass over uncertain (overlap-marked) stretches with short windows every 10 ms * 10:
        frames whose short-window similarities clearly favour one voice lose the overlap mark and take
        that voice. Updates the arrays in place."""
        wf, hf = self.refine_window // FRAME, 10
        nf = len(overlap)
        starts = set()
        for a, b in runs(overlap):
            lo, hi = max(0, a - wf // 2), min(max(0, nf - wf), b)
            starts.update(range(lo, hi + 1, hf))
        starts_arr = np.array(sorted(starts), dtype=np.int64)
        sims = self.embedder.embed_windows(samples, starts_arr * FRAME, self.refine_window) @ centroids.T
        total = np.zeros((nf, len(centroids)))
        count = np.zeros(nf)
        for s, row in zip(starts_arr, sims):
            total[s:s + wf] += row
            count[s:s + wf] += 1
        idx = np.flatnonzero(overlap & (count > 0))
        mean = total[idx] / count[idx, None]
        top2 = np.sort(mean, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] >= self.refine_margin
        best = mean.argmax(1)
        frames = idx[clear]
        frame_label[frames] = best[clear]
        overlap[frames] = False
        members[frames] = False
        members[frames, best[clear]] = True

    @staticmethod
    def windows(speech: np.ndarray, window: int, hop: int) -> np.ndarray:
        """Start offsets (samples) of `window`-sample windows every `hop` samples that are at least half
        speech; one per short speech run."""
        wf, hf = window // FRAME, hop // FRAME
        nf = len(speech)
        csum = np.concatenate([[0], np.cumsum(speech)])
        starts = [s for s in range(0, max(1, nf - wf + 1), hf) if csum[min(s + wf, nf)] - csum[s] >= wf / 2]
        covered = np.zeros(nf, bool)
        for s in starts:
            covered[s:s + wf] = True
        for a, b in runs(speech & ~covered):
            centre = (a + b) // 2
            starts.append(int(np.clip(centre - wf // 2, 0, max(0, nf - wf))))
        return np.array(sorted(set(starts)), dtype=np.int64) * FRAME

    def cluster(self, emb: np.ndarray, voiceprints: list[Voiceprint]) -> np.ndarray:
        """(n, d) -> (n,) cluster ids 0..k-1."""
        if len(emb) == 1:
            labels = np.zeros(1, np.int64)
        else:
            z = linkage(emb.astype(np.float64), method="average", metric="cosine")
            labels = fcluster(z, t=1.0 - self.cluster_threshold, criterion="distance") - 1
        if voiceprints:  # anchoring: clusters that match the same enrolled voice are one speaker
            vp = np.stack([v.centroid for v in voiceprints])
            owner = {}
            for k in np.unique(labels):
                sims = unit(emb[labels == k].mean(0)) @ vp.T
                if sims.max() >= self.verify_threshold:
                    owner.setdefault(int(sims.argmax()), []).append(k)
            for ks in owner.values():
                labels[np.isin(labels, ks)] = ks[0]
        _, labels = np.unique(labels, return_inverse=True)
        return labels

    def split_by_level(self, samples: np.ndarray, speech: np.ndarray, starts: np.ndarray, labels: np.ndarray
                       ) -> np.ndarray:
        """A run of at least `level_split_windows` consecutive windows of one cluster whose speech sits
        `level_split_db` or more below the cluster's median window level is another, farther voice that
        clustering merged in (two similar voices): it becomes a cluster of its own."""
        wf = self.window // FRAME
        power = np.where(speech, 10 ** (frame_dbfs(samples, len(speech), FRAME, smooth=1) / 10), np.nan)
        with np.errstate(all="ignore"):   # a window with no speech frame gets +inf: never quiet
            level = np.array([10 * np.log10(np.nanmean(power[s:s + wf]) if speech[s:s + wf].any() else np.inf)
                              for s in starts // FRAME])
        labels = labels.copy()
        for c in np.unique(labels):
            idx = np.flatnonzero(labels == c)
            if len(idx) < 2 * self.level_split_windows:
                continue
            quiet = level[idx] < np.median(level[idx]) - self.level_split_db
            for a, b in runs(quiet):
                if b - a >= self.level_split_windows:
                    labels[idx[a:b]] = labels.max() + 1
        return labels

    def dissolve_transitions(self, emb: np.ndarray, labels: np.ndarray, centroids: np.ndarray
                             ) -> tuple[np.ndarray, np.ndarray]:
        """A small cluster that lies between two larger ones (closer to each than they are to each other)
        is made of windows straddling a change of speaker, not a voice: its windows join their nearest
        remaining cluster, so resegmentation marks the stretch overlapped and refinement settles it."""
        k = len(centroids)
        if k < 3 or self.transition_windows <= 0:
            return labels, centroids
        size = np.bincount(labels, minlength=k)
        sim = centroids @ centroids.T
        drop = np.zeros(k, bool)
        for c in np.argsort(size):
            if size[c] > self.transition_windows:
                break
            big = [a for a in range(k) if a != c and not drop[a] and size[a] > size[c]]
            for a, b in itertools.combinations(big, 2):
                if min(sim[c, a], sim[c, b]) > sim[a, b]:
                    drop[c] = True
                    break
        if not drop.any():
            return labels, centroids
        kept = np.flatnonzero(~drop)
        new = np.full(k, -1)
        new[kept] = np.arange(len(kept))
        labels = new[labels]
        moved = labels < 0
        labels[moved] = (emb[moved] @ centroids[kept].T).argmax(1)
        return labels, centroids[kept]

    def resegment(self, starts: np.ndarray, sims: np.ndarray, labels: np.ndarray, speech: np.ndarray,
                  window: int):
        """Per 10 ms frame: best cluster by mean similarity of the covering `window`-sample windows
        (sims (n, k) against the centroids, labels (n,) each window's cluster); disagreement = overlap."""
        nf, k = len(speech), sims.shape[1]
        wf = window // FRAME
        total = np.zeros((nf, k))
        count = np.zeros(nf)
        members = np.zeros((nf, k), bool)
        for s, row, lab in zip(starts // FRAME, sims, labels):
            total[s:s + wf] += row
            count[s:s + wf] += 1
            members[s:s + wf, lab] = True
        # Speech frames no window reaches take their nearest window's values.
        if (speech & (count == 0)).any():
            covered = np.flatnonzero(count > 0)
            for f in np.flatnonzero(speech & (count == 0)):
                j = covered[np.abs(covered - f).argmin()]
                total[f], count[f], members[f] = total[j], count[j], members[j]
        mean = total / np.maximum(count, 1)[:, None]
        frame_label = np.where(speech, mean.argmax(1), -1)
        top2 = np.sort(mean, axis=1)[:, -2:] if k > 1 else np.zeros((nf, 2))
        overlap = speech & (members.sum(1) > 1) & (top2[:, 1] - top2[:, 0] < self.overlap_margin)
        members &= speech[:, None]
        return frame_label, overlap, members
