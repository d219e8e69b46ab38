"""Runnable examples; `python -m ge.examples.resnet50` is the README's first command."""

from ge import refuse_bare_import

refuse_bare_import(__name__)
