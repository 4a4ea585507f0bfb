"""Helpers shared by the build and browser test layers (static server, Chromium, site builds)."""
