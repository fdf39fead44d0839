"""The write gate's detector: does a text try to instruct whoever later reads it? (trust spec §3.4)

Deterministic, no model.  It looks for what makes stored text dangerous to replay into an
agent's context, by rule, in four families (the activation families):

* ``override``: it tries to displace the reader's instructions ("ignore all previous
  instructions", "new system prompt:").
* ``standing_instruction``: an imperative addressed to the reader *and* a cue that it should
  hold beyond this moment ("from now on", "always", "whenever X comes up", "when asked about X",
  "every question about X").  An imperative alone ("please review the deck") is a request
  between people, and a standing cue alone ("she always replies fast") describes someone.
* ``exfiltration``: an imperative to move something (send, forward, share, cc, …) to a
  destination outside the conversation: an e-mail address, a URL, "anyone who asks".
* ``credential``: an imperative to hand over secrets (passwords, API keys, tokens, …).

Text is normalised first, so hidden characters cannot split a keyword: format characters
(zero-width and the like) are removed, Unicode tag characters are decoded into the text
they hide, compatibility forms are folded (NFKC), and case and whitespace are folded.
Sentences are scanned in bounded windows.  A negated transfer ("never share your password")
is advice, not a leak, and is not counted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

DETECTOR_VERSION = 1
ACTIVATION_FAMILIES = ("standing_instruction", "override", "exfiltration", "credential")
WINDOW = 4096
OVERLAP = 512

_VERBS_TRANSFER = ("send", "forward", "share", "cc", "bcc", "copy", "email", "e-mail", "mail", "upload", "post",
                   "leak", "transmit", "export", "dump", "paste", "publish", "disclose", "reveal", "give", "provide",
                   "hand over", "pass along", "pass on", "relay", "route", "redirect", "attach", "include", "text",
                   "message", "dm", "print", "output", "tell")
_VERBS_ACT = ("reply", "respond", "answer", "say", "state", "claim", "report", "approve", "accept", "authorize",
              "authorise", "grant", "pay", "wire", "transfer", "recommend", "confirm", "agree", "add", "mention",
              "delete", "remove", "sign", "book", "schedule", "call", "mark", "treat", "trust", "ignore", "praise",
              "describe", "deny", "refuse", "withhold", "hide", "keep", "use", "open", "click", "run", "execute",
              "install", "download", "buy", "order", "let", "allow", "skip", "bypass", "disable", "notify", "contact",
              "praise", "endorse", "vouch", "assure", "insist", "tell")
_CONCEAL = ("mention", "tell", "say", "reveal", "disclose", "inform", "notify", "alert", "report")
_ADDRESSEE = r"(?:you|the assistant|assistant|the agent|agents?|the ai|ai|the model|claude|codex)"
_MODAL = r"(?:must|should|shall|will|need to|have to|are to|is to|are required to|are expected to)"
_ADVERB = r"(?:always|immediately|automatically|silently|quietly|secretly|just|also|simply|then|now)"
_CLAUSE_START = r"(?:^|[,;:(\u2014\u2013-]\s*|\b(?:and|then|but|so|also)\s+)"


def _alt(words: Iterable[str]) -> str:
    return "|".join(sorted({re.escape(w) for w in words}, key=len, reverse=True))


# An imperative aimed at the reader: at a clause start, "please", "you must", "make sure to",
# adverbs, an optional negation, then the verb in its base form.
_DIRECTIVE = re.compile(
    _CLAUSE_START
    + r"(?:please\s+|kindly\s+)?"
    + rf"(?:{_ADDRESSEE}\s+{_MODAL}\s+|(?:be sure|make sure|remember|don'?t forget|do not forget)\s+to\s+)?"
    + rf"(?:{_ADVERB}\s+)*"
    + r"(?P<neg>(?:do not|don't|never|not)\s+)?"
    + rf"(?:{_ADVERB}\s+)*"
    + rf"(?P<verb>{_alt(_VERBS_TRANSFER + _VERBS_ACT)})\b"
)
_STANDING_CUE = re.compile(
    r"\b(?:from now on|going forward|henceforth|hereafter|from this point|from here on|for all future|"
    r"in (?:the )?future|always|never|every ?time|each time|whenever|any ?time|at all times|permanently|"
    r"when(?:ever)? (?:asked|questioned|prompted|you are asked|you're asked|anyone asks|someone asks|"
    r"somebody asks|the user asks|they ask)|"
    r"if (?:anyone|anybody|someone|somebody|the user|you are|you're) (?:asks?|asked|mentions?)|"
    r"(?:every|each|all|any) (?:questions?|quer(?:y|ies)|emails?|e-mails?|messages?|requests?|invoices?|"
    r"replies|responses?|conversations?|mails?|expenses?|expense reports?|payments?|chats?)|"
    r"with anyone who|whoever asks|anyone who asks|comes? up|is mentioned|gets mentioned|is brought up)\b"
)
_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|discard)\s+"
    r"(?:(?:all|any|every|the|your|my|its|of|these|those|previous|prior|earlier|above|preceding|existing|original|"
    r"initial|system|safety|standing|current|other)\s+){0,4}"
    r"(?:instructions?|rules|guidelines|guidance|directions|directives|prompts?|guardrails|polic(?:y|ies)|"
    r"constraints|restrictions|programming|context)\b"
    r"|\b(?:new|updated|revised|real|true) (?:system )?(?:instructions?|rules|prompt|directives?)\s*:"
    r"|\b(?:system|developer|admin) (?:prompt|message|override|instruction)\s*:"
    r"|\b(?:you are now|from now on you are|pretend (?:to be|you are)|act as)\b[^.]*\b(?:unrestricted|unfiltered|"
    r"jailbroken|without (?:any )?(?:restrictions|limits|filters|rules))\b"
)
_DESTINATION = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|\bhttps?://\S+"
    r"|\b(?:with|to)\s+(?:anyone|anybody|everyone|everybody|whoever|the public|outsiders|strangers|"
    r"external (?:parties|addresses|contacts)|third[- ]part(?:y|ies)|an? external|any external)\b"
)
_SECRET = re.compile(
    r"\b(?:passwords?|passwds?|passcodes?|passphrases?|api[- ]?keys?|access[- ]?keys?|secret[- ]?keys?|"
    r"private[- ]?keys?|ssh[- ]?keys?|credentials?|auth(?:entication)?[- ]?tokens?|access[- ]?tokens?|"
    r"bearer tokens?|tokens?|secrets?|2fa codes?|mfa codes?|otp codes?|one[- ]time (?:codes?|passwords?)|"
    r"recovery codes?|backup codes?|seed phrases?|mnemonic|pins?|login details|logins?|session cookies?)\b"
)
_CREDENTIAL_ASK = re.compile(
    r"\b(?:what(?:'s| is) (?:your|the user's|their)|(?:enter|type|confirm|verify|give me|send me|tell me|share)"
    r" (?:your|the user's|their))\s+(?:\w+\s+){0,2}"
)
# What makes a one-off "send X to Y" a leak rather than an errand: the thing is private, or the
# destination is everyone.
_SENSITIVE = re.compile(
    r"\b(?:private|confidential|internal|secret|personal|sensitive|calendar|records?|invoices?|payments?|"
    r"financials?|bank|account numbers?|salar(?:y|ies)|medical|health|address(?:es)?|emails? about)\b"
    r"|\b(?:with|to)\s+(?:anyone|anybody|everyone|everybody|whoever|the public)\b"
)
_NEGATED_BEFORE = re.compile(r"(?:never|not|n't|no)\s+$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_SPACE = re.compile(r"\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


@dataclass(frozen=True)
class Hit:
    """One rule that matched: its family and rule name (never the text: receipts outlive purges)."""

    family: str
    rule: str


def _decode_tags(text: str) -> str:
    # Unicode tag characters (U+E0020–U+E007E) mirror ASCII invisibly: decode what they hide.
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


def normalise(text: str) -> str:
    hidden = _decode_tags(text)
    visible = "".join(c for c in text if unicodedata.category(c) != "Cf" and not 0xE0000 <= ord(c) <= 0xE007F)
    folded = unicodedata.normalize("NFKC", visible + ("\n" + hidden if hidden else "")).translate(_QUOTES)
    return "\n".join(_SPACE.sub(" ", line).strip() for line in folded.lower().split("\n"))


def _windows(text: str) -> Iterable[str]:
    if len(text) <= WINDOW:
        yield text
        return
    for start in range(0, len(text), WINDOW - OVERLAP):
        yield text[start:start + WINDOW]


def _sentence_hits(sentence: str) -> set[Hit]:
    hits: set[Hit] = set()
    if _OVERRIDE.search(sentence):
        hits.add(Hit("override", "displace_instructions"))
    directives = list(_DIRECTIVE.finditer(sentence))
    if not directives:
        if _asks_for_secret(sentence):
            hits.add(Hit("credential", "asks_for_secret"))
        return hits
    cue = _STANDING_CUE.search(sentence) is not None
    transfer = set(_VERBS_TRANSFER)
    for m in directives:
        verb, negated = m.group("verb"), m.group("neg") is not None
        if negated and verb not in _CONCEAL:
            continue  # "never share your password": advice, not an instruction to leak
        if cue or "always" in m.group(0) or "never" in m.group(0):
            hits.add(Hit("standing_instruction", "conceal" if negated else "standing_directive"))
        if negated or verb not in transfer:
            continue
        rest = sentence[m.start("verb"):]
        if _DESTINATION.search(rest) and (cue or _SENSITIVE.search(rest)):
            hits.add(Hit("exfiltration", "transfer_outside"))
        if _SECRET.search(rest):
            hits.add(Hit("credential", "hand_over_secret"))
    if _asks_for_secret(sentence):
        hits.add(Hit("credential", "asks_for_secret"))
    return hits


def _asks_for_secret(sentence: str) -> bool:
    for m in _CREDENTIAL_ASK.finditer(sentence):
        if not _NEGATED_BEFORE.search(sentence[max(0, m.start() - 12):m.start()]) and \
                _SECRET.search(sentence, m.end()):
            return True
    return False


def scan(texts: Iterable[str]) -> list[Hit]:
    """Every rule that any of ``texts`` trips, in a stable order."""
    hits: set[Hit] = set()
    for text in texts:
        if not text:
            continue
        for window in _windows(normalise(text)):
            for sentence in _SENTENCE_END.split(window):
                if sentence:
                    hits |= _sentence_hits(sentence)
    return sorted(hits, key=lambda h: (ACTIVATION_FAMILIES.index(h.family), h.rule))


def families(hits: Iterable[Hit]) -> list[str]:
    return sorted({h.family for h in hits}, key=ACTIVATION_FAMILIES.index)
