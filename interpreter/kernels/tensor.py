"""Kernels of the data-movement and shape ops."""
