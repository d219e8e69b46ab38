"""Runnable examples; `python -m ge.examples.resnet50` is the README's first command."""
