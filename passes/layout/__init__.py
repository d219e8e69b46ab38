"""Data-layout passes: choose storage formats (GE's NC1HWC0, FRACTAL_Z, FRACTAL_NZ) and manage the
`ge.trans_data` ops that convert between them.

- `assign-formats`     picks formats by the rule tables in `rules.py`, then inserts TransData;
- `insert-trans-data`  materializes `ge.storage` annotations: retypes values, inserts TransData;
- `cancel-trans-data`  removes A->B->A pairs;
- `merge-trans-data`   merges TransData ops of one source with the same conversion;
- `fold-trans-data`    evaluates TransData of constants at compile time.

See docs/layout.md.
"""
