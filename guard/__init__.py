"""guard: a runtime privacy guardrail for voice assistants."""
__version__ = "0.1.0"
