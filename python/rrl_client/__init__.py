"""Python side of recursive-rl."""
