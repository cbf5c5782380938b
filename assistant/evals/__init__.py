"""Evaluation harnesses: each scores the system on a public benchmark and writes docs/eval/."""
