"""Guards expressions: parsed through an ast whitelist, evaluated as torch would,
their sympy form, summaries, display, the user's terms, and guards in force. Never
executes a guard's text (accepted nodes become closures; no ``eval``) and never
imports torch.

Lowest first: ``runtime`` (the Python semantics the closures apply); ``grammar``
(the whitelist tables, limits, AST walks); ``compiler`` (an accepted tree ->
closures); ``expr`` (parse_guards, GuardsExpr: parse and evaluate);
``sympy_form`` (their sympy forms, imported only when asked); ``ranges`` (one
notation for a size's range); ``summary`` (ranges, divisibility, relations, the
rest); ``user_terms`` (guards over the user's names); ``display`` (plain, pretty,
LaTeX, JSON); ``key_guards`` (every entry's guards of one key); ``force_sources``
(which guards in force name which sources); ``in_force_code`` (reading the guards
Dynamo installed); ``in_force_values`` (the values they allow a clause's sizes);
``in_force`` (check_installed: did a hit install its entry's guards)."""
