"""Which entry torch would load for a call: binding, fit, verdicts, int and float
arguments, coverage and audit."""
