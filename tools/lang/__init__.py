"""The reading layer: how a message is read, once, for every tool that needs it.

- :mod:`tools.lang.lexicon`: the shared word lists (directions, superlatives, rough words, months, quantifiers, ...)
  and the small word functions over them; no other module keeps a private list of the same words.
- :mod:`tools.lang.reading`: a message parsed once into a typed Reading (numbers and bounds, superlatives,
  negation, dates, quantifiers), and the superlative helpers the rules ask (``is_superlative``, ...) over it.
- :mod:`tools.lang.routing`: which uploaded table a message is about, and how an elliptical follow-up ("And in
  2021?", "And the smallest?", "What about Ontario?") reads against the previous turn.
- :mod:`tools.lang.choice`: a question that offers its answers ("Quebec or Ontario?") read against a table.
"""
