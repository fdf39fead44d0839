"""Memory systems as the memory-trust suites drive them: the operations interface and its providers."""
