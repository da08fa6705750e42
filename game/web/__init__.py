"""``storyecho serve``: the Textual game in a browser, one game per tab, on textual-serve (the ``web`` extra)."""
