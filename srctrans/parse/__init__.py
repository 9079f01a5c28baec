"""Stage 1: from a live function to its gast tree, and from names to live objects."""
