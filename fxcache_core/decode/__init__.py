"""Cache entries decoded without executing them: the restricted unpickler, Dynamo
source names, symbols, the memory budget around one decode, and the worker
processes every decode runs in, under a CPU budget (``workers``)."""
