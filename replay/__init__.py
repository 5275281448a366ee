"""The audit desk's domain: tiles, rules, the engine, logs, deals, validation, storage."""

__version__ = "0.1.0"
