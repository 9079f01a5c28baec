"""Stage 5: make generated code lean: fold constants, propagate copies, drop dead code."""
