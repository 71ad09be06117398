"""Models of the tools app."""
