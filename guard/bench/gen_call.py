"""An SH-Bench-format suite of real speech: the recorded call of guard.recordings.

Six scenes: each of the call's two people in front in turn, the other 6, 10 or 15 dB down (SH-Bench's
recordings put a bystander behind the main speaker). Each scene asks two questions about what each
person said (four in all: `main` for the one in front, `bystander` for the other), written from the
call's transcript; no option is something the other person said, so a bystander question answered
with anything but the IDK option in SELECTIVE mode means the bystander's words got through. Records are
`type: real`. Small (48 questions over both modes): a check that the guard works on real voices at
all, beside the generated suites' larger cells.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from guard import recordings
from guard.bench.facts import IDK

LEVELS = (-6.0, -10.0, -15.0)
DESC = "A woman with an American accent on a telephone line, speaking casually at a moderate pace."
# (speaker, question, answer, distractors): the call's words (sample.stm) the answer rests on in comments
QUESTIONS = [
    ("speaker90", "Which state is Diane in?", "New Jersey", ["Florida", "Oregon", "Nevada"]),
    # "This is Diane in New Jersey." / "I'm in New Jersey now though."
    ("speaker90", "What did Diane hear?", "a beep", ["a knock", "a siren", "a dog barking"]),
    # "I thought you know, I heard a beep."
    ("speaker91", "Which state is Sheila in?", "Texas", ["Georgia", "Arizona", "Maine"]),
    # "And I'm Sheila in Texas, originally from Chicago."
    ("speaker91", "What do people where Sheila lives call her?", "a Yankee", ["a cowboy", "a tourist",
                                                                              "an outsider"]),
    # "they all call me a Yankee down here"
]


def generate(out: Path, *, fmt: str = "flac", seed: int = 0) -> Path:
    """Writes OUT/questions.json and OUT/audio/call_*.{flac,wav}; returns the questions file."""
    rng = np.random.default_rng(seed)
    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    records = []
    for main in recordings.CALL_SPEAKERS:
        for db in LEVELS:
            name = f"call_{recordings.CALL_NAMES[main].lower()}_front_{-int(db)}db.{fmt}"
            sf.write(out / "audio" / name, recordings.call_scene(main, db).samples, 16000, subtype="PCM_16")
            for who, question, answer, distractors in QUESTIONS:
                options = [answer, *distractors, IDK]
                options = [options[j] for j in rng.permutation(5)]
                records.append({
                    "question": question, "options": options, "answer": answer,
                    "speaker": "main" if who == main else "bystander", "audio": f"audio/{name}",
                    "scene": "recorded_call", "main_speaker_desc": DESC,
                    "main_speaker_desc_w_content": f"{DESC} She talks about where she lives.",
                    "type": "real",
                    "main_speaker_desc_w_content_filter": f"{DESC} She talks about where she lives.",
                    "idk_answer": IDK})
    q = out / "questions.json"
    q.write_text(json.dumps(records, indent=1))
    return q
