"""The lexicon: the word lists and word forms every reader of a message shares (tools.lang).

One list per kind of word, here and nowhere else: a rule that needs "went up" words takes the forms it needs from
:data:`CHANGE_VERBS` instead of keeping its own list (five such lists disagreed before: one had "climbs" and not
"gained", another "gained" and not "rises").

Word forms shared by the routing of messages to tables and the reading of table questions:

"Who won the most times?" names the Winner column and "times" the Time column, though neither word is a prefix
of the other's stem: a message word and a header word are forms of one word when they share a 5-letter stem,
when one is the other plus a common ending ("win"/"winner", "time"/"times"), or through a short list of
irregular past forms ("won" -> "win").

It also holds the pronouns that the follow-up rules (``tools.intent``, ``tools._question_rules``) read alike.
"""

from __future__ import annotations

import re

# A word of a question, header or cell: letters and digits, any script ("Sölden", "1906").
WORD = re.compile(r"[^\W_]+")

# Words that point back at something said before rather than name a thing ("What are its symptoms?").
PRONOUNS = frozenset({"he", "she", "it", "they", "them", "those", "these", "that", "this", "his", "her", "its",
                      "their", "him"})

IRREGULAR = {"won": "win", "lost": "loss", "ran": "run", "sold": "sale", "bought": "buy", "held": "hold",
             "led": "lead", "born": "birth", "died": "death", "spent": "spend", "paid": "pay", "built": "build",
             "took": "take", "came": "come", "gave": "give", "made": "make", "wrote": "write", "written": "write",
             "taught": "teach", "sang": "sing", "sung": "sing", "fought": "fight", "drove": "drive",
             "driven": "drive", "flew": "fly", "grew": "grow", "fell": "fall", "rose": "rise", "scored": "score",
             "beat": "beat", "met": "meet", "chose": "choose", "chosen": "choose", "began": "begin", "begun": "begin"}
SUFFIXES = ("s", "es", "ed", "d", "er", "ers", "ner", "ners", "ning", "ing", "ings", "ion", "ions", "ment", "ments",
            "ance", "ence", "al", "ly", "ist", "ists")
STEM = 5


def related(a: str, b: str) -> bool:
    """Whether two lower-case words are forms of one (module docstring)."""
    a, b = IRREGULAR.get(a, a), IRREGULAR.get(b, b)
    if a == b or (len(a) > STEM - 1 and len(b) > STEM - 1 and a[:STEM] == b[:STEM]):
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 3 and long_.startswith(short) and long_[len(short):] in SUFFIXES


# Columns where the best is the smallest number (rank 1, first place): "the highest position" is a minimum, and a
# rank is no measure to divide by. Claims and questions read them alike.
RANK_HEADER = re.compile(r"\b(?:pos|position|positions|rank|ranks|ranking|rankings|place|placing|seed|seeding|pick|"
                         r"order)\b", re.I)


# Words that ask for an extreme: a claim or question with none of them does not ask for a maximum or minimum.
SUPERLATIVES = frozenset("""most least fewest highest lowest largest smallest biggest greatest longest shortest oldest
newest youngest earliest latest best worst maximum minimum top heaviest lightest fastest slowest richest poorest
deepest tallest widest narrowest hottest coldest warmest strongest weakest busiest cheapest costliest densest
highest-ranked lowest-ranked peaked""".split())


# Words whose direction does not depend on the column: not "oldest" (a year or an age), "fastest" (a speed or a
# time), "top" ("top 10"); "most" and "least" only as "the most"/"the least" ("most trials lasted 30 weeks" is
# no extreme).
UPWARD = frozenset("""highest largest biggest greatest longest latest maximum heaviest richest deepest tallest
widest hottest warmest strongest busiest costliest densest peaked""".split())
DOWNWARD = frozenset("""fewest lowest smallest shortest earliest minimum lightest poorest narrowest coldest weakest
cheapest""".split())


# Measures where less is better: "the best time" is the smallest, "the best accuracy" the largest. Rank columns
# have their own reading (RANK_HEADER).
LOWER_IS_BETTER = re.compile(r"\b(?:errors?|err|loss|losses|perplexity|ppl|wer|cer|mae|mse|rmse|latency|time|times|"
                             r"duration|cost|costs|price|prices|distance|fid|deaths|injuries)\b", re.I)


ORDINAL_WORDS = {w: i for i, w in enumerate("second third fourth fifth sixth seventh eighth ninth tenth".split(), 2)} \
    | {f"{i}{s}": i for i, s in ((2, "nd"), (3, "rd"), *((k, "th") for k in range(4, 11)))}


# Words that ask for the largest, and for the smallest ("most"/"least" counted only as "the most", "the least":
# tools.lang.reading reads superlatives, and the helpers the rules ask, is_superlative, extreme_directions and
# ordinal_extreme, from a text's Reading).
MAX_WORDS = UPWARD | {"most"}
MIN_WORDS = DOWNWARD | {"least"}


# "zero" to "twelve" as numbers: the counts a message writes as words ("three causes", "two venues").
CARDINALS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


