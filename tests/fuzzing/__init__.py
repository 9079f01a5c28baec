"""The differential fuzzer: a generator of random programs (generator.py), the check of one
program against finite differences (check.py), and the programs it once failed on
(regressions/). ``python tests/fuzz.py`` runs it; ``tests/test_fuzz.py`` runs it in CI."""
