"""How memory is found: reading the question, hybrid search, the knowledge base, the blocks of one recall."""
