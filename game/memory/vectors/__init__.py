"""Where vectors live and how they are made: the vector stores, the Chroma mirror, the embedders."""
