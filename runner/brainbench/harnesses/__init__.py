"""What the runner knows about each harness: the seams it offers, how it hands prior
context to a hook, and how it treats what a hook answers (grading).

Runner side only: nothing here runs inside a hook program.
"""