# Abbreviations a header writes (in capitals, as a word of its own) for the words a claim spells out: "HR (95% CI)"
# is talked about as "the hazard ratio" and "the confidence interval".
ABBREVIATIONS = {
    "CI": "confidence interval",
    "HR": "hazard ratio", "OR": "odds ratio", "RR": "relative risk", "ARR": "absolute risk reduction",
    "NNT": "number needed to treat", "SD": "standard deviation", "SE": "standard error",
    "IQR": "interquartile range", "BMI": "body mass index", "LOS": "length of stay", "ICU": "intensive care unit",
    "AE": "adverse event events", "AEs": "adverse events", "QALY": "quality adjusted life year",
}


# Short forms a header writes in any case ("Storage temp (°C)", "Pop. density", "Avg. stay") for the words a message
# spells out. Found as a new user: "At what temperature must it be stored?" after a vaccines answer went to the text
# knowledge base, the header being "Storage temp (°C)". Only forms that stand for one thing: not "min" (minimum or
# minutes), "med" (median or medication), "no" (number, or the word no) or "vol" (volume, or a survey's
# "volunteered" answer in PubHealthTab).
SHORT_FORMS = {
    "temp": "temperature", "temps": "temperatures", "pop": "population", "avg": "average", "qty": "quantity",
    "yr": "year", "yrs": "years", "pct": "percent percentage", "approx": "approximately", "wt": "weight",
    "ht": "height", "dist": "distance", "amt": "amount", "dept": "department",
    "govt": "government", "mfr": "manufacturer", "max": "maximum", "hosp": "hospital", "admin": "administration",
}


def spelled_out(header: str) -> list[str]:
    """The words a header's abbreviations stand for: capitals as written ("HR" -> hazard ratio), short forms in any
    case ("temp" -> temperature)."""
    return [w for token in re.findall(r"[A-Za-z]+", header)
            for w in (*ABBREVIATIONS.get(token, "").split(), *SHORT_FORMS.get(token.lower(), "").split())]


# Words too common to say what a message is about ("the", "of", "was"): left out when matching words.
# Words that make a stated number rough ("about 20%", "nearly twice", "roughly a third"): one list for the rules that
# read a rough value, multiple, fraction, ratio or arm difference (each may add its own, such as "some").
ROUGH_WORDS = ("nearly", "almost", "about", "around", "roughly", "approximately", "close to")
# the same as a regular expression's alternatives ("close to" with any spacing)
ROUGH_PATTERN = "|".join(w.replace(" ", r"\s+") for w in ROUGH_WORDS)

STOP = frozenset("a an the of in on at to for by and or with from as is was were are be its it his her their".split())

# Words before a number that bound it ("more than 400 beds", "at most 3"), with the comparison each sets: one table
# for every reader of a stated bound (tools.lang.reading; the filter, duration, change and multiple rules).
BOUND_WORDS = {"more than": ">", "greater than": ">", "higher than": ">", "larger than": ">", "over": ">",
               "above": ">", "exceeding": ">", "in excess of": ">", "at least": ">=", "no fewer than": ">=",
               "no less than": ">=", "not fewer than": ">=", "not less than": ">=",
               "fewer than": "<", "less than": "<", "lower than": "<", "smaller than": "<", "under": "<",
               "below": "<", "at most": "<=", "no more than": "<=", "not more than": "<=", "up to": "<="}
# Words that make a stated number rough beyond ROUGH_WORDS, read before a number only ("some 300 patients", "an
# estimated 4,000"): as a regular expression's alternatives.
ROUGH_NUMBER_PATTERN = ROUGH_PATTERN + r"|approx\.?|some|circa|ca\.|an\s+estimated|estimated"
# Magnitude words after a number ("30 thousand", "2.5 bn"); not a bare "m" (metres as often as millions).
SCALE_WORDS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "billion": 1e9, "bn": 1e9}


def content_words(text: str) -> list[str]:
    """The words of ``text``, lower-cased, without the STOP words."""
    return [w for w in WORD.findall(text.casefold()) if w not in STOP]


def common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def word_in(word: str, have: list[str]) -> bool:
    """``word`` is one of ``have``, the start of one ('win' in 'winning'), or shares its stem with one
    ('attendance' and 'attended': a common start of 5 letters or more, all but 3 letters of the shorter)."""
    if word in have:
        return True
    if len(word) < 3:
        return False
    for h in have:
        if h.startswith(word) or (len(h) >= 4 and word.startswith(h)) or related(word, h):
            return True
        if common_prefix(word, h) >= max(5, min(len(word), len(h)) - 3):
            return True
    return False


# "which of them", "how many of those", "among these ones": a follow-up about the rows of the previous answer
OF_THEM = re.compile(r"\b(?:of|among|between)\s+(?:them|those|these|they)\b|\b(?:those|these)\s+(?:ones|rows)\b",
                     re.I)

