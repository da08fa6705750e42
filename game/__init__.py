"""StoryEcho: an LLM text-adventure engine whose narrator never forgets."""

__version__ = "0.1.0"
