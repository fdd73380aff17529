"""`guard train ...`: the BPFT recipe (`bpft`), its data builder (`data`) and local base folders (`base`)."""
from __future__ import annotations

import json
from pathlib import Path


def cmd_bpft(args) -> int:
    from guard.train.bpft import Recipe
    from guard.train.run import bpft

    recipe = Recipe.load(args.recipe, max_steps=args.max_steps, learning_rate=args.lr, grad_accum=args.grad_accum,
                         mlp=True if args.mlp else None, epochs=args.epochs, save_steps=args.save_steps)
    questions = [Path(q) for q in args.questions]
    facts = bpft(Path(args.base), questions, Path(args.audio_root or questions[0].parent), Path(args.out), recipe,
                 eval_fraction=args.eval_fraction, eval_questions=Path(args.eval_questions) if args.eval_questions
                 else None, evaluate_after=not args.no_eval, general_mix=Path(args.general_mix) if
                 args.general_mix else None, mix_ratio=args.mix_ratio, device=args.device, resume=args.resume,
                 eval_limit=args.eval_limit)
    t, ev = facts["train"], facts.get("evaluation") or {}
    print(f"trained {t['steps']} steps on {t['examples']} examples; loss {t['losses'][0]:.3f} -> "
          f"{t['losses'][-1]:.3f}" if t["losses"] else f"trained {t['steps']} steps")
    if ev.get("cells"):
        print("held-apart SH-Bench: " + json.dumps(ev["cells"]))
    print(f"wrote {args.out}/(adapter_model.safetensors, adapter_config.json, README.md, card.json)")
    return 0


def cmd_data(args) -> int:
    from guard.train import data

    info = data.build([Path(q) for q in args.questions], Path(args.out), general_mix=Path(args.general_mix) if
                      args.general_mix else None, mix_ratio=args.mix_ratio, seed=args.seed)
    print(json.dumps(info, indent=2))
    return 0


def cmd_base(args) -> int:
    from guard.train.layouts import build_base

    print(f"wrote {build_base(Path(args.out), args.layout, seed=args.seed, dtype=args.dtype)} "
          f"(random weights, layout {args.layout})")
    return 0


def add_parser(sub) -> None:
    sp = sub.add_parser("train", help="fine-tune an adapter (BPFT) and build training data")
    tsub = sp.add_subparsers(dest="train_command", required=True)

    bp = tsub.add_parser("bpft", help="LoRA-train a Qwen2.5-Omni thinker for selective hearing, then evaluate")
    bp.add_argument("--base", required=True, help="local folder of the base thinker")
    bp.add_argument("--questions", nargs="+", required=True, help="SH-Bench-format training question files")
    bp.add_argument("--audio-root", help="folder the records' audio paths are relative to (default: beside the "
                    "first question file)")
    bp.add_argument("--out", required=True, help="adapter folder to write")
    bp.add_argument("--recipe", help="recipe YAML (default models/bpft-recipe.yaml)")
    bp.add_argument("--max-steps", type=int)
    bp.add_argument("--epochs", type=float)
    bp.add_argument("--lr", type=float)
    bp.add_argument("--grad-accum", type=int)
    bp.add_argument("--save-steps", type=int)
    bp.add_argument("--mlp", action="store_true", help="also adapt the LLM's MLP projections")
    bp.add_argument("--device", default="auto", help="auto, cpu or cuda[:N]")
    bp.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in OUT")
    bp.add_argument("--eval-fraction", type=float, default=0.1, help="share of recordings held apart")
    bp.add_argument("--eval-questions", help="evaluate on this question file instead of a held-apart split")
    bp.add_argument("--eval-limit", type=int, default=0, help="replay at most N held-apart questions")
    bp.add_argument("--no-eval", action="store_true", help="skip the evaluation replay")
    bp.add_argument("--general-mix", help="JSONL of general-task chats to mix in against forgetting")
    bp.add_argument("--mix-ratio", type=float, default=0.0)
    bp.set_defaults(func=cmd_bpft)

    dp = tsub.add_parser("data", help="build the General/Selective training JSONL only")
    dp.add_argument("questions", nargs="+")
    dp.add_argument("--out", required=True)
    dp.add_argument("--general-mix")
    dp.add_argument("--mix-ratio", type=float, default=0.0)
    dp.add_argument("--seed", type=int, default=0)
    dp.set_defaults(func=cmd_data)

    lp = tsub.add_parser("base", help="write a random-weight thinker folder (tests, offline recipe checks)")
    lp.add_argument("--layout", choices=["tiny", "qwen2.5-omni-7b-2l"], default="tiny")
    lp.add_argument("--out", required=True)
    lp.add_argument("--seed", type=int, default=0)
    lp.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    lp.set_defaults(func=cmd_base)
