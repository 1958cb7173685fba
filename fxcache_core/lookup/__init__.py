"""Which entry torch would load for a call: binding the call's inputs to a key's
graph, the fit (would Dynamo trace the call into this graph?), the entries judged in
torch's order, int and float arguments, automatic dynamic's phases, verdicts per
function, coverage and audit. Never imports torch, never prints.

Lowest first: ``pyvalues`` (the Python values of a call: bools, None, strings,
tuples), ``binding`` (the user's shapes and values, DynamicMode; ``input_names``: the names they are given by, as Dynamo's sources), ``graph_types`` (what a
key's graph prints about its inputs: tensor types, size expressions) and ``query``
(CallQuery: one call); ``inputs`` (the call's inputs named by a key's sources) and
``symbol_names`` (an FX key's inputs named by its symbols); ``floats`` (what floats
a key tensorified or baked in), ``sym_floats`` (a float folded beside a symbolic int:
the operands of the graph's nodes on SymNodes), ``py_exprs`` (the value Python gives a pure
expression of the call's scalars: arithmetic, builtins, conditionals, fixed sizes) and ``float_exprs``
(which constant a float became, through which expression of the source; ``float_branches``: the side
of an ``if`` on it the graph went), ``float_ops`` (a float or None an op holds
by its place: clamp's bounds, a comparison's scalar), ``int_exprs`` (which constants an int, a tuple
of ints or a bool became: slice bounds, arithmetic scalars, a reduction's dim and
keepdim, dropout's flag); ``printed_graphs`` (a printed graph, and what
a static one baked in); ``fit_binding`` (the Binding a fit builds),
``duck_sizing`` (equal sizes and shared symbols), ``fit_floats`` (floats) and
``fit`` (sizes, strides, dtypes, ints: the fit), ``pinned`` (an int Dynamo specialized
while tracing, given or left at another value); ``judge`` (one key's entries in
torch's order) and ``match_report`` (KeyMatch, MatchReport); ``boundaries`` (a size
the call brings to 0 or 1) and ``mark_ranges`` (a marked dim's range); ``phases``
(automatic dynamic); ``optional_tensors`` (what the source does with an optional
tensor or a list), ``int_args`` (ints baked into a sibling key) and ``dtype_args``
(the ``torch.dtype`` a graph was traced with); ``branches`` (the lines
of the compiled frame a graph has ops from); ``unframed`` (the arguments a key that
records no compiled frame cannot account for), ``state_constants`` (a module's attribute
or a global a call gives, read off the graph's constants) and ``accounting`` (every
parameter the compiled frame reads, accounted for before a verdict; ``container_items``: a dict's
or a dataclass's items, each as a parameter of its own), ``ambient`` (the grad
mode, each input's requires_grad and globals a call gives); ``key_lookup``
(match_key: one key); ``across_keys`` (what the keys' results say together); ``unattributed``
(keys that record no function, for a function no key records); ``match`` (the
run over keys); ``prediction`` (the verdict per function); ``coverage`` (one
placeholder swept) and ``audit`` (entries never served)."""
