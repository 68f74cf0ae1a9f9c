"""LPFQA forum-to-item construction (paper 001 §3.2): posts, stages, expert
verification and release."""
