"""The 實驗場's build, in CPython: build_lab.build_lab is the one entry point."""
