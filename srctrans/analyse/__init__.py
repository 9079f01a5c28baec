"""Stage 3: analyses over the normal form (activity)."""
