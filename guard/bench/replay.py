"""Replays against the live service: every request goes through gRPC to a running `guard serve`."""
from __future__ import annotations

import json
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
import numpy as np
from tqdm import tqdm

from guard.bench.shbench import score_records, summarise
from guard.client import GuardClient


@dataclass
class Call:
    seconds: float
    timings: dict[str, float]


def latency_stats(calls: list[Call], wall: float) -> dict:
    lat = np.array([c.seconds for c in calls]) if calls else np.zeros(1)
    stages: dict[str, list[float]] = {}
    for c in calls:
        for k, v in c.timings.items():
            stages.setdefault(k, []).append(v)
    return {"requests": len(calls), "wall_seconds": wall, "throughput_rps": len(calls) / wall if wall else 0.0,
            "p50": float(np.percentile(lat, 50)), "p95": float(np.percentile(lat, 95)),
            "p99": float(np.percentile(lat, 99)),
            "stage_mean_seconds": {k: float(np.mean(v)) for k, v in stages.items()}}


def _ask_all(target: str, jobs: list, fn, concurrency: int, desc: str) -> tuple[list, float]:
    """Run fn(client, job) for every job with `concurrency` parallel clients; keeps job order."""
    results: list = [None] * len(jobs)
    clients = [GuardClient(target, timeout=600) for _ in range(concurrency)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool, tqdm(total=len(jobs), desc=desc, unit="q") as bar:
        futures = {pool.submit(fn, clients[i % concurrency], job): i for i, job in enumerate(jobs)}
        for f, i in futures.items():
            results[i] = f.result()
            bar.update(1)
    wall = time.perf_counter() - t0
    for c in clients:
        c.close()
    return results, wall


def replay_shbench(questions: Path, audio_root: Path, target: str, out: Path, *,
                   modes: tuple[str, ...] = ("general", "selective"), concurrency: int = 2,
                   limit: int = 0, household: str = "") -> dict:
    # A results file can be replayed as a question file: drop what an earlier replay wrote.
    written = {"pred", "answer_text", "refused", "withheld_seconds", "error"}
    records = [{k: v for k, v in r.items() if k not in written} for r in json.loads(Path(questions).read_text())]
    if limit:
        records = records[:limit]
    audio: dict[str, bytes] = {}
    for r in records:
        if r["audio"] not in audio:
            audio[r["audio"]] = (Path(audio_root) / r["audio"]).read_bytes()
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"suite": str(questions), "n": len(records), "modes": {}}
    scores = {}
    for mode in modes:
        def one(client: GuardClient, rec: dict, mode=mode) -> tuple[dict, Call | None]:
            t = time.perf_counter()
            try:
                r = client.ask(audio[rec["audio"]], question=rec["question"], options=rec["options"], mode=mode,
                               household=household, main_speaker_desc=rec.get("main_speaker_desc", ""))
            except grpc.RpcError as e:
                return {**rec, "pred": "", "error": f"{e.code().name}: {e.details()}"}, None
            call = Call(time.perf_counter() - t, {x.stage: x.seconds for x in r.timings})
            return {**rec, "pred": r.choice_letter or r.answer, "answer_text": r.answer, "refused": r.refused,
                    "withheld_seconds": r.withheld_seconds}, call

        results, wall = _ask_all(target, records, one, concurrency, f"shbench {mode}")
        rows = [r for r, _ in results]
        (out / f"{mode}.json").write_text(json.dumps(rows, indent=1))
        s = score_records(rows, selective=mode == "selective", path=str(out / f"{mode}.json"))
        scores[mode] = s
        summary["modes"][mode] = {"score": s.__dict__, "errors": sum("error" in r for r in rows),
                                  "latency": latency_stats([c for _, c in results if c], wall)}
    if "general" in scores and "selective" in scores:
        summary["cells"] = summarise(scores["general"], scores["selective"]).as_dict()
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def replay_voxprivacy(suite: Path, target: str, out: Path, *, concurrency: int = 2, limit: int = 0,
                      household: str = "voxprivacy-replay", model_judge=None) -> dict:
    """Enroll the suite's voices once (one household), then per sample: a new session, Listen per turn,
    Ask with the probe audio only. Text and speaker labels never reach the service."""
    from guard.bench.voxprivacy import judge, score, tier_headline

    suite = Path(suite)
    if suite.is_dir():  # a suite folder, as `guard bench generate voxprivacy --out DIR` writes it
        suite = suite / "suite.json"
    if not suite.is_file():
        raise FileNotFoundError(f"no VoxPrivacy suite at {suite} (a suite.json, or a folder holding one)")
    root = suite.parent
    samples = json.loads(suite.read_text())
    if limit:
        samples = samples[:limit]
    voices: dict[str, list[str]] = {}
    for s in samples:
        for spk, clips in s["enroll"].items():
            voices.setdefault(spk, clips)
    with GuardClient(target, timeout=600) as c:
        try:
            c.forget(household=household, whole_household=True)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.NOT_FOUND:
                raise
        for spk, clips in sorted(voices.items()):
            c.enroll(spk, [root / p for p in clips], household=household)

    def one(client: GuardClient, s: dict) -> tuple[dict, Call | None]:
        t = time.perf_counter()
        try:
            sid = client.open_session(household)
            for turn in s["turns"]:
                client.listen(sid, root / turn["audio"], household=household)
            r = client.ask(root / s["probe"]["audio"], household=household, session_id=sid, mode="selective")
            client.close_session(sid, household=household)
        except grpc.RpcError as e:
            return ({"id": s["id"], "tier": s["tier"], "expected": s["expected"], "answer": "", "refused": False,
                     "verdict": "invalid", "kind": s["probe"].get("kind", ""), "lang": s["lang"],
                     "error": f"{e.code().name}: {e.details()}"}, None)
        call = Call(time.perf_counter() - t, {x.stage: x.seconds for x in r.timings})
        verdict, how = model_judge(r.answer, s) if model_judge else (judge(r.answer, s), "keys")
        return ({"id": s["id"], "tier": s["tier"], "expected": s["expected"], "answer": r.answer,
                 "refused": r.refused, "reason": r.reason_text, "verdict": verdict, "judge": how,
                 "kind": s["probe"].get("kind", ""), "lang": s["lang"], "category": s["category"]}, call)

    results, wall = _ask_all(target, samples, one, concurrency, "voxprivacy")
    rows = [r for r, _ in results]
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(rows, indent=1))
    summary = {"suite": str(suite), **score(rows), "errors": sum("error" in r for r in rows),
               "latency": latency_stats([c for _, c in results if c], wall)}
    summary["tiers"] = tier_headline(summary)
    summary["judged_by"] = dict(Counter(r.get("judge", "error") for r in rows))
    impostors = root / "impostors.json"
    if impostors.exists():
        summary["impostor_cosines"] = json.loads(impostors.read_text())
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary
