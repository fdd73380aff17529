"""The `guard` command: serve | ask | enroll | speakers | forget | config | calibrate | bench.

Client commands talk to a running server (--target); `serve` runs one.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys

from google.protobuf.json_format import MessageToDict

from guard.config import describe, load_settings


def _client(args):
    from guard.client import GuardClient

    return GuardClient(args.target, timeout=args.timeout)


def _print(msg, as_json: bool) -> None:
    d = MessageToDict(msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    print(json.dumps(d, indent=2) if as_json else _brief(d))


def _brief(d: dict) -> str:
    if "answer" in d:
        lines = [f"answer: {d['answer']}"]
        if d.get("choice_letter"):
            lines.append(f"choice: {d['choice_letter']} (index {d['choice_index']})")
        if d.get("refused"):
            lines.append(f"refused: {d['reason']}: {d['reason_text']}")
        for s in d.get("speakers", []):
            who = s.get("speaker_id") or "unenrolled"
            main = "  [main]" if s.get("is_main") else ""
            lines.append(f"  {s['label']}: {who} score={s['score']:.2f} speech={s['speech_seconds']:.1f}s "
                         f"level={s['loudness_dbfs']:.1f}dBFS{main}")
        if d.get("main_rule") and d["main_rule"] != "MAIN_RULE_UNSPECIFIED":
            lines.append(f"main speaker rule: {d['main_rule']}; withheld {d['withheld_seconds']:.1f} s")
        return "\n".join(lines)
    return json.dumps(d, indent=2)


def cmd_serve(args) -> int:
    from guard.server import serve

    overrides = {}
    if args.port is not None:
        overrides.setdefault("server", {})["port"] = args.port
    if args.metrics_port is not None:
        overrides.setdefault("server", {})["metrics_port"] = args.metrics_port
    if args.host is not None:
        overrides.setdefault("server", {})["host"] = args.host
    settings = load_settings(args.config, **overrides)
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(serve(settings))
    return 0


def cmd_ask(args) -> int:
    with _client(args) as c:
        r = c.ask(args.file, question=args.question or "", options=args.options, mode=args.mode,
                  household=args.household, session_id=args.session or "",
                  main_speaker_desc=args.main_speaker_desc or "")
    _print(r, args.json)
    return 0


def cmd_enroll(args) -> int:
    with _client(args) as c:
        r = c.enroll(args.speaker, args.files, household=args.household, display_name=args.name or "")
    _print(r, args.json)
    return 0


def cmd_speakers(args) -> int:
    with _client(args) as c:
        speakers = c.speakers(args.household)
    if args.json:
        print(json.dumps([MessageToDict(s, preserving_proto_field_name=True) for s in speakers], indent=2))
    else:
        for s in speakers:
            print(f"{s.speaker_id}\t{s.display_name}\t{s.clips} clips\t{s.net_speech_seconds:.1f} s\t{s.embedder}")
    return 0


def cmd_forget(args) -> int:
    if not args.speaker and not args.whole_household:
        print("guard forget: name --speaker ID, or --whole-household", file=sys.stderr)
        return 2
    with _client(args) as c:
        r = c.forget(args.speaker or "", args.household, args.whole_household)
    _print(r, args.json)
    return 0


def cmd_config(args) -> int:
    if args.action == "show":
        print(json.dumps(load_settings(args.config).masked(), indent=2))
    else:
        for env, default, desc in describe():
            print(f"{env}\t{default}\t{desc}")
    return 0


def cmd_calibrate(args) -> int:
    from pathlib import Path

    from guard.hearing import Hearing
    from guard.hearing.calibrate import calibrate, write_threshold

    existing = args.config if args.config and Path(args.config).exists() else None
    settings = load_settings(existing)
    hearing = Hearing.from_settings(settings.hearing)
    report, threshold = calibrate(Path(args.dir), hearing.embedder, hearing.vad, far=args.far)
    print(f"embedder {hearing.embedder.name}; {args.dir}")
    for line in report.lines():
        print("  " + line)
    print(f"threshold for false accepts <= {100 * args.far:g} %: {threshold:.4f}")
    if args.json:
        print(json.dumps({**report.as_dict(), "threshold": threshold}, indent=2))
    if args.write:
        if not args.config:
            print("guard calibrate: --write needs --config FILE to write into", file=sys.stderr)
            return 2
        write_threshold(Path(args.config), hearing.embedder.name, threshold)
        print(f"wrote hearing.verify_threshold.{hearing.embedder.name} = {threshold:.4f} to {args.config}")
    return 0


def cmd_bench_score(args) -> int:
    from guard.bench.report import print_scores

    return print_scores(args.files, args.mode)


def cmd_bench_compare(args) -> int:
    from pathlib import Path

    from guard.bench.report import compare_markdown

    names = args.names.split(",") if args.names else [Path(f).parent.name or f for f in args.summaries]
    try:
        md = compare_markdown([json.loads(Path(f).read_text()) for f in args.summaries], names)
        if args.out:
            Path(args.out).write_text(md)
    except (OSError, ValueError) as e:
        print(f"guard bench compare: {e}", file=sys.stderr)
        return 2
    print(md, end="")
    return 0


def _gate(args, summary: dict) -> int:
    from pathlib import Path

    from guard.bench.report import gate

    if not args.baseline:
        return 0
    failures = gate(json.loads(Path(args.baseline).read_text()), summary, args.max_drop)
    for f in failures:
        print(f"GATE FAILED: {f}", file=sys.stderr)
    if not failures:
        print(f"gate passed: nothing fell more than {args.max_drop:g} points below {args.baseline}")
    return 3 if failures else 0


def _report(args, out, name: str, md: str, summary: dict, results: str) -> int:
    """Write summary.md and report.html beside the replay's files, print the table, apply the gate."""
    from guard.bench.report import write_html

    (out / "summary.md").write_text(md)
    write_html(out / "report.html", f"guard bench: {name} replay", md, summary)
    print(md)
    print(f"wrote {out}/{{{results}, summary.json, summary.md, report.html}}")
    return _gate(args, summary)


def cmd_bench_shbench(args) -> int:
    from pathlib import Path

    from guard.bench.replay import replay_shbench
    from guard.bench.report import shbench_markdown

    out = Path(args.out)
    summary = replay_shbench(Path(args.questions), Path(args.audio_root or Path(args.questions).parent),
                             args.target, out, modes=tuple(args.modes.split(",")), concurrency=args.concurrency,
                             limit=args.limit, household=args.household)
    return _report(args, out, "SH-Bench", shbench_markdown(summary), summary, "general.json, selective.json")


def cmd_bench_voxprivacy(args) -> int:
    from pathlib import Path

    from guard.bench.replay import replay_voxprivacy
    from guard.bench.report import voxprivacy_markdown

    out = Path(args.out)
    model_judge = None
    if args.judge_url:
        from guard.bench.judge import ModelJudge
        from guard.chat_http import ChatClient

        model_judge = ModelJudge(ChatClient(args.judge_url, args.judge_model))
    summary = replay_voxprivacy(Path(args.suite), args.target, out, concurrency=args.concurrency, limit=args.limit,
                                model_judge=model_judge)
    return _report(args, out, "VoxPrivacy", voxprivacy_markdown(summary), summary, "results.json")


def voice_list(value: str) -> list[str]:
    """--voices: 3 or more voices, each with a description (a record's main_speaker_desc)."""
    from guard.bench.facts import DESCRIPTIONS

    voices = [v.strip() for v in value.split(",") if v.strip()]
    unknown = sorted(set(voices) - set(DESCRIPTIONS))
    if unknown or len(set(voices)) < 3:
        raise argparse.ArgumentTypeError(f"need 3 or more of {', '.join(DESCRIPTIONS)}; unknown: {unknown}")
    return voices


def cmd_bench_generate(args) -> int:
    from pathlib import Path

    try:
        if args.suite == "shbench":
            from guard.bench.facts import load_facts
            from guard.bench.gen_shbench import generate

            facts = load_facts(Path(args.facts)) if args.facts else None
            q = generate(Path(args.out), n_scenes=args.scenes, seed=args.seed, variant=args.variant,
                         fmt=args.format, layout=args.layout, voices=args.voices, facts=facts)
        elif args.suite == "shbench-call":
            from guard.bench.gen_call import generate as generate_call

            q = generate_call(Path(args.out), fmt=args.format, seed=args.seed)
        else:
            from guard.bench.gen_voxprivacy import generate as generate_vp

            q = generate_vp(Path(args.out), seed=args.seed, variant=args.variant, voices=args.voices,
                            order=args.order, instructions=args.instructions, secrets=args.secrets)
    except (OSError, ValueError) as e:
        print(f"guard bench generate: {e}", file=sys.stderr)
        return 2
    print(f"wrote {q}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="guard", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    def client_args(sp):
        sp.add_argument("--target", default="127.0.0.1:50051", help="host:port of a guard server")
        sp.add_argument("--household", default="", help="household (default: 'default')")
        sp.add_argument("--timeout", type=float, default=120.0, help="seconds before the call is abandoned")
        sp.add_argument("--json", action="store_true", help="print the whole response as JSON")

    sp = sub.add_parser("serve", help="run the gRPC sidecar")
    sp.add_argument("--config", help="YAML settings file")
    sp.add_argument("--host")
    sp.add_argument("--port", type=int)
    sp.add_argument("--metrics-port", type=int)
    sp.set_defaults(func=cmd_serve)

    sp = sub.add_parser("ask", help="ask a question about an audio file")
    sp.add_argument("file")
    sp.add_argument("--question")
    sp.add_argument("--options", nargs="+", help="multiple-choice options (at most 5)")
    sp.add_argument("--mode", choices=["general", "selective"], default="selective")
    sp.add_argument("--session")
    sp.add_argument("--main-speaker-desc")
    client_args(sp)
    sp.set_defaults(func=cmd_ask)

    sp = sub.add_parser("enroll", help="enroll a speaker's voice from clips")
    sp.add_argument("--speaker", required=True)
    sp.add_argument("--name")
    sp.add_argument("files", nargs="+")
    client_args(sp)
    sp.set_defaults(func=cmd_enroll)

    sp = sub.add_parser("speakers", help="list enrolled speakers")
    client_args(sp)
    sp.set_defaults(func=cmd_speakers)

    sp = sub.add_parser("forget", help="erase a speaker (or a whole household)")
    sp.add_argument("--speaker")
    sp.add_argument("--whole-household", action="store_true")
    client_args(sp)
    sp.set_defaults(func=cmd_forget)

    sp = sub.add_parser("config", help="show the effective settings (secrets masked) or list them all")
    sp.add_argument("action", choices=["show", "fields"])
    sp.add_argument("--config")
    sp.set_defaults(func=cmd_config)

    sp = sub.add_parser("calibrate", help="verification EER/minDCF from a folder per speaker; set the threshold")
    sp.add_argument("dir", help="one sub-folder per speaker, each with WAV/FLAC clips (first 3 enroll)")
    sp.add_argument("--config", help="YAML settings file (read; written with --write)")
    sp.add_argument("--far", type=float, default=0.001, choices=[0.001, 0.01],
                    help="false-accept rate the threshold must meet")
    sp.add_argument("--write", action="store_true", help="write the threshold into --config")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_calibrate)

    sp = sub.add_parser("bench", help="benchmarks")
    bsub = sp.add_subparsers(dest="bench_command", required=True)
    bp = bsub.add_parser("score", help="score SH-Bench result files the official way")
    bp.add_argument("files", nargs="+")
    bp.add_argument("--mode", choices=["general", "selective"], help="override the mode from the file name")
    bp.set_defaults(func=cmd_bench_score)

    def gate_args(bp):
        bp.add_argument("--baseline", help="summary.json of an earlier run to compare against")
        bp.add_argument("--max-drop", type=float, default=2.0, help="points a metric may fall before failing")

    bp = bsub.add_parser("shbench", help="replay an SH-Bench question file through the live service")
    bp.add_argument("--questions", required=True)
    bp.add_argument("--audio-root", help="folder the records' audio paths are relative to (default: beside "
                    "the questions file)")
    bp.add_argument("--target", default="127.0.0.1:50051")
    bp.add_argument("--modes", default="general,selective")
    bp.add_argument("--concurrency", type=int, default=2)
    bp.add_argument("--limit", type=int, default=0)
    bp.add_argument("--household", default="")
    bp.add_argument("--out", default="out/shbench")
    gate_args(bp)
    bp.set_defaults(func=cmd_bench_shbench)

    bp = bsub.add_parser("compare", help="SH-Bench replays of one suite side by side, with the differences")
    bp.add_argument("summaries", nargs="+", help="summary.json of each replay; the first is the reference")
    bp.add_argument("--names", help="comma-separated row names (default: each summary's folder name)")
    bp.add_argument("--out", help="also write the table to this Markdown file")
    bp.set_defaults(func=cmd_bench_compare)

    bp = bsub.add_parser("voxprivacy", help="replay a VoxPrivacy-format suite through the live service")
    bp.add_argument("--suite", required=True, help="suite.json, or the folder holding it")
    bp.add_argument("--target", default="127.0.0.1:50051")
    bp.add_argument("--concurrency", type=int, default=2)
    bp.add_argument("--limit", type=int, default=0)
    bp.add_argument("--out", default="out/voxprivacy")
    bp.add_argument("--judge-url", help="OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1) of a judge "
                    "model; it votes three times per sample, the majority wins (default: key matching)")
    bp.add_argument("--judge-model", default="judge", help="model name sent to the judge endpoint")
    gate_args(bp)
    bp.set_defaults(func=cmd_bench_voxprivacy)

    bp = bsub.add_parser("generate", help="generate a suite (SH-Bench or VoxPrivacy format) from the scene "
                         "generator; shbench-call: SH-Bench format from a real recorded call (guard.recordings)")
    bp.add_argument("suite", choices=["shbench", "shbench-call", "voxprivacy"])
    bp.add_argument("--out", required=True)
    bp.add_argument("--scenes", type=int, default=20)
    bp.add_argument("--seed", type=int, default=0)
    bp.add_argument("--variant", type=int, default=0, help="phrasing variant of the fact templates")
    bp.add_argument("--layout", choices=["turns", "background"], default="turns",
                    help="SH-Bench scenes: speakers take turns, or a bystander talks under the main speaker")
    bp.add_argument("--format", choices=["flac", "wav"], default="flac")
    bp.add_argument("--order", choices=["after", "before", "merged"], default="after",
                    help="VoxPrivacy: the privacy instruction after the secret, before it, or in one turn "
                    "with it")
    bp.add_argument("--instructions", help="VoxPrivacy: a YAML file of your own Tier 1 / Tier 2 "
                    "phrasings (`nobody:` and `owner_only:` lists) spoken instead of the built-in ones")
    bp.add_argument("--secrets", help="VoxPrivacy: a YAML file of your own statements ({category: "
                    "[[statement, key, topic], ...], control: [...]}), each told and probed")
    bp.add_argument("--facts", help="SH-Bench: a YAML file of your own topics ({topic: {says: [...], "
                    "asks: [...], pool: [...]}}, `{x}` the value, a pool value a string or {option, said}) instead "
                    "of the built-in ones")
    bp.add_argument("--voices", type=voice_list, help="comma-separated voices to cast (default "
                    "awb,rms,slt,kal,ked; `heart` is a neural voice held out of all tuning)")
    bp.set_defaults(func=cmd_bench_generate)

    from guard import cli_train

    cli_train.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    import grpc

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except grpc.RpcError as e:
        print(f"guard: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"guard: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
