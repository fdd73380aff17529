"""Models behind the guard, chosen by name from config (backend.name) through `make_backend`."""
from __future__ import annotations

from guard.backends.base import Backend, Task
from guard.config import BackendSettings
from guard.errors import ConfigError

__all__ = ["BACKENDS", "Backend", "Task", "make_backend"]
BACKENDS = ("cascade", "openai", "omni")


def make_backend(settings: BackendSettings) -> Backend:
    if settings.name == "cascade":
        from guard.backends.cascade import CascadeBackend

        return CascadeBackend(whisper=settings.cascade_whisper,
                              second_whisper=settings.cascade_second_whisper,
                              general_min_support=settings.cascade_general_min_support,
                              recheck=settings.cascade_recheck,
                              meaning_margin=settings.cascade_meaning_margin,
                              guess_min=settings.cascade_guess_min,
                              agree_span=settings.cascade_agree_span,
                              general_alone=settings.cascade_general_alone,
                              general_words=settings.cascade_general_words,
                              general_focus=settings.cascade_general_focus,
                              general_encoder=settings.cascade_general_encoder,
                              guess_encoder=settings.cascade_guess_encoder,
                              quantities=settings.cascade_quantities,
                              meaning_second=settings.cascade_meaning_second,
                              reader=settings.cascade_reader, reader_tokens=settings.max_new_tokens,
                              decode_processes=settings.cascade_decode_processes,
                              decode_timeout=settings.timeout_seconds)
    if settings.name == "openai":
        from guard.backends.openai import OpenAIBackend
        from guard.chat_http import ChatClient

        if not settings.openai_base_url or not settings.openai_model:
            raise ConfigError("backend.name is openai but backend.openai_base_url or backend.openai_model is "
                              "empty (GUARD_BACKEND__OPENAI_BASE_URL, GUARD_BACKEND__OPENAI_MODEL)")
        return OpenAIBackend(ChatClient(settings.openai_base_url, settings.openai_model,
                                        api_key=settings.openai_api_key.get_secret_value(),
                                        timeout=settings.timeout_seconds, retries=settings.openai_retries),
                             max_tokens=settings.max_new_tokens)
    if settings.name == "omni":
        from guard.backends.omni import OmniBackend

        return OmniBackend(settings.omni_base_path, settings.omni_adapters, settings.omni_adapter,
                           device=settings.omni_device, system=settings.omni_system_prompt,
                           max_new_tokens=settings.max_new_tokens)
    raise ConfigError(f"backend.name {settings.name!r} is not available in this build; one of {BACKENDS}")
