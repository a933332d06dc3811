"""Model runners, evaluation protocols, answer parsing, metrics and reports.

Protocols produce requests, runners answer them, scoring reads the answers; this package
depends on ``engine`` only. The runners and protocols arrive with the evaluation harness.
"""