# -- the calendar a message writes (tools.lang.reading reads these words into dates) -------------------------------
MONTH_NAMES = "january february march april may june july august september october november december".split()
MONTHS = {m: i for i, m in enumerate(MONTH_NAMES, 1)} | {m[:3]: i for i, m in enumerate(MONTH_NAMES, 1)} | {"sept": 9}
# The words that say which quarter ("the third quarter", "Q3" is read apart): one list for every reader of a quarter.
QUARTER_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
# Four-digit numbers read as years: from EARLIEST_YEAR on for most readers ("in 1998", "Q1 2025"); the date filters of
# a question also take older ones ("in 1066"), from OLDEST_YEAR (a reader says which it takes).
OLDEST_YEAR, EARLIEST_YEAR, LATEST_YEAR = 1000, 1800, 2099


# -- quantifiers: words that say how many of the things a message speaks of it means (tools.lang.reading) -----------
# Each word with its kind: "every" (each, all), "both", "some" (any, at least one), "none" (no, neither, nor),
# "only" (alone, solely), "unique" (single), "whole" (entire), "always", "never", and "most" (as in "most trials"; "the
# most" is a superlative). A reader takes the kinds it needs, or the words where the rules that read a kind disagree.
QUANTIFIERS = {
    "every": "every", "each": "every", "all": "every",
    "both": "both",
    "any": "some", "some": "some", "at least one": "some", "one or more": "some",
    "no": "none", "none": "none", "neither": "none", "nor": "none",
    "only": "only", "alone": "only", "sole": "only", "solely": "only", "exclusively": "only",
    "unique": "unique", "uniquely": "unique", "single": "unique",
    "whole": "whole", "entire": "whole",
    "always": "always", "never": "never",
    "most": "most",
}


# "No trial had …", "There is no phase 4 trial.", "None of the trials …": a claim that no row has something. Not
# "No more than 3 trials …", which bounds a count.
NEGATED_EXISTENCE = re.compile(
    r"^\s*(?:there\s+(?:is|are|was|were|be|has\s+been|have\s+been)\s+no|none\s+of|not\s+(?:a\s+single|one|any)|no)"
    r"\b(?!\s+(?:more|less|fewer|greater|higher|lower|longer|shorter|later|earlier)\s+than\b|\.\s*\d)", re.I)


def singular(noun: str) -> str:
    """Drop a plural ending ("drugs" -> "drug", "countries" -> "country"); rough, for type labels and kinds."""
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith("s") and not noun.endswith("ss") and len(noun) > 3:
        return noun[:-1]
    return noun


# "And which city has the lowest NO2?", "So how many …?": a follow-up's opening word, which the question rules
# (anchored at the question's start) would read as its first word (seen as a new user: answered "12", not the city)
_OPENER = re.compile(r"^\s*(?:and|but|so|also|then|now|ok|okay|well)\b[,:]?\s+(?=\w)", re.I)


def without_opener(question: str) -> str:
    """The question without a follow-up's opening "And", "So", "Then", … ("And which city …?" -> "which city …?")."""
    return _OPENER.sub("", question, count=1)


# -- words that say a value went up or down ----------------------------------------------------------------------
# Each verb family by its forms. "improve" is kept apart (IMPROVE): whether it is up depends on the measure (an
# error rate that improved went down), so only the rules that read it as up take it.
CHANGE_VERBS: dict[str, dict[str, tuple[str, ...]]] = {
    "up": {
        "base": ("rise", "increase", "grow", "climb", "go up", "gain"),
        "third": ("rises", "increases", "grows", "climbs", "goes up", "gains"),
        "past": ("rose", "increased", "grew", "climbed", "went up", "gained"),
        "participle": ("risen", "increased", "grown", "climbed", "gone up", "gained"),
        "gerund": ("rising", "increasing", "growing", "climbing", "going up", "gaining"),
        "noun": ("rise", "increase", "growth", "gain", "jump"),
    },
    "down": {
        "base": ("fall", "decrease", "decline", "drop", "go down", "shrink"),
        "third": ("falls", "decreases", "declines", "drops", "goes down", "shrinks"),
        "past": ("fell", "decreased", "declined", "dropped", "went down", "shrank"),
        "participle": ("fallen", "decreased", "declined", "dropped", "gone down", "shrunk"),
        "gerund": ("falling", "decreasing", "declining", "dropping", "going down", "shrinking"),
        "noun": ("fall", "decrease", "decline", "drop", "reduction", "loss"),
    },
}
IMPROVE = {"base": ("improve",), "third": ("improves",), "past": ("improved",), "participle": ("improved",),
           "gerund": ("improving",), "noun": ("improvement",)}


def change_words(direction: str, *forms: str, improve: bool = False) -> list[str]:
    """The ``direction`` ("up" or "down") words of the given forms, without repeats; ``improve`` adds the
    "improve" family to "up"."""
    families = [CHANGE_VERBS[direction]] + ([IMPROVE] if improve and direction == "up" else [])
    return list(dict.fromkeys(w for family in families for form in forms for w in family[form]))


def change_pattern(direction: str, *forms: str, improve: bool = False) -> str:
    """:func:`change_words` as a regular expression's alternatives, longest first ("went up" with any spacing)."""
    words = sorted(change_words(direction, *forms, improve=improve), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)

