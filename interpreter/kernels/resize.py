"""Kernel of ge.resize."""
