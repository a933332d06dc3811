"""The audit: does each task's score measure the skill it names? ``procvis audit`` runs
:func:`evals.audit.run.audit` and writes :func:`evals.audit.report.write_report`."""
