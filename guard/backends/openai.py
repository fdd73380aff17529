"""The `openai` backend: an OpenAI-compatible chat-completions endpoint that accepts audio content parts
(vLLM serving Qwen2.5-Omni, with the BPFT adapter named as the model via --lora-modules).

The request carries the (gated) audio as a base64 WAV `input_audio` part and the SH-Bench prompt as text.
The endpoint and model come from config only; clients never name a model or an adapter.
"""
from __future__ import annotations

import base64

import numpy as np

from guard.audio import to_wav_bytes
from guard.backends.base import Backend, Task
from guard.chat_http import ChatClient


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(self, client: ChatClient, max_tokens: int = 64):
        self.client, self.max_tokens = client, max_tokens

    def generate(self, audio: np.ndarray, task: Task) -> str:
        wav = base64.b64encode(to_wav_bytes(audio)).decode()
        messages = [{"role": "user", "content": [
            {"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}},
            {"type": "text", "text": task.prompt}]}]
        return self.client.complete(messages, max_tokens=self.max_tokens, temperature=0.0).strip()
