"""The dig-a-channel demo game (pyglet)."""
