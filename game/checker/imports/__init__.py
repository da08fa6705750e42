"""``storyecho content import``: the lorebooks and character cards people already have, as a story's lore and
people (issue 34).

:mod:`~game.checker.imports.readers` reads each format (SillyTavern World Info, Character Card V1/V2/V3 as JSON
or PNG, ``lorebook_v3``, NovelAI ``.lorebook``) into a :class:`~game.checker.imports.sources.Source`;
:mod:`~game.checker.imports.mapping` maps that into a story's files, through memory's guard against text that
orders the narrator about; :mod:`~game.checker.imports.apply` makes the change in a copy and puts it in place
only once it loads, so a failed import changes nothing; :mod:`~game.checker.imports.report` tells the author what
went where.
"""

from game.checker.imports.apply import import_file as import_file
from game.checker.imports.sources import MAX_IMPORT_BYTES as MAX_IMPORT_BYTES
from game.checker.imports.sources import ImportFailure as ImportFailure
