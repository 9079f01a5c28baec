"""Stage 6: print generated functions as readable source and compile them."""
