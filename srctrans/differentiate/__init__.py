"""Stage 4: generate derivative code (reverse mode: adjoints) from the normal form."""
