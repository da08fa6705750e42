"""Every text a story's authors wrote, and where it is: one walk over the content models.

A field holds author text when its content model (:mod:`game.world.content`)
types it ``str``: alone, optional, or as the items of a list or the values of
a dict. So a text field added to a model is found here without being listed
anywhere. The strings that are not text are typed otherwise there: ids
(:data:`~game.world.content.Identifier`), fixed choices (``Literal``) and
data (:data:`~game.world.content.Data`: flags, topic keywords, a folder, a hash).

Where a text is, is said the way the content checker reports it: the file,
then the entry by its id and the fields, list positions and dict keys down to
the text (``story.json: intro``, ``map.json: [camp].description``,
``npcs.json: [hal].topics.pendant``, ``npcs.json: [hal].moods[0].greeting``).
A part whose model has a single text field is named by the part alone
(``map.json: [camp].variants[0]``, ``quests.json: [riddle].objectives[ask]``).

Readers that want some of the texts pick them by field, ``(model, field
name)`` pairs, with :func:`texts_of`.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel

from game.world.content import ContentPack

TextField = tuple[type[BaseModel], str]
"""A text field of a content model: ``(Node, "description")``."""

_FILES = {"nodes": "map.json", "worldview": "worldview.md"}
"""The pack's fields read from a file not named after them (the others: ``<field>.json``)."""


@dataclass(frozen=True)
class AuthorText:
    """One text of a story, as its authors wrote it."""

    text: str
    where: str
    """The file and the path to the text (see the module docstring)."""
    model: type[BaseModel]
    """The content model whose field holds it (``NodeVariant`` for a variant's text)."""
    field: str
    """That field's name."""
    file: str
    """The pack file it comes from (``map.json``, ``worldview.md``)."""


def author_texts(pack: ContentPack) -> Iterator[AuthorText]:
    """Every non-empty text of ``pack`` its authors wrote, in the order of the models' fields and of the files."""
    own = text_fields(ContentPack)
    for name, value in pack:
        file = _FILES.get(name, f"{name}.json")
        if name in own:
            yield from _strings(value, file, "", ContentPack, name)
        else:
            yield from _walk(value, file, "", top=True)


def texts_of(pack: ContentPack, fields: Iterable[TextField]) -> Iterator[AuthorText]:
    """The texts of ``pack`` held by ``fields`` only, in :func:`author_texts` order.

    Raises:
        ValueError: a pair names no text field (a field renamed, or typed as an id or data).
    """
    wanted = set(fields)
    for model, name in wanted:
        if name not in text_fields(model):
            raise ValueError(f"{model.__name__}.{name} is not a text field of the content models")
    return (t for t in author_texts(pack) if (t.model, t.field) in wanted)


@cache
def text_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of ``model`` that hold author text (typed ``str``; see the module docstring)."""
    hints = get_type_hints(model, include_extras=True)
    return frozenset(name for name in model.model_fields if _holds_text(hints[name]))


def _holds_text(hint: object) -> bool:
    if hint is str:
        return True
    origin, args = get_origin(hint), get_args(hint)
    if origin is list:
        return _holds_text(args[0])
    if origin is dict:
        return _holds_text(args[1])
    if origin in (Union, types.UnionType):
        return any(_holds_text(arg) for arg in args if arg is not type(None))
    return False  # ids and data (Annotated), Literal, numbers, models


def _walk(value: object, file: str, path: str, *, top: bool = False) -> Iterator[AuthorText]:
    """The texts inside ``value``: a model, or a list or dict of them."""
    if isinstance(value, BaseModel):
        yield from _model(value, file, path, top=top)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, file, _entry(path, item, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, file, _entry(path, item, index))


def _model(model: BaseModel, file: str, path: str, *, top: bool) -> Iterator[AuthorText]:
    cls = type(model)
    texts = text_fields(cls)
    # a file made of lists of entries (quests.json: main, side) names its entries by id alone, as the others do
    book = top and all(isinstance(value, list) for _, value in model)
    for name, value in model:
        if name in texts:
            # a part with a single text is named by the part ("[camp].variants[0]", not "...variants[0].text")
            yield from _strings(value, file, path if len(texts) == 1 else _field(path, name), cls, name)
        else:
            yield from _walk(value, file, path if book else _field(path, name))


def _strings(value: object, file: str, path: str, model: type[BaseModel], field: str) -> Iterator[AuthorText]:
    """The non-empty strings of a text field's ``value``: a string, or a list or dict of them."""
    if isinstance(value, str):
        if value:
            yield AuthorText(value, f"{file}: {path}" if path else file, model, field, file)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, file, _field(path, str(key)), model, field)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, file, f"{path}[{index}]", model, field)


def _field(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _entry(path: str, value: object, position: str | int) -> str:
    """An entry of a list or dict: ``[id]`` when it has an id, else ``[index]`` or ``.key``."""
    ident = dict(value).get("id") if isinstance(value, BaseModel) else None  # a model's fields by name
    if isinstance(ident, str):
        return f"{path}[{ident}]"
    return f"{path}[{position}]" if isinstance(position, int) else _field(path, position)
