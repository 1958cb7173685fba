"""Cache entries decoded without executing them: the restricted unpickler, Dynamo
source names, the total parsers of the text torch prints into an entry
(``printed``: a field they cannot read is absent, never a corrupt entry), symbols,
the memory budget around one decode, and the worker
processes every decode runs in, under a CPU budget (``workers``)."""
