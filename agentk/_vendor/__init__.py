"""Third-party code kept inside agentk (README.md here says what, why and what changed)."""
