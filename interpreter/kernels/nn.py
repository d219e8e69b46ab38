"""Kernels of the neural-network ops."""
