"""The player's English: what a line typed at the prompt asks, read before any narrator sees it (issue 41).

One room for the words: :mod:`.lexicon` (every verb of the game's closed set with its synonyms, phrasal verbs and
idioms, and the words that frame a sentence: negators, hedges, courtesy, directions, pronouns), :mod:`.verbs`
(each verb's patterns, help and completion, their words drawn from the lexicon), :mod:`.parser` (a line to a
:class:`~game.language.parser.Command`), :mod:`.reading` (a sentence's clauses with their mood, polarity and
verb classes), :mod:`.question` (the grammar of a question about the past) and :mod:`.spelling` (typos forgiven
against the words in scope). It knows words, never the story: resolving "the herb" to an item here is
:mod:`game.world.asked`'s, and the rules, memory and the voice check read through this package. It imports
nothing of the game but :mod:`game.text`.
"""
