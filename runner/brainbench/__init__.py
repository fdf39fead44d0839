"""BrainBench: a cross-harness conformance benchmark for agent memory."""

__version__ = "0.1.0"
CONTRACT_VERSION = "1"
