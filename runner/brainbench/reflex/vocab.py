"""The word lists of gbrain's entity-salience extractor (spec §3.1), verbatim."""

from __future__ import annotations

# Hard stopwords: never a candidate, and trimmed from the front of capitalized runs.
STOPWORDS = frozenset(
    """i i'm i've i'll you you're he she it it's we we're they they're me him her us them my your his
    their our mine yours hers theirs ours this that these those who whom the a an and or but so if as at by
    for in of on to up with from into over than then also just what when where why how which whose can could
    should would will shall may might must do does did is are am was were be been being has have had hi hey
    hello thanks thank please yes no ok okay sure maybe well oh let let's lets""".split()
)

# Soft common words: dropped as single tokens unless seen mid-sentence.
COMMON_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december today tomorrow yesterday now soon later tonight morning
    afternoon evening week month year meeting call note task here there every some any all one two three
    first last next new old good bad great nice thing something anything""".split()
)

MAX_CANDIDATES = 12
MAX_WEAK_CANDIDATES = 32
MAX_CJK_CANDIDATES = 24
