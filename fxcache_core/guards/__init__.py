"""Guards expressions: parsed through an ast whitelist, evaluated as torch would,
their sympy form, summaries, display, the user's terms, and guards in force."""
