"""The hook programs: our contract adapters for the three seams, run as separate
processes (``python -m brainbench.hooks.<seam>``), over ``brainbench.reflex``.

Start-up cost matters here (exec mode starts one process per hook call), so
nothing in this package imports the runner, pydantic or the CLI.
"""
