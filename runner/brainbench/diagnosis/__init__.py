"""Why each gold item passed or failed: the reference reflex replayed on the seam's brain.

A stage of the run, like write-back: the orchestrator is handed it (``orchestrator.stages``)
by ``brainbench.pipeline`` and never imports the reflex itself, which belongs to the seams'
side of the wire.
"""
