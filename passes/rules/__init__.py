"""Rule tables of the declarative rewrite passes, one module per pass (`RULES` in each)."""
