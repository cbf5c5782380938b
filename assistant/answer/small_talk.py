"""Whether a message is small talk, decided by rule: a message asking for facts or advice never is.

The intent model's ``chit_chat`` label skips retrieval and the citation contract, so it must not be the
model's call alone: "What dose of warfarin should I take?" was once labelled chit_chat and answered uncited.
The model's label is kept only for messages this rule accepts as small talk.
"""

from __future__ import annotations

import re

_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|howdy|yo|greetings|good (morning|afternoon|evening|night|day)|thanks?( you)?( so much)?|"
    r"thank you( very much)?|cheers|bye|goodbye|see you|ok(ay)?|cool|great|nice|awesome|perfect|sure|got it|"
    r"no problem|sorry|please|welcome)\b[\s,!.]*", re.I)
# Questions about the assistant itself or how it is doing: small talk although they are questions.
_ABOUT_ME = re.compile(
    r"^(how are you( doing)?|how's it going|what'?s up|who are you|what are you|what is your name|"
    r"what'?s your name|what can you do|how can you help( me)?|are you (a bot|human|there)|nice to meet you)"
    r"[\s?!.]*$", re.I)
# The marks of a request for facts or advice.
_ASKS = re.compile(
    r"\?|\b(what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|can|could|should|would|"
    r"will|may|might|must|tell|explain|describe|list|name|give|show|find|compare|recommend|advise|define|"
    r"dose|dosage|treat|treatment|cure|symptom|cause|risk|safe)\b", re.I)
MAX_SMALL_TALK_WORDS = 4


def is_small_talk(message: str) -> bool:
    """True for greetings, thanks and questions about the assistant; False for anything asking for facts."""
    text = " ".join((message or "").split())
    rest = text
    while True:  # "Hi, thanks!" -> ""
        m = _GREETING.match(rest)
        if not m or not m.group(0):
            break
        rest = rest[m.end():]
    rest = rest.strip(" ,!.")
    if not rest or _ABOUT_ME.match(rest):
        return True
    if _ASKS.search(rest):
        return False
    return len(rest.split()) <= MAX_SMALL_TALK_WORDS
