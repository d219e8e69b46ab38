"""Executes ge IR: numpy kernels per op, and the xDSL interpreter functions that call them."""

from ge import refuse_bare_import

refuse_bare_import(__name__)
