"""``brainbench doctor``: predict what a run will see from a hook image, before it is scored.

It brings the image up through the run's own Docker executor, in the modes the
run would use, against a small brain of its own, and grades every answer with the
run's own ``grade()`` -- one set of rules, so a PASS here is a clean run there.
"""
