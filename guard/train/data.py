"""BPFT data builder: SH-Bench-format question files -> General / Selective instruction examples.

Every question becomes
- one General example: the SH-Bench basic prompt, target = the correct option;
- two Selective examples, with and without the main-speaker description (`main_speaker_desc`, never the
  fields that carry content): target = the correct option for a main-speaker question, the IDK option for
  a bystander question.
Targets are written as "<letter>. <option text>". Each example is a chat: a user turn holding the audio
and the prompt, and the assistant reply; only that final reply is meant to be in the loss (the
collator masks everything before it). Optional general-task examples can be mixed in against
forgetting: a JSONL of {"prompt", "target", optional "audio" (relative to the audio root)} or of
{"messages": [user turn, assistant turn]} chats in the shape `Example.chat` writes; text-only examples
train as text-only turns.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path

from guard.policy.selective import LETTERS, build_prompt


@dataclass(frozen=True)
class Example:
    audio: str             # path relative to the dataset root, as in the question file
    prompt: str
    target: str
    mode: str              # general | selective
    speaker: str           # main | bystander
    with_description: bool

    def chat(self) -> list[dict]:
        return [{"role": "user", "content": [{"type": "audio", "audio": self.audio},
                                             {"type": "text", "text": self.prompt}]},
                {"role": "assistant", "content": [{"type": "text", "text": self.target}]}]


def _target(rec: dict, option: str) -> str:
    return f"{LETTERS[rec['options'].index(option)]}. {option}"


def examples_for(rec: dict) -> list[Example]:
    q, opts = rec["question"], rec["options"]
    main = rec["speaker"] == "main"
    out = [Example(rec["audio"], build_prompt(q, opts, selective=False), _target(rec, rec["answer"]),
                   "general", rec["speaker"], False)]
    selective_target = _target(rec, rec["answer"] if main else rec["idk_answer"])
    desc0 = rec.get("main_speaker_desc", "")
    for desc in ([desc0, ""] if desc0 else [""]):
        out.append(Example(rec["audio"], build_prompt(q, opts, selective=True, description=desc),
                           selective_target, "selective", rec["speaker"], bool(desc)))
    return out


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return " ".join(c.get("text", "") for c in content if c.get("type") == "text")


def _general_row(row: dict) -> dict:
    """A general-task line as {prompt, target, audio?}: given so, or taken from its last user and
    assistant turns."""
    if "prompt" in row or "messages" not in row:
        return row
    user = [m for m in row["messages"] if m.get("role") == "user"]
    reply = [m for m in row["messages"] if m.get("role") == "assistant"]
    if not user or not reply:
        return {}
    audio = [c["audio"] for c in user[-1]["content"] if isinstance(c, dict) and c.get("type") == "audio"] \
        if not isinstance(user[-1]["content"], str) else []
    return {"prompt": _text(user[-1]["content"]), "target": _text(reply[-1]["content"]),
            **({"audio": audio[0]} if audio else {}), "messages": row["messages"]}


def build(question_files: list[Path], out: Path, *, general_mix: Path | None = None, mix_ratio: float = 0.0,
          seed: int = 0) -> dict:
    """Write OUT (JSONL, one chat per line, shuffled with `seed`); return counts and the data hash."""
    rows = []
    for f in question_files:
        for rec in json.loads(Path(f).read_text()):
            rows += [{**asdict(e), "messages": e.chat()} for e in examples_for(rec)]
    n_bpft = len(rows)
    if general_mix and mix_ratio > 0:
        extra = [_general_row(json.loads(line)) for line in Path(general_mix).read_text().splitlines()
                 if line.strip()]
        bad = [i for i, r in enumerate(extra) if not (r.get("prompt") and r.get("target"))]
        if bad:
            raise ValueError(f"{general_mix}: general-task lines need 'prompt' and 'target' (lines {bad[:5]})")
        rng = random.Random(seed)
        rows += rng.sample(extra, min(len(extra), int(n_bpft * mix_ratio)))
    random.Random(seed).shuffle(rows)
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return {"examples": len(rows), "bpft_examples": n_bpft, "general_mix": len(rows) - n_bpft,
            "sha256": hashlib.sha256(text.encode()).hexdigest()}
