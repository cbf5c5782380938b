"""K-Bloom (methods.md §5): harvest knowledge-graph tuples for a relation from the served language model.

Stages, each a module: :mod:`.paraphrase` (prompt paraphrasing and weighting), :mod:`.search` (pairs
proposed by sampling, scored by log-likelihood under the weighted prompts, kept in the four heaps of
:mod:`.heaps`), :mod:`.scoring` (OT semantic score, fluency, final score and threshold). :mod:`.harvest`
runs them with progress bars and checkpoints and stores the result (``kb.kg_harvest``).
"""
