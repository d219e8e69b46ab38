"""Fuzzing the command-line tools against their contract (README, "Tools").

A hostile input may make a tool fail, but only the documented way: one line
`<tool>: error: ...` and exit 1 for a user's mistake, one line `<tool>: internal error: ...` and
exit 2 for a compiler bug, never a traceback or a hang, and output files written whole or not at
all (a file that existed before a failed run is left as it was).

    seeds.py           small valid inputs: ONNX models, IR texts, sidecars, flag sets
    onnx_mutations.py  protobuf-field mutations of ONNX models (and external data files)
    ir_mutations.py    token and line mutations of IR text; hostile weights sidecars
    npz_inputs.py      hostile `ge-run --inputs` files
    byte_mutations.py  raw byte damage for any of them
    strategies.py      the cases: a seed, its mutations and a flag set, deterministic from a seed
    contract.py        runs one case in a forked child of this process and classifies the outcome
    run.py             the command line: `python test/fuzz/run.py --tool all --n 10000 --seed 0`
"""
