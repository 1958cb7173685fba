"""A run's TORCH_TRACE: the record reader, the run's compiles and lookups, explain,
a traced call's inputs, and the usage store."""
