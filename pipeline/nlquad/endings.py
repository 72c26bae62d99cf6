"""What ends a BBC story without being the story: reader call-outs, broadcast notes, author bios, credits.

Why a rule on text and not on markup: these endings change markup with every layout (a bold ``<p>`` and a
form on 2009 pages, an italic paragraph in 2010-2013, a box then a plain ``<ul>`` in the story-body
layout, text- and list-blocks in the data-component one) but keep their words: an e-mail address of
Have Your Say, "WhatsApp: +44 ...", "is broadcast on ... BBC Radio 4", "X is the author of ...". Left in,
they become the end of the last section's answer, which NLQuAD must not contain.

Only the end of a body is read, paragraph by paragraph from the last one back: a paragraph in the middle
of a story that quotes a broadcast or names a book is article text.
"""

from __future__ import annotations

import re

# A call-out: asks readers to send something, and says how.
_CALL_OUT = re.compile(
    r"haveyoursay@|yourpics@|\bhave your say\b|\bget in touch\b|\bshare (?:your|them|it|this|with us)\b.{0,80}"
    r"(?:email|e-mail|whatsapp|form|contact|@)|\bcontact number\b|^\W*whatsapp\b|^\W*tweet\b.{0,40}@|"
    r"^\W*text (?:an )?(?:sms|mms)\b|^\W*(?:email|e-mail)\b.{0,60}@|"
    r"^\W*(?:send|upload) (?:us )?(?:your )?(?:pictures?|photos?|videos?)\b(?:.{0,40}\b(?:to|@)|[\w\s/]{0,30}$)|"
    r"\bterms (?:&|and) conditions\b|\bprivacy (?:policy|notice)\b|\busing the form below\b|"
    r"\bcomments? on this story\b|\b(?:add|send us) your comments\b|\bjoin our facebook\b|\bfacebook q ?& ?a\b|"
    r"\bif you are happy to be contacted\b|\bwilling to speak to a bbc journalist\b|"
    r"\bin some cases a selection of your comments\b|\bbbc may edit your comments\b",
    re.IGNORECASE)
# A reader question that opens a call-out ("Are you in the area?"): furniture only before a call-out.
_READER_QUESTION = re.compile(
    r"^\W*(?:are|have|do|did|were|was|is|has|would|could) (?:you|your|anyone you know)\b[^.!]{0,200}\?\W*$|"
    r"^\W*(?:what do you think|how (?:has|have|will|is) [^.?!]{0,80} affect(?:ed)? you)\b[^.!]{0,200}\?\W*$",
    re.IGNORECASE)
# A programme note, a bio or a credit line.
_NOTE = re.compile(
    r"\b(?:is|was|will be|are|were) (?:broadcast|on air|repeated)\b|\blisten again\b|\bbbc iplayer\b|"
    r"\bprogramme schedules?\b|\bdownload (?:or subscribe to )?(?:the|this) (?:podcast|programme)\b|"
    r"\bclick through to (?:our|the)\b|\b(?:listen to|download|subscribe to|hear more on) (?:our|the) "
    r"[\w'’ -]{0,40}\bpodcast\b|\bon bbc sounds\b|"
    r"^\W*(?:bbc )?(?:radio \d|world service)\b.{0,120}\b(?:broadcast|at \d{4}|on \w+days?)\b|"
    r"\bis (?:the |an? )?(?:author|co-author|editor|presenter|writer) of\b|"
    r"^\W*(?:interviews?|additional reporting|reporting|compiled|produced|edited|illustrations?|"
    r"research|photographs?|pictures?|graphics?|video) (?:and [a-z]+ )?by\b[^.]{0,80}\.?\W*$",
    re.IGNORECASE)
_MAX_WORDS = 80  # a note or a call-out line is short; a long paragraph is prose that mentions one


def is_call_out(text: str) -> bool:
    return len(text.split()) <= _MAX_WORDS and bool(_CALL_OUT.search(text))


def is_trailing_note(text: str) -> bool:
    return len(text.split()) <= _MAX_WORDS and bool(_NOTE.search(text))


def trailing_furniture_start(texts: list[str]) -> int:
    """Index where the body's furniture tail begins (``len(texts)`` when it has none). From the last
    paragraph back: call-outs and notes are furniture; a reader question is too, when a call-out follows
    it (a question alone may be the story's last line)."""
    start = len(texts)
    call_out_seen = False
    while start > 0:
        text = texts[start - 1]
        if is_call_out(text):
            call_out_seen = True
        elif is_trailing_note(text):
            pass
        elif not (call_out_seen and len(text.split()) <= 40 and _READER_QUESTION.search(text)):
            break
        start -= 1
    return start
