"""A seam that never injects anything: it reads its call and stays silent (exit 0, no output).

Behind every seam it leaves the poisoning suite's proactive context to the memory system's own
context pack, so a test can judge the memory system without any seam's rendering.
"""

import sys

sys.stdin.buffer.read()
