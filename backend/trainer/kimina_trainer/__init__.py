"""Kimina GRPO trainer: a TRL worker launched and supervised by the Kimina backend.

It talks to the backend over HTTP only (reward service, metrics, events) and never imports backend code.
"""
