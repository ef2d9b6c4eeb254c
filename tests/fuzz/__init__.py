"""Coverage-guided fuzzing of mxc's parsers (atheris): ``python -m tests.fuzz --target X
--seconds N``. Seeds in tests/fuzz/corpus/<target>/, every crash ever found in
tests/fuzz/crashes/<target>/ (replayed by tests/fuzz/test_fuzz.py)."""
