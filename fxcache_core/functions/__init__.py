"""Which function a key was compiled from, decided once.

Lowest first: ``frames`` (the compiled frame: CompiledFrom, resume frames worded);
``trees`` (source files parsed whole, once per file identity, for the rules that read a
function's code); ``params`` (how the compiled frame's source reads each parameter: its tests, defaults,
annotations); ``statements`` (which lines of a source file are one statement); ``origin`` (a key's origin, FunctionName: every way a function is named, and the
keys of a function); ``listing`` (what ``ls`` lists: keys with their function,
grouped by function)."""
