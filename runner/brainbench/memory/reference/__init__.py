"""Our reference memory system: the memory-operations interface over the brain's own Postgres schema."""

from brainbench.memory.reference.system import ReferenceMemory

__all__ = ["ReferenceMemory"]
