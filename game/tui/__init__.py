"""The Textual game: title, play screen, saves, settings, help and the memory debug panel."""
