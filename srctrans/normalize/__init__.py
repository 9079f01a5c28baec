"""Stage 2: reject what is unsupported (fence), then rewrite into the normal form (ANF, SSA)."""
