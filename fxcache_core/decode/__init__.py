"""Cache entries decoded without executing them: the restricted unpickler, Dynamo
source names, symbols, and the memory budget around one decode."""
