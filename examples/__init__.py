"""Runnable examples; `python -m examples.resnet50` is the README's first command."""
