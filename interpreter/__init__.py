"""Executes ge IR: numpy kernels per op, and the xDSL interpreter functions that call them."""
